//! Retention and checkpoint catch-up through the cluster (note 1, step 0:
//! "D copies a checkpoint if the owner has truncated, then follows the log
//! tail"; note 2, "Snapshots must correspond to a log boundary").

use super::*;
use crate::replica::{CheckpointBase, ReplicaError};

fn base(c: &Cluster, node: u8) -> Position {
    c.node(n(node)).unwrap().replica().base()
}

/// n1 publishes two entries, n2 takes both, n1 confirms and truncates.
fn truncated() -> Cluster {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2]);
    c.confirm(n(1)).unwrap();
    assert_eq!(
        c.truncate(n(1)).unwrap(),
        Outcome::Truncated {
            base: CheckpointBase {
                pos: 2,
                epoch: Epoch(1)
            }
        }
    );
    c
}

#[test]
fn note1_step0_a_learner_catches_up_from_the_checkpoint_after_the_owner_truncated() {
    let mut c = truncated();
    c.add_learner(n(4)).unwrap();
    let e = refused(&mut c, |c| c.replicate(n(1), n(4)));
    assert_eq!(
        e,
        ClusterError::Owner(OwnerError::IncrementReclaimed { pos: 1, base: 2 })
    );
    let Outcome::CheckpointInstalled { ack } = c.install_checkpoint(n(1), n(4)).unwrap() else {
        panic!("expected an install");
    };
    assert_eq!((ack.from, ack.pos), (s(4), 2));
    assert_eq!(base(&c, 4), 2);
    // Then it follows the log tail.
    c.publish(n(1)).unwrap();
    c.replicate(n(1), n(4)).unwrap();
    assert_eq!(c.node(n(4)).unwrap().replica().len(), 3);
    // And a second install is refused: it holds the checkpoint's entry.
    assert!(matches!(
        refused(&mut c, |c| c.install_checkpoint(n(1), n(4))),
        ClusterError::Replica(ReplicaError::CheckpointNotNeeded { .. })
    ));
}

#[test]
fn the_owner_truncates_only_below_what_it_confirmed() {
    let mut c = cluster();
    c.publish(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.truncate(n(1))),
        ClusterError::Owner(OwnerError::NothingToReclaim { at: 0, base: 0 })
    );
    assert!(matches!(
        refused(&mut c, |c| c.truncate(n(2))),
        ClusterError::NotServing { .. }
    ));
    assert_eq!(
        refused(&mut c, |c| c.install_checkpoint(n(1), n(2))),
        ClusterError::Owner(OwnerError::NoCheckpoint)
    );
}

#[test]
fn a_copy_keeps_its_checkpoint_across_a_restart_and_loses_it_with_its_disk() {
    let mut c = truncated();
    c.install_checkpoint(n(1), n(3)).unwrap();
    c.crash(n(3)).unwrap();
    c.restart(n(3), false).unwrap();
    assert_eq!(base(&c, 3), 2, "the base is on the disk");
    c.crash(n(3)).unwrap();
    c.restart(n(3), true).unwrap();
    assert_eq!(base(&c, 3), 0, "a fresh disk has no checkpoint");
}

#[test]
fn retention_needs_atomic_delivery() {
    let mut c = Cluster::new(ClusterConfig::networked(4, 3));
    c.publish(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.truncate(n(1))),
        ClusterError::RetentionNeedsAtomicDelivery
    );
}

/// `truncate_before_confirm`: the checkpoint is taken at the log's tail,
/// over an entry nothing confirmed.
#[test]
fn under_truncate_before_confirm_the_owner_reclaims_unconfirmed_entries() {
    let mut c = cluster().with_mutant(Mutant::TruncateBeforeConfirm);
    c.publish(n(1)).unwrap();
    c.truncate(n(1)).unwrap();
    assert_eq!(base(&c, 1), 1);
    assert_eq!(tail(&c, 1), 0, "nothing is confirmed");
}

/// Note 2: "log gap detected; cannot skip". A copy that lacks increments
/// the owner reclaimed is not sent the next one it keeps: it installs the
/// checkpoint first.
#[test]
fn a_copy_that_lacks_reclaimed_increments_is_not_sent_the_next_one() {
    let mut c = truncated();
    c.publish(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.replicate(n(1), n(3))),
        ClusterError::Owner(OwnerError::IncrementReclaimed { pos: 1, base: 2 })
    );
}

/// `replay_accepts_gap`: the copy takes the first increment the owner kept,
/// its positions 1 and 2 missing, and its acknowledgement lets the owner
/// confirm an entry on a copy that lacks the history below it.
#[test]
fn under_replay_accepts_gap_a_copy_takes_the_first_kept_increment_past_a_gap() {
    let mut c = truncated().with_mutant(Mutant::ReplayAcceptsGap);
    c.publish(n(1)).unwrap();
    let Outcome::Replicated { ack } = c.replicate(n(1), n(3)).unwrap() else {
        panic!("expected an append");
    };
    assert_eq!((ack.from, ack.pos), (s(3), 3));
    let log = c.node(n(3)).unwrap().replica().entries().to_vec();
    assert!(log[0].is_missing() && log[1].is_missing());
    assert_eq!(log[2], *c.node(n(1)).unwrap().replica().entry(3).unwrap());
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 3 });
}
