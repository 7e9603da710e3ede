//! Networked delivery: the cluster as a router. Each test drives sends,
//! deliveries, losses and duplicates in an order a real network allows and
//! checks what the processes decide from the messages alone.

use super::*;
use crate::net::{Msg, NetError};

pub(super) fn networked() -> Cluster {
    Cluster::new(ClusterConfig::networked(4, 3))
}

/// The one message in flight that matches `pred`.
pub(super) fn only(c: &Cluster, pred: impl Fn(&Msg) -> bool) -> Msg {
    let v: Vec<Msg> = c.in_flight().iter().copied().filter(|m| pred(m)).collect();
    assert_eq!(v.len(), 1, "expected one match in {v:?}");
    v[0]
}

pub(super) fn sent(o: Outcome) -> Msg {
    match o {
        Outcome::Sent { msg } => msg,
        other => panic!("expected a send, got {other:?}"),
    }
}

pub(super) fn reply(o: Outcome) -> Option<Msg> {
    match o {
        Outcome::Delivered { reply, .. } => reply,
        other => panic!("expected a delivery, got {other:?}"),
    }
}

/// The owner on `from` reports its copy on `of` and the report reaches
/// the controller.
pub(super) fn report(c: &mut Cluster, from: u8, of: u8) {
    let r = sent(c.report_progress(n(from), n(of)).unwrap());
    assert_eq!(reply(c.deliver(&r).unwrap()), None);
}

/// Publish one entry on n1, send it to `to`, deliver the append and the
/// acknowledgement.
pub(super) fn replicate_fully(c: &mut Cluster, to: u8) {
    let a = sent(c.replicate(n(1), n(to)).unwrap());
    let ack = reply(c.deliver(&a).unwrap()).expect("an acknowledgement");
    c.deliver(&ack).unwrap();
}

#[test]
fn replicate_only_sends_and_the_owner_confirms_after_the_acknowledgement_arrives() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    assert!(
        c.node(n(2)).unwrap().replica().is_empty(),
        "nothing delivered yet"
    );
    refused(&mut c, |c| c.confirm(n(1)));
    let ack = reply(c.deliver(&a).unwrap()).expect("an acknowledgement");
    assert_eq!(c.node(n(2)).unwrap().replica().len(), 1);
    refused(&mut c, |c| c.confirm(n(1)));
    c.deliver(&ack).unwrap();
    assert!(c.in_flight().is_empty());
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
}

#[test]
fn the_owner_sends_again_only_when_the_link_is_free() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    assert_eq!(
        refused(&mut c, |c| c.replicate(n(1), n(2))),
        ClusterError::Net(NetError::WindowFull {
            a: n(1),
            b: n(2),
            outstanding: 1
        })
    );
    // Another link is free.
    c.replicate(n(1), n(3)).unwrap();
    // A lost append frees the link; the resend is the same append.
    c.drop_msg(&a).unwrap();
    assert_eq!(sent(c.replicate(n(1), n(2)).unwrap()), a);
}

#[test]
fn a_message_not_in_flight_is_refused_and_nothing_changes() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    c.drop_msg(&a).unwrap();
    let gone = ClusterError::Net(NetError::NotInFlight { msg: a });
    assert_eq!(refused(&mut c, |c| c.deliver(&a)), gone);
    assert_eq!(refused(&mut c, |c| c.drop_msg(&a)), gone);
    assert_eq!(refused(&mut c, |c| c.duplicate(&a)), gone);
}

#[test]
fn a_message_to_a_process_that_is_down_waits_for_its_restart() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    c.crash(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.deliver(&a)),
        ClusterError::NodeDown { node: n(2) }
    );
    c.restart(n(2), false).unwrap();
    let ack = reply(c.deliver(&a).unwrap()).expect("an acknowledgement");
    assert!(
        matches!(
            ack,
            Msg::Ack {
                inc: 1,
                admitted: false,
                ..
            }
        ),
        "the restarted, suspended follower marks its acknowledgement: {ack:?}"
    );
}

#[test]
fn a_duplicated_append_is_recognised_and_not_applied_again() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    c.duplicate(&a).unwrap();
    c.deliver(&a).unwrap();
    c.deliver(&a).unwrap();
    assert_eq!(c.node(n(2)).unwrap().replica().len(), 1);

    let mut m = networked().with_mutant(Mutant::DuplicateAppendAppliesTwice);
    m.publish(n(1)).unwrap();
    let a = sent(m.replicate(n(1), n(2)).unwrap());
    m.duplicate(&a).unwrap();
    m.deliver(&a).unwrap();
    m.deliver(&a).unwrap();
    assert_eq!(
        m.node(n(2)).unwrap().replica().len(),
        2,
        "the mutant writes it twice"
    );
}

/// n2 acknowledges entry 1, the acknowledgement is held, n2 restarts and
/// its suspension notice reaches n1 first; then the old acknowledgement
/// arrives. Returns whether n1 can confirm on it with n2's vote.
fn late_ack_after_suspension(mut c: Cluster) -> Result<Outcome, ClusterError> {
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    let ack = reply(c.deliver(&a).unwrap()).expect("an acknowledgement");
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    let notice = only(&c, |m| matches!(m, Msg::Suspend { .. }));
    assert_eq!(
        notice,
        Msg::Suspend {
            to: n(1),
            from: s(2),
            inc: 1
        }
    );
    c.deliver(&notice).unwrap();
    assert!(c
        .node(n(1))
        .unwrap()
        .serving()
        .unwrap()
        .muted()
        .contains(&s(2)));
    c.deliver(&ack).unwrap();
    c.confirm(n(1))
}

#[test]
fn an_acknowledgement_sent_before_a_restart_is_not_counted_after_the_suspension() {
    assert!(matches!(
        late_ack_after_suspension(networked()),
        Err(ClusterError::Owner(OwnerError::NothingToConfirm { .. }))
    ));
    let m = networked().with_mutant(Mutant::StaleAckCounts);
    assert_eq!(
        late_ack_after_suspension(m),
        Ok(Outcome::Confirmed { tail: 1 }),
        "the mutant takes the stale acknowledgement"
    );
}

#[test]
fn a_suspended_copy_counts_again_after_an_admitted_acknowledgement() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    c.crash(n(2)).unwrap();
    c.restart(n(2), false).unwrap();
    let notice = only(&c, |m| matches!(m, Msg::Suspend { .. }));
    c.deliver(&notice).unwrap();
    // Suspended, its acknowledgement paces catch-up but does not count.
    replicate_fully(&mut c, 2);
    refused(&mut c, |c| c.confirm(n(1)));
    replicate_fully(&mut c, 3);
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
    report(&mut c, 1, 2);
    c.rejoin(n(2)).unwrap();
    assert!(c
        .node(n(1))
        .unwrap()
        .serving()
        .unwrap()
        .muted()
        .contains(&s(2)));
    // The copy reads its re-admission from the record before it marks
    // its acknowledgements admitted.
    c.notice_rejoin(n(2)).unwrap();
    c.publish(n(1)).unwrap();
    replicate_fully(&mut c, 2);
    assert!(c.node(n(1)).unwrap().serving().unwrap().muted().is_empty());
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 2 });
}

/// n1 hands off to n2 while a duplicate of its first append is still in
/// flight; the duplicate reaches n2, which now serves at epoch 2, and the
/// refusal goes back to n1. Returns the cluster with that refusal in flight.
fn stale_owner_refused(mut c: Cluster) -> (Cluster, Msg) {
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    c.duplicate(&a).unwrap();
    let ack = reply(c.deliver(&a).unwrap()).unwrap();
    c.deliver(&ack).unwrap();
    c.confirm(n(1)).unwrap();
    c.close_admission(n(2)).unwrap();
    c.report_final_boundary().unwrap();
    report(&mut c, 1, 2);
    c.commit_handoff().unwrap();
    c.activate_owner().unwrap();
    let refusal = reply(c.deliver(&a).unwrap()).expect("a refusal");
    assert_eq!(
        refusal,
        Msg::Refuse {
            to: n(1),
            epoch: Epoch(2)
        }
    );
    (c, refusal)
}

#[test]
fn a_refusal_stops_a_stale_owner() {
    let (mut c, refusal) = stale_owner_refused(networked());
    assert!(
        c.node(n(1)).unwrap().serving().is_some(),
        "it still believes it owns"
    );
    c.deliver(&refusal).unwrap();
    assert!(c.node(n(1)).unwrap().serving().is_none());
    assert_eq!(c.node(n(1)).unwrap().replica().fence(), Epoch(2));

    let (mut m, refusal) = stale_owner_refused(networked().with_mutant(Mutant::RefusalIgnored));
    m.deliver(&refusal).unwrap();
    assert!(
        m.node(n(1)).unwrap().serving().is_some(),
        "the mutant keeps serving"
    );
}

#[test]
fn an_append_to_a_disk_that_is_gone_is_lost() {
    let mut c = networked();
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    c.crash(n(2)).unwrap();
    c.restart(n(2), true).unwrap();
    assert_eq!(reply(c.deliver(&a).unwrap()), None);
    assert!(c.node(n(2)).unwrap().replica().is_empty());
}

#[test]
fn atomic_delivery_has_no_network_to_drive() {
    let mut c = cluster();
    let a = Msg::Refuse {
        to: n(1),
        epoch: Epoch(2),
    };
    for f in [Cluster::deliver, Cluster::drop_msg, Cluster::duplicate] {
        assert_eq!(
            refused(&mut c, |c| f(c, &a)),
            ClusterError::Net(NetError::Atomic)
        );
    }
}
