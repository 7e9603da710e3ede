//! What the demo shows while it runs (`Progress`, about every second) and
//! what it reports at the end (`DemoReport`).

use super::clients::{ClientStats, Phase};
use super::plan::blocking_reason;
use super::{Cluster, DemoConfig, DemoError, Disks};
use crate::partition::Partition;
use crate::tcp::Status;
use livemove_impl::store::{HandoffPhase, MovePhase, Record};
use livemove_impl::{NodeId, Op, StorageId};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One planned move or handoff as the plan tracks it.
#[derive(Clone, Debug)]
pub struct TrackedMove {
    /// The partition.
    pub partition: Partition,
    /// An ownership handoff (else a follower move).
    pub handoff: bool,
    /// When its first write committed.
    pub started: Option<Instant>,
    /// When the record showed it done.
    pub done: Option<Instant>,
    /// How many times it was started (a recovery aborts a move).
    pub attempts: u32,
    /// Its phase in the record.
    pub phase: &'static str,
    /// What it waits for.
    pub reason: String,
    /// Bytes of the owner's log the new copy does not hold yet.
    pub bytes_behind: u64,
}

impl TrackedMove {
    pub(super) fn new(partition: Partition, handoff: bool) -> Self {
        TrackedMove {
            partition,
            handoff,
            started: None,
            done: None,
            attempts: 0,
            phase: "planned",
            reason: "not started".into(),
            bytes_behind: 0,
        }
    }

    /// `move` or `handoff`.
    pub fn kind(&self) -> &'static str {
        if self.handoff {
            "handoff"
        } else {
            "move"
        }
    }

    pub(super) fn begin(&mut self) {
        self.started.get_or_insert_with(Instant::now);
        self.attempts += 1;
    }

    pub(super) fn observe(&mut self, r: &Record, me: StorageId, root: &Path, newcomer: NodeId) {
        if self.done.is_some() {
            return;
        }
        let segment = |n: NodeId| {
            let dir = self.partition.data_dir(&root.join(n.to_string()));
            std::fs::metadata(dir.join(crate::disk_log::SEGMENT_FILE)).map_or(0, |m| m.len())
        };
        if self.handoff {
            if r.owner == me && r.handoff.is_none() && r.recovery.is_none() {
                self.done = Some(Instant::now());
                self.phase = "done";
                self.reason.clear();
                return;
            }
            self.phase = match r.handoff.as_ref().map(|h| h.phase) {
                Some(HandoffPhase::Closed) => "admission closed",
                Some(HandoffPhase::Reported) => "final boundary reported",
                Some(HandoffPhase::Committed) => "committed",
                None => "planned",
            };
            self.reason = match r.handoff.as_ref().map(|h| h.phase) {
                Some(HandoffPhase::Closed) => "owner draining".into(),
                Some(HandoffPhase::Reported) => "new owner below F".into(),
                Some(HandoffPhase::Committed) => "new owner to activate".into(),
                None if !r.followers.contains(&me) => "new node not a follower yet".into(),
                None => blocking_reason(r, me),
            };
            return;
        }
        if r.counted().contains(&me) {
            self.done = Some(Instant::now());
            self.phase = "done";
            self.reason.clear();
            self.bytes_behind = 0;
            return;
        }
        self.phase = match r.move_task.as_ref().filter(|m| m.target == me) {
            Some(m) => match m.phase {
                MovePhase::Learner => "learner",
                MovePhase::Admitted => "admitted",
                MovePhase::Swapped => "swapped",
                MovePhase::Switched => "switched",
            },
            None => "planned",
        };
        self.reason = blocking_reason(r, me);
        self.bytes_behind = if self.phase == "planned" {
            0
        } else {
            segment(r.owner.node).saturating_sub(segment(newcomer))
        };
    }
}

/// A snapshot of the run, about every second.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Seconds since the start.
    pub elapsed_s: f64,
    /// `before`, `during`, `after` or `healing`.
    pub phase: &'static str,
    /// The nodes running.
    pub up: Vec<NodeId>,
    /// Publishes acknowledged so far.
    pub acknowledged: u64,
    /// Publishes acknowledged per second over the last interval.
    pub per_second: f64,
    /// Confirm latency over the last interval, p50 and p99, in ms.
    pub p50_ms: f64,
    /// See `p50_ms`.
    pub p99_ms: f64,
    /// Moves and handoffs not done, with phase, bytes behind and reason.
    pub pending: Vec<(Partition, &'static str, &'static str, u64, String)>,
    /// Moves and handoffs done, of all planned.
    pub done: (usize, usize),
    /// Partitions with a recovery pending.
    pub recoveries: usize,
    /// What happened since the last snapshot (a kill, a restart).
    pub notes: Vec<String>,
}

/// What is called with each snapshot.
pub type ShowProgress = Box<dyn FnMut(&Progress) + Send>;

pub(super) struct Reporter {
    show: Option<ShowProgress>,
    stats: Arc<Mutex<ClientStats>>,
    phase: Arc<Mutex<Phase>>,
    clock: Instant,
    last: Instant,
    last_acked: u64,
    last_latencies: usize,
    notes: Vec<String>,
    /// The plan's moves as last shown (kept once the plan is done).
    moves: Vec<TrackedMove>,
}

impl Reporter {
    pub(super) fn new(
        show: Option<ShowProgress>,
        stats: Arc<Mutex<ClientStats>>,
        phase: Arc<Mutex<Phase>>,
        clock: Instant,
    ) -> Self {
        Reporter {
            show,
            stats,
            phase,
            clock,
            last: Instant::now(),
            last_acked: 0,
            last_latencies: 0,
            notes: Vec::new(),
            moves: Vec::new(),
        }
    }

    pub(super) fn note(&mut self, what: String) {
        tracing::info!("{what}");
        self.notes.push(what);
    }

    /// Sleep `d`, reporting progress meanwhile.
    pub(super) async fn sleep(&mut self, cluster: &Cluster, d: Duration) -> Result<(), DemoError> {
        let end = Instant::now() + d;
        while Instant::now() < end {
            let mut records = BTreeMap::new();
            for p in cluster.partitions() {
                records.insert(p, cluster.read(p)?);
            }
            self.tick(cluster, &[], &records).await;
            let left = end.saturating_duration_since(Instant::now());
            tokio::time::sleep(left.min(Duration::from_millis(250))).await;
        }
        Ok(())
    }

    pub(super) async fn tick(
        &mut self,
        cluster: &Cluster,
        tracked: &[TrackedMove],
        records: &BTreeMap<Partition, Record>,
    ) {
        if self.show.is_none() {
            return;
        }
        if !tracked.is_empty() {
            self.moves = tracked.to_vec();
        }
        let tracked = &self.moves;
        let dt = self.last.elapsed().as_secs_f64();
        if dt < 1.0 {
            return;
        }
        let (acked, mut recent) = {
            let s = self.stats.lock().expect("no client panics");
            let all: Vec<f64> = s.latency_ms.iter().flatten().copied().collect();
            let recent = all[self.last_latencies.min(all.len())..].to_vec();
            self.last_latencies = all.len();
            (s.acked_count(), recent)
        };
        recent.sort_by(f64::total_cmp);
        let phase = match *self.phase.lock().expect("no client panics") {
            Phase::Before => "before",
            Phase::During => "during",
            Phase::After => "after",
            Phase::Stopped => "healing",
        };
        let snapshot = Progress {
            elapsed_s: self.clock.elapsed().as_secs_f64(),
            phase,
            up: cluster.nodes.keys().copied().collect(),
            acknowledged: acked,
            per_second: (acked - self.last_acked) as f64 / dt,
            p50_ms: quantile(&recent, 0.50),
            p99_ms: quantile(&recent, 0.99),
            pending: tracked
                .iter()
                .filter(|m| m.done.is_none())
                .map(|m| {
                    (
                        m.partition,
                        m.kind(),
                        m.phase,
                        m.bytes_behind,
                        m.reason.clone(),
                    )
                })
                .collect(),
            done: (
                tracked.iter().filter(|m| m.done.is_some()).count(),
                tracked.len(),
            ),
            recoveries: records.values().filter(|r| r.recovery.is_some()).count(),
            notes: std::mem::take(&mut self.notes),
        };
        if let Some(show) = self.show.as_mut() {
            show(&snapshot);
        }
        self.last = Instant::now();
        self.last_acked = acked;
    }
}

/// The `q` quantile of sorted values (nearest rank); 0 when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Confirm latency of one phase, in milliseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Latency {
    /// Acknowledged publishes that started in the phase.
    pub count: usize,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
}

fn latency(v: &[f64]) -> Latency {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    Latency {
        count: s.len(),
        p50_ms: quantile(&s, 0.5),
        p99_ms: quantile(&s, 0.99),
    }
}

/// The demo's result. `trace_valid` is `None` until the traces were
/// validated (the command does it with TLC).
#[derive(Clone, Debug, Serialize)]
pub struct DemoReport {
    /// The seed.
    pub seed: u64,
    /// `file` or `etcd`.
    pub store: &'static str,
    /// Nodes, the last of which joined during the run.
    pub nodes: u8,
    /// Partitions.
    pub partitions: u32,
    /// Wall-clock seconds of the run.
    pub seconds: f64,
    /// Distinct messages the clients sent.
    pub published: u64,
    /// Entries confirmed, summed over the partitions' final owners.
    pub confirmed: u64,
    /// Messages whose confirm a client got.
    pub acknowledged: u64,
    /// Acknowledged messages missing from their partition's final
    /// confirmed history (must be 0).
    pub lost_confirmed: u64,
    /// Messages more than once in a confirmed history (must be 0).
    pub duplicates: u64,
    /// Confirmed positions held by fewer than W counted copies (must be 0).
    pub under_replicated: u64,
    /// Publish attempts started during the moves that were not
    /// acknowledged (refused while ownership moved, or lost with a node).
    pub failed_during_moves: u64,
    /// Messages whose answer never came (their fate read from the disks).
    pub uncertain: u64,
    /// Confirm latency before the moves: median.
    pub p50_ms_before: f64,
    /// Before the moves: 99th percentile.
    pub p99_ms_before: f64,
    /// During the moves: median.
    pub p50_ms_during: f64,
    /// During the moves: 99th percentile.
    pub p99_ms_during: f64,
    /// After the moves: median.
    pub p50_ms_after: f64,
    /// After the moves: 99th percentile.
    pub p99_ms_after: f64,
    /// The longest handoff write pause: from `CloseAdmission` to the new
    /// owner's `ActivateOwner`, from the trace.
    pub handoff_pause_ms: f64,
    /// Follower moves done (each onto the new node).
    pub moves: usize,
    /// Ownership handoffs done.
    pub handoffs: usize,
    /// Moves asked for again after a recovery aborted them.
    pub moves_restarted: u32,
    /// Recoveries opened (`OpenRecovery` events).
    pub recoveries: usize,
    /// Events in all partitions' traces.
    pub trace_events: u64,
    /// Whether every partition's trace validated against the spec.
    pub trace_valid: Option<bool>,
    /// The partitions' trace files.
    pub trace_dir: String,
}

pub(super) fn build(
    cfg: &DemoConfig,
    cluster: &Cluster,
    stats: ClientStats,
    moves: Vec<TrackedMove>,
    owners: BTreeMap<Partition, (NodeId, Status)>,
    disks: Disks,
    clock: Instant,
) -> DemoReport {
    let mut confirmed = 0;
    let (mut lost, mut duplicates, mut under) = (0, 0, 0);
    for (p, (owner, status)) in &owners {
        let tail = status.confirmed.unwrap_or(0);
        confirmed += tail;
        let copies = disks.get(p).cloned().unwrap_or_default();
        let Some(log) = copies.get(owner) else {
            under += tail;
            continue;
        };
        let held = &log.entries[..(tail as usize).min(log.entries.len())];
        let mut seen = BTreeSet::new();
        for e in held {
            if let Op::Put { key, .. } = e.op {
                if !seen.insert(key) {
                    duplicates += 1;
                }
            }
        }
        for k in stats.acked.get(p).into_iter().flatten() {
            if !seen.contains(k) {
                lost += 1;
            }
        }
        let record = cluster.read(*p).ok();
        let (counted, w) = record
            .map(|r| (r.counted(), usize::from(r.confirm_w)))
            .unwrap_or_default();
        for (i, e) in held.iter().enumerate() {
            let on = counted
                .iter()
                .filter(|s| copies.get(&s.node).and_then(|d| d.entries.get(i)) == Some(e))
                .count();
            if on < w {
                under += 1;
            }
        }
    }
    let (mut events, mut pause, mut recoveries) = (0, 0.0_f64, 0);
    for p in cluster.partitions() {
        let t = read_trace(&super::trace_path(&cfg.root, p));
        events += t.events;
        pause = pause.max(t.longest_pause_ms);
        recoveries += t.recoveries;
    }
    let [before, during, after] = [0, 1, 2].map(|i| latency(&stats.latency_ms[i]));
    DemoReport {
        seed: cfg.seed,
        store: cfg.records.backend(),
        nodes: cfg.nodes,
        partitions: cfg.partitions,
        seconds: clock.elapsed().as_secs_f64(),
        published: stats.sent,
        confirmed,
        acknowledged: stats.acked_count(),
        lost_confirmed: lost,
        duplicates,
        under_replicated: under,
        failed_during_moves: stats.failed[1],
        uncertain: stats.uncertain,
        p50_ms_before: before.p50_ms,
        p99_ms_before: before.p99_ms,
        p50_ms_during: during.p50_ms,
        p99_ms_during: during.p99_ms,
        p50_ms_after: after.p50_ms,
        p99_ms_after: after.p99_ms,
        handoff_pause_ms: pause,
        moves: moves
            .iter()
            .filter(|m| !m.handoff && m.done.is_some())
            .count(),
        handoffs: moves
            .iter()
            .filter(|m| m.handoff && m.done.is_some())
            .count(),
        moves_restarted: moves.iter().map(|m| m.attempts.saturating_sub(1)).sum(),
        recoveries,
        trace_events: events,
        trace_valid: None,
        trace_dir: cfg.root.join("traces").display().to_string(),
    }
}

struct TraceSummary {
    events: u64,
    longest_pause_ms: f64,
    recoveries: usize,
}

/// Count a trace's events, its recoveries, and its longest handoff pause.
fn read_trace(path: &Path) -> TraceSummary {
    let mut out = TraceSummary {
        events: 0,
        longest_pause_ms: 0.0,
        recoveries: 0,
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    let mut closed_at: Option<u64> = None;
    for line in text.lines() {
        out.events += 1;
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let t = v["t_ms"].as_u64().unwrap_or(0);
        match v["action"].as_str() {
            Some("CloseAdmission") => closed_at = Some(t),
            Some("ActivateOwner") => {
                if let Some(c) = closed_at.take() {
                    out.longest_pause_ms = out.longest_pause_ms.max(t.saturating_sub(c) as f64);
                }
            }
            Some("OpenRecovery") => {
                out.recoveries += 1;
                // A recovery ends a handoff that did not activate.
                closed_at = None;
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
        assert_eq!(quantile(&[7.0], 0.99), 7.0);
    }
}
