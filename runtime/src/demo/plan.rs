//! The fixed plan: the new node takes a copy of `joins` (a planned follower
//! move each: the node's own `AddLearner`, then the owner's admission, swap,
//! switch and removal of the follower with the highest node id), then
//! ownership of `handoffs` (the owner's handoff at a barrier). The victim
//! is killed once a third of the moves have started and comes back on its
//! data directory after `DemoConfig::down`. A move that a recovery aborted
//! is asked for again. A move started while a follower of the partition is
//! down replaces that follower (its copy leaves at the swap), as the
//! model's controller does; under the `no_replacement` mutant it does not,
//! and the trace validator rejects the run (finding 30).

use super::report::{Reporter, TrackedMove};
use super::{Cluster, DemoError};
use crate::partition::Partition;
use crate::tcp::client::NodeClient;
use crate::tcp::Status;
use livemove_impl::store::{MovePhase, Record};
use livemove_impl::{Mutant, NodeId, StorageId};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often the plan reads the records.
const POLL: Duration = Duration::from_millis(50);

/// Partitions the new node takes a copy of: its share, rf of every
/// `nodes` partitions.
pub fn joins(partitions: u32, nodes: u8, rf: u8) -> Vec<Partition> {
    (0..partitions)
        .filter(|p| p % u32::from(nodes) < u32::from(rf))
        .map(Partition)
        .collect()
}

/// Partitions the new node then owns: one of every `nodes`.
pub fn handoffs(partitions: u32, nodes: u8) -> Vec<Partition> {
    (0..partitions)
        .filter(|p| p % u32::from(nodes) == 0)
        .map(Partition)
        .collect()
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

pub(super) async fn run(
    cluster: &mut Cluster,
    reporter: &mut Reporter,
    newcomer: NodeId,
    victim: NodeId,
) -> Result<Vec<TrackedMove>, DemoError> {
    let cfg = cluster.cfg.clone();
    let me = StorageId::first(newcomer);
    let mut moves: BTreeMap<Partition, TrackedMove> = joins(cfg.partitions, cfg.nodes, cfg.rf)
        .into_iter()
        .map(|p| (p, TrackedMove::new(p, false)))
        .collect();
    let mut owners: BTreeMap<Partition, TrackedMove> = handoffs(cfg.partitions, cfg.nodes)
        .into_iter()
        .map(|p| (p, TrackedMove::new(p, true)))
        .collect();
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
        // Moves in flight: the record's (one a recovery aborted is not).
        let in_flight = moves
            .keys()
            .filter(|p| {
                records[*p]
                    .move_task
                    .as_ref()
                    .is_some_and(|m| m.target == me)
            })
            .count();
        let mut may_start = cfg.moves_in_flight.saturating_sub(in_flight);
        for (p, m) in moves.iter_mut() {
            let r = &records[p];
            m.observe(r, me, &cluster.cfg.root, newcomer);
            if m.done.is_some() || r.move_task.is_some() {
                continue;
            }
            if r.recovery.is_some() || r.handoff.is_some() || may_start == 0 {
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
            let c = clients.get_mut(&newcomer).expect("every node has a client");
            if let Ok(true) = c.join(*p, down).await {
                m.begin();
                may_start -= 1;
            }
        }
        for (p, h) in owners.iter_mut() {
            let r = &records[p];
            h.observe(r, me, &cluster.cfg.root, newcomer);
            let ready = r.followers.contains(&me)
                && !r.suspended.contains(&me)
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
            if let Ok(true) = c.hand_off(*p, newcomer).await {
                h.begin();
            }
        }
        let begun = moves.values().filter(|m| m.started.is_some()).count();
        if killed_at.is_none() && begun * 3 >= moves.len().max(1) {
            if let Some(node) = cluster.nodes.remove(&victim) {
                node.kill().await;
                cluster.trace_all(&crate::trace::Event::Crash { node: victim });
                reporter.note(format!("{victim} killed in the middle of the moves"));
            }
            killed_at = Some(Instant::now());
        }
        if let Some(t) = killed_at {
            if !restarted && t.elapsed() >= cfg.down {
                cluster.start(victim).await?;
                restarted = true;
                reporter.note(format!("{victim} restarted on its data directory"));
            }
        }
        let tracked: Vec<TrackedMove> = moves.values().chain(owners.values()).cloned().collect();
        reporter.tick(cluster, &tracked, &records).await;
        let recovering = records.values().any(|r| r.recovery.is_some());
        if restarted
            && !recovering
            && moves.values().all(|m| m.done.is_some())
            && owners.values().all(|m| m.done.is_some())
        {
            return Ok(tracked);
        }
        if started.elapsed() > cfg.deadline {
            let pending: Vec<String> = tracked
                .iter()
                .filter(|m| m.done.is_none())
                .map(|m| format!("{} {} ({})", m.partition, m.kind(), m.reason))
                .collect();
            return Err(DemoError::Stuck {
                what: "the moves and handoffs",
                secs: cfg.deadline.as_secs_f64(),
                state: format!(
                    "{} pending: {}; recoveries pending: {}",
                    pending.len(),
                    pending.join(", "),
                    records.values().filter(|r| r.recovery.is_some()).count()
                ),
            });
        }
        tokio::time::sleep(POLL).await;
    }
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
