//! The consumer's settles through the cluster (note 2: "how are deletions
//! synchronized?"): a settle is a `Delete` under the confirm rule, and the
//! consumer is told it is done when an owner confirms it.

use super::*;
use crate::entry::{Entry, Op};
use crate::mutant::Mutant;
use crate::replica::ReplicaError;

fn settled(c: &Cluster) -> Vec<u64> {
    c.settled().iter().copied().collect()
}

fn delivered(c: &Cluster, node: u8) -> Option<u64> {
    let nd = c.node(n(node)).unwrap();
    nd.serving().unwrap().delivered(nd.replica())
}

fn delete(key: u64, epoch: u64) -> Entry {
    Entry {
        epoch: Epoch(epoch),
        op: Op::Delete { key },
    }
}

/// m1 published on n1, replicated to n2 and n3, confirmed.
fn delivered_m1() -> Cluster {
    let mut c = cluster();
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c
}

#[test]
fn a_settle_is_done_for_the_consumer_only_once_the_owner_confirms_it() {
    let mut c = delivered_m1();
    assert_eq!(
        c.settle(n(1)).unwrap(),
        Outcome::Settled {
            key: 1,
            pos: 2,
            epoch: Epoch(1)
        }
    );
    assert_eq!(
        c.node(n(1)).unwrap().replica().entry(2),
        Some(&delete(1, 1))
    );
    assert!(settled(&c).is_empty(), "appended, not confirmed");
    c.replicate(n(1), n(2)).unwrap();
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 2 });
    assert_eq!(settled(&c), [1]);
    assert_eq!(delivered(&c, 1), None);
}

#[test]
fn a_settle_with_nothing_delivered_is_refused() {
    let mut c = cluster();
    c.publish(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.settle(n(1))),
        ClusterError::Owner(OwnerError::NothingDelivered { confirmed_tail: 0 })
    );
    let mut c = delivered_m1();
    c.settle(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.settle(n(1))),
        ClusterError::Owner(OwnerError::NothingDelivered { confirmed_tail: 1 })
    );
}

#[test]
fn a_settle_off_the_serving_owner_is_refused() {
    let mut c = delivered_m1();
    assert_eq!(
        refused(&mut c, |c| c.settle(n(2))),
        ClusterError::NotServing { node: n(2) }
    );
    c.crash(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.settle(n(1))),
        ClusterError::NodeDown { node: n(1) }
    );
}

#[test]
fn a_settle_while_admission_is_closed_is_refused() {
    let mut c = delivered_m1();
    c.close_admission(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.settle(n(1))),
        ClusterError::Owner(OwnerError::AdmissionClosed)
    );
}

/// The settle reached W copies but n1 crashed before confirming it: the
/// recovered tail carries it, and the activation that confirms the tail
/// tells the consumer. The new owner does not deliver m1 again.
#[test]
fn a_recovery_confirms_a_settle_it_carries_and_the_new_owner_never_redelivers() {
    let mut c = delivered_m1();
    c.settle(n(1)).unwrap();
    c.replicate(n(1), n(2)).unwrap();
    c.replicate(n(1), n(3)).unwrap();
    assert!(settled(&c).is_empty());
    recovered_on_n2(&mut c);
    assert_eq!(settled(&c), [1]);
    assert_eq!(delivered(&c, 2), None);
    assert_eq!(
        refused(&mut c, |c| c.settle(n(2))),
        ClusterError::Owner(OwnerError::NothingDelivered { confirmed_tail: 2 })
    );
}

/// A handoff's new owner continues from F, settles included.
#[test]
fn a_handoff_carries_a_confirmed_settle_to_the_new_owner() {
    let mut c = delivered_m1();
    c.settle(n(1)).unwrap();
    c.replicate(n(1), n(2)).unwrap();
    c.confirm(n(1)).unwrap();
    c.close_admission(n(2)).unwrap();
    c.report_final_boundary().unwrap();
    c.commit_handoff().unwrap();
    c.activate_owner().unwrap();
    assert_eq!(settled(&c), [1]);
    assert_eq!(delivered(&c, 2), None);
}

/// `settle_acked_before_confirm`: the consumer is told at the append; a
/// recovery that never saw the `Delete` delivers m1 again.
#[test]
fn under_settle_acked_before_confirm_a_recovery_redelivers_a_settle_the_consumer_was_told_of() {
    let mut c = delivered_m1().with_mutant(Mutant::SettleAckedBeforeConfirm);
    c.settle(n(1)).unwrap();
    assert_eq!(settled(&c), [1], "told before any copy holds it");
    recovered_on_n2(&mut c);
    assert_eq!(delivered(&c, 2), Some(1), "m1 is delivered again");
}

/// Note 2: "could an older record in the snapshot overwrite a newer value
/// that arrived first?" A learner installs the checkpoint, then replays a
/// settle taken after it; the checkpoint again is refused, so the delete
/// is not undone.
#[test]
fn note2_a_delete_replayed_after_a_checkpoint_is_not_undone() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2]);
    c.confirm(n(1)).unwrap();
    c.truncate(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    c.install_checkpoint(n(1), n(4)).unwrap();
    assert_eq!(
        c.settle(n(1)).unwrap(),
        Outcome::Settled {
            key: 1,
            pos: 3,
            epoch: Epoch(1)
        }
    );
    c.replicate(n(1), n(4)).unwrap();
    c.replicate(n(1), n(2)).unwrap();
    c.confirm(n(1)).unwrap();
    assert_eq!(settled(&c), [1]);
    assert!(matches!(
        refused(&mut c, |c| c.install_checkpoint(n(1), n(4))),
        ClusterError::Replica(ReplicaError::CheckpointNotNeeded { .. })
    ));
    let log = c.node(n(4)).unwrap().replica().entries().to_vec();
    assert_eq!(log.len(), 3);
    assert_eq!(log[2], delete(1, 1), "the delete stays");
}
