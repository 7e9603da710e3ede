//! Hard limits on concurrent transfers, apart from the score: per node in
//! and out, per cluster. Transfers already in flight count first.

pub mod cooldown;

use crate::planner::policy::Limits;
use crate::planner::view::{ClusterView, NodeIx};

/// Transfers (and this round's handoffs) counted against the limits.
#[derive(Clone, Debug)]
pub struct Budget {
    limits: Limits,
    incoming: Vec<u32>,
    outgoing: Vec<u32>,
    handoffs: Vec<u32>,
    cluster: u32,
}

impl Budget {
    /// The budget left by the transfers in flight.
    pub fn new(view: &ClusterView, limits: Limits) -> Budget {
        let n = view.nodes.len();
        let mut b = Budget {
            limits,
            incoming: vec![0; n],
            outgoing: vec![0; n],
            handoffs: vec![0; n],
            cluster: 0,
        };
        for t in &view.transfers {
            b.incoming[t.target as usize] += 1;
            b.outgoing[t.leaving as usize] += 1;
            b.cluster += 1;
        }
        b
    }

    /// Whether the cluster can start another transfer.
    pub fn cluster_room(&self) -> bool {
        self.cluster < self.limits.cluster_max
    }

    /// Whether `n` can send off another copy.
    pub fn can_send(&self, n: NodeIx) -> bool {
        self.outgoing[n as usize] < self.limits.node_outgoing_max
    }

    /// Whether `n` can receive another copy.
    pub fn can_receive(&self, n: NodeIx) -> bool {
        self.incoming[n as usize] < self.limits.node_incoming_max
    }

    /// Whether a transfer from `a` to `b` fits.
    pub fn transfer_fits(&self, a: NodeIx, b: NodeIx) -> bool {
        self.cluster_room() && self.can_send(a) && self.can_receive(b)
    }

    /// Count a planned transfer.
    pub fn take_transfer(&mut self, a: NodeIx, b: NodeIx) {
        assert!(
            self.transfer_fits(a, b),
            "a transfer {a} -> {b} was planned beyond the limits"
        );
        self.outgoing[a as usize] += 1;
        self.incoming[b as usize] += 1;
        self.cluster += 1;
    }

    /// Whether `n` can take part in another handoff this round.
    pub fn handoff_room(&self, n: NodeIx) -> bool {
        self.handoffs[n as usize] < self.limits.node_handoffs_max
    }

    /// Count a planned handoff.
    pub fn take_handoff(&mut self, a: NodeIx, b: NodeIx) {
        assert!(
            self.handoff_room(a) && self.handoff_room(b),
            "a handoff {a} -> {b} was planned beyond the per-node limit"
        );
        self.handoffs[a as usize] += 1;
        self.handoffs[b as usize] += 1;
    }

    /// Transfers counted so far (in flight plus planned).
    pub fn transfers(&self) -> u32 {
        self.cluster
    }
}
