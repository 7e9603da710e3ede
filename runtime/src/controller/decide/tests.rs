//! The decisions on records built by the store's own writes: n1 owns, n2
//! and n3 follow, n4 holds nothing (rf 3).

use super::*;
use livemove_impl::store::{write, Write};
use livemove_impl::Mutants;
use std::collections::BTreeSet;

const LEASE_MS: u64 = 100;

fn n(i: u8) -> NodeId {
    NodeId(i)
}

fn s(i: u8, disk: u32) -> StorageId {
    StorageId { node: n(i), disk }
}

fn initial() -> Record {
    Record::initial(s(1, 0), [s(2, 0), s(3, 0)], 3)
}

fn apply(r: &Record, w: Write) -> Record {
    write::apply(r, &w, Mutants::NONE).expect("the store takes the write")
}

/// Facts read the controller's way: lost from the record, up by lease.
struct Seen<'a> {
    record: &'a Record,
    down: BTreeSet<NodeId>,
}

impl Facts for Seen<'_> {
    fn lost(&self, s: StorageId) -> bool {
        self.record.lost.contains(&s)
    }
    fn up(&self, n: NodeId) -> bool {
        !self.down.contains(&n)
    }
}

fn seen<'a>(record: &'a Record, down: &[u8]) -> Seen<'a> {
    Seen {
        record,
        down: down.iter().map(|&i| n(i)).collect(),
    }
}

fn nodes() -> impl Iterator<Item = NodeId> {
    (1..=4).map(n)
}

fn n3_lost() -> Record {
    apply(&initial(), Write::MarkLost { storage: s(3, 0) })
}

#[test]
fn a_lost_follower_is_replaced_by_its_own_nodes_new_instance() {
    let r = n3_lost();
    assert_eq!(
        replacement(&r, nodes(), &seen(&r, &[])),
        Some(Replacement {
            by: n(3),
            replaces: s(3, 0)
        })
    );
}

#[test]
fn a_lost_follower_whose_node_is_down_again_is_replaced_by_the_lowest_free_node() {
    let r = n3_lost();
    assert_eq!(
        replacement(&r, nodes(), &seen(&r, &[3])),
        Some(Replacement {
            by: n(4),
            replaces: s(3, 0)
        })
    );
}

#[test]
fn a_down_follower_below_the_lost_one_is_replaced_first_by_a_free_node() {
    let r = n3_lost();
    assert_eq!(
        replacement(&r, nodes(), &seen(&r, &[2])),
        Some(Replacement {
            by: n(3),
            replaces: s(2, 0)
        }),
        "n3's new instance is free: its only named instance is lost"
    );
}

#[test]
fn a_follower_only_down_is_not_replaced() {
    let r = initial();
    assert_eq!(replacement(&r, nodes(), &seen(&r, &[3])), None);
}

#[test]
fn nothing_is_replaced_while_a_move_is_pending() {
    let r = apply(
        &n3_lost(),
        Write::AddLearner {
            target: s(3, 1),
            leaving: None,
            replaces: Some(s(3, 0)),
        },
    );
    assert_eq!(replacement(&r, nodes(), &seen(&r, &[])), None);
}

#[test]
fn nothing_is_replaced_when_no_node_is_free() {
    let r = n3_lost();
    assert_eq!(replacement(&r, nodes(), &seen(&r, &[3, 4])), None);
}

#[test]
fn the_owners_node_never_takes_the_copy() {
    let r = n3_lost();
    assert_eq!(replacement(&r, [n(1)], &seen(&r, &[3])), None);
}

/// A move onto n4 past its swap, n3 leaving.
fn swapped() -> Record {
    let r = apply(
        &initial(),
        Write::AddLearner {
            target: s(4, 0),
            leaving: None,
            replaces: None,
        },
    );
    let r = apply(
        &r,
        Write::AdmitLearner {
            target: s(4, 0),
            durable: 0,
            owner_confirmed: 0,
        },
    );
    apply(
        &r,
        Write::Swap {
            target: s(4, 0),
            leaving: s(3, 0),
            durable: 0,
            owner_confirmed: 0,
        },
    )
}

#[test]
fn a_swapped_target_down_for_the_lease_is_swapped_back_by_the_owners_node() {
    let r = swapped();
    let mut w = TargetWatch::default();
    assert_eq!(w.due(&r, &seen(&r, &[4]), 1000, LEASE_MS), None);
    assert_eq!(w.due(&r, &seen(&r, &[4]), 1099, LEASE_MS), None);
    assert_eq!(w.due(&r, &seen(&r, &[4]), 1100, LEASE_MS), Some(n(1)));
    w.done();
    assert_eq!(
        w.due(&r, &seen(&r, &[4]), 1101, LEASE_MS),
        None,
        "after a swap back the watch starts over"
    );
}

#[test]
fn a_target_seen_back_starts_the_lease_over() {
    let r = swapped();
    let mut w = TargetWatch::default();
    assert_eq!(w.due(&r, &seen(&r, &[4]), 1000, LEASE_MS), None);
    assert_eq!(w.due(&r, &seen(&r, &[]), 1050, LEASE_MS), None);
    assert_eq!(w.due(&r, &seen(&r, &[4]), 1100, LEASE_MS), None);
    assert_eq!(w.due(&r, &seen(&r, &[4]), 1200, LEASE_MS), Some(n(1)));
}

#[test]
fn a_lost_target_is_gone_while_its_node_is_up() {
    let r = apply(&swapped(), Write::MarkLost { storage: s(4, 0) });
    let mut w = TargetWatch::default();
    assert_eq!(w.due(&r, &seen(&r, &[]), 0, LEASE_MS), None);
    assert_eq!(w.due(&r, &seen(&r, &[]), LEASE_MS, LEASE_MS), Some(n(1)));
}

#[test]
fn no_swap_back_when_the_leaving_copy_is_down_or_before_the_swap() {
    let r = swapped();
    let mut w = TargetWatch::default();
    assert_eq!(w.due(&r, &seen(&r, &[3, 4]), 0, LEASE_MS), None);
    assert_eq!(w.due(&r, &seen(&r, &[3, 4]), 500, LEASE_MS), None);
    let learning = apply(
        &initial(),
        Write::AddLearner {
            target: s(4, 0),
            leaving: None,
            replaces: None,
        },
    );
    let mut w = TargetWatch::default();
    assert_eq!(w.due(&learning, &seen(&learning, &[4]), 0, LEASE_MS), None);
    assert_eq!(
        w.due(&learning, &seen(&learning, &[4]), 500, LEASE_MS),
        None,
        "before the swap a gone learner is dropped, not swapped back"
    );
}
