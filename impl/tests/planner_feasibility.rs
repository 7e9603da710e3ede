//! Catch-up feasibility in a planning round: a copy that could never catch
//! up is refused with that reason; a feasible one carries its estimate.

use livemove_impl::planner::feasibility::estimate;
use livemove_impl::planner::scenarios::builtin::uniform;
use livemove_impl::planner::{plan, History, Policy};

#[test]
fn a_target_that_applies_slower_than_the_partition_grows_is_refused() {
    // Three full nodes and one empty one that applies at 0.5 MB/s, below
    // every partition's 1 MB/s.
    let mut v = uniform(3, 1, 4, 30);
    v.nodes[3].apply_bps = 0.5e6;
    let p = plan(&v, &History::new(4, 30), &Policy::default()).unwrap();
    assert!(p.moves.iter().all(|m| m.is_handoff()), "{p:?}");
    assert!(p.refusals.catch_up_infeasible > 0, "{:?}", p.refusals);
}

#[test]
fn a_feasible_move_carries_d_over_b_plus_b_over_a_minus_r() {
    let v = uniform(3, 1, 4, 30);
    let p = plan(&v, &History::new(4, 30), &Policy::default()).unwrap();
    let m = p
        .moves
        .iter()
        .find(|m| !m.is_handoff())
        .expect("a follower move to the empty node");
    let spec = &v.partitions[m.partition as usize];
    let node = &v.nodes[m.to as usize];
    let want = estimate(
        spec.history_bytes as f64,
        node.bandwidth_bps,
        node.apply_bps,
        spec.incoming_bps,
    )
    .unwrap();
    assert_eq!(m.catch_up, Some(want));
    // 1 GiB at 100 MB/s, then 1 MB/s of backlog worked off at 49 MB/s.
    let d_over_b = (1u64 << 30) as f64 / 100e6;
    assert!((want.total_secs - (d_over_b + d_over_b * 1e6 / 49e6)).abs() < 1e-9);
}
