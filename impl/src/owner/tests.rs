//! Owner handler tests: admission, the confirm rules and the boundaries.

use super::*;
use crate::ids::NodeId;

fn id(n: u8) -> StorageId {
    StorageId::first(NodeId(n))
}

fn serving(epoch: u64, w: u8) -> (Serving, Replica) {
    let s = Serving::activate(
        id(1),
        Epoch(epoch),
        [id(1), id(2), id(3)].into(),
        w,
        0,
        RecordView::default(),
    );
    (s, Replica::new(id(1)))
}

fn put(k: u64) -> Op {
    Op::Put { key: k, value: k }
}

fn ack(n: u8, pos: Position, epoch: u64) -> Ack {
    Ack {
        from: id(n),
        pos,
        epoch: Epoch(epoch),
    }
}

#[test]
fn publish_appends_at_the_serving_epoch() {
    let (mut s, mut own) = serving(3, 2);
    let (pos, persist) = s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    assert_eq!(pos, 1);
    assert_eq!(own.epoch_at(1), Some(Epoch(3)));
    assert_eq!(persist.len(), 1);
}

#[test]
fn closed_admission_refuses_publish() {
    let (mut s, mut own) = serving(1, 2);
    s.close_admission(Mutants::NONE);
    assert_eq!(
        s.publish(&mut own, put(1), Mutants::NONE),
        Err(OwnerError::AdmissionClosed)
    );
    s.reopen_admission();
    assert!(s.publish(&mut own, put(1), Mutants::NONE).is_ok());
}

#[test]
fn fenced_own_storage_refuses_publish() {
    let (mut s, mut own) = serving(1, 2);
    own.seal(Epoch(1));
    assert_eq!(
        s.publish(&mut own, put(1), Mutants::NONE),
        Err(OwnerError::Fenced {
            sender_epoch: Epoch(1),
            fence_epoch: Epoch(1)
        })
    );
}

#[test]
fn confirm_needs_w_covering_copies_of_the_counted_set() {
    let (mut s, mut own) = serving(1, 2);
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    s.publish(&mut own, put(2), Mutants::NONE).unwrap();
    assert!(s.confirm(&own, Mutants::NONE).is_err());
    s.handle_ack(ack(4, 2, 1)); // not counted
    assert!(s.confirm(&own, Mutants::NONE).is_err());
    s.handle_ack(ack(2, 1, 1));
    assert_eq!(s.confirm(&own, Mutants::NONE), Ok(1));
    s.handle_ack(ack(3, 2, 1));
    assert_eq!(s.confirm(&own, Mutants::NONE), Ok(2));
}

#[test]
fn a_copy_with_another_entry_at_the_position_does_not_cover_it() {
    let (mut s, mut own) = serving(2, 2);
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    // Same length, different epoch tag: a divergent suffix.
    s.handle_ack(ack(2, 1, 1));
    assert_eq!(
        s.confirm(&own, Mutants::NONE),
        Err(OwnerError::NothingToConfirm { confirmed_tail: 0 })
    );
}

#[test]
fn only_entries_of_the_owners_epoch_are_confirmed_by_counting() {
    let mut own = Replica::new(id(1));
    own.install(
        &[Entry {
            epoch: Epoch(1),
            op: put(1),
        }],
        Epoch(1),
    )
    .unwrap();
    let mut s = Serving::activate(
        id(1),
        Epoch(2),
        [id(1), id(2), id(3)].into(),
        2,
        0,
        RecordView::default(),
    );
    s.handle_ack(ack(2, 1, 1));
    assert!(s.confirm(&own, Mutants::NONE).is_err());
    s.publish(&mut own, put(2), Mutants::NONE).unwrap();
    s.handle_ack(ack(2, 2, 2));
    assert_eq!(s.confirm(&own, Mutants::NONE), Ok(2));
}

#[test]
fn suspended_followers_and_learners_never_count() {
    let (mut s, mut own) = serving(1, 2);
    s.observe(RecordView {
        version: Version(2),
        learners: [id(4)].into(),
        suspended: [id(2)].into(),
        assigned_copies: 4,
    });
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    s.handle_ack(ack(2, 1, 1));
    s.handle_ack(ack(4, 1, 1));
    assert!(s.confirm(&own, Mutants::NONE).is_err());
    assert!(s
        .clone()
        .confirm(&own, Mutants::only(Mutant::LearnerCounts))
        .is_ok());
    assert!(s
        .clone()
        .confirm(&own, Mutants::only(Mutant::RejoinCountsEarly))
        .is_ok());
}

#[test]
fn w_comes_from_the_configured_factor_not_the_assignment() {
    let (mut s, mut own) = serving(1, 2);
    s.observe(RecordView {
        version: Version(2),
        assigned_copies: 4,
        ..RecordView::default()
    });
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    s.handle_ack(ack(2, 1, 1));
    assert_eq!(s.effective_w(Mutants::NONE), 2);
    assert_eq!(s.effective_w(Mutants::only(Mutant::WFromAssignment)), 3);
    assert!(s
        .clone()
        .confirm(&own, Mutants::only(Mutant::WFromAssignment))
        .is_err());
    assert_eq!(s.confirm(&own, Mutants::NONE), Ok(1));
}

#[test]
fn adopt_records_the_confirmed_tail_as_boundary() {
    let (mut s, mut own) = serving(1, 2);
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    s.handle_ack(ack(2, 1, 1));
    s.confirm(&own, Mutants::NONE).unwrap();
    s.publish(&mut own, put(2), Mutants::NONE).unwrap();
    assert_eq!(s.adopt([id(1), id(2), id(4)].into(), 2), 1);
    assert_eq!(s.boundary(), Some(1));
    assert_eq!(s.counted(), &[id(1), id(2), id(4)].into());
}

#[test]
fn final_boundary_is_the_last_accepted_position_once_drained() {
    let (mut s, mut own) = serving(1, 2);
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    s.close_admission(Mutants::NONE);
    assert_eq!(
        s.report_final_boundary(&own),
        Err(OwnerError::NotDrained {
            confirmed_tail: 0,
            accepted: 1
        })
    );
    assert_eq!(s.final_boundary(), None);
    s.handle_ack(ack(2, 1, 1));
    s.confirm(&own, Mutants::NONE).unwrap();
    assert_eq!(s.report_final_boundary(&own), Ok(1));
    assert_eq!(s.final_boundary(), Some(1));
}

#[test]
fn requests_with_another_epoch_are_refused_at_the_owner() {
    let (s, _) = serving(4, 2);
    assert_eq!(
        s.check_request_epoch(Epoch(3)),
        Err(OwnerError::StaleEpoch {
            request: Epoch(3),
            current: Epoch(4)
        })
    );
    assert!(s.check_request_epoch(Epoch(4)).is_ok());
}

#[test]
fn append_for_carries_the_previous_entry() {
    let (mut s, mut own) = serving(1, 2);
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    s.publish(&mut own, put(2), Mutants::NONE).unwrap();
    let m = s.append_for(&own, 2).unwrap();
    assert_eq!(
        (m.prev_pos, m.prev_epoch, m.epoch),
        (1, Some(Epoch(1)), Epoch(1))
    );
    assert_eq!(s.append_for(&own, 3), Err(OwnerError::NothingToReplicate));
}

#[test]
fn a_report_names_the_first_caught_up_awaited_instance_the_controller_knows_otherwise() {
    use crate::controller::{Known, Report};
    let (s, mut own) = serving(1, 2);
    let mut s = s.networked();
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    let lost = id(2);
    let fresh = StorageId {
        node: NodeId(2),
        disk: 1,
    };
    s.handle_ack(ack(2, 1, 1));
    s.handle_ack(Ack {
        from: fresh,
        pos: 1,
        epoch: Epoch(1),
    });
    let awaited: BTreeSet<StorageId> = [lost, fresh].into();
    let mut held = Known::default();
    let mut reports = Vec::new();
    while let Ok(m) = s.progress_report(&own, &awaited, NodeId(2), &held) {
        let crate::net::Msg::Progress {
            from,
            epoch,
            of,
            pos,
            confirmed,
        } = m
        else {
            panic!("not a report: {m}");
        };
        reports.push((of, pos));
        let r = Report {
            from,
            epoch,
            of,
            pos,
            confirmed,
        };
        held.on_report(id(1), Epoch(1), &r, Mutants::NONE);
    }
    assert_eq!(
        reports,
        [(lost, 1), (fresh, 1)],
        "instance order, each once"
    );
    assert_eq!(
        s.progress_report(&own, &awaited, NodeId(3), &Known::default()),
        Err(OwnerError::NothingToReport { node: NodeId(3) }),
        "nothing awaited on n3"
    );
}

// ---- the consumer's settles (note 2: deletions as log events) -------------

/// Publish `k` messages and confirm them on the ack of n2.
fn confirmed(k: u64) -> (Serving, Replica) {
    let (mut s, mut own) = serving(1, 2);
    for key in 1..=k {
        s.publish(&mut own, put(key), Mutants::NONE).unwrap();
    }
    s.handle_ack(ack(2, k, 1));
    assert_eq!(s.confirm(&own, Mutants::NONE), Ok(k));
    (s, own)
}

#[test]
fn a_settle_deletes_the_oldest_delivered_message_at_the_serving_epoch() {
    let (mut s, mut own) = confirmed(2);
    assert_eq!(s.delivered(&own), Some(1));
    let settled = s.settle(&mut own, Mutants::NONE).unwrap();
    assert_eq!((settled.key, settled.pos), (1, 3));
    let delete = Entry {
        epoch: Epoch(1),
        op: Op::Delete { key: 1 },
    };
    assert_eq!(own.entry(3), Some(&delete));
    assert_eq!(
        settled.persist,
        vec![Persist::Append {
            pos: 3,
            entry: delete
        }]
    );
    // The settle is in the log at once, confirmed or not: the next oldest
    // is delivered next.
    assert_eq!(s.delivered(&own), Some(2));
    assert_eq!(s.settle(&mut own, Mutants::NONE).unwrap().key, 2);
    assert_eq!(s.delivered(&own), None);
}

#[test]
fn nothing_is_delivered_before_the_confirm() {
    let (mut s, mut own) = serving(1, 2);
    s.publish(&mut own, put(1), Mutants::NONE).unwrap();
    let before = own.clone();
    assert_eq!(
        s.settle(&mut own, Mutants::NONE),
        Err(OwnerError::NothingDelivered { confirmed_tail: 0 })
    );
    assert_eq!(own, before);
}

#[test]
fn every_delivered_message_settled_leaves_nothing_to_settle() {
    let (mut s, mut own) = confirmed(1);
    s.settle(&mut own, Mutants::NONE).unwrap();
    assert_eq!(
        s.settle(&mut own, Mutants::NONE),
        Err(OwnerError::NothingDelivered { confirmed_tail: 1 })
    );
}

#[test]
fn closed_admission_refuses_a_settle() {
    let (mut s, mut own) = confirmed(1);
    s.close_admission(Mutants::NONE);
    assert_eq!(
        s.settle(&mut own, Mutants::NONE),
        Err(OwnerError::AdmissionClosed)
    );
    assert_eq!(own.len(), 1);
}
