//! Progress reports to the controller (networked delivery): the controller
//! acts only on what the record's owner told it at the record's epoch.

use super::network::{networked, reply, sent};
use super::*;
use crate::controller::ControllerError;
use crate::net::Msg;

/// n1 confirms one entry on n2 and n3, then starts a move to n4.
fn learner_behind() -> Cluster {
    let mut c = networked();
    publish_to(&mut c, 1, 1, &[]);
    for to in [2, 3] {
        let a = sent(c.replicate(n(1), n(to)).unwrap());
        let ack = reply(c.deliver(&a).unwrap()).unwrap();
        c.deliver(&ack).unwrap();
    }
    c.confirm(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    c
}

#[test]
fn admission_waits_for_a_report_on_the_caught_up_learner() {
    let mut c = learner_behind();
    assert_eq!(
        refused(&mut c, |c| c.admit_learner(n(4))),
        ClusterError::Controller(ControllerError::NoReport {
            record_epoch: Epoch(1),
            known_epoch: None
        })
    );
    // The learner has not caught up: nothing to report on it.
    assert_eq!(
        refused(&mut c, |c| c.report_progress(n(1), n(4))),
        ClusterError::Owner(OwnerError::NothingToReport { node: n(4) })
    );
    let a = sent(c.replicate(n(1), n(4)).unwrap());
    let ack = reply(c.deliver(&a).unwrap()).unwrap();
    // The copy holds the entry, but the owner has not heard so yet.
    refused(&mut c, |c| c.report_progress(n(1), n(4)));
    c.deliver(&ack).unwrap();
    let r = sent(c.report_progress(n(1), n(4)).unwrap());
    assert_eq!(
        r,
        Msg::Progress {
            from: s(1),
            epoch: Epoch(1),
            of: s(4),
            pos: 1,
            confirmed: 1
        }
    );
    // Until it is delivered the controller still knows nothing.
    refused(&mut c, |c| c.admit_learner(n(4)));
    c.deliver(&r).unwrap();
    assert_eq!(c.known().pos(s(4), Mutants::NONE), 1);
    c.admit_learner(n(4)).unwrap();
}

#[test]
fn one_report_is_outstanding_and_none_is_sent_while_the_controller_holds_it() {
    let mut c = learner_behind();
    replicate_to_learner(&mut c);
    let r = sent(c.report_progress(n(1), n(4)).unwrap());
    assert_eq!(
        refused(&mut c, |c| c.report_progress(n(1), n(4))),
        ClusterError::ReportOutstanding { node: n(1) }
    );
    // A lost report is sent again.
    c.drop_msg(&r).unwrap();
    assert_eq!(sent(c.report_progress(n(1), n(4)).unwrap()), r);
    c.deliver(&r).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.report_progress(n(1), n(4))),
        ClusterError::Owner(OwnerError::NothingToReport { node: n(4) }),
        "the controller holds what the owner would say"
    );
    // A copy the record does not wait on is never reported.
    refused(&mut c, |c| c.report_progress(n(1), n(2)));
}

fn replicate_to_learner(c: &mut Cluster) {
    let a = sent(c.replicate(n(1), n(4)).unwrap());
    let ack = reply(c.deliver(&a).unwrap()).unwrap();
    c.deliver(&ack).unwrap();
}

#[test]
fn reports_and_guards_need_messages_in_flight() {
    let mut c = cluster();
    assert_eq!(
        refused(&mut c, |c| c.report_progress(n(1), n(2))),
        ClusterError::Net(crate::net::NetError::Atomic)
    );
}

/// A duplicated report from n1 at epoch 1 reaches the controller after the
/// handoff to n2 committed: the controller answers with epoch 2, and the
/// refusal stops n1, which still believes it owns.
#[test]
fn a_report_from_an_older_epoch_is_refused_and_the_refusal_stops_the_stale_owner() {
    let mut c = Cluster::new(ClusterConfig::networked(3, 3));
    c.close_admission(n(2)).unwrap();
    c.report_final_boundary().unwrap();
    let r = sent(c.report_progress(n(1), n(2)).unwrap());
    c.duplicate(&r).unwrap();
    c.deliver(&r).unwrap();
    c.commit_handoff().unwrap();
    let refusal = reply(c.deliver(&r).unwrap()).expect("a refusal");
    assert_eq!(
        refusal,
        Msg::Refuse {
            to: n(1),
            epoch: Epoch(2)
        }
    );
    assert!(c.node(n(1)).unwrap().serving().is_some());
    c.deliver(&refusal).unwrap();
    assert!(c.node(n(1)).unwrap().serving().is_none());
}

/// n2 loses its disk after taking m1 and comes back empty as n2'. A report
/// on the lost instance (it holds m1) must not let the controller remove it
/// while n2' holds nothing: m1 would be on the owner alone.
fn removal_on_a_lost_instances_report(mut c: Cluster) -> Result<Outcome, ClusterError> {
    c.publish(n(1)).unwrap();
    let a = sent(c.replicate(n(1), n(2)).unwrap());
    let ack = reply(c.deliver(&a).unwrap()).unwrap();
    c.crash(n(2)).unwrap();
    c.restart(n(2), true).unwrap();
    c.add_learner(n(2)).unwrap();
    let empty = sent(c.report_progress(n(1), n(2)).unwrap());
    c.deliver(&ack).unwrap();
    c.confirm(n(1)).unwrap();
    c.deliver(&empty).unwrap();
    c.admit_learner(n(2)).unwrap();
    c.swap(n(2), n(2)).unwrap();
    c.owner_switch().unwrap();
    let lost = sent(c.report_progress(n(1), n(2)).unwrap());
    assert!(
        matches!(lost, Msg::Progress { of, pos: 1, .. } if of == s(2)),
        "{lost}"
    );
    c.deliver(&lost).unwrap();
    c.remove_leaving()
}

#[test]
fn a_report_on_a_lost_instance_does_not_speak_for_the_fresh_one() {
    let c = Cluster::new(ClusterConfig::networked(3, 3));
    assert!(matches!(
        removal_on_a_lost_instances_report(c),
        Err(ClusterError::Store(StoreError::TargetBehindBoundary {
            durable: 0,
            boundary: 1
        }))
    ));
    let m = Cluster::new(ClusterConfig::networked(3, 3)).with_mutant(Mutant::StaleProgressAdmits);
    assert!(
        removal_on_a_lost_instances_report(m).is_ok(),
        "the mutant takes the lost instance's report for the node"
    );
}
