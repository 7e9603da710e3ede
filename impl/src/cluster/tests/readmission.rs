//! Networked delivery: what a copy knows of its own suspension. It learns
//! of it when it restarts on its disk as a follower, forgets it when it
//! crashes, and learns of its re-admission only when it reads the record
//! (`notice_rejoin`); its acknowledgements are marked from that knowledge,
//! which may lag the record. The controller re-admits on the owner's
//! report alone, whether or not the copy is up at that moment.

use super::network::{networked, only, replicate_fully, reply, report, sent};
use super::*;
use crate::net::{Msg, NetError};

fn muted(c: &Cluster, copy: StorageId) -> bool {
    c.node(n(1))
        .unwrap()
        .serving()
        .unwrap()
        .muted()
        .contains(&copy)
}

/// The message is an acknowledgement marked suspended.
fn assert_marked_suspended(m: &Msg) {
    assert!(
        matches!(
            m,
            Msg::Ack {
                admitted: false,
                ..
            }
        ),
        "{m:?}"
    );
}

fn knows_suspended(c: &Cluster, node: u8) -> bool {
    c.node(n(node)).unwrap().suspended()
}

/// n2 restarts on its disk while an append to it is in flight and its
/// suspension notice is lost, the owner reports it caught up (nothing is
/// confirmed yet), the append reaches it and its acknowledgement, marked
/// suspended, waits in flight while the controller re-admits it. Returns
/// that acknowledgement.
fn late_mark_in_flight(c: &mut Cluster) -> Msg {
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    assert!(knows_suspended(c, 2), "it wrote its own suspension");
    let notice = only(c, |m| matches!(m, Msg::Suspend { .. }));
    c.drop_msg(&notice).unwrap();
    report(c, 1, 2);
    let ack = reply(c.deliver(&a).unwrap()).expect("an acknowledgement");
    assert_marked_suspended(&ack);
    c.rejoin(n(2)).unwrap();
    assert!(c.record().suspended.is_empty());
    ack
}

#[test]
fn a_late_suspended_mark_after_the_readmission_mutes_and_the_next_admitted_one_unmutes() {
    let mut c = networked();
    let late = late_mark_in_flight(&mut c);
    // The suspension notice was lost: the owner still counts n2.
    assert!(!muted(&c, s(2)));
    c.deliver(&late).unwrap();
    assert!(
        muted(&c, s(2)),
        "the late mark mutes the re-admitted copy again"
    );
    // Until the copy reads the record it still marks itself suspended,
    // whatever the record says: its acknowledgement keeps it muted.
    c.publish(n(1)).unwrap();
    replicate_fully(&mut c, 2);
    assert!(muted(&c, s(2)));
    refused(&mut c, |c| c.confirm(n(1)));
    // Once it has read its re-admission, its next acknowledgement unmutes
    // it and counts.
    c.notice_rejoin(n(2)).unwrap();
    assert!(!knows_suspended(&c, 2));
    c.publish(n(1)).unwrap();
    replicate_fully(&mut c, 2);
    assert!(!muted(&c, s(2)));
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 3 });
}

#[test]
fn the_mark_follows_the_copys_knowledge_not_the_record() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    let notice = only(&c, |m| matches!(m, Msg::Suspend { .. }));
    c.deliver(&notice).unwrap();
    report(&mut c, 1, 2);
    c.rejoin(n(2)).unwrap();
    let ack_of = |c: &mut Cluster| {
        let a = sent(c.replicate(n(1), n(2)).unwrap());
        reply(c.deliver(&a).unwrap()).expect("an acknowledgement")
    };
    // Re-admitted by the record, but the copy has not read it yet.
    let first = ack_of(&mut c);
    assert_marked_suspended(&first);
    c.deliver(&first).unwrap();
    c.notice_rejoin(n(2)).unwrap();
    c.publish(n(1)).unwrap();
    let second = ack_of(&mut c);
    assert!(
        matches!(second, Msg::Ack { admitted: true, .. }),
        "{second:?}"
    );
    c.deliver(&second).unwrap();
    assert!(!muted(&c, s(2)));
    // Under `rejoin_counts_early` every acknowledgement is marked admitted.
    let mut m = networked().with_mutant(Mutant::RejoinCountsEarly);
    m.publish(n(1)).unwrap();
    m.crash(n(2)).unwrap();
    m.restart(n(2), false).unwrap();
    assert!(knows_suspended(&m, 2));
    let notice = only(&m, |x| matches!(x, Msg::Suspend { .. }));
    m.deliver(&notice).unwrap();
    let early = ack_of(&mut m);
    assert!(
        matches!(early, Msg::Ack { admitted: true, .. }),
        "{early:?}"
    );
}

#[test]
fn the_controller_readmits_a_reported_copy_that_crashed_again_when_networked() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    report(&mut c, 1, 2);
    c.crash(n(2)).unwrap();
    assert!(!knows_suspended(&c, 2), "a crash forgets the suspension");
    // The controller has the owner's report, not a failure detector.
    c.rejoin(n(2)).unwrap();
    assert!(c.record().suspended.is_empty());
    // Back on its disk it is a follower again, so it is suspended again
    // and knows it.
    c.restart(n(2), false).unwrap();
    assert_eq!(c.record().suspended, [s(2)].into());
    assert!(knows_suspended(&c, 2));
    assert_eq!(
        refused(&mut c, |c| c.notice_rejoin(n(2))),
        ClusterError::StillSuspended { storage: s(2) }
    );
}

#[test]
fn with_atomic_delivery_a_copy_that_is_down_is_not_readmitted() {
    let mut c = cluster();
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    assert!(
        !knows_suspended(&c, 2),
        "atomic delivery reads the record at each replicate instead"
    );
    c.crash(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.rejoin(n(2))),
        ClusterError::NodeDown { node: n(2) }
    );
}

#[test]
fn a_copy_notices_its_readmission_only_when_up_suspended_in_its_own_eyes_and_not_in_the_record() {
    let mut a = cluster();
    assert_eq!(
        refused(&mut a, |c| c.notice_rejoin(n(2))),
        ClusterError::Net(NetError::Atomic)
    );
    let mut c = networked();
    assert_eq!(
        refused(&mut c, |c| c.notice_rejoin(n(2))),
        ClusterError::NotKnownSuspended { node: n(2) }
    );
    c.crash(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.notice_rejoin(n(2))),
        ClusterError::NodeDown { node: n(2) }
    );
    c.restart(n(2), false).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.notice_rejoin(n(2))),
        ClusterError::StillSuspended { storage: s(2) }
    );
    report(&mut c, 1, 2);
    c.rejoin(n(2)).unwrap();
    assert_eq!(
        c.notice_rejoin(n(2)).unwrap(),
        Outcome::RejoinNoticed { storage: s(2) }
    );
    assert_eq!(
        refused(&mut c, |c| c.notice_rejoin(n(2))),
        ClusterError::NotKnownSuspended { node: n(2) }
    );
    // The suspension notice of its restart is still in flight and reaches
    // the owner whenever the network delivers it.
    only(&c, |m| matches!(m, Msg::Suspend { .. }));
}

#[test]
fn a_copy_back_on_a_fresh_disk_does_not_know_itself_suspended() {
    let mut c = networked();
    c.crash(n(2)).unwrap();
    c.restart(n(2), true).unwrap();
    assert!(c.record().suspended.is_empty());
    assert!(!knows_suspended(&c, 2));
}

/// Finding 32's story in the implementation: both followers restart, each
/// takes the owner's one entry while it knows itself suspended, and its
/// acknowledgement mutes it; the controller re-admits both. Neither copy is
/// sent anything again (each holds the owner's whole log), so only the
/// owner's reading of the record unmutes them (finding 35).
#[test]
fn the_owner_reads_the_readmission_of_copies_that_hold_its_whole_log() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    for node in [2, 3] {
        let append = sent(c.replicate(n(1), n(node)).unwrap());
        c.crash(n(node)).unwrap();
        c.restart(n(node), false).unwrap();
        let notice = only(&c, |m| matches!(m, Msg::Suspend { .. }));
        c.deliver(&notice).unwrap();
        // The append sent before the restart reaches the copy now, which
        // still knows itself suspended: its acknowledgement says so.
        let ack = reply(c.deliver(&append).unwrap()).expect("an acknowledgement");
        assert_marked_suspended(&ack);
        c.deliver(&ack).unwrap();
        assert!(muted(&c, s(node)));
        if node == 2 {
            // One report covers both: nothing is confirmed yet.
            report(&mut c, 1, node);
        }
        c.rejoin(n(node)).unwrap();
        c.notice_rejoin(n(node)).unwrap();
    }
    assert!(c.record().suspended.is_empty());
    // Each holds the owner's whole log: nothing is left to send them.
    refused(&mut c, |c| c.replicate(n(1), n(2)));
    refused(&mut c, |c| c.confirm(n(1)));
    assert_eq!(
        c.notice_readmission(n(1)).unwrap(),
        Outcome::ReadmissionNoticed {
            owner: s(1),
            copies: vec![s(2), s(3)]
        }
    );
    assert!(!muted(&c, s(2)) && !muted(&c, s(3)));
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
    assert_eq!(
        refused(&mut c, |c| c.notice_readmission(n(1))),
        ClusterError::NothingReadmitted { owner: s(1) }
    );
}

/// A late acknowledgement marked suspended mutes a re-admitted copy again;
/// the owner reads the re-admission again and counts it.
#[test]
fn a_late_suspended_mark_is_undone_by_reading_the_record_again() {
    let mut c = networked();
    let late = late_mark_in_flight(&mut c);
    c.deliver(&late).unwrap();
    assert!(muted(&c, s(2)));
    assert_eq!(
        c.notice_readmission(n(1)).unwrap(),
        Outcome::ReadmissionNoticed {
            owner: s(1),
            copies: vec![s(2)]
        }
    );
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
}

#[test]
fn only_the_serving_owner_reads_readmissions_and_only_of_copies_it_muted() {
    let mut a = cluster();
    assert_eq!(
        refused(&mut a, |c| c.notice_readmission(n(1))),
        ClusterError::Net(NetError::Atomic)
    );
    let mut c = networked();
    assert_eq!(
        refused(&mut c, |c| c.notice_readmission(n(2))),
        ClusterError::NotRecordOwner { node: n(2) }
    );
    assert_eq!(
        refused(&mut c, |c| c.notice_readmission(n(1))),
        ClusterError::NothingReadmitted { owner: s(1) }
    );
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    let notice = only(&c, |m| matches!(m, Msg::Suspend { .. }));
    c.deliver(&notice).unwrap();
    // Muted, and the record still suspends it.
    assert_eq!(
        refused(&mut c, |c| c.notice_readmission(n(1))),
        ClusterError::NothingReadmitted { owner: s(1) }
    );
    report(&mut c, 1, 2);
    c.rejoin(n(2)).unwrap();
    c.crash(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.notice_readmission(n(1))),
        ClusterError::NotRecordOwner { node: n(1) }
    );
}

#[test]
fn owner_ignores_readmission_keeps_the_copy_muted() {
    let mut c = networked().with_mutant(Mutant::OwnerIgnoresReadmission);
    let late = late_mark_in_flight(&mut c);
    c.deliver(&late).unwrap();
    assert_eq!(
        c.notice_readmission(n(1)).unwrap(),
        Outcome::ReadmissionNoticed {
            owner: s(1),
            copies: vec![]
        }
    );
    assert!(muted(&c, s(2)));
    refused(&mut c, |c| c.confirm(n(1)));
}
