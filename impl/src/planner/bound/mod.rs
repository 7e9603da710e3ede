//! Lower bounds on the work a rebalance needs.
//!
//! For each node a target share of the total by capacity and a band [L, U]
//! of one item either side of it; excess E = sum of max(0, c - U), deficit
//! D = sum of max(0, L - c); a dimension needs at least max(E, D) unit
//! moves, since one move takes one item off one node and puts it on one
//! other node.
//!
//! Copies change only by follower moves and ownership only by handoffs (a
//! handoff keeps every copy where it is; a follower move never moves an
//! owner), so the two bounds add up: moves >= LB(copies) + LB(owned).
//! Bytes have their own bound, with a band of one mean copy's bytes.

use crate::planner::view::ClusterView;
use serde::{Deserialize, Serialize};

/// The bounds of one placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LowerBounds {
    /// Follower moves: the bound on copies per node.
    pub follower_moves: u64,
    /// Handoffs: the bound on owned partitions per node.
    pub handoffs: u64,
    /// Their sum, the bound on moves.
    pub moves: u64,
    /// Bytes copied.
    pub bytes: u64,
}

/// max(E, D) of `counts` against shares by `capacity` with a band of
/// `slack` either side (integer band edges when `integer`). A node with
/// capacity 0 must end empty.
pub fn band_bound(counts: &[f64], capacity: &[f64], slack: f64, integer: bool) -> f64 {
    assert_eq!(
        counts.len(),
        capacity.len(),
        "one count per node and one capacity per node"
    );
    let total: f64 = counts.iter().sum();
    let cap: f64 = capacity.iter().sum();
    if cap <= 0.0 {
        return 0.0;
    }
    let (mut excess, mut deficit) = (0.0, 0.0);
    for (&x, &c) in counts.iter().zip(capacity) {
        let share = total * c / cap;
        let (lo, hi) = if c == 0.0 {
            (0.0, 0.0)
        } else if integer {
            (((share - slack).ceil()).max(0.0), (share + slack).floor())
        } else {
            ((share - slack).max(0.0), share + slack)
        };
        excess += (x - hi).max(0.0);
        deficit += (lo - x).max(0.0);
    }
    excess.max(deficit)
}

/// The bounds for rebalancing `view`'s placement (transfers in flight are
/// not counted as done).
pub fn lower_bounds(view: &ClusterView) -> LowerBounds {
    let n = view.nodes.len();
    let capacity: Vec<f64> = view
        .nodes
        .iter()
        .map(|s| if s.draining { 0.0 } else { s.capacity })
        .collect();
    let mut copies = vec![0.0; n];
    let mut owned = vec![0.0; n];
    let mut bytes = vec![0.0; n];
    let mut copy_count = 0.0;
    for (p, pl) in view.placement.iter().enumerate() {
        owned[pl.owner as usize] += 1.0;
        let h = view.partitions[p].history_bytes as f64;
        for c in pl.copies() {
            copies[c as usize] += 1.0;
            bytes[c as usize] += h;
            copy_count += 1.0;
        }
    }
    let mean_copy_bytes = bytes.iter().sum::<f64>() / f64::max(copy_count, 1.0);
    let follower_moves = band_bound(&copies, &capacity, 1.0, true) as u64;
    let handoffs = band_bound(&owned, &capacity, 1.0, true) as u64;
    LowerBounds {
        follower_moves,
        handoffs,
        moves: follower_moves + handoffs,
        bytes: band_bound(&bytes, &capacity, mean_copy_bytes, false).ceil() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::band_bound;

    fn note2(new_nodes: usize) -> f64 {
        let mut counts = vec![100.0; 10];
        counts.resize(10 + new_nodes, 0.0);
        band_bound(&counts, &vec![1.0; counts.len()], 1.0, true)
    }

    #[test]
    fn note_2_one_node_added_to_1000_partitions_on_10_needs_90_moves() {
        assert_eq!(note2(1), 90.0);
    }

    #[test]
    fn note_2_two_nodes_added_need_166_moves() {
        assert_eq!(note2(2), 166.0);
    }

    #[test]
    fn a_balanced_placement_needs_nothing() {
        assert_eq!(band_bound(&[5.0, 5.0, 4.0], &[1.0; 3], 1.0, true), 0.0);
    }

    #[test]
    fn a_node_with_no_capacity_must_shed_everything() {
        // Drain: 10 on the drained node, 9 and 11 elsewhere go to 15 each.
        assert_eq!(
            band_bound(&[10.0, 9.0, 11.0], &[0.0, 1.0, 1.0], 1.0, true),
            10.0
        );
    }

    #[test]
    fn shares_follow_capacity() {
        // 70 items on capacities 1, 2, 4: shares 10, 20, 40; the first must
        // come down to 11 and the last up to 39.
        assert_eq!(
            band_bound(&[40.0, 20.0, 10.0], &[1.0, 2.0, 4.0], 1.0, true),
            29.0
        );
    }
}
