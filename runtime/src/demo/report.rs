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

/// One move or handoff the planner proposed, as the demo tracks it.
#[derive(Clone, Debug)]
pub struct TrackedMove {
    /// The partition.
    pub partition: Partition,
    /// An ownership handoff (else a follower move).
    pub handoff: bool,
    /// The node the planner takes the copy (or ownership) off.
    pub from: NodeId,
    /// The node that gains it.
    pub to: NodeId,
    /// The planner's round that proposed it (1-based).
    pub round: u32,
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
    pub(super) fn new(
        partition: Partition,
        handoff: bool,
        from: NodeId,
        to: NodeId,
        round: u32,
    ) -> Self {
        TrackedMove {
            partition,
            handoff,
            from,
            to,
            round,
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

    pub(super) fn observe(&mut self, r: &Record, root: &Path) {
        if self.done.is_some() {
            return;
        }
        let me = StorageId::first(self.to);
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
            segment(r.owner.node).saturating_sub(segment(self.to))
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
    /// Publishes started during the moves that were not acknowledged
    /// after every retry their policy allows.
    pub failed_during_moves: u64,
    /// Attempts sent again as retries (after a refusal while ownership
    /// moved, an answer or a confirm lost with a node).
    pub retries: u64,
    /// Of those, the retries of publishes started during the moves.
    pub retries_during_moves: u64,
    /// Publishes acknowledged through a retry the owner answered from its
    /// history: the message was appended by an earlier attempt, and the
    /// producer id kept it from being appended twice.
    pub retries_held: u64,
    /// Messages whose answer never came (their fate read from the disks).
    pub uncertain: u64,
    /// Settles the consumers sent (each of the oldest delivered message).
    pub settles_sent: u64,
    /// Settles the consumers were told are done (their `Delete` confirmed).
    pub settled: u64,
    /// Settles that did not end confirmed (refused, or lost with a node).
    pub settles_failed: u64,
    /// `Delete` entries in the partitions' final confirmed histories.
    pub settles_confirmed: u64,
    /// Settles told done whose `Delete` is missing from their partition's
    /// final confirmed history (must be 0).
    pub settled_lost: u64,
    /// Messages settled more than once in a confirmed history (must be 0).
    pub settled_twice: u64,
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
    /// Follower moves the planner proposed, over all its rounds.
    pub planned_moves: usize,
    /// Ownership handoffs the planner proposed.
    pub planned_handoffs: usize,
    /// Follower moves carried out (the planner's target counts a copy).
    pub moves: usize,
    /// Ownership handoffs carried out (the planner's target owns).
    pub handoffs: usize,
    /// Planner rounds that proposed something (one per settled state).
    pub planner_rounds: u32,
    /// Whether the last round planned proposed nothing: the cluster is at
    /// the planner's balance.
    pub converged: bool,
    /// Every move and handoff the planner proposed, in round order.
    pub plan: Vec<PlanStep>,
    /// Counted copies per node at the end, owned or followed.
    pub copies_per_node: BTreeMap<String, u32>,
    /// Owned partitions per node at the end.
    pub owned_per_node: BTreeMap<String, u32>,
    /// Each partition's owner and followers before the moves.
    pub placement_before: BTreeMap<String, PlacementOf>,
    /// Each partition's owner and followers at the end.
    pub placement_after: BTreeMap<String, PlacementOf>,
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

/// One move or handoff the planner proposed, and whether it was carried out.
#[derive(Clone, Debug, Serialize)]
pub struct PlanStep {
    /// The planner's round (1-based).
    pub round: u32,
    /// The partition.
    pub partition: String,
    /// `move` or `handoff`.
    pub kind: &'static str,
    /// The node it takes the copy (or ownership) off.
    pub from: String,
    /// The node that gains it.
    pub to: String,
    /// Whether the record showed it done.
    pub done: bool,
    /// How many times it was started (a recovery aborts a move).
    pub attempts: u32,
}

/// A partition's counted copies: its owner and its followers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlacementOf {
    /// The owner's node.
    pub owner: String,
    /// The followers' nodes, in order.
    pub followers: Vec<String>,
}

impl PlacementOf {
    fn of(r: &Record) -> Self {
        PlacementOf {
            owner: r.owner.node.to_string(),
            followers: r.followers.iter().map(|f| f.node.to_string()).collect(),
        }
    }
}

pub(super) fn build(
    cfg: &DemoConfig,
    cluster: &Cluster,
    stats: ClientStats,
    outcome: super::plan::Outcome,
    owners: BTreeMap<Partition, (NodeId, Status)>,
    disks: Disks,
    clock: Instant,
) -> DemoReport {
    let mut confirmed = 0;
    let (mut lost, mut duplicates, mut under) = (0, 0, 0);
    let (mut settles_confirmed, mut settled_lost, mut settled_twice) = (0, 0, 0);
    for (p, (owner, status)) in &owners {
        let tail = status.confirmed.unwrap_or(0);
        confirmed += tail;
        let copies = disks.get(p).cloned().unwrap_or_default();
        let Some(log) = copies.get(owner) else {
            under += tail;
            settled_lost += stats.settled.get(p).map_or(0, |v| v.len() as u64);
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
        let mut deleted = BTreeSet::new();
        for e in held {
            if let Op::Delete { key } = e.op {
                settles_confirmed += 1;
                if !deleted.insert(key) {
                    settled_twice += 1;
                }
            }
        }
        for k in stats.settled.get(p).into_iter().flatten() {
            if !deleted.contains(k) {
                settled_lost += 1;
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
    let moves = &outcome.tracked;
    let mut records = BTreeMap::new();
    let (mut placement_before, mut placement_after) = (BTreeMap::new(), BTreeMap::new());
    for p in cluster.partitions() {
        let (owner, followers) = super::placement(p, cfg.nodes - 1, cfg.rf);
        let mut followers: Vec<String> = followers.iter().map(NodeId::to_string).collect();
        followers.sort();
        placement_before.insert(
            p.to_string(),
            PlacementOf {
                owner: owner.to_string(),
                followers,
            },
        );
        if let Ok(r) = cluster.read(p) {
            placement_after.insert(p.to_string(), PlacementOf::of(&r));
            records.insert(p, r);
        }
    }
    let balance = super::planner::balance(&records, cfg.nodes);
    let count = |handoff: bool, done: bool| {
        moves
            .iter()
            .filter(|m| m.handoff == handoff && (!done || m.done.is_some()))
            .count()
    };
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
        retries: stats.retries.iter().sum(),
        retries_during_moves: stats.retries[1],
        retries_held: stats.retries_held,
        uncertain: stats.uncertain,
        settles_sent: stats.settles_sent,
        settled: stats.settled_count(),
        settles_failed: stats.settles_failed,
        settles_confirmed,
        settled_lost,
        settled_twice,
        p50_ms_before: before.p50_ms,
        p99_ms_before: before.p99_ms,
        p50_ms_during: during.p50_ms,
        p99_ms_during: during.p99_ms,
        p50_ms_after: after.p50_ms,
        p99_ms_after: after.p99_ms,
        handoff_pause_ms: pause,
        planned_moves: count(false, false),
        planned_handoffs: count(true, false),
        moves: count(false, true),
        handoffs: count(true, true),
        planner_rounds: outcome.rounds,
        converged: outcome.converged,
        plan: moves
            .iter()
            .map(|m| PlanStep {
                round: m.round,
                partition: m.partition.to_string(),
                kind: m.kind(),
                from: m.from.to_string(),
                to: m.to.to_string(),
                done: m.done.is_some(),
                attempts: m.attempts,
            })
            .collect(),
        copies_per_node: balance.iter().map(|(n, c)| (n.to_string(), c.0)).collect(),
        owned_per_node: balance.iter().map(|(n, c)| (n.to_string(), c.1)).collect(),
        placement_before,
        placement_after,
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
