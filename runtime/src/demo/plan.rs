//! The planner's plan, carried out: after the new node joins, every
//! settled state of the cluster (every node up, no move, handoff or
//! recovery pending, no copy suspended) is the planner's view
//! (`planner::view`) for one round of `livemove_impl::planner::plan`, and
//! the round's moves run to their end before the next round is planned;
//! rounds go on until a round proposes nothing (the planner's balance) or
//! `ROUNDS_MAX`. A follower move is the target node's own `AddLearner`
//! naming the planner's leaving copy, then the owner's admission, swap,
//! switch and removal; a handoff is the owner's handoff at a barrier. The
//! planner plans follower moves before handoffs, and at most
//! `DemoConfig::moves_in_flight` moves at once (`planner::policy`); the
//! demo starts no more than that at once either. The victim is killed once
//! a third of the first round's moves have started and comes back on its
//! data directory after `DemoConfig::down`. A move that a recovery aborted
//! is asked for again. A move started while a follower of the partition is
//! down replaces that follower (its copy leaves at the swap, not the
//! planner's choice), as the model's controller does; under the
//! `no_replacement` mutant it does not, and the trace validator rejects
//! the run (finding 30).

use super::planner;
use super::report::{Reporter, TrackedMove};
use super::{Cluster, DemoError};
use crate::partition::Partition;
use crate::tcp::client::NodeClient;
use crate::tcp::Status;
use livemove_impl::planner::{History, Plan};
use livemove_impl::store::{MovePhase, Record};
use livemove_impl::{Mutant, NodeId, StorageId};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often the plan reads the records.
const POLL: Duration = Duration::from_millis(50);

/// Most planner rounds one demo runs: a round moves at most
/// `moves_in_flight` copies, and the default cluster converges in 7.
pub const ROUNDS_MAX: u32 = 32;

/// What the plan did: every move and handoff the planner proposed, how
/// many rounds proposed any, and whether the last round proposed nothing.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The proposed moves and handoffs, in round order, as carried out.
    pub tracked: Vec<TrackedMove>,
    /// Rounds that proposed something.
    pub rounds: u32,
    /// The last round planned proposed nothing: the planner's balance.
    pub converged: bool,
}

/// What a pending move waits for, in words.
pub fn blocking_reason(r: &Record, target: StorageId) -> String {
    if r.recovery.is_some() {
        return "recovery pending (the move is aborted)".into();
    }
    if r.handoff.is_some() {
        return "handoff pending".into();
    }
    match r.move_task.as_ref() {
        Some(m) if m.target == target => match m.phase {
            MovePhase::Learner => "learner catching up to the confirmed tail".into(),
            MovePhase::Admitted => "admitted: owner to swap".into(),
            MovePhase::Swapped => "swapped: owner to adopt the new set".into(),
            MovePhase::Switched => "switched: target below the boundary B".into(),
        },
        Some(_) => "another move pending".into(),
        None => "not started".into(),
    }
}

/// Whether `records` are a settled state to plan from: nothing pending,
/// no copy suspended.
fn settled(records: &BTreeMap<Partition, Record>) -> bool {
    records.values().all(|r| {
        r.move_task.is_none()
            && r.handoff.is_none()
            && r.recovery.is_none()
            && r.suspended.is_empty()
    })
}

/// The partitions that keep `records` from being settled, and why.
fn unsettled(records: &BTreeMap<Partition, Record>) -> Vec<String> {
    records
        .iter()
        .filter_map(|(p, r)| {
            let why: Vec<&str> = [
                (r.move_task.is_some(), "move"),
                (r.handoff.is_some(), "handoff"),
                (r.recovery.is_some(), "recovery"),
                (!r.suspended.is_empty(), "suspended"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, w)| *w)
            .collect();
            (!why.is_empty()).then(|| format!("{p} ({})", why.join(" ")))
        })
        .collect()
}

pub(super) async fn run(
    cluster: &mut Cluster,
    reporter: &mut Reporter,
    victim: NodeId,
) -> Result<Outcome, DemoError> {
    let cfg = cluster.cfg.clone();
    let policy = planner::policy(cfg.moves_in_flight);
    let mut history = History::new(usize::from(cfg.nodes), cfg.partitions as usize);
    let mut out = Outcome::default();
    // The current round's moves (by partition: a round moves a partition
    // at most once) and its first index in `out.tracked`.
    let mut round_at = 0;
    let mut first_round: Option<usize> = None;
    let mut clients: BTreeMap<NodeId, NodeClient> = cluster
        .addrs
        .iter()
        .map(|(&n, &a)| (n, NodeClient::new(a)))
        .collect();
    let started = Instant::now();
    let mut killed_at: Option<Instant> = None;
    let mut restarted = false;
    loop {
        let mut records = BTreeMap::new();
        for p in cluster.partitions() {
            records.insert(p, cluster.read(p)?);
        }
        for m in out.tracked[round_at..].iter_mut() {
            m.observe(&records[&m.partition], &cluster.cfg.root);
        }
        let round_done = out.tracked[round_at..].iter().all(|m| m.done.is_some());
        let all_up = cluster.nodes.len() == usize::from(cfg.nodes);
        if round_done && all_up && settled(&records) && !out.converged {
            if out.rounds >= ROUNDS_MAX {
                reporter.note(format!(
                    "the planner still proposes moves after {ROUNDS_MAX} rounds"
                ));
            } else {
                let now = started.elapsed().as_secs_f64();
                let view = planner::view(&records, cfg.nodes, cfg.rate, now);
                let plan = livemove_impl::planner::plan(&view, &history, &policy)?;
                history.record(&plan, now);
                out.converged = plan.moves.is_empty() && plan.hold.is_none();
                if !plan.moves.is_empty() {
                    out.rounds += 1;
                    round_at = out.tracked.len();
                    first_round.get_or_insert(plan.moves.len());
                    reporter.note(describe(out.rounds, &plan));
                    out.tracked.extend(plan.moves.iter().map(|m| {
                        TrackedMove::new(
                            planner::partition(m.partition),
                            m.is_handoff(),
                            planner::node(m.from),
                            planner::node(m.to),
                            out.rounds,
                        )
                    }));
                } else if out.converged && first_round.is_none() {
                    first_round = Some(0);
                }
            }
        }
        let round = &mut out.tracked[round_at..];
        // Moves in flight: the record's (one a recovery aborted is not).
        let in_flight = round
            .iter()
            .filter(|m| {
                !m.handoff
                    && records[&m.partition]
                        .move_task
                        .as_ref()
                        .is_some_and(|t| t.target.node == m.to)
            })
            .count();
        let mut may_start = cfg.moves_in_flight.saturating_sub(in_flight);
        for m in round.iter_mut().filter(|m| !m.handoff) {
            let r = &records[&m.partition];
            if m.done.is_some() || r.move_task.is_some() {
                continue;
            }
            if r.recovery.is_some() || r.handoff.is_some() || may_start == 0 {
                continue;
            }
            if !cluster.nodes.contains_key(&m.to) {
                continue;
            }
            // A follower that is down is replaced, as the model's
            // controller does (its liveness is what the failure detector
            // knows; here, exactly).
            let down = r
                .followers
                .iter()
                .map(|f| f.node)
                .find(|n| !cluster.nodes.contains_key(n))
                .filter(|_| !cfg.mutants.on(Mutant::NoReplacement));
            // The planner's leaving copy, while it is a follower (a
            // recovery may have made it the owner: the owner chooses then).
            let leaving = Some(m.from).filter(|f| r.followers.iter().any(|s| s.node == *f));
            let c = clients.get_mut(&m.to).expect("every node has a client");
            if let Ok(true) = c.join_as(m.partition, down, leaving).await {
                m.begin();
                may_start -= 1;
            }
        }
        for h in round.iter_mut().filter(|m| m.handoff) {
            let r = &records[&h.partition];
            let to = StorageId::first(h.to);
            let ready = r.followers.contains(&to)
                && !r.suspended.contains(&to)
                && r.handoff.is_none()
                && r.move_task.is_none()
                && r.recovery.is_none();
            if h.done.is_some() || !ready {
                continue;
            }
            let owner = r.owner.node;
            if !cluster.nodes.contains_key(&owner) {
                continue;
            }
            let c = clients.get_mut(&owner).expect("every node has a client");
            if let Ok(true) = c.hand_off(h.partition, h.to).await {
                h.begin();
            }
        }
        if let Some(first) = first_round {
            let begun = out.tracked[..first]
                .iter()
                .filter(|m| m.started.is_some())
                .count();
            if killed_at.is_none() && begun * 3 >= first {
                if let Some(node) = cluster.nodes.remove(&victim) {
                    node.kill().await;
                    cluster.trace_all(&crate::trace::Event::Crash { node: victim });
                    reporter.note(format!("{victim} killed in the middle of the moves"));
                }
                killed_at = Some(Instant::now());
            }
        }
        if let Some(t) = killed_at {
            if !restarted && t.elapsed() >= cfg.down {
                cluster.start(victim).await?;
                restarted = true;
                reporter.note(format!("{victim} restarted on its data directory"));
            }
        }
        reporter.tick(cluster, &out.tracked, &records).await;
        let recovering = records.values().any(|r| r.recovery.is_some());
        let finished = out.converged || out.rounds >= ROUNDS_MAX;
        if restarted && !recovering && finished && out.tracked.iter().all(|m| m.done.is_some()) {
            return Ok(out);
        }
        if started.elapsed() > cfg.deadline {
            let pending: Vec<String> = out
                .tracked
                .iter()
                .filter(|m| m.done.is_none())
                .map(|m| format!("{} {} ({})", m.partition, m.kind(), m.reason))
                .collect();
            return Err(DemoError::Stuck {
                what: "the planner's moves and handoffs",
                secs: cfg.deadline.as_secs_f64(),
                state: format!(
                    "round {}, {} pending: {}; nodes up: {}; unsettled: {}",
                    out.rounds,
                    pending.len(),
                    pending.join(", "),
                    cluster.nodes.len(),
                    unsettled(&records).join(", ")
                ),
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// One round's plan, in words.
fn describe(round: u32, plan: &Plan) -> String {
    let moves: Vec<String> = plan
        .moves
        .iter()
        .map(|m| {
            format!(
                "{} {} {}->{}",
                planner::partition(m.partition),
                if m.is_handoff() { "handoff" } else { "move" },
                planner::node(m.from),
                planner::node(m.to)
            )
        })
        .collect();
    format!("planner round {round}: {}", moves.join(", "))
}

/// After the clients stopped: wait until every partition is quiet (no
/// move, handoff or recovery pending; its owner serving at the record's
/// epoch with everything it holds confirmed) and return each owner's
/// status.
pub(super) async fn heal(
    cluster: &mut Cluster,
    reporter: &mut Reporter,
) -> Result<BTreeMap<Partition, (NodeId, Status)>, DemoError> {
    let started = Instant::now();
    let mut clients: BTreeMap<NodeId, NodeClient> = cluster
        .addrs
        .iter()
        .map(|(&n, &a)| (n, NodeClient::new(a)))
        .collect();
    loop {
        let mut quiet = BTreeMap::new();
        let mut waiting = Vec::new();
        let mut records = BTreeMap::new();
        for p in cluster.partitions() {
            let r = cluster.read(p)?;
            let owner = r.owner.node;
            let busy = r.move_task.is_some() || r.handoff.is_some() || r.recovery.is_some();
            let c = clients.get_mut(&owner).expect("every node has a client");
            let status = if busy { None } else { c.status(p).await.ok() };
            match status {
                Some(s)
                    if s.serving == Some(r.epoch)
                        && s.confirmed == Some(s.log_len)
                        && r.suspended.is_empty() =>
                {
                    quiet.insert(p, (owner, s));
                }
                s => waiting.push(format!(
                    "{p}: owner {owner}, move {}, handoff {}, recovery {}, suspended {}, status {s:?}",
                    r.move_task.is_some(),
                    r.handoff.is_some(),
                    r.recovery.is_some(),
                    r.suspended.len()
                )),
            }
            records.insert(p, r);
        }
        if waiting.is_empty() {
            return Ok(quiet);
        }
        if started.elapsed() > cluster.cfg.deadline {
            return Err(DemoError::Stuck {
                what: "every partition quiet after the traffic",
                secs: cluster.cfg.deadline.as_secs_f64(),
                state: waiting.join("; "),
            });
        }
        reporter.tick(cluster, &[], &records).await;
        tokio::time::sleep(POLL).await;
    }
}
