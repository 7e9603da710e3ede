//! Networked delivery: what a copy knows of its own suspension. It learns
//! of it when it restarts on its disk as a follower, forgets it when it
//! crashes, and learns of its re-admission only when it reads the record
//! (`notice_rejoin`); its acknowledgements are marked from that knowledge,
//! which may lag the record. The controller re-admits on the owner's
//! report alone, whether or not the copy is up at that moment.

use super::network::{networked, only, reack, replicate_fully, reply, report, sent};
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
    assert!(
        matches!(
            ack,
            Msg::Ack {
                admitted: false,
                ..
            }
        ),
        "{ack:?}"
    );
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
    // Once it has read its re-admission it acknowledges its last entry
    // again, admitted (finding 32), which unmutes it; its next
    // acknowledgements count.
    let reack = reack(&mut c, 2);
    assert!(!knows_suspended(&c, 2));
    c.deliver(&reack).unwrap();
    assert!(!muted(&c, s(2)));
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
    assert!(
        matches!(
            first,
            Msg::Ack {
                admitted: false,
                ..
            }
        ),
        "{first:?}"
    );
    c.deliver(&first).unwrap();
    let reack = reack(&mut c, 2);
    assert!(
        matches!(reack, Msg::Ack { admitted: true, .. }),
        "{reack:?}"
    );
    c.deliver(&reack).unwrap();
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
    // Its log is empty: there is nothing to acknowledge again.
    assert_eq!(
        c.notice_rejoin(n(2)).unwrap(),
        Outcome::RejoinNoticed {
            storage: s(2),
            reack: None
        }
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

/// Finding 32: n2 restarts on its disk, the owner hears the notice, ships
/// the copy its whole log and takes the acknowledgement, marked suspended,
/// which mutes it; the controller re-admits it on the owner's report.
/// Returns the re-acknowledgement the copy sends when it reads the record,
/// if any.
fn readmitted_holding_the_whole_log(c: &mut Cluster) -> Option<Msg> {
    c.publish(n(1)).unwrap();
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    let notice = only(c, |m| matches!(m, Msg::Suspend { .. }));
    c.deliver(&notice).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    let suspended_ack = reply(c.deliver(&a).unwrap()).expect("an acknowledgement");
    c.deliver(&suspended_ack).unwrap();
    assert!(muted(c, s(2)), "its suspended acknowledgement mutes it");
    report(c, 1, 2);
    c.rejoin(n(2)).unwrap();
    // The owner has nothing past the copy's acknowledgement to send.
    refused(c, |c| c.replicate(n(1), n(2)));
    let Outcome::RejoinNoticed { storage, reack } = c.notice_rejoin(n(2)).unwrap() else {
        panic!("notice_rejoin answered something else");
    };
    assert_eq!(storage, s(2));
    reack
}

#[test]
fn a_readmitted_copy_holding_the_whole_log_acknowledges_its_last_entry_again() {
    let mut c = networked();
    let reack = readmitted_holding_the_whole_log(&mut c).expect("a re-acknowledgement");
    let Msg::Ack {
        to,
        from,
        pos,
        admitted,
        inc,
        ..
    } = reack
    else {
        panic!("{reack:?} is no acknowledgement");
    };
    assert_eq!((to, from, pos, admitted, inc), (n(1), s(2), 1, true, 1));
    refused(&mut c, |c| c.confirm(n(1)));
    c.deliver(&reack).unwrap();
    assert!(!muted(&c, s(2)), "the admitted acknowledgement unmutes it");
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
}

#[test]
fn under_rejoin_stays_silent_the_readmitted_copy_is_never_asked_again() {
    let mut c = networked().with_mutant(Mutant::RejoinStaysSilent);
    assert_eq!(readmitted_holding_the_whole_log(&mut c), None);
    assert!(muted(&c, s(2)));
    assert!(c.in_flight().is_empty());
    refused(&mut c, |c| c.replicate(n(1), n(2)));
    refused(&mut c, |c| c.confirm(n(1)));
}

/// n2, which holds the confirmed entry, restarts; its suspension notice
/// waits in flight while the owner reports it caught up, the controller
/// re-admits it and it reads its re-admission. Returns the notice and the
/// re-acknowledgement, both in flight.
fn notice_and_reack_in_flight(c: &mut Cluster) -> (Msg, Msg) {
    c.publish(n(1)).unwrap();
    replicate_fully(c, 2);
    c.confirm(n(1)).unwrap();
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    let notice = only(c, |m| matches!(m, Msg::Suspend { .. }));
    report(c, 1, 2);
    c.rejoin(n(2)).unwrap();
    let reack = reack(c, 2);
    (notice, reack)
}

#[test]
fn a_suspension_notice_an_admitted_acknowledgement_overtook_is_old_news() {
    let mut c = networked();
    let (notice, reack) = notice_and_reack_in_flight(&mut c);
    c.deliver(&reack).unwrap();
    assert!(!muted(&c, s(2)));
    c.deliver(&notice).unwrap();
    assert!(!muted(&c, s(2)), "the notice is older than the admission");
    // Under `suspension_out_of_order` the late notice mutes the copy and
    // forgets its progress, although nothing will announce it again.
    let mut m = networked().with_mutant(Mutant::SuspensionOutOfOrder);
    let (notice, reack) = notice_and_reack_in_flight(&mut m);
    m.deliver(&reack).unwrap();
    m.deliver(&notice).unwrap();
    assert!(muted(&m, s(2)), "the mutant takes the late notice");
}

#[test]
fn a_suspended_acknowledgement_an_admitted_one_overtook_does_not_mute() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    let notice = only(&c, |m| matches!(m, Msg::Suspend { .. }));
    c.deliver(&notice).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    let late = reply(c.deliver(&a).unwrap()).expect("an acknowledgement");
    report(&mut c, 1, 2);
    c.rejoin(n(2)).unwrap();
    let reack = reack(&mut c, 2);
    c.deliver(&reack).unwrap();
    assert!(!muted(&c, s(2)));
    c.deliver(&late).unwrap();
    assert!(!muted(&c, s(2)), "the suspended mark is older news");
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
}
