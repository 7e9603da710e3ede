//! Progress under faults, one trace per way out of a wedge: the model and
//! the implementation agree on every step, on every action either refuses
//! along the way (negative conformance), and on the step a restarted
//! controller resumes with from the persisted record. These run on configs
//! too large for lockstep in `cargo test` (`livemove conform --config ci`
//! covers every edge of them).

mod common;
use common::{N1, N2, N3, N4};
use livemove_conformance::check::resume::{self, Resumed};
use livemove_conformance::driver::{cluster_for, step};
use livemove_model::state::{MovePhase, State};
use livemove_model::Action;

/// Replay `steps` on `config` in lockstep with negative conformance in every
/// state, and check resume in every state; the final model state and the
/// resume verdicts, first state included.
fn agree(config: &str, steps: &[Action]) -> (State, Vec<Resumed>) {
    let (m, _) = common::replay_in_lockstep(config, steps);
    let mut c = cluster_for(&m.cfg, None);
    let mut s = m.init();
    let mut verdicts = Vec::new();
    for (i, a) in steps.iter().enumerate() {
        let v = resume::agrees(&m, &s, &c).unwrap_or_else(|e| panic!("before step {i}: {e:?}"));
        verdicts.push(v);
        s = m.apply(&s, *a).expect("replayed above");
        step(&mut c, *a).expect("replayed above");
    }
    verdicts.push(resume::agrees(&m, &s, &c).expect("after the last step"));
    (s, verdicts)
}

/// Issue point 1: n4 is swapped in for n3 and crashes for good. The leaving
/// copy n3, which kept replicating, is swapped back, the owner adopts the
/// old set again and n4 is removed.
#[test]
fn a_target_lost_after_the_swap_is_swapped_back_and_removed() {
    use Action::*;
    let steps = [
        Publish { node: N1 },
        Replicate { from: N1, to: N2 },
        Replicate { from: N1, to: N3 },
        Confirm { node: N1 },
        AddLearner { target: N4 },
        Replicate { from: N1, to: N4 },
        AdmitLearner { target: N4 },
        Swap {
            target: N4,
            leaving: N3,
        },
        OwnerSwitch,
        Crash { node: N4 },
        SwapBack,
        OwnerSwitch,
        RemoveLeaving,
    ];
    let (s, resumed) = agree("target-lost-after-swap", &steps);
    assert_eq!(s.record.mv.phase, MovePhase::None);
    assert!(s.record.leaving.is_empty());
    assert_eq!(s.record.followers.len(), 2);
    // Resume knows only lost disks: with n4 merely down it waits for it
    // (the controller's own observation chooses the swap back).
    assert_eq!(resumed[10], Resumed::Waits);
    assert_eq!(resumed[13], Resumed::Idle);
}

/// The target loses its disk before the swap: the controller aborts, which
/// gives the planned move back, and the move is retried with the same node
/// back on a fresh disk.
#[test]
fn a_target_lost_before_the_swap_is_aborted_and_the_move_retried() {
    use Action::*;
    let steps = [
        AddLearner { target: N4 },
        Crash { node: N4 },
        Restart {
            node: N4,
            fresh_disk: true,
        },
        AbortMove,
        AddLearner { target: N4 },
        AdmitLearner { target: N4 },
        Swap {
            target: N4,
            leaving: N3,
        },
        OwnerSwitch,
        RemoveLeaving,
    ];
    let (s, resumed) = agree("target-lost-after-swap", &steps);
    assert_eq!(s.budget.retries, 1);
    assert_eq!(s.record.mv.phase, MovePhase::None);
    // The lost learner is in the record: resume names the abort.
    assert_eq!(resumed[3], Resumed::Enabled);
}

/// Issue point 5: a recovery for a suspected owner cancels a planned move,
/// which retries under the new owner and completes.
#[test]
fn a_move_cancelled_by_a_recovery_is_retried_under_the_new_epoch() {
    use Action::*;
    let steps = [
        AddLearner { target: N4 },
        OpenRecovery { zombie: true },
        Seal { node: N2 },
        Seal { node: N3 },
        InstallRecovered { node: N2 },
        InstallRecovered { node: N3 },
        ActivateRecovery { candidate: N2 },
        AddLearner { target: N4 },
        AdmitLearner { target: N4 },
        Swap {
            target: N4,
            leaving: N3,
        },
        OwnerSwitch,
        RemoveLeaving,
    ];
    let (s, resumed) = agree("retry-after-recovery", &steps);
    assert_eq!((s.budget.retries, s.budget.learner_adds), (1, 2));
    assert_eq!(s.record.epoch, 2);
    assert_eq!(s.record.mv.phase, MovePhase::None);
    assert!(resumed.iter().all(|v| *v != Resumed::Waits), "{resumed:?}");
}

/// Finding 10 and issue point 2: with the owner down and n2 suspended, n2's
/// receipt (it installed the recovered tail) activates the recovery.
#[test]
fn a_suspended_followers_receipt_activates_recovery() {
    use Action::*;
    let steps = [
        Crash { node: N2 },
        Restart {
            node: N2,
            fresh_disk: false,
        },
        Crash { node: N1 },
        OpenRecovery { zombie: false },
        Seal { node: N2 },
        Seal { node: N3 },
        InstallRecovered { node: N2 },
        InstallRecovered { node: N3 },
        ActivateRecovery { candidate: N3 },
    ];
    let (s, resumed) = agree("suspended-during-recovery", &steps);
    assert!(s.record.suspended.is_empty());
    assert_eq!(s.record.epoch, 2);
    assert_eq!(resumed[8], Resumed::Enabled);
}

/// Issue point 3: a suspended follower that crashes again restarts on its
/// disk and keeps its suspension slot (rf 3, W 2).
#[test]
fn a_suspended_follower_that_crashes_again_restarts_on_its_disk() {
    use Action::*;
    let steps = [
        Crash { node: N3 },
        Restart {
            node: N3,
            fresh_disk: false,
        },
        Crash { node: N3 },
        Restart {
            node: N3,
            fresh_disk: false,
        },
        Rejoin { node: N3 },
    ];
    let (s, _) = agree("crashes-rf3", &steps);
    assert!(s.record.suspended.is_empty());
}

/// The new owner of a handoff crashes before the commit: the controller
/// aborts the handoff and the owner reopens admission.
#[test]
fn a_handoff_whose_new_owner_crashed_is_aborted() {
    use Action::*;
    let steps = [
        CloseAdmission { to: N2 },
        Crash { node: N2 },
        AbortHandoff,
        Publish { node: N1 },
    ];
    agree("handoff-faults", &steps);
}

/// Issue point 6: a copy that installed the recovered tail and then lost its
/// disk gives no receipt. Resume once counted every install and named an
/// activation the store refuses here (`quorum receipts`); it now names the
/// install on n3, which the model enables.
#[test]
fn resume_does_not_count_the_install_of_a_lost_disk() {
    use Action::*;
    let steps = [
        OpenRecovery { zombie: true },
        Seal { node: N1 },
        Seal { node: N2 },
        InstallRecovered { node: N1 },
        Crash { node: N1 },
        Restart {
            node: N1,
            fresh_disk: true,
        },
        Seal { node: N3 },
        InstallRecovered { node: N2 },
        InstallRecovered { node: N3 },
        ActivateRecovery { candidate: N2 },
    ];
    let (s, resumed) = agree("fresh-disk-zombie", &steps);
    assert_eq!(s.record.epoch, 2);
    assert_eq!(resumed[8], Resumed::Enabled);
    assert_eq!(resumed[9], Resumed::Enabled);
}
