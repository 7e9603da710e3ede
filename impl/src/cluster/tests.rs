//! Scenario tests: note 1's stories and the faults around them, each step
//! checked against exact outcomes.

use super::*;
use crate::ids::{Epoch, Version};
use crate::owner::OwnerError;
use crate::store::{MovePhase, StoreError};

mod clients;
mod network;
mod progress;
mod readmission;
mod reports;
mod retained;
mod retention;
mod retries;
mod settles;

fn n(i: u8) -> NodeId {
    NodeId(i)
}

fn s(i: u8) -> StorageId {
    StorageId::first(n(i))
}

fn cluster() -> Cluster {
    Cluster::new(ClusterConfig::atomic(4, 3))
}

/// Publish `k` entries on `owner` and replicate each to `to`.
fn publish_to(c: &mut Cluster, owner: u8, k: usize, to: &[u8]) {
    for _ in 0..k {
        c.publish(n(owner)).unwrap();
        for t in to {
            c.replicate(n(owner), n(*t)).unwrap();
        }
    }
}

/// n1 crashes and a recovery activates n2 at epoch 2 (n2 and n3 seal and
/// install).
fn recovered_on_n2(c: &mut Cluster) {
    c.crash(n(1)).unwrap();
    c.open_recovery().unwrap();
    for i in [2, 3] {
        c.seal(n(i)).unwrap();
    }
    for i in [2, 3] {
        c.install_recovered(n(i)).unwrap();
    }
    c.activate_recovery(n(2)).unwrap();
}

fn catch_up(c: &mut Cluster, from: u8, to: u8) {
    while c.replicate(n(from), n(to)).is_ok() {}
}

fn tail(c: &Cluster, node: u8) -> Position {
    c.node(n(node)).unwrap().serving().unwrap().confirmed_tail()
}

/// Assert `r` is refused and the cluster did not change.
fn refused(
    c: &mut Cluster,
    f: impl FnOnce(&mut Cluster) -> Result<Outcome, ClusterError>,
) -> ClusterError {
    let before = c.snapshot();
    let e = f(c).expect_err("the action should be refused");
    assert_eq!(
        c.snapshot(),
        before,
        "a refused action changed the cluster: {e}"
    );
    e
}

#[test]
fn initial_cluster_serves_at_epoch_1_with_n1_owning() {
    let c = cluster();
    let r = c.record();
    assert_eq!(r.epoch, Epoch(1));
    assert_eq!(r.owner, s(1));
    assert_eq!(r.followers, [s(2), s(3)].into());
    assert_eq!(r.eligible, [s(1), s(2), s(3)].into());
    let sv = c.node(n(1)).unwrap().serving().unwrap();
    assert_eq!(
        (sv.epoch(), sv.w(), sv.admission_open()),
        (Epoch(1), 2, true)
    );
    assert!(c.node(n(4)).unwrap().serving().is_none());
}

#[test]
fn publish_replicate_confirm_needs_w_counted_copies() {
    let mut c = cluster();
    assert_eq!(
        c.publish(n(1)).unwrap(),
        Outcome::Published {
            pos: 1,
            epoch: Epoch(1)
        }
    );
    let e = refused(&mut c, |c| c.confirm(n(1)));
    assert_eq!(
        e,
        ClusterError::Owner(OwnerError::NothingToConfirm { confirmed_tail: 0 })
    );
    let out = c.replicate(n(1), n(2)).unwrap();
    assert!(matches!(out, Outcome::Replicated { ack } if ack.pos == 1 && ack.from == s(2)));
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
    refused(&mut c, |c| c.replicate(n(1), n(2)));
    refused(&mut c, |c| c.publish(n(2)));
    refused(&mut c, |c| c.replicate(n(1), n(4)));
    refused(&mut c, |c| c.replicate(n(1), n(1)));
}

/// Note 1, "A new broker joins. A copy moves without a fence."
#[test]
fn story_move_follower_to_d_waits_for_boundary() {
    let mut c = cluster();
    publish_to(&mut c, 1, 3, &[2, 3]);
    c.confirm(n(1)).unwrap();
    // 02: add D as a learner; W stays 2.
    c.add_learner(n(4)).unwrap();
    assert_eq!(c.record().learners, [s(4)].into());
    assert_eq!(c.record().confirm_w, 2);
    // 03: D's progress is not confirm evidence; admission waits for catch-up.
    let e = refused(&mut c, |c| c.admit_learner(n(4)));
    assert_eq!(
        e,
        ClusterError::Store(StoreError::NotCaughtUp {
            storage: s(4),
            durable: 0,
            required: 3
        })
    );
    catch_up(&mut c, 1, 4);
    // 04: admitted: the eligible set grows to four, nothing else changes.
    c.admit_learner(n(4)).unwrap();
    assert_eq!(c.record().eligible.len(), 4);
    assert_eq!(c.record().epoch, Epoch(1));
    // 05: swap who counts (D covers the confirmed tail 3).
    c.swap(n(4), n(3)).unwrap();
    assert_eq!(c.record().leaving, Some(s(3)));
    // More traffic confirmed by the old set, which the owner still counts
    // until it adopts the swap, while D lags.
    publish_to(&mut c, 1, 2, &[2, 3]);
    c.confirm(n(1)).unwrap();
    // The owner adopts the new set and records B = its confirmed tail.
    assert_eq!(
        c.owner_switch().unwrap(),
        Outcome::Switched {
            boundary: 5,
            version: c.record().version
        }
    );
    assert_eq!(c.record().move_task.as_ref().unwrap().boundary, Some(5));
    // 06: removal waits for D to cover 5.
    let e = refused(&mut c, |c| c.remove_leaving());
    assert_eq!(
        e,
        ClusterError::Store(StoreError::TargetBehindBoundary {
            durable: 3,
            boundary: 5
        })
    );
    // A confirm after the swap counts only the new set: C's copy is no evidence.
    c.publish(n(1)).unwrap();
    c.replicate(n(1), n(3)).unwrap();
    refused(&mut c, |c| c.confirm(n(1)));
    // 07: D covers the boundary (and beyond).
    catch_up(&mut c, 1, 4);
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 6 });
    // 08: remove C: out of the assignment and the eligible set.
    c.remove_leaving().unwrap();
    let r = c.record();
    assert_eq!(r.followers, [s(2), s(4)].into());
    assert_eq!(r.eligible, [s(1), s(2), s(4)].into());
    assert_eq!((r.leaving, r.move_task.clone()), (None, None));
    // C keeps its retained copy but is no longer replicated to.
    assert_eq!(c.node(n(3)).unwrap().replica().len(), 6);
    refused(&mut c, |c| c.replicate(n(1), n(3)));
}

/// Note 1, "Recovery cancels the move".
#[test]
fn story_recovery_cancels_the_move_and_it_retries_at_the_next_epoch() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    c.replicate(n(1), n(4)).unwrap();
    // 04: A fails while D is still a learner.
    c.crash(n(1)).unwrap();
    c.open_recovery().unwrap();
    // 05: the move is cancelled, D dropped from the learners.
    let r = c.record();
    assert_eq!((r.move_task.clone(), r.learners.len()), (None, 0));
    assert_eq!(r.recovery.as_ref().unwrap().seal_quorum, 2);
    assert_eq!(
        refused(&mut c, |c| c.add_learner(n(4))),
        ClusterError::Store(StoreError::RecoveryPending)
    );
    // 06: B and C seal; D is not eligible.
    assert!(matches!(
        refused(&mut c, |c| c.seal(n(4))),
        ClusterError::Store(StoreError::NotEligible { .. })
    ));
    c.seal(n(2)).unwrap();
    assert!(matches!(
        refused(&mut c, |c| c.install_recovered(n(2))),
        ClusterError::Store(StoreError::SealQuorumNotReached {
            sealed: 1,
            required: 2
        })
    ));
    c.seal(n(3)).unwrap();
    c.install_recovered(n(2)).unwrap();
    assert!(matches!(
        refused(&mut c, |c| c.activate_recovery(n(2))),
        ClusterError::Store(StoreError::ReceiptQuorumNotReached {
            receipts: 1,
            required: 2
        })
    ));
    c.install_recovered(n(3)).unwrap();
    // 07: B activates at the next epoch.
    assert_eq!(
        c.activate_recovery(n(2)).unwrap(),
        Outcome::Activated {
            owner: n(2),
            epoch: Epoch(2)
        }
    );
    assert_eq!(tail(&c, 2), 2);
    assert_eq!(c.record().followers, [s(1), s(3)].into());
    // 08: the move retries under epoch 2 and replaces the copy lost with A.
    c.add_learner(n(4)).unwrap();
    catch_up(&mut c, 2, 4);
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(1)).unwrap();
    c.owner_switch().unwrap();
    c.remove_leaving().unwrap();
    assert_eq!(c.record().followers, [s(3), s(4)].into());
    publish_to(&mut c, 2, 1, &[4]);
    assert_eq!(c.confirm(n(2)).unwrap(), Outcome::Confirmed { tail: 3 });
}

/// Note 1, "Planned owner handoff".
#[test]
fn story_planned_handoff_moves_the_owner_without_a_seal() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2, 3]);
    c.confirm(n(1)).unwrap();
    // 02: close admission; new publishes wait.
    c.close_admission(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.publish(n(1))),
        ClusterError::Owner(OwnerError::AdmissionClosed)
    );
    // 03: drain and report F.
    assert_eq!(
        c.report_final_boundary().unwrap(),
        Outcome::FinalBoundary { boundary: 2 }
    );
    // 04: commit D at epoch 2.
    assert_eq!(
        c.commit_handoff().unwrap(),
        Outcome::Committed { epoch: Epoch(2) }
    );
    // A is not told: it still believes it serves at epoch 1, with admission
    // closed and nothing unconfirmed, until a replica refuses it.
    let a = c.node(n(1)).unwrap().serving().unwrap();
    assert!(!a.admission_open() && a.epoch() == Epoch(1));
    assert_eq!(c.record().owner, s(2));
    assert_eq!(c.record().followers, [s(1), s(3)].into());
    // 05: the new owner serves; A stays on as a follower; W unchanged.
    c.activate_owner().unwrap();
    assert_eq!(tail(&c, 2), 2);
    assert!(c.record().handoff.is_none());
    publish_to(&mut c, 2, 1, &[1]);
    assert!(c.node(n(1)).unwrap().serving().is_none());
    assert_eq!(c.confirm(n(2)).unwrap(), Outcome::Confirmed { tail: 3 });
    assert_eq!(c.node(n(2)).unwrap().serving().unwrap().w(), 2);
}

#[test]
fn handoff_report_waits_for_the_drain_and_commit_for_the_new_owner_to_hold_f() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[3]);
    c.close_admission(n(2)).unwrap();
    // Drained means every accepted entry is confirmed.
    assert_eq!(
        refused(&mut c, |c| c.report_final_boundary()),
        ClusterError::Owner(OwnerError::NotDrained {
            confirmed_tail: 0,
            accepted: 2
        })
    );
    c.confirm(n(1)).unwrap();
    c.report_final_boundary().unwrap();
    let e = refused(&mut c, |c| c.commit_handoff());
    assert_eq!(
        e,
        ClusterError::Store(StoreError::CopyBehindFinalBoundary {
            storage: s(2),
            durable: 0,
            boundary: 2
        })
    );
    // Failure before the commit: cancel and reopen admission.
    c.cancel_handoff().unwrap();
    assert!(c.node(n(1)).unwrap().serving().unwrap().admission_open());
    c.publish(n(1)).unwrap();
}

#[test]
fn recovery_after_commit_fences_the_new_owner_and_activation_waits() {
    let mut c = cluster();
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.close_admission(n(2)).unwrap();
    c.report_final_boundary().unwrap();
    c.commit_handoff().unwrap();
    c.open_recovery().unwrap();
    assert_eq!(
        refused(&mut c, |c| c.activate_owner()),
        ClusterError::Store(StoreError::RecoveryPending)
    );
    assert_eq!(
        refused(&mut c, |c| c.cancel_handoff()),
        ClusterError::Store(StoreError::HandoffCommitted)
    );
    // Ordinary recovery at the committed epoch takes over.
    c.seal(n(2)).unwrap();
    c.seal(n(3)).unwrap();
    c.install_recovered(n(2)).unwrap();
    c.install_recovered(n(3)).unwrap();
    c.activate_recovery(n(3)).unwrap();
    assert_eq!(c.record().epoch, Epoch(3));
    assert!(c.record().handoff.is_none());
}

#[test]
fn zombie_owner_is_refused_by_a_sealed_replica_and_stops_serving() {
    let mut c = cluster();
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.open_recovery().unwrap();
    c.seal(n(2)).unwrap();
    c.seal(n(3)).unwrap();
    c.publish(n(1)).unwrap();
    assert_eq!(
        c.replicate(n(1), n(2)).unwrap(),
        Outcome::Refused {
            by: n(2),
            fence_epoch: Epoch(1)
        }
    );
    assert!(c.node(n(1)).unwrap().serving().is_none());
    refused(&mut c, |c| c.publish(n(1)));
}

#[test]
fn zombie_entries_are_truncated_by_the_recovered_owner() {
    let mut c = cluster();
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.publish(n(1)).unwrap(); // unconfirmed, only on the zombie
    c.open_recovery().unwrap();
    c.seal(n(2)).unwrap();
    c.seal(n(3)).unwrap();
    c.install_recovered(n(2)).unwrap();
    c.install_recovered(n(3)).unwrap();
    c.activate_recovery(n(2)).unwrap();
    c.publish(n(2)).unwrap();
    // The zombie still serves at epoch 1 until it sees epoch 2.
    assert!(c.node(n(1)).unwrap().serving().is_some());
    c.replicate(n(2), n(1)).unwrap();
    assert!(c.node(n(1)).unwrap().serving().is_none());
    let a = c.node(n(1)).unwrap().replica().entries().to_vec();
    assert_eq!(a, c.node(n(2)).unwrap().replica().entries());
    assert_eq!(a[1].epoch, Epoch(2));
}

#[test]
fn restarted_follower_is_suspended_and_rejoins_without_a_fence() {
    let mut c = cluster();
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.crash(n(3)).unwrap();
    assert_eq!(
        c.restart(n(3), false).unwrap(),
        Outcome::Restarted {
            storage: s(3),
            suspended: true
        }
    );
    assert_eq!(c.record().suspended, [s(3)].into());
    // At most W - 1 = 1 suspended at once.
    c.crash(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.restart(n(2), false)),
        ClusterError::Store(StoreError::TooManySuspended {
            suspended: 1,
            max: 1
        })
    );
    // A suspended follower does not count.
    c.publish(n(1)).unwrap();
    c.replicate(n(1), n(3)).unwrap();
    refused(&mut c, |c| c.confirm(n(1)));
    c.rejoin(n(3)).unwrap();
    assert_eq!(c.record().epoch, Epoch(1));
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 2 });
}

#[test]
fn rejoin_waits_for_catch_up() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2]);
    c.confirm(n(1)).unwrap();
    c.crash(n(3)).unwrap();
    c.restart(n(3), false).unwrap();
    assert!(matches!(
        refused(&mut c, |c| c.rejoin(n(3))),
        ClusterError::Store(StoreError::NotCaughtUp {
            durable: 0,
            required: 2,
            ..
        })
    ));
    catch_up(&mut c, 1, 3);
    c.rejoin(n(3)).unwrap();
}

#[test]
fn fresh_disk_is_a_new_storage_instance_that_joins_through_step_0() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.crash(n(3)).unwrap();
    let fresh = StorageId {
        node: n(3),
        disk: 1,
    };
    assert_eq!(
        c.restart(n(3), true).unwrap(),
        Outcome::Restarted {
            storage: fresh,
            suspended: false
        }
    );
    assert!(c.record().lost.contains(&s(3)));
    assert!(c.node(n(3)).unwrap().replica().is_empty());
    // The owner does not replicate to (or count) the fresh instance.
    refused(&mut c, |c| c.replicate(n(1), n(3)));
    // Lost follower replaced: step 0, admit, swap, switch, remove.
    c.add_learner(n(3)).unwrap();
    catch_up(&mut c, 1, 3);
    c.admit_learner(n(3)).unwrap();
    c.swap(n(3), n(3)).unwrap();
    assert_eq!(c.record().leaving, Some(s(3)));
    c.owner_switch().unwrap();
    c.remove_leaving().unwrap();
    assert_eq!(c.record().followers, [s(2), fresh].into());
    assert!(!c.record().eligible.contains(&s(3)));
}

#[test]
fn rf_increase_grows_w_only_when_the_owner_adopts_it() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    catch_up(&mut c, 1, 4);
    c.admit_learner(n(4)).unwrap();
    c.promote_learner(n(4)).unwrap();
    assert_eq!((c.record().rf, c.record().confirm_w), (4, 2));
    assert_eq!(c.node(n(1)).unwrap().serving().unwrap().w(), 2);
    c.owner_switch().unwrap();
    assert_eq!((c.record().rf, c.record().confirm_w), (4, 3));
    assert!(c.record().move_task.is_none());
    c.publish(n(1)).unwrap();
    c.replicate(n(1), n(2)).unwrap();
    refused(&mut c, |c| c.confirm(n(1)));
    c.replicate(n(1), n(4)).unwrap();
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 3 });
}

#[test]
fn owner_switch_for_a_promotion_needs_the_new_copy_to_cover_the_confirmed_tail() {
    let mut c = cluster();
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.promote_learner(n(4)).unwrap();
    publish_to(&mut c, 1, 1, &[2]);
    c.confirm(n(1)).unwrap();
    assert!(matches!(
        refused(&mut c, |c| c.owner_switch()),
        ClusterError::Store(StoreError::NotCaughtUp {
            durable: 0,
            required: 1,
            ..
        })
    ));
}

#[test]
fn cancel_move_before_swap_drops_the_learner_and_after_swap_is_refused() {
    let mut c = cluster();
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.cancel_move().unwrap();
    assert_eq!(c.record().eligible.len(), 3);
    assert!(c.record().learners.is_empty());
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.cancel_move()),
        ClusterError::Store(StoreError::CannotCancelAfterSwap {
            phase: MovePhase::Swapped
        })
    );
}

#[test]
fn recovery_after_the_swap_keeps_the_move_with_the_recovered_tail_as_boundary() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    catch_up(&mut c, 1, 4);
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    c.crash(n(1)).unwrap();
    c.open_recovery().unwrap();
    assert_eq!(
        refused(&mut c, |c| c.remove_leaving()),
        ClusterError::Store(StoreError::RecoveryPending)
    );
    // Eligible {1,2,3,4}: E - W + 1 = 3 seals.
    assert_eq!(c.record().recovery.as_ref().unwrap().seal_quorum, 3);
    for i in [2, 3, 4] {
        c.seal(n(i)).unwrap();
    }
    c.install_recovered(n(2)).unwrap();
    c.install_recovered(n(4)).unwrap();
    c.activate_recovery(n(2)).unwrap();
    let m = c.record().move_task.clone().unwrap();
    assert_eq!((m.phase, m.boundary), (MovePhase::Switched, Some(2)));
    c.remove_leaving().unwrap();
    assert_eq!(c.record().eligible, [s(1), s(2), s(4)].into());
}

#[test]
fn pause_blocks_new_moves_and_handoffs() {
    let mut c = cluster();
    c.store.write_current(crate::store::Write::Pause).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.add_learner(n(4))),
        ClusterError::Store(StoreError::Paused)
    );
    assert_eq!(
        refused(&mut c, |c| c.close_admission(n(2))),
        ClusterError::Store(StoreError::Paused)
    );
}

#[test]
fn unknown_and_down_nodes_are_refused() {
    let mut c = cluster();
    assert_eq!(
        refused(&mut c, |c| c.publish(n(9))),
        ClusterError::UnknownNode { node: n(9) }
    );
    c.crash(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.crash(n(2))),
        ClusterError::NodeDown { node: n(2) }
    );
    assert_eq!(
        refused(&mut c, |c| c.restart(n(1), false)),
        ClusterError::NodeAlive { node: n(1) }
    );
    assert_eq!(c.record().version, Version(1));
}

// ---- each mutant switches off its guard ---------------------------------

fn mutant(m: Mutant) -> Cluster {
    cluster().with_mutant(m)
}

#[test]
fn mutant_w_from_assignment_stops_confirms_while_a_learner_catches_up_and_a_follower_is_down() {
    for (m, confirms) in [(None, true), (Some(Mutant::WFromAssignment), false)] {
        let mut c = m.map_or_else(cluster, mutant);
        c.add_learner(n(4)).unwrap();
        c.crash(n(3)).unwrap();
        publish_to(&mut c, 1, 1, &[2]);
        assert_eq!(c.confirm(n(1)).is_ok(), confirms, "{m:?}");
    }
}

#[test]
fn mutant_learner_counts_confirms_from_a_learner() {
    for (m, confirms) in [(None, false), (Some(Mutant::LearnerCounts), true)] {
        let mut c = m.map_or_else(cluster, mutant);
        c.add_learner(n(4)).unwrap();
        publish_to(&mut c, 1, 1, &[4]);
        assert_eq!(c.confirm(n(1)).is_ok(), confirms, "{m:?}");
    }
}

#[test]
fn mutant_swap_before_admission_swaps_a_non_eligible_target() {
    let mut c = cluster();
    c.add_learner(n(4)).unwrap();
    refused(&mut c, |c| c.swap(n(4), n(3)));
    let mut c = mutant(Mutant::SwapBeforeAdmission);
    c.add_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    assert!(!c.record().eligible.contains(&s(4)));
}

#[test]
fn mutant_remove_before_boundary_removes_while_the_target_lags() {
    for (m, ok) in [(None, false), (Some(Mutant::RemoveBeforeBoundary), true)] {
        let mut c = m.map_or_else(cluster, mutant);
        c.add_learner(n(4)).unwrap();
        c.admit_learner(n(4)).unwrap();
        c.swap(n(4), n(3)).unwrap();
        publish_to(&mut c, 1, 1, &[2, 3]);
        c.confirm(n(1)).unwrap();
        c.owner_switch().unwrap();
        assert_eq!(c.remove_leaving().is_ok(), ok, "{m:?}");
    }
}

#[test]
fn mutant_recovery_keeps_move_lets_the_move_run_during_recovery() {
    let mut c = mutant(Mutant::RecoveryKeepsMove);
    c.add_learner(n(4)).unwrap();
    c.open_recovery().unwrap();
    assert!(c.record().move_task.is_some());
    c.admit_learner(n(4)).unwrap();
}

#[test]
fn mutant_handoff_without_barrier_keeps_admission_open() {
    let mut c = mutant(Mutant::HandoffWithoutBarrier);
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.close_admission(n(2)).unwrap();
    c.report_final_boundary().unwrap();
    // Accepted after F: the old owner confirms an entry the new owner lacks.
    publish_to(&mut c, 1, 1, &[3]);
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 2 });
    c.commit_handoff().unwrap();
    c.activate_owner().unwrap();
    assert_eq!(c.node(n(2)).unwrap().replica().len(), 1);
}

#[test]
fn mutant_no_seal_fencing_lets_a_zombie_append_to_a_sealed_replica() {
    let mut c = mutant(Mutant::NoSealFencing);
    c.open_recovery().unwrap();
    c.seal(n(2)).unwrap();
    c.publish(n(1)).unwrap();
    assert!(matches!(
        c.replicate(n(1), n(2)).unwrap(),
        Outcome::Replicated { .. }
    ));
}

#[test]
fn mutant_small_seal_quorum_seals_one_too_few() {
    let mut c = mutant(Mutant::SmallSealQuorum);
    c.open_recovery().unwrap();
    assert_eq!(c.record().recovery.as_ref().unwrap().seal_quorum, 1);
}

#[test]
fn mutant_promote_without_catchup_raises_rf_on_an_empty_copy() {
    let mut c = mutant(Mutant::PromoteWithoutCatchup);
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    c.replicate(n(1), n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    publish_to(&mut c, 1, 1, &[2]);
    c.confirm(n(1)).unwrap();
    c.promote_learner(n(4)).unwrap();
    c.owner_switch().unwrap();
    assert_eq!(c.record().confirm_w, 3);
}

#[test]
fn mutant_rejoin_counts_early_counts_a_suspended_follower() {
    let mut c = mutant(Mutant::RejoinCountsEarly);
    c.crash(n(3)).unwrap();
    c.restart(n(3), false).unwrap();
    publish_to(&mut c, 1, 1, &[3]);
    c.confirm(n(1)).unwrap();
}

/// The fresh disk lost its seal; only the storage binding keeps a stale
/// owner from counting its acknowledgements.
#[test]
fn mutant_storage_identity_ignored_lets_a_zombie_count_a_fresh_disk() {
    for (m, confirms) in [(None, false), (Some(Mutant::StorageIdentityIgnored), true)] {
        let mut c = m.map_or_else(cluster, mutant);
        c.open_recovery().unwrap();
        c.seal(n(2)).unwrap();
        c.seal(n(3)).unwrap();
        c.crash(n(3)).unwrap();
        c.restart(n(3), true).unwrap();
        c.publish(n(1)).unwrap();
        let _ = c.replicate(n(1), n(3));
        assert_eq!(c.confirm(n(1)).is_ok(), confirms, "{m:?}");
    }
}

/// DESIGN: six steps lose a confirmed entry when recovery seals with the new W.
#[test]
fn mutant_seal_with_new_w_loses_a_confirmed_entry() {
    for (m, quorum) in [(None, 3), (Some(Mutant::SealWithNewW), 2)] {
        let mut c = m.map_or_else(cluster, mutant);
        c.add_learner(n(4)).unwrap();
        c.admit_learner(n(4)).unwrap();
        c.promote_learner(n(4)).unwrap();
        publish_to(&mut c, 1, 1, &[2]);
        c.confirm(n(1)).unwrap();
        c.open_recovery().unwrap();
        assert_eq!(c.record().recovery.as_ref().unwrap().seal_quorum, quorum);
        c.seal(n(3)).unwrap();
        c.seal(n(4)).unwrap();
        let installed = c.install_recovered(n(3));
        assert_eq!(installed.is_ok(), m.is_some(), "{m:?}");
        if let Ok(Outcome::Installed { tail, .. }) = installed {
            assert_eq!(tail, 0, "the confirmed entry at 1 is lost");
        }
    }
}

#[test]
fn operator_lists_the_move_with_its_blocking_reason_and_bytes_remaining() {
    use crate::operator::Blocking;
    let mut c = cluster();
    publish_to(&mut c, 1, 4, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.request_move(n(4), n(3)).unwrap();
    let m = &c.list_moves(100)[0];
    assert_eq!(
        (m.target, m.leaving, m.phase),
        (s(4), Some(s(3)), MovePhase::Learner)
    );
    assert_eq!(m.bytes_remaining, 400);
    assert_eq!(
        m.blocking,
        Some(Blocking::CatchingUp {
            durable: 0,
            required: 4
        })
    );
    c.replicate(n(1), n(4)).unwrap();
    assert_eq!(c.list_moves(100)[0].bytes_remaining, 300);
    assert!(matches!(
        refused(&mut c, |c| c.swap(n(4), n(2))),
        ClusterError::Store(StoreError::WrongMovePhase { .. })
    ));
    c.open_recovery().unwrap();
    assert!(c.list_moves(100).is_empty(), "recovery cancelled the move");
    c.pause().unwrap();
    assert_eq!(
        refused(&mut c, |c| c.pause()),
        ClusterError::Store(StoreError::NoChange {
            what: "already paused"
        })
    );
    c.resume().unwrap();
}

/// Note 1, "uses of the same mechanism": drain is a planned owner handoff to
/// an admitted follower, then follower moves off the node.
#[test]
fn drain_hands_off_the_owner_then_moves_the_follower_copy_away() {
    let mut c = cluster();
    publish_to(&mut c, 1, 2, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.close_admission(n(2)).unwrap();
    c.report_final_boundary().unwrap();
    c.commit_handoff().unwrap();
    c.activate_owner().unwrap();
    // n1 is now a follower; move its copy to n4.
    c.request_move(n(4), n(1)).unwrap();
    catch_up(&mut c, 2, 4);
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(1)).unwrap();
    c.owner_switch().unwrap();
    c.remove_leaving().unwrap();
    let r = c.record();
    assert_eq!(r.owner, s(2));
    assert_eq!(r.followers, [s(3), s(4)].into());
    assert!(!r.eligible.contains(&s(1)));
    publish_to(&mut c, 2, 1, &[4]);
    assert_eq!(c.confirm(n(2)).unwrap(), Outcome::Confirmed { tail: 3 });
}

/// Finding 10's state: the owner n1 down, n3 restarted and suspended,
/// n2 and n3 sealed and installed the recovered tail.
fn suspended_installer(c: &mut Cluster) {
    publish_to(c, 1, 1, &[2, 3]);
    c.crash(n(1)).unwrap();
    c.crash(n(3)).unwrap();
    c.open_recovery().unwrap();
    c.seal(n(2)).unwrap();
    assert_eq!(
        refused(c, |c| c.seal(n(3))),
        ClusterError::NodeDown { node: n(3) }
    );
    assert!(matches!(
        refused(c, |c| c.install_recovered(n(2))),
        ClusterError::Store(StoreError::SealQuorumNotReached {
            sealed: 1,
            required: 2
        })
    ));
    // Its disk comes back: the seal and the history are still there.
    c.restart(n(3), false).unwrap();
    c.seal(n(3)).unwrap();
    c.install_recovered(n(2)).unwrap();
    c.install_recovered(n(3)).unwrap();
    assert_eq!(c.record().suspended, [s(3)].into());
}

#[test]
fn recovery_waits_for_seals_and_a_suspended_installer_is_readmitted_as_a_receipt() {
    let mut c = cluster();
    suspended_installer(&mut c);
    // n3's log is the recovered tail, checked as re-admission would check
    // it: activation re-admits it and counts its receipt, with only n1 down.
    c.activate_recovery(n(2)).unwrap();
    let r = c.record();
    assert_eq!((r.owner, r.epoch), (s(2), Epoch(2)));
    assert!(r.suspended.is_empty());
    // Its receipt is the new owner's first acknowledgement from it.
    let sv = c.node(n(2)).unwrap().serving().unwrap();
    assert_eq!(sv.progress().get(&s(3)).map(|a| a.pos), Some(1));
}

#[test]
fn receipts_skip_suspended_waits_for_the_old_owner() {
    let mut c = cluster().with_mutant(Mutant::ReceiptsSkipSuspended);
    suspended_installer(&mut c);
    assert_eq!(
        refused(&mut c, |c| c.activate_recovery(n(3))),
        ClusterError::Store(StoreError::Suspended { storage: s(3) })
    );
    assert!(matches!(
        refused(&mut c, |c| c.activate_recovery(n(2))),
        ClusterError::Store(StoreError::ReceiptQuorumNotReached {
            receipts: 1,
            required: 2
        })
    ));
    // The old owner's disk comes back: it seals, installs, and is a receipt.
    c.restart(n(1), false).unwrap();
    c.seal(n(1)).unwrap();
    c.install_recovered(n(1)).unwrap();
    c.activate_recovery(n(2)).unwrap();
    assert_eq!(c.record().suspended, [s(3)].into());
}

// Decisions aligned with the model by conformance (`livemove conform`).

#[test]
fn copies_of_the_first_record_know_epoch_1() {
    let c = cluster();
    for i in [1, 2, 3] {
        assert_eq!(c.node(n(i)).unwrap().replica().fence(), Epoch(1));
    }
    assert_eq!(c.node(n(4)).unwrap().replica().fence(), Epoch(0));
}

#[test]
fn step_1_swap_waits_for_the_target_to_cover_the_confirmed_tail() {
    let mut c = cluster();
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    publish_to(&mut c, 1, 1, &[2]);
    c.confirm(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.swap(n(4), n(3))),
        ClusterError::Store(StoreError::NotCaughtUp {
            storage: s(4),
            durable: 0,
            required: 1
        })
    );
    c.replicate(n(1), n(4)).unwrap();
    c.crash(n(4)).unwrap();
    // A copy that is down reports no progress.
    refused(&mut c, |c| c.swap(n(4), n(3)));
}

#[test]
fn a_fenced_replica_refuses_a_stale_sender_even_when_it_lacks_nothing() {
    let mut c = cluster();
    c.open_recovery().unwrap();
    c.seal(n(2)).unwrap();
    // n2 lacks nothing of n1's (empty) log; the refusal still tells n1 that
    // epoch 1 is over: it learns the first epoch n2 accepts.
    assert_eq!(
        c.replicate(n(1), n(2)).unwrap(),
        Outcome::Refused {
            by: n(2),
            fence_epoch: Epoch(1)
        }
    );
    assert!(c.node(n(1)).unwrap().serving().is_none());
    assert_eq!(c.node(n(1)).unwrap().replica().fence(), Epoch(2));
}

#[test]
fn only_sealed_copies_install_and_only_unsuspended_counted_copies_activate() {
    let mut c = cluster();
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    catch_up(&mut c, 1, 4);
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    c.owner_switch().unwrap();
    c.crash(n(1)).unwrap();
    c.open_recovery().unwrap();
    for i in [2, 3] {
        c.seal(n(i)).unwrap();
    }
    assert_eq!(
        refused(&mut c, |c| c.install_recovered(n(4))),
        ClusterError::Store(StoreError::SealQuorumNotReached {
            sealed: 2,
            required: 3
        })
    );
    c.seal(n(4)).unwrap();
    // n3 is leaving: it sealed, so it installs, but it is no candidate.
    c.install_recovered(n(3)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.activate_recovery(n(3))),
        ClusterError::Store(StoreError::NotCounted { storage: s(3) })
    );
    c.install_recovered(n(2)).unwrap();
    c.install_recovered(n(4)).unwrap();
    c.activate_recovery(n(4)).unwrap();
    // The switch was adopted before the recovery: B stays what it was.
    assert_eq!(c.record().move_task.as_ref().unwrap().boundary, Some(1));
}

#[test]
fn a_suspended_follower_swapped_out_stays_suspended_until_removed() {
    let mut c = cluster();
    c.crash(n(3)).unwrap();
    c.restart(n(3), false).unwrap();
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    assert_eq!(c.record().suspended, [s(3)].into());
    c.owner_switch().unwrap();
    c.remove_leaving().unwrap();
    assert!(c.record().suspended.is_empty());
}

#[test]
fn a_zombie_replicates_only_to_its_counted_copies_and_the_records_replicas() {
    let mut c = cluster();
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    c.owner_switch().unwrap();
    c.remove_leaving().unwrap();
    c.open_recovery().unwrap();
    for i in [2, 4] {
        c.seal(n(i)).unwrap();
    }
    for i in [2, 4] {
        c.install_recovered(n(i)).unwrap();
    }
    c.activate_recovery(n(4)).unwrap();
    // Zombie n1 counts {n2, n4}; n3 is no replica of the record any more.
    assert_eq!(
        refused(&mut c, |c| c.replicate(n(1), n(3))),
        ClusterError::NotAssigned { node: n(3) }
    );
}

#[test]
fn a_suspended_follower_reports_no_progress_until_it_rejoins() {
    let mut c = cluster();
    c.crash(n(3)).unwrap();
    c.restart(n(3), false).unwrap();
    c.open_recovery().unwrap();
    // The zombie does not see the suspension, but n3 withholds its ack.
    publish_to(&mut c, 1, 1, &[3]);
    refused(&mut c, |c| c.confirm(n(1)));
    let mut c = cluster();
    c.crash(n(3)).unwrap();
    c.restart(n(3), false).unwrap();
    publish_to(&mut c, 1, 1, &[3]);
    refused(&mut c, |c| c.confirm(n(1)));
    // Re-admitted (it covers the confirmed tail 0), it reports position 1.
    c.rejoin(n(3)).unwrap();
    assert_eq!(c.confirm(n(1)).unwrap(), Outcome::Confirmed { tail: 1 });
}
