//! The load score: per node a small vector (owned, followed, history
//! weight, traffic, sync load), each over the node's capacity and the
//! cluster mean, combined with weights (note 1, "Load score").
//!
//! Loads are projected: a transfer in flight counts as done against its
//! target and its leaving node (in-flight influence), and its remaining
//! bytes count as sync load on the target and on the owner that sends them,
//! so a round never stacks moves on a node still catching up.

use crate::planner::policy::Policy;
use crate::planner::view::{ClusterView, NodeIx, PartIx};
use serde::{Deserialize, Serialize};

/// Settled dimensions: the ones a finished move changes (owned, copies,
/// history, traffic; the score vector reports followed = copies - owned).
pub const DIMS: usize = 4;
/// Index of owned partitions in a settled vector.
pub const OWNED: usize = 0;
/// Index of copies held, owned or followed. Balancing owned partitions and
/// copies balances followed partitions too, and keeps the two kinds of move
/// apart: a follower move changes copies, never ownership; a handoff changes
/// ownership, never copies. Balancing followed partitions directly would set
/// them against each other (a handoff lowers the new owner's followed
/// count), which stalls a scale-out one copy short of its share.
pub const COPIES: usize = 1;
/// Index of the history weight.
pub const HISTORY: usize = 2;
/// Index of traffic.
pub const TRAFFIC: usize = 3;
/// Dimension names, in index order.
pub const DIM_NAMES: [&str; DIMS] = ["owned", "copies", "history", "traffic"];

/// One node's score vector: each dimension over capacity, 1.0 = cluster mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreVector {
    /// Owned partitions.
    pub owned: f64,
    /// Followed partitions.
    pub followed: f64,
    /// Saturating history weight.
    pub history: f64,
    /// Traffic.
    pub traffic: f64,
    /// Sync load of transfers in progress.
    pub sync: f64,
    /// The weighted sum.
    pub total: f64,
}

/// Per-node loads of one round, projected over transfers in flight.
#[derive(Clone, Debug)]
pub struct Loads {
    /// Settled loads per node, raw units.
    pub x: Vec<[f64; DIMS]>,
    /// Remaining bytes of transfers to or from each node.
    pub sync_bytes: Vec<f64>,
    /// Each node's capacity (0 for draining nodes).
    pub capacity: Vec<f64>,
    /// Sum of capacities.
    pub capacity_total: f64,
    /// Cluster total per dimension, raw units.
    pub total: [f64; DIMS],
    /// Mean per dimension, per unit of capacity.
    pub mean: [f64; DIMS],
    /// Mean contribution of one item (owned partition, followed partition, copy) per dimension.
    pub unit: [f64; DIMS],
    /// Bytes of history per unit of capacity: the sync load's yardstick.
    pub sync_ref_bytes: f64,
    /// Weights copied from the policy.
    pub weights: [f64; DIMS],
    /// Sync weight.
    pub sync_weight: f64,
    /// The policy's fixing band for history and traffic (`Policy::fix_frac`).
    pub fix_frac: f64,
    /// The policy's margin (`Policy::margin`).
    pub margin: f64,
}

/// The saturating history weight of one copy.
pub fn history_weight(history_bytes: u64, k_bytes: f64) -> f64 {
    let h = history_bytes as f64;
    h / (h + k_bytes)
}

/// What one copy of `p` adds to its node, as owner or as follower.
///
/// Traffic (publish and delivery) is served by the owner; a follower's
/// replication work is in its copies and history. So a follower move never
/// changes owned partitions or traffic and a handoff never changes copies or
/// history: the two kinds of move balance disjoint dimensions and never undo
/// each other's work.
pub fn contribution(view: &ClusterView, policy: &Policy, p: PartIx, owner: bool) -> [f64; DIMS] {
    let spec = &view.partitions[p as usize];
    let hw = history_weight(spec.history_bytes, policy.history_k_bytes);
    if owner {
        [1.0, 1.0, hw, spec.traffic]
    } else {
        [0.0, 1.0, hw, 0.0]
    }
}

impl Loads {
    /// Project `view`'s loads.
    pub fn compute(view: &ClusterView, policy: &Policy) -> Loads {
        let n = view.nodes.len();
        let mut x = vec![[0.0; DIMS]; n];
        let mut sync_bytes = vec![0.0; n];
        let mut copy_bytes = 0.0;
        let mut copies = 0.0;
        for (p, pl) in view.placement.iter().enumerate() {
            let own = contribution(view, policy, p as PartIx, true);
            let fol = contribution(view, policy, p as PartIx, false);
            add(&mut x[pl.owner as usize], &own, 1.0);
            for &f in &pl.followers {
                add(&mut x[f as usize], &fol, 1.0);
            }
            let k = 1 + pl.followers.len();
            copies += k as f64;
            copy_bytes += (view.partitions[p].history_bytes as f64) * k as f64;
        }
        for t in &view.transfers {
            let fol = contribution(view, policy, t.partition, false);
            add(&mut x[t.leaving as usize], &fol, -1.0);
            add(&mut x[t.target as usize], &fol, 1.0);
            let b = t.bytes_remaining as f64;
            sync_bytes[t.target as usize] += b;
            sync_bytes[view.placement[t.partition as usize].owner as usize] += b;
        }
        let capacity: Vec<f64> = view
            .nodes
            .iter()
            .map(|s| if s.draining { 0.0 } else { s.capacity })
            .collect();
        let capacity_total: f64 = capacity.iter().sum();
        let mut total = [0.0; DIMS];
        for row in &x {
            add(&mut total, row, 1.0);
        }
        let per_cap = |v: f64| {
            if capacity_total > 0.0 {
                v / capacity_total
            } else {
                0.0
            }
        };
        let mean = total.map(per_cap);
        let unit = [
            1.0,
            1.0,
            total[HISTORY] / copies.max(1.0),
            total[TRAFFIC] / copies.max(1.0),
        ];
        let w = policy.weights;
        Loads {
            x,
            sync_bytes,
            capacity,
            capacity_total,
            total,
            mean,
            unit,
            sync_ref_bytes: per_cap(copy_bytes),
            weights: [w.owned, w.followed, w.history, w.traffic],
            sync_weight: w.sync,
            fix_frac: policy.fix_frac,
            margin: policy.margin,
        }
    }

    /// Node `n`'s score vector. A draining node is scored as if its
    /// capacity were 1, so its score shows what it still holds.
    pub fn score(&self, n: NodeIx) -> ScoreVector {
        let n = n as usize;
        let c = if self.capacity[n] > 0.0 {
            self.capacity[n]
        } else {
            1.0
        };
        let sync = ratio(self.sync_bytes[n], c * self.sync_ref_bytes);
        let s: [f64; DIMS] = std::array::from_fn(|d| ratio(self.x[n][d], c * self.mean[d]));
        let followed = ratio(
            self.x[n][COPIES] - self.x[n][OWNED],
            c * (self.mean[COPIES] - self.mean[OWNED]),
        );
        let total = self.weights[OWNED] * s[OWNED]
            + self.weights[COPIES] * followed
            + self.weights[HISTORY] * s[HISTORY]
            + self.weights[TRAFFIC] * s[TRAFFIC]
            + self.sync_weight * sync;
        ScoreVector {
            owned: s[OWNED],
            followed,
            history: s[HISTORY],
            traffic: s[TRAFFIC],
            sync,
            total,
        }
    }

    /// The weighted score a node would have at the mean in every settled
    /// dimension with no sync load.
    pub fn mean_total(&self) -> f64 {
        (0..DIMS)
            .filter(|&d| self.mean[d] > 0.0)
            .map(|d| self.weights[d])
            .sum()
    }

    /// Move `w` (raw units) from node `a` to node `b`.
    pub fn shift(&mut self, a: NodeIx, b: NodeIx, w: &[f64; DIMS]) {
        add(&mut self.x[a as usize], w, -1.0);
        add(&mut self.x[b as usize], w, 1.0);
    }
}

fn ratio(v: f64, d: f64) -> f64 {
    if d > 0.0 {
        v / d
    } else {
        0.0
    }
}

fn add(acc: &mut [f64; DIMS], w: &[f64; DIMS], k: f64) {
    for d in 0..DIMS {
        acc[d] += k * w[d];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::scenarios::builtin::uniform;

    #[test]
    fn history_weight_saturates_so_one_huge_partition_cannot_dominate() {
        let k = (1u64 << 30) as f64;
        assert_eq!(history_weight(1 << 30, k), 0.5);
        assert!(history_weight(1 << 40, k) < 1.0);
        assert!(history_weight(1 << 40, k) > history_weight(1 << 31, k));
    }

    #[test]
    fn a_balanced_cluster_scores_the_mean_in_every_dimension() {
        let v = uniform(10, 0, 5, 1000);
        let l = Loads::compute(&v, &Policy::default());
        let s = l.score(3);
        for x in [s.owned, s.followed, s.history, s.traffic] {
            assert!((x - 1.0).abs() < 1e-12, "{s:?}");
        }
        assert_eq!(s.sync, 0.0);
        assert!((s.total - l.mean_total()).abs() < 1e-12);
    }

    #[test]
    fn a_double_capacity_node_holding_the_same_load_scores_half() {
        let mut v = uniform(4, 0, 4, 100);
        v.nodes[0].capacity = 2.0;
        let l = Loads::compute(&v, &Policy::default());
        assert!((l.score(0).owned * 2.0 - l.score(1).owned).abs() < 1e-12);
    }

    #[test]
    fn a_transfer_in_flight_counts_as_done_and_as_sync_load() {
        let mut v = uniform(3, 1, 4, 30);
        let before = Loads::compute(&v, &Policy::default());
        v.transfers.push(crate::planner::Transfer {
            partition: 0,
            target: 3,
            leaving: 1,
            bytes_remaining: 1 << 30,
            secs_remaining: 10.0,
        });
        let l = Loads::compute(&v, &Policy::default());
        assert_eq!(l.x[3][COPIES], before.x[3][COPIES] + 1.0);
        assert_eq!(l.x[1][COPIES], before.x[1][COPIES] - 1.0);
        assert!(
            l.score(3).sync > 0.0 && l.score(0).sync > 0.0,
            "target and owner carry it"
        );
        assert_eq!(l.score(2).sync, 0.0);
    }
}
