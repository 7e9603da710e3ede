//! Pinned results of every `ci` configuration on the correct protocol: the
//! unique state count, that every property holds or is reached, and one
//! example path per reachability property. A change to the model that moves
//! any of these numbers shows up here.

use livemove_model::checker::{check, Options, Report, Status};
use livemove_model::{Cfg, MoveModel};

fn run(name: &str) -> Report {
    check(&MoveModel::new(Cfg::named(name)), Options::default())
}

fn actions(r: &Report, property: &str) -> Vec<&'static str> {
    let p = r.result(property);
    assert_eq!(p.status, Status::Reached, "`{property}` not reached");
    p.path
        .as_ref()
        .expect("reached has a path")
        .steps
        .iter()
        .map(|(a, _)| a.name())
        .collect()
}

fn failing(r: &Report) -> Vec<&'static str> {
    r.results
        .iter()
        .filter(|p| !p.ok())
        .map(|p| p.name)
        .collect()
}

#[test]
fn join_and_move_passes_with_pinned_counts() {
    let r = run("join-and-move");
    assert!(
        r.complete && r.passed(),
        "join-and-move must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 877);
    assert_eq!(r.total_states, 2709);
    assert_eq!(r.max_depth, 14);
    assert_eq!(
        actions(&r, "a move completes past a confirmed boundary"),
        [
            "Publish",
            "Replicate",
            "Confirm",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "RemoveLeaving"
        ]
    );
    assert_eq!(
        actions(&r, "a confirm is counted from the new set after a swap"),
        [
            "Publish",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "Confirm"
        ]
    );
}

#[test]
fn recovery_during_move_passes_with_pinned_counts() {
    let r = run("recovery-during-move");
    assert!(
        r.complete && r.passed(),
        "recovery-during-move must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 745222);
    assert_eq!(r.total_states, 1919034);
    assert_eq!(r.max_depth, 28);
    assert_eq!(
        actions(&r, "a move completes past a confirmed boundary"),
        [
            "Publish",
            "Replicate",
            "Confirm",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "RemoveLeaving"
        ]
    );
    assert_eq!(
        actions(&r, "a confirm is counted from the new set after a swap"),
        [
            "Publish",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "Confirm"
        ]
    );
    assert_eq!(
        actions(&r, "a recovery cancels a move in progress"),
        ["AddLearner", "OpenRecovery"]
    );
    assert_eq!(
        actions(&r, "a recovery activates"),
        [
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery"
        ]
    );
    assert_eq!(
        actions(&r, "a zombie owner is refused"),
        ["OpenRecovery", "Seal", "Replicate"]
    );
    assert_eq!(
        actions(
            &r,
            "a publish is confirmed while a learner catches up and one follower is down"
        ),
        ["Publish", "Replicate", "AddLearner", "Crash", "Confirm"]
    );
}

#[test]
fn handoff_passes_with_pinned_counts() {
    let r = run("handoff");
    assert!(
        r.complete && r.passed(),
        "handoff must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 298);
    assert_eq!(r.total_states, 725);
    assert_eq!(r.max_depth, 12);
    assert_eq!(
        actions(&r, "a handoff commits and the new owner confirms"),
        [
            "CloseAdmission",
            "ReportFinalBoundary",
            "CommitHandoff",
            "ActivateOwner",
            "Publish",
            "Replicate",
            "Confirm"
        ]
    );
    assert_eq!(
        actions(&r, "a handoff is cancelled and admission reopens"),
        ["CloseAdmission", "CancelHandoff"]
    );
}

#[test]
fn handoff_faults_passes_with_pinned_counts() {
    let r = run("handoff-faults");
    assert!(
        r.complete && r.passed(),
        "handoff-faults must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 142177);
    assert_eq!(r.total_states, 305275);
    assert_eq!(r.max_depth, 24);
    assert_eq!(
        actions(&r, "a recovery activates"),
        [
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery"
        ]
    );
    assert_eq!(
        actions(&r, "a handoff commits and the new owner confirms"),
        [
            "CloseAdmission",
            "ReportFinalBoundary",
            "CommitHandoff",
            "ActivateOwner",
            "Publish",
            "Replicate",
            "Confirm"
        ]
    );
    assert_eq!(
        actions(&r, "a handoff is cancelled and admission reopens"),
        ["CloseAdmission", "CancelHandoff"]
    );
    assert_eq!(
        actions(&r, "a zombie owner is refused"),
        ["OpenRecovery", "Seal", "Replicate"]
    );
}

#[test]
fn restart_rejoin_passes_with_pinned_counts() {
    let r = run("restart-rejoin");
    assert!(
        r.complete && r.passed(),
        "restart-rejoin must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 537279);
    assert_eq!(r.total_states, 1671089);
    assert_eq!(r.max_depth, 28);
    assert_eq!(
        actions(&r, "a recovery activates"),
        [
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "Seal",
            "InstallRecovered",
            "ActivateRecovery"
        ]
    );
    assert_eq!(
        actions(&r, "a restarted follower rejoins without a fence"),
        ["Crash", "Restart", "Rejoin"]
    );
    assert_eq!(
        actions(&r, "a zombie owner is refused"),
        ["OpenRecovery", "Seal", "Replicate"]
    );
}

#[test]
fn zombie_recovery_passes_with_pinned_counts() {
    let r = run("zombie-recovery");
    assert!(
        r.complete && r.passed(),
        "zombie-recovery must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 36686);
    assert_eq!(r.total_states, 76215);
    assert_eq!(r.max_depth, 21);
    assert_eq!(
        actions(&r, "a recovery activates"),
        [
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery"
        ]
    );
    assert_eq!(
        actions(&r, "a zombie owner is refused"),
        ["OpenRecovery", "Seal", "Replicate"]
    );
}

#[test]
fn lost_follower_replaced_passes_with_pinned_counts() {
    let r = run("lost-follower-replaced");
    assert!(
        r.complete && r.passed(),
        "lost-follower-replaced must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 79880);
    assert_eq!(r.total_states, 227380);
    assert_eq!(r.max_depth, 23);
    assert_eq!(
        actions(&r, "a move completes past a confirmed boundary"),
        [
            "Publish",
            "Replicate",
            "Confirm",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "RemoveLeaving"
        ]
    );
    assert_eq!(
        actions(&r, "a confirm is counted from the new set after a swap"),
        [
            "Publish",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "Confirm"
        ]
    );
    assert_eq!(
        actions(&r, "a recovery cancels a move in progress"),
        ["AddLearner", "Crash", "OpenRecovery"]
    );
    assert_eq!(
        actions(&r, "a recovery activates"),
        [
            "Crash",
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery"
        ]
    );
    assert_eq!(
        actions(
            &r,
            "a publish is confirmed while a learner catches up and one follower is down"
        ),
        ["Publish", "Replicate", "AddLearner", "Crash", "Confirm"]
    );
    assert_eq!(
        actions(&r, "a lost follower is swapped out for a new copy"),
        ["AddLearner", "AdmitLearner", "Crash", "Restart", "Swap"]
    );
}

#[test]
fn fresh_disk_zombie_passes_with_pinned_counts() {
    let r = run("fresh-disk-zombie");
    assert!(
        r.complete && r.passed(),
        "fresh-disk-zombie must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 63656);
    assert_eq!(r.total_states, 159349);
    assert_eq!(r.max_depth, 22);
    assert_eq!(
        actions(&r, "a recovery activates"),
        [
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery"
        ]
    );
    assert_eq!(
        actions(&r, "a zombie owner is refused"),
        ["OpenRecovery", "Seal", "Replicate"]
    );
}

#[test]
fn rf_increase_passes_with_pinned_counts() {
    let r = run("rf-increase");
    assert!(
        r.complete && r.passed(),
        "rf-increase must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 5523);
    assert_eq!(r.total_states, 13128);
    assert_eq!(r.max_depth, 19);
    assert_eq!(
        actions(&r, "a recovery activates"),
        [
            "Crash",
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery"
        ]
    );
    assert_eq!(
        actions(&r, "RF increases and a confirm uses the new W"),
        [
            "Publish",
            "Replicate",
            "Replicate",
            "AddLearner",
            "AdmitLearner",
            "PromoteLearner",
            "OwnerSwitch",
            "Confirm"
        ]
    );
    assert_eq!(
        actions(
            &r,
            "a publish is confirmed while a learner catches up and one follower is down"
        ),
        ["Publish", "Replicate", "AddLearner", "Crash", "Confirm"]
    );
}

#[test]
fn drain_passes_with_pinned_counts() {
    let r = run("drain");
    assert!(
        r.complete && r.passed(),
        "drain must pass: {:?}",
        failing(&r)
    );
    assert_eq!(r.unique_states, 7110);
    assert_eq!(r.total_states, 23583);
    assert_eq!(r.max_depth, 19);
    assert_eq!(
        actions(&r, "a move completes past a confirmed boundary"),
        [
            "Publish",
            "Replicate",
            "Confirm",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "RemoveLeaving"
        ]
    );
    assert_eq!(
        actions(&r, "a confirm is counted from the new set after a swap"),
        [
            "Publish",
            "AddLearner",
            "Replicate",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "Confirm"
        ]
    );
    assert_eq!(
        actions(&r, "a handoff commits and the new owner confirms"),
        [
            "CloseAdmission",
            "ReportFinalBoundary",
            "CommitHandoff",
            "ActivateOwner",
            "Publish",
            "Replicate",
            "Confirm"
        ]
    );
    assert_eq!(
        actions(&r, "a handoff is cancelled and admission reopens"),
        ["CloseAdmission", "CancelHandoff"]
    );
    assert_eq!(
        actions(&r, "a drained node leaves the partition"),
        [
            "CloseAdmission",
            "ReportFinalBoundary",
            "CommitHandoff",
            "ActivateOwner",
            "AddLearner",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "RemoveLeaving"
        ]
    );
}
