//! Progress under faults: replacements, the controller's plan and aborts,
//! swap back, a second restart of a suspended follower. Each mutant of the
//! progress section is shown switching its rule off.

use super::*;
use crate::store::resume::{next_step, NextStep};

/// n4 moves in for n3 and the owner switches: the target is counted, n3
/// leaves once n4 covers B.
fn swapped_and_switched(c: &mut Cluster) {
    publish_to(c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    c.add_learner(n(4)).unwrap();
    catch_up(c, 1, 4);
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    c.owner_switch().unwrap();
}

#[test]
fn a_follower_down_is_replaced_without_using_the_plan_and_the_swap_takes_it_out() {
    let mut c = cluster().with_planned_moves(0);
    c.crash(n(3)).unwrap();
    c.add_learner(n(4)).unwrap();
    let m = c.record().move_task.clone().unwrap();
    assert_eq!(m.replaces, Some(s(3)));
    assert_eq!(c.planned_moves(), Some(0));
    catch_up(&mut c, 1, 4);
    c.admit_learner(n(4)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.swap(n(4), n(2))),
        ClusterError::Store(StoreError::NotTheReplacedCopy {
            replaces: s(3),
            got: s(2)
        })
    );
    assert_eq!(
        refused(&mut c, |c| c.promote_learner(n(4))),
        ClusterError::Store(StoreError::ReplacementDoesNotPromote { replaces: s(3) })
    );
    c.swap(n(4), n(3)).unwrap();
    assert_eq!(c.record().followers, [s(2), s(4)].into());
}

#[test]
fn no_replacement_needs_a_planned_move_for_a_copy_that_is_down() {
    let mut c = cluster()
        .with_planned_moves(0)
        .with_mutant(Mutant::NoReplacement);
    c.crash(n(3)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.add_learner(n(4))),
        ClusterError::NoPlannedMove
    );
}

#[test]
fn a_node_back_on_a_fresh_disk_swaps_out_its_own_lost_instance() {
    let mut c = cluster().with_planned_moves(0);
    publish_to(&mut c, 1, 1, &[2]);
    c.confirm(n(1)).unwrap();
    c.crash(n(3)).unwrap();
    c.restart(n(3), true).unwrap();
    let fresh = StorageId {
        node: n(3),
        disk: 1,
    };
    c.add_learner(n(3)).unwrap();
    assert_eq!(c.record().move_task.as_ref().unwrap().replaces, Some(s(3)));
    catch_up(&mut c, 1, 3);
    c.admit_learner(n(3)).unwrap();
    c.swap(n(3), n(3)).unwrap();
    assert_eq!(c.record().followers, [s(2), fresh].into());
    assert_eq!(c.record().leaving, Some(s(3)));
    c.owner_switch().unwrap();
    c.remove_leaving().unwrap();
    assert_eq!(c.record().eligible, [s(1), s(2), fresh].into());
}

#[test]
fn the_plan_is_used_up_by_planned_moves_and_an_operator_cancel_gives_nothing_back() {
    let mut c = cluster().with_planned_moves(1);
    c.add_learner(n(4)).unwrap();
    assert_eq!(c.planned_moves(), Some(0));
    c.cancel_move().unwrap();
    assert_eq!(c.planned_moves(), Some(0));
    assert_eq!(
        refused(&mut c, |c| c.add_learner(n(4))),
        ClusterError::NoPlannedMove
    );
}

#[test]
fn a_move_whose_target_is_down_is_aborted_and_retried() {
    for (m, left) in [(None, 1), (Some(Mutant::NoRetryAfterCancel), 0)] {
        let mut c = m.map_or_else(cluster, |m| cluster().with_mutant(m));
        let mut c2 = c.clone().with_planned_moves(1);
        c = c.with_planned_moves(1);
        c.add_learner(n(4)).unwrap();
        assert_eq!(
            refused(&mut c, |c| c.abort_move()),
            ClusterError::Store(StoreError::StillAvailable { storage: s(4) })
        );
        c.crash(n(4)).unwrap();
        c.abort_move().unwrap();
        assert!(c.record().move_task.is_none() && c.record().learners.is_empty());
        assert_eq!(c.planned_moves(), Some(left), "{m:?}");
        // A recovery cancels a planned move before its swap the same way.
        c2.add_learner(n(4)).unwrap();
        c2.crash(n(1)).unwrap();
        c2.open_recovery().unwrap();
        assert_eq!(c2.planned_moves(), Some(left), "{m:?}");
    }
}

#[test]
fn an_unadopted_promotion_whose_copy_is_lost_is_withdrawn() {
    let mut c = cluster().with_planned_moves(1);
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.promote_learner(n(4)).unwrap();
    assert_eq!(c.record().rf, 4);
    c.crash(n(4)).unwrap();
    c.restart(n(4), true).unwrap();
    c.abort_move().unwrap();
    let r = c.record();
    assert_eq!((r.rf, r.confirm_w), (3, 2));
    assert_eq!(r.followers, [s(2), s(3)].into());
    assert_eq!(r.eligible, [s(1), s(2), s(3)].into());
    assert_eq!(c.planned_moves(), Some(1));
}

#[test]
fn a_move_past_its_swap_is_not_aborted_but_swapped_back() {
    let mut c = cluster();
    swapped_and_switched(&mut c);
    c.crash(n(4)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.abort_move()),
        ClusterError::Store(StoreError::CannotAbortAfterSwap {
            phase: MovePhase::Switched
        })
    );
    assert_eq!(
        refused(&mut c, |c| c.cancel_move()),
        ClusterError::Store(StoreError::CannotCancelAfterSwap {
            phase: MovePhase::Switched
        })
    );
    c.swap_back().unwrap();
    let r = c.record();
    assert_eq!(r.followers, [s(2), s(3)].into());
    assert_eq!(r.leaving, Some(s(4)));
    let m = r.move_task.clone().unwrap();
    assert_eq!(
        (m.target, m.phase, m.boundary),
        (s(3), MovePhase::Swapped, None)
    );
    // The owner adopts the set again, with a new B; n4 leaves once n3 covers it.
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    assert!(matches!(
        c.owner_switch().unwrap(),
        Outcome::Switched { boundary: 2, .. }
    ));
    c.remove_leaving().unwrap();
    let r = c.record();
    assert_eq!(r.eligible, [s(1), s(2), s(3)].into());
    assert!(r.move_task.is_none() && r.leaving.is_none());
}

#[test]
fn swap_back_needs_the_target_gone_and_the_leaving_copy_caught_up() {
    let mut c = cluster();
    swapped_and_switched(&mut c);
    assert_eq!(
        refused(&mut c, |c| c.swap_back()),
        ClusterError::Store(StoreError::StillAvailable { storage: s(4) })
    );
    c.crash(n(3)).unwrap();
    c.crash(n(4)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.swap_back()),
        ClusterError::NodeDown { node: n(3) }
    );
}

#[test]
fn no_swap_back_leaves_a_move_whose_target_is_lost_waiting() {
    let mut c = cluster().with_mutant(Mutant::NoSwapBack);
    swapped_and_switched(&mut c);
    c.crash(n(4)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.swap_back()),
        ClusterError::Store(StoreError::CannotCancelAfterSwap {
            phase: MovePhase::Switched
        })
    );
}

#[test]
fn a_handoff_whose_new_owner_is_down_is_aborted_and_admission_reopens() {
    let mut c = cluster();
    c.close_admission(n(2)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.abort_handoff()),
        ClusterError::Store(StoreError::StillAvailable { storage: s(2) })
    );
    c.crash(n(2)).unwrap();
    c.abort_handoff().unwrap();
    assert!(c.record().handoff.is_none());
    assert!(c.node(n(1)).unwrap().serving().unwrap().admission_open());
}

#[test]
fn a_suspended_follower_that_crashes_again_restarts_on_its_disk() {
    for (m, again) in [
        (None, true),
        (Some(Mutant::RestartCountsOwnSuspension), false),
    ] {
        let mut c = m.map_or_else(cluster, |m| cluster().with_mutant(m));
        c.crash(n(3)).unwrap();
        c.restart(n(3), false).unwrap();
        c.crash(n(3)).unwrap();
        assert_eq!(c.restart(n(3), false).is_ok(), again, "{m:?}");
        if again {
            assert_eq!(c.record().suspended, [s(3)].into());
        } else {
            assert_eq!(
                refused(&mut c, |c| c.restart(n(3), false)),
                ClusterError::Store(StoreError::TooManySuspended {
                    suspended: 1,
                    max: 1
                })
            );
        }
    }
}

#[test]
fn resume_counts_receipts_as_activation_does() {
    let mut c = cluster();
    swapped_and_switched(&mut c);
    // n3 is leaving: it seals and installs but gives no receipt.
    c.crash(n(1)).unwrap();
    c.open_recovery().unwrap();
    assert_eq!(next_step(c.record()), NextStep::Seal { missing: 3 });
    for i in [3, 4, 2] {
        c.seal(n(i)).unwrap();
    }
    assert_eq!(next_step(c.record()), NextStep::InstallRecovered);
    c.install_recovered(n(3)).unwrap();
    c.install_recovered(n(4)).unwrap();
    // Two installed, one receipt (n4): n2 still has to install.
    assert_eq!(next_step(c.record()), NextStep::InstallRecovered);
    assert!(matches!(
        refused(&mut c, |c| c.activate_recovery(n(4))),
        ClusterError::Store(StoreError::ReceiptQuorumNotReached { receipts: 1, .. })
    ));
    c.install_recovered(n(2)).unwrap();
    assert_eq!(next_step(c.record()), NextStep::ActivateRecovery);
    c.activate_recovery(n(4)).unwrap();
}

#[test]
fn resume_counts_a_suspended_installer_and_aborts_for_a_lost_target() {
    let mut c = cluster();
    suspended_installer(&mut c);
    assert_eq!(next_step(c.record()), NextStep::ActivateRecovery);
    let mut c = cluster();
    c.add_learner(n(4)).unwrap();
    c.crash(n(4)).unwrap();
    c.restart(n(4), true).unwrap();
    assert_eq!(next_step(c.record()), NextStep::AbortMove { target: s(4) });
    let mut c = cluster();
    swapped_and_switched(&mut c);
    c.crash(n(4)).unwrap();
    c.restart(n(4), true).unwrap();
    assert_eq!(next_step(c.record()), NextStep::SwapBack { back: s(3) });
}

#[test]
fn activation_needs_no_seal_again_once_the_tail_is_fixed() {
    let mut c = cluster();
    // n4 is swapped in for n2 (not adopted): E = 4, the seal quorum is 3.
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(2)).unwrap();
    c.crash(n(1)).unwrap();
    c.open_recovery().unwrap();
    c.seal(n(2)).unwrap();
    c.crash(n(2)).unwrap();
    for i in [3, 4] {
        c.seal(n(i)).unwrap();
    }
    c.install_recovered(n(3)).unwrap();
    c.install_recovered(n(4)).unwrap();
    // n2's seal goes with its disk; the fixed tail and the receipts remain.
    c.restart(n(2), true).unwrap();
    assert_eq!(next_step(c.record()), NextStep::ActivateRecovery);
    c.activate_recovery(n(3)).unwrap();
    assert_eq!(c.record().owner, s(3));
}

#[test]
fn a_node_with_a_lost_and_a_current_follower_gives_up_the_lost_one() {
    let mut c = cluster().with_planned_moves(0);
    c.crash(n(2)).unwrap();
    c.crash(n(3)).unwrap();
    c.restart(n(3), true).unwrap();
    // The lowest copy down is n2: n3's fresh disk replaces it.
    c.add_learner(n(3)).unwrap();
    c.admit_learner(n(3)).unwrap();
    c.swap(n(3), n(2)).unwrap();
    c.owner_switch().unwrap();
    c.remove_leaving().unwrap();
    let fresh = StorageId {
        node: n(3),
        disk: 1,
    };
    assert_eq!(c.record().followers, [s(3), fresh].into());
    // Now n3's lost instance is replaced; naming n3 as leaving means it.
    c.add_learner(n(4)).unwrap();
    c.admit_learner(n(4)).unwrap();
    c.swap(n(4), n(3)).unwrap();
    assert_eq!(c.record().leaving, Some(s(3)));
}

#[test]
fn the_operator_sees_which_copy_a_move_replaces_and_cancels_a_handoff() {
    use crate::operator::Operator;
    use crate::store::{CoordinationStore, MemRecordStorage, Record};
    let mut c = cluster();
    c.crash(n(3)).unwrap();
    c.add_learner(n(4)).unwrap();
    assert_eq!(c.list_moves(100)[0].replaces, Some(s(3)));
    let initial = Record::initial(s(1), [s(2), s(3)], 3);
    let mut st = CoordinationStore::open(MemRecordStorage::default(), initial, Mutants::NONE)
        .expect("in-memory storage");
    assert_eq!(
        Operator::new(&mut st).cancel_handoff(),
        Err(StoreError::NoHandoff)
    );
    st.write_current(Write::CloseAdmission { to: s(2) })
        .unwrap();
    Operator::new(&mut st).cancel_handoff().unwrap();
    assert!(st.record().handoff.is_none());
}

#[test]
fn step_0_tells_the_new_copy_the_records_epoch() {
    for (m, expected) in [
        (None, Epoch(2)),
        (Some(Mutant::LearnerKeepsOldEpoch), Epoch(0)),
    ] {
        let mut c = m.map_or_else(cluster, |m| cluster().with_mutant(m));
        // n1 loses its disk; n2 owns at epoch 2; n4, which never saw an
        // epoch, joins as a learner.
        c.crash(n(1)).unwrap();
        c.restart(n(1), true).unwrap();
        c.open_recovery().unwrap();
        for i in [2, 3] {
            c.seal(n(i)).unwrap();
        }
        for i in [2, 3] {
            c.install_recovered(n(i)).unwrap();
        }
        c.activate_recovery(n(2)).unwrap();
        assert_eq!(c.node(n(4)).unwrap().replica().fence(), Epoch(0));
        c.add_learner(n(4)).unwrap();
        assert_eq!(c.node(n(4)).unwrap().replica().fence(), expected, "{m:?}");
    }
}
