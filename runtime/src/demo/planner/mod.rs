//! The rebalance planner's view of the demo's cluster, and the policy the
//! demo plans under.
//!
//! The view is read from the records: every partition's owner and
//! followers (its counted copies), and a move in flight as a transfer. The
//! demo's nodes are alike (capacity 1, one failure domain each: the demo
//! has no racks) and its partitions too (one client each at one publish
//! rate), so the planner balances copies and ownership. The view has no
//! liveness: the demo plans a round only when every node is up and no
//! move, handoff or recovery is pending (a round per settled state), and a
//! recovery pending anywhere holds the planner as it holds the controller.

use crate::partition::Partition;
use livemove_impl::planner::{
    ClusterView, NodeIx, NodeSpec, PartIx, PartitionSpec, Placement, Policy, Transfer,
};
use livemove_impl::store::Record;
use livemove_impl::NodeId;
use std::collections::BTreeMap;

/// History every partition is taken to hold, bytes: they all publish at
/// one rate, so one size keeps the plan a function of the placement alone.
pub const HISTORY_BYTES: u64 = 1 << 20;
/// A publish's bytes on the wire and on disk, roughly (the planner only
/// needs the incoming rate far below the apply rate).
pub const ENTRY_BYTES: f64 = 64.0;
/// How fast a node applies and receives a log it catches up on, bytes per
/// second: a local disk and loopback, far above any demo's publish rate.
pub const NODE_BPS: f64 = 50e6;

/// The planner's index of node `n` (`n1` is 0).
pub fn ix(n: NodeId) -> NodeIx {
    NodeIx::from(n.0) - 1
}

/// The node at planner index `i`.
pub fn node(i: NodeIx) -> NodeId {
    NodeId(u8::try_from(i + 1).expect("the demo has fewer than 256 nodes"))
}

/// The partition at planner index `p`.
pub fn partition(p: PartIx) -> Partition {
    Partition(p)
}

/// The policy the demo plans under: the planner's defaults, with two
/// changes. Its transfer limits take the demo's moves in flight as the
/// cluster's and every node's incoming limit (the defaults' 2 into a node
/// would halve the demo's pace onto the new node). Its partition cooldown
/// is 0: the whole demo lasts about a minute, and the default's 10
/// minutes would hold back every handoff onto the new node, which only
/// follows a copy moved there in this run; reversals stay refused for the
/// retained copy's grace period.
pub fn policy(moves_in_flight: usize) -> Policy {
    let mut p = Policy::default();
    let limit = u32::try_from(moves_in_flight).unwrap_or(u32::MAX);
    p.limits.cluster_max = limit;
    p.limits.node_incoming_max = limit;
    p.partition_cooldown_secs = 0.0;
    p
}

/// The planner's view of `records` on `nodes` nodes at `now_secs`;
/// `rate` is each partition's publishes per second.
pub fn view(
    records: &BTreeMap<Partition, Record>,
    nodes: u8,
    rate: f64,
    now_secs: f64,
) -> ClusterView {
    let spec = NodeSpec {
        domain: 0,
        capacity: 1.0,
        apply_bps: NODE_BPS,
        bandwidth_bps: NODE_BPS,
        draining: false,
    };
    let mut partitions = Vec::with_capacity(records.len());
    let mut placement = Vec::with_capacity(records.len());
    let mut transfers = Vec::new();
    for (i, (p, r)) in records.iter().enumerate() {
        assert_eq!(p.0 as usize, i, "the records are every partition, in order");
        partitions.push(PartitionSpec {
            history_bytes: HISTORY_BYTES,
            incoming_bps: rate * ENTRY_BYTES,
            traffic: 1.0,
        });
        let owner = ix(r.owner.node);
        let followers: Vec<NodeIx> = r.followers.iter().map(|f| ix(f.node)).collect();
        // A move in flight is a transfer when its target holds no counted
        // copy yet and its leaving copy is known: the one it replaces or
        // names, else the follower the owner takes out (the highest).
        if let Some(m) = r.move_task.as_ref().filter(|m| !m.promotion) {
            let leaving = m
                .replaces
                .or(m.leaving)
                .or_else(|| r.followers.iter().max_by_key(|f| f.node).copied());
            let target = ix(m.target.node);
            if let Some(l) = leaving.filter(|_| !followers.contains(&target) && owner != target) {
                if followers.contains(&ix(l.node)) {
                    transfers.push(Transfer {
                        partition: p.0,
                        target,
                        leaving: ix(l.node),
                        bytes_remaining: HISTORY_BYTES,
                        secs_remaining: HISTORY_BYTES as f64 / NODE_BPS,
                    });
                }
            }
        }
        placement.push(Placement { owner, followers });
    }
    ClusterView {
        nodes: (0..NodeIx::from(nodes))
            .map(|i| NodeSpec { domain: i, ..spec })
            .collect(),
        partitions,
        placement,
        transfers,
        retained: Vec::new(),
        recovery_pending: records.values().any(|r| r.recovery.is_some()),
        paused: records.values().any(|r| r.paused),
        now_secs,
    }
}

/// Copies per node in `records`, owned or followed, and owned partitions,
/// for nodes `n1` to `n<nodes>`.
pub fn balance(records: &BTreeMap<Partition, Record>, nodes: u8) -> BTreeMap<NodeId, (u32, u32)> {
    let mut out: BTreeMap<NodeId, (u32, u32)> = (1..=nodes).map(|n| (NodeId(n), (0, 0))).collect();
    for r in records.values() {
        for s in r.counted() {
            if let Some(c) = out.get_mut(&s.node) {
                c.0 += 1;
            }
        }
        if let Some(c) = out.get_mut(&r.owner.node) {
            c.1 += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests;
