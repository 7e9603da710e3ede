//! Acknowledgements are per owner: what an owner counts is what its copies
//! reported to it, not what their disks hold now. Three traces where the two
//! differ, and a fourth on who hears of a suspension; the model and the
//! implementation must agree on every step and on every action either one
//! refuses along the way, and the last confirm must go the way the
//! acknowledgements say.

mod common;
use common::{N1, N2, N3, N4};
use livemove_model::state::State;
use livemove_model::{Action, MoveModel};

/// Replay `steps` on `config` in lockstep with negative conformance in every
/// state; the model and its state after the last step.
fn agree(config: &str, steps: &[Action]) -> (MoveModel, State) {
    common::replay_in_lockstep(config, steps)
}

/// Replay `steps` as [`agree`] does, then say whether the model lets n1
/// confirm (the implementation agreed on it: negative conformance ran in
/// the last state too).
fn agree_then_confirm(config: &str, steps: &[Action]) -> bool {
    let (m, s) = agree(config, steps);
    m.apply(&s, Action::Confirm { node: N1 }).is_ok()
}

/// n4, a learner, acknowledges m1; it is swapped in for n2, but n1 has not
/// switched and still counts n2 and n3. n2 receives m1 only through the
/// recovery install and never acknowledged it to n1, so zombie n1 (W 2)
/// cannot confirm m1 on it.
#[test]
fn a_zombie_does_not_count_a_copy_that_got_its_entry_by_install() {
    use Action::*;
    let steps = [
        Publish { node: N1 },
        AddLearner { target: N4 },
        Replicate { from: N1, to: N4 },
        AdmitLearner { target: N4 },
        Swap {
            target: N4,
            leaving: N2,
        },
        OpenRecovery { zombie: true },
        Seal { node: N2 },
        Seal { node: N3 },
        Seal { node: N4 },
        InstallRecovered { node: N2 },
    ];
    assert!(!agree_then_confirm("recovery-during-move", &steps));
}

/// n2 acknowledged m1 to n1 and then lost its disk: the acknowledgement n1
/// received still counts (the lost copy is what "no confirmed entry is
/// lost" discounts).
#[test]
fn an_acknowledgement_from_a_disk_lost_since_still_counts() {
    use Action::*;
    let steps = [
        Publish { node: N1 },
        Replicate { from: N1, to: N2 },
        OpenRecovery { zombie: true },
        Seal { node: N2 },
        Seal { node: N3 },
        InstallRecovered { node: N2 },
        Crash { node: N2 },
        Restart {
            node: N2,
            fresh_disk: true,
        },
    ];
    assert!(agree_then_confirm("fresh-disk-zombie", &steps));
}

/// n2 acknowledged m1 to zombie n1, then restarted and was suspended: its
/// first word to the owner the record names is the suspension, so n1 no
/// longer counts it although the controller cannot reach n1.
#[test]
fn a_zombie_forgets_a_follower_that_restarted_since_its_acknowledgement() {
    use Action::*;
    let steps = [
        Publish { node: N1 },
        Replicate { from: N1, to: N2 },
        OpenRecovery { zombie: true },
        Crash { node: N2 },
        Restart {
            node: N2,
            fresh_disk: false,
        },
    ];
    assert!(!agree_then_confirm("full", &steps));
    // Before the restart the same acknowledgement lets n1 confirm.
    assert!(agree_then_confirm("full", &steps[..3]));
}

/// A handoff commits to a former zombie that still holds its old serving
/// state; a follower then restarts. Its suspension goes to the owner the
/// record names only once that owner serves at the record's epoch: the
/// stale serving state keeps what it was acknowledged.
#[test]
fn a_suspension_reaches_only_an_owner_serving_at_the_records_epoch() {
    use Action::*;
    let steps = [
        Publish { node: N1 },
        Replicate { from: N1, to: N3 },
        OpenRecovery { zombie: true },
        Seal { node: N2 },
        Seal { node: N3 },
        InstallRecovered { node: N2 },
        InstallRecovered { node: N3 },
        ActivateRecovery { candidate: N2 },
        CloseAdmission { to: N1 },
        ReportFinalBoundary,
        CommitHandoff,
        Crash { node: N3 },
        Restart {
            node: N3,
            fresh_disk: false,
        },
    ];
    let (_, s) = agree("full", &steps);
    let stale = s.nodes[N1 as usize].serving;
    assert!(stale.active && stale.epoch < s.record.epoch);
    assert_eq!(stale.acks.get(s.slot(N3)), 1, "kept n3's acknowledgement");
}
