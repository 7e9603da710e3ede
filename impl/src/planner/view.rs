//! What the planner reads: the nodes, the partitions, where their copies
//! are, the transfers in flight, retained copies, and the cluster-wide
//! facts that hold planning back (a pending recovery, an operator pause).

use crate::planner::error::PlanError;
use serde::{Deserialize, Serialize};

/// A node's index in `ClusterView::nodes`.
pub type NodeIx = u32;
/// A partition's index in `ClusterView::partitions`.
pub type PartIx = u32;

/// One broker as the planner sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// Its failure domain (rack or zone).
    pub domain: u32,
    /// Relative capacity (1.0, 2.0, 4.0 ...); every score dimension is
    /// divided by it.
    pub capacity: f64,
    /// How fast the node applies a log it catches up on, bytes per second (a).
    pub apply_bps: f64,
    /// Effective replication bandwidth into the node, bytes per second (b).
    pub bandwidth_bps: f64,
    /// Being drained: it should end with no copy and is never a target.
    pub draining: bool,
}

/// One queue partition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartitionSpec {
    /// Retained history in bytes: what a new copy must fetch (D).
    pub history_bytes: u64,
    /// Publish rate into the partition, bytes per second (r): a catching-up
    /// copy must apply faster than this.
    pub incoming_bps: f64,
    /// Publish plus delivery load the owner serves, in load units.
    pub traffic: f64,
}

/// Where a partition's counted copies are: the owner and its followers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The owning node.
    pub owner: NodeIx,
    /// The following nodes.
    pub followers: Vec<NodeIx>,
}

impl Placement {
    /// Whether `n` holds a counted copy.
    #[inline]
    pub fn holds(&self, n: NodeIx) -> bool {
        self.owner == n || self.followers.contains(&n)
    }

    /// Every node holding a counted copy, owner first.
    pub fn copies(&self) -> impl Iterator<Item = NodeIx> + '_ {
        std::iter::once(self.owner).chain(self.followers.iter().copied())
    }
}

/// A follower move in flight: the target is a learner catching up (step 0
/// written, swap and removal to come).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    /// The partition.
    pub partition: PartIx,
    /// The joining node.
    pub target: NodeIx,
    /// The follower that leaves at the swap.
    pub leaving: NodeIx,
    /// Bytes still to copy (snapshot plus backlog).
    pub bytes_remaining: u64,
    /// Estimated seconds until the target covers the tail.
    pub secs_remaining: f64,
}

/// A copy a node stopped counting for but still keeps for a grace period:
/// a move back to it starts from this copy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Retained {
    /// The partition.
    pub partition: PartIx,
    /// The node keeping the copy.
    pub node: NodeIx,
    /// When it stopped counting, seconds.
    pub since_secs: f64,
}

/// Everything one planning round reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterView {
    /// The nodes.
    pub nodes: Vec<NodeSpec>,
    /// The partitions.
    pub partitions: Vec<PartitionSpec>,
    /// Counted copies per partition, same index as `partitions`.
    pub placement: Vec<Placement>,
    /// Follower moves in flight.
    pub transfers: Vec<Transfer>,
    /// Retained copies within their grace period.
    pub retained: Vec<Retained>,
    /// Some partition has a pending recovery: nothing is planned.
    pub recovery_pending: bool,
    /// The operator paused rebalancing: nothing is planned.
    pub paused: bool,
    /// The current time, seconds.
    pub now_secs: f64,
}

impl ClusterView {
    /// Check the view's shape: indices in range, no node twice in a
    /// partition, at most one transfer per partition, positive capacities
    /// except on draining nodes.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.nodes.is_empty() {
            return Err(PlanError::NoNodes);
        }
        if self.placement.len() != self.partitions.len() {
            return Err(PlanError::PlacementLength {
                placement: self.placement.len(),
                partitions: self.partitions.len(),
            });
        }
        let n = self.nodes.len() as u32;
        for (i, node) in self.nodes.iter().enumerate() {
            let bad_capacity = !(node.capacity.is_finite() && node.capacity >= 0.0)
                || (node.capacity == 0.0 && !node.draining);
            if bad_capacity || !(node.apply_bps > 0.0 && node.bandwidth_bps > 0.0) {
                return Err(PlanError::BadNode {
                    node: i as NodeIx,
                    reason: "capacity must be positive (zero only when draining), rates positive",
                });
            }
        }
        for (p, pl) in self.placement.iter().enumerate() {
            let p = p as PartIx;
            for (i, c) in pl.copies().enumerate() {
                if c >= n {
                    return Err(PlanError::UnknownNode {
                        partition: p,
                        node: c,
                    });
                }
                if pl.copies().take(i).any(|o| o == c) {
                    return Err(PlanError::DuplicateCopy {
                        partition: p,
                        node: c,
                    });
                }
            }
        }
        let mut moving = vec![false; self.partitions.len()];
        for t in &self.transfers {
            let Some(pl) = self.placement.get(t.partition as usize) else {
                return Err(PlanError::UnknownPartition {
                    partition: t.partition,
                });
            };
            if t.target >= n || pl.holds(t.target) || !pl.followers.contains(&t.leaving) {
                return Err(PlanError::BadTransfer {
                    partition: t.partition,
                    target: t.target,
                    leaving: t.leaving,
                });
            }
            if std::mem::replace(&mut moving[t.partition as usize], true) {
                return Err(PlanError::TwoTransfers {
                    partition: t.partition,
                });
            }
        }
        Ok(())
    }
}
