//! Progress under faults: each wedge the first reading of the notes left
//! (docs/protocol.md, findings 10 to 14) is shown failing under the switch
//! that keeps the old rule, with its counterexample pinned, and the fixed
//! protocol is shown to pass the same configuration and to reach the path
//! that the fix opened.

mod common;
use common::{failing, step_names};
use livemove_model::checker::{check, check_properties, Options, Report, Status};
use livemove_model::properties::{self, Check, Class, Kind, Property};
use livemove_model::types::majority;
use livemove_model::{Cfg, MoveModel, Mutant, State};

fn run(config: &str, mutant: Option<Mutant>) -> Report {
    check(
        &MoveModel::new(Cfg::named(config).with_mutant(mutant)),
        Options::default(),
    )
}

/// The old rule fails `property` with exactly `steps`; the fixed protocol
/// passes the same config and reaches `opened` (the path the fix opened).
fn wedge_fixed(config: &str, old: Mutant, property: &str, steps: &[&str], opened: &str) {
    let r = run(config, Some(old));
    assert!(r.complete, "{config}: search complete");
    let p = r.result(property);
    assert_eq!(
        p.status,
        Status::Violated,
        "{old} on {config}: `{property}`"
    );
    assert_eq!(step_names(p), steps, "{old} on {config}: counterexample");
    let fixed = run(config, None);
    let failing = failing(&fixed);
    assert!(fixed.passed(), "{config} must pass when fixed: {failing:?}");
    assert_eq!(fixed.result(opened).status, Status::Reached, "{opened}");
}

/// Finding 11, note 1 "Aborts": a target lost between steps 1 and 2. Under
/// the old rule the move can never end: removal needs the target to cover
/// B, cancel is refused after the swap, and no other move may start.
#[test]
fn a_target_lost_after_the_swap_is_swapped_back() {
    wedge_fixed(
        "target-lost-after-swap",
        Mutant::NoSwapBack,
        "a started move completes or is cancelled",
        &[
            "Publish",
            "Replicate",
            "Replicate",
            "AddLearner",
            "AdmitLearner",
            "Swap",
            "Confirm",
            "OwnerSwitch",
            "Crash",
            "Restart",
            "Crash",
        ],
        "the leaving copy is swapped back for a target lost after the swap",
    );
}

/// Finding 10: a suspended follower's quorum receipt. Under the old rule
/// recovery waits for a copy to return although only the owner is down.
#[test]
fn a_suspended_followers_receipt_activates_recovery() {
    wedge_fixed(
        "suspended-during-recovery",
        Mutant::ReceiptsSkipSuspended,
        "a pending recovery activates",
        &[
            "Crash",
            "Crash",
            "Restart",
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
        ],
        "a suspended follower's receipt activates a recovery",
    );
}

/// Finding 12: a suspended follower that crashes again before it rejoined
/// counted its own slot against the W - 1 limit, so at rf 3 it could never
/// come back on its disk.
#[test]
fn a_suspended_follower_that_crashes_again_restarts() {
    wedge_fixed(
        "crashes-rf3",
        Mutant::RestartCountsOwnSuspension,
        "a process that restarts is let back in",
        &[
            "Publish",
            "Replicate",
            "Confirm",
            "Crash",
            "Restart",
            "Crash",
        ],
        "a suspended follower that crashes again restarts on its disk",
    );
}

/// Finding 14, note 1 recovery story step 08: a planned move cancelled by a
/// recovery retries under the new epoch.
#[test]
fn a_move_cancelled_by_recovery_retries() {
    wedge_fixed(
        "retry-after-recovery",
        Mutant::NoRetryAfterCancel,
        "a planned move is carried out while a free node can take it",
        &[
            "Publish",
            "Publish",
            "AddLearner",
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "Seal",
            "InstallRecovered",
            "ActivateRecovery",
        ],
        "a move cancelled by a recovery is retried and completes",
    );
}

/// Note 1, "Lost follower replaced": without the controller's replacement,
/// a copy lost after the planned move leaves the partition one copy short
/// for good although a node is up to hold it.
#[test]
fn a_lost_follower_is_replaced() {
    wedge_fixed(
        "lost-follower-replaced",
        Mutant::NoReplacement,
        "the partition rests with rf counted copies on live, current instances",
        &[
            "Publish",
            "Publish",
            "Replicate",
            "Replicate",
            "AddLearner",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "Confirm",
            "RemoveLeaving",
            "Crash",
            "Restart",
        ],
        "a lost follower is swapped out for a new copy",
    );
}

/// The superseded bound: "a pending recovery activates while at most W - 1
/// eligible nodes are down".
fn recovery_settles_within_w_minus_1(_m: &MoveModel, s: &State) -> bool {
    let r = &s.record;
    let down = r
        .eligible
        .iter()
        .filter(|i| !s.current(*i) || !s.nodes[i.node() as usize].alive)
        .count();
    !r.recovery.pending || down >= majority(r.rf_served) as usize
}

/// Finding 13: the bound of the recovery liveness property. At rf 4 (W 3)
/// two counted copies down leave E - W + 1 = 2 seals possible but only 2 of
/// the W = 3 receipts, so "at most W - 1 down" promised what no protocol can
/// do; the bound is min(W - 1, rf - W), and the protocol meets it. Checked
/// on crashes-rf4 with one restart fewer, so that two copies stay down.
#[test]
fn the_recovery_bound_counts_receipts_as_well_as_seals() {
    let mut cfg = Cfg::named("crashes-rf4");
    cfg.restarts = 1;
    let m = MoveModel::new(cfg);
    let old = Property {
        name: "a pending recovery activates while at most W - 1 eligible nodes are down",
        kind: Kind::Eventually,
        class: Class::Outcome,
        check: Check::Terminal {
            scope: |_, _| true,
            goal: recovery_settles_within_w_minus_1,
        },
        applies: |_| true,
    };
    let r = check_properties(&m, &[old], Options::default());
    let p = &r.results[0];
    assert_eq!(p.status, Status::Violated, "the W - 1 bound fails at rf 4");
    assert_eq!(
        step_names(p),
        [
            "Crash",
            "Restart",
            "Crash",
            "Crash",
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered"
        ]
    );
    let last = &p
        .path
        .as_ref()
        .expect("a path")
        .steps
        .last()
        .expect("steps")
        .1;
    assert_eq!(properties::copies_down(last), 2);
    assert_eq!(properties::tolerated(last), 1);
    let fixed = check(&m, Options::default());
    assert!(fixed.passed());
    assert_eq!(
        fixed.result("a pending recovery activates").status,
        Status::Holds
    );
}

/// Every progress property is checked in every configuration, faults
/// included, and each speaks to terminal states of the fault
/// configurations where a copy is down (so it does not hold vacuously
/// there): pinned per config as (terminal states, in the recovery
/// property's scope, in the whole-partition property's scope).
#[test]
fn progress_is_checked_where_the_faults_are() {
    let pinned = [
        ("recovery-during-move", (55492, 55492, 55492)),
        ("crashes-rf3", (330, 330, 330)),
        ("crashes-rf4", (5937, 5937, 0)),
        ("target-lost-after-swap", (9817, 5553, 5553)),
    ];
    let mut got = Vec::new();
    for (name, _) in pinned {
        let r = run(name, None);
        assert!(r.passed(), "{name}");
        let scoped = |p: &str| r.result(p).terminals_checked.expect("checked");
        got.push((
            name,
            (
                r.terminal_states,
                scoped("a pending recovery activates"),
                scoped("the partition rests with rf counted copies on live, current instances"),
            ),
        ));
        // Terminal states reached through faults are in scope: progress is
        // checked where the faults are, not only where none happened.
        assert!(
            r.terminal_states_after_faults > 0,
            "{name}: no terminal state after a fault is in scope"
        );
    }
    assert_eq!(got, pinned);
}

/// Finding 17: a copy added as a learner must be told the record's epoch.
/// n4 keeps m1 from a first stint as a learner (the move is cancelled by a
/// recovery); a second recovery makes m1 part of the recovered tail at epoch
/// 3; the retried move admits n4 on its old copy without one append from
/// the new owner, swaps it in for n3 and removes n3; then zombie n2 (epoch 2)
/// ships its own entry to n4, which under the old rule still knows only
/// epoch 1, accepts it and truncates m1. Replayed here step by step (the
/// whole config has about ten million states; `livemove zoo` checks it).
#[test]
fn a_learner_is_told_the_records_epoch() {
    use livemove_model::types::NodeId;
    use livemove_model::Action::{self, *};
    let n = |i: u8| -> NodeId { i - 1 };
    let path: Vec<Action> = vec![
        Publish { node: n(1) },
        AddLearner { target: n(4) },
        Replicate {
            from: n(1),
            to: n(4),
        },
        OpenRecovery { zombie: true },
        Seal { node: n(2) },
        Seal { node: n(3) },
        InstallRecovered { node: n(2) },
        InstallRecovered { node: n(3) },
        ActivateRecovery { candidate: n(2) },
        Publish { node: n(2) },
        OpenRecovery { zombie: true },
        Seal { node: n(1) },
        Seal { node: n(3) },
        InstallRecovered { node: n(1) },
        InstallRecovered { node: n(3) },
        ActivateRecovery { candidate: n(1) },
        AddLearner { target: n(4) },
        AdmitLearner { target: n(4) },
        Swap {
            target: n(4),
            leaving: n(3),
        },
        OwnerSwitch,
        RemoveLeaving,
        Replicate {
            from: n(2),
            to: n(4),
        },
    ];
    let replay = |mutant: Option<Mutant>| {
        let m = MoveModel::new(Cfg::named("learner-after-two-recoveries").with_mutant(mutant));
        let mut s = m.init();
        for (i, a) in path.iter().enumerate() {
            s = m
                .apply(&s, *a)
                .unwrap_or_else(|g| panic!("step {}: {a} disabled by `{g}`", i + 1));
        }
        (properties::no_confirmed_entry_lost(&m, &s), s)
    };
    let (kept, _) = replay(Some(Mutant::LearnerKeepsOldEpoch));
    assert!(!kept, "under the old rule m1 is lost at step 22");
    let (kept, s) = replay(None);
    assert!(kept, "told the epoch, n4 refuses the zombie");
    assert!(
        !s.nodes[1].serving.active,
        "the refused zombie stops serving"
    );
}

/// Finding 23: a stale owner's report is outstanding until the controller's
/// answer is delivered too. Before, drain-net and fresh-disk-zombie-net
/// stopped the checker on the bound of messages in flight (eight copies of
/// one refusal); both lean variants now finish, every property holding.
#[test]
fn a_stale_owners_reports_stay_bounded() {
    for (config, unique) in [
        ("drain-net1", 172_029),
        ("fresh-disk-zombie-net1", 2_020_810),
    ] {
        let r = run(config, None);
        assert!(r.complete && r.passed(), "{config} must finish and pass");
        assert_eq!(r.unique_states, unique, "{config}: unique states");
    }
}

/// Finding 24: a move's target that became the owner through a recovery is
/// known to cover the recovered tail from the activation's receipts, so the
/// removal of the copy it replaced can go on. The 16 steps that wedged the
/// move end with the removal enabled.
#[test]
fn a_target_that_became_the_owner_lets_its_move_finish() {
    use livemove_model::net::Msg;
    use livemove_model::types::{NodeId, Slot};
    use livemove_model::Action::{self, *};
    let n = |i: u8| -> NodeId { i - 1 };
    let path: Vec<Action> = vec![
        Publish { node: n(1) },
        Crash { node: n(2) },
        Restart {
            node: n(2),
            fresh_disk: true,
        },
        AddLearner { target: n(2) },
        ReportProgress {
            from: n(1),
            of: n(2),
        },
        Deliver {
            msg: Msg::Progress {
                from: Slot::new(n(1), 0),
                epoch: 1,
                of: Slot::new(n(2), 1),
                pos: 0,
                confirmed: 0,
            },
        },
        AdmitLearner { target: n(2) },
        Swap {
            target: n(2),
            leaving: n(2),
        },
        OpenRecovery { zombie: true },
        Seal { node: n(1) },
        Seal { node: n(2) },
        Seal { node: n(3) },
        InstallRecovered { node: n(1) },
        InstallRecovered { node: n(2) },
        InstallRecovered { node: n(3) },
        ActivateRecovery { candidate: n(2) },
    ];
    let m = MoveModel::new(Cfg::named("fresh-disk-zombie-net1"));
    let mut s = m.init();
    for (i, a) in path.iter().enumerate() {
        s = m
            .apply(&s, *a)
            .unwrap_or_else(|g| panic!("step {}: {a} disabled by `{g}`", i + 1));
    }
    assert_eq!(s.record.owner, Slot::new(n(2), 1), "the target owns");
    assert_eq!(
        s.known.acks.get(Slot::new(n(2), 1)),
        1,
        "known from receipts"
    );
    m.apply(&s, RemoveLeaving)
        .unwrap_or_else(|g| panic!("the removal must be enabled, not `{g}`"));
}

/// Finding 25: a move's target that a recovery made the owner fails. The
/// move's way out (swap back) does not apply to the owner: a failed owner
/// is recovered first, after which the target is a follower again and the
/// swap back goes on. Under the old rule the swap back marked the owner as
/// leaving, the next recovery kept it among the followers, and its removal
/// left the owner counting a copy outside the eligible set (22 steps,
/// `swap_back_of_owner` in the zoo).
#[test]
fn a_failed_owner_that_was_the_moves_target_is_recovered_before_the_swap_back() {
    use livemove_model::net::Msg;
    use livemove_model::types::{NodeId, Slot};
    use livemove_model::Action::{self, *};
    let n = |i: u8| -> NodeId { i - 1 };
    let path: Vec<Action> = vec![
        AddLearner { target: n(4) },
        ReportProgress {
            from: n(1),
            of: n(4),
        },
        Deliver {
            msg: Msg::Progress {
                from: Slot::new(n(1), 0),
                epoch: 1,
                of: Slot::new(n(4), 0),
                pos: 0,
                confirmed: 0,
            },
        },
        AdmitLearner { target: n(4) },
        Swap {
            target: n(4),
            leaving: n(2),
        },
        OpenRecovery { zombie: true },
        Seal { node: n(1) },
        Seal { node: n(2) },
        Seal { node: n(4) },
        InstallRecovered { node: n(1) },
        InstallRecovered { node: n(4) },
        ActivateRecovery { candidate: n(4) },
        Crash { node: n(4) },
    ];
    let walk = |mutant: Option<Mutant>| {
        let m = MoveModel::new(Cfg::named("recovery-during-move-net-small").with_mutant(mutant));
        let mut s = m.init();
        for (i, a) in path.iter().enumerate() {
            s = m
                .apply(&s, *a)
                .unwrap_or_else(|g| panic!("step {}: {a} disabled by `{g}`", i + 1));
        }
        (m, s)
    };
    let (m, s) = walk(None);
    assert_eq!(s.record.owner, Slot::new(n(4), 0), "the target owns");
    assert_eq!(s.record.mv.target, Slot::new(n(4), 0));
    let refused = m
        .apply(&s, SwapBack)
        .expect_err("no swap back of the owner");
    assert!(
        refused.0.contains("not the owner"),
        "guard: `{}`",
        refused.0
    );
    m.apply(&s, OpenRecovery { zombie: false })
        .unwrap_or_else(|g| panic!("the failed owner is recovered, not `{g}`"));
    let (m, s) = walk(Some(Mutant::SwapBackOfOwner));
    let t = m
        .apply(&s, SwapBack)
        .expect("the old rule swaps the owner back");
    assert!(
        t.record.leaving.contains(t.record.owner),
        "the old rule makes the owner itself the leaving copy"
    );
}

/// Finding 33 (found by the swarm on `full`): a suspected owner that is
/// still alive keeps a publish nobody else holds; a recovery activates
/// another copy without it, and a handoff makes the zombie the owner again.
/// Under the old rule the new owner activated with that entry past F, an
/// entry of an older epoch that no acknowledgement lets it confirm: with no
/// publish left the partition rests whole with the entry unconfirmed for
/// ever. The fixed activation continues at F and nothing past it.
#[test]
fn a_handoffs_new_owner_continues_at_its_final_boundary() {
    use livemove_model::types::Slot;
    use livemove_model::Action::{self, *};
    let property = "what the owner accepted is confirmed once the partition is whole";
    let opened = "a handoff commits and the new owner confirms";
    wedge_fixed(
        "zombie-handed-back",
        Mutant::HandoffKeepsStaleTail,
        property,
        &[
            "Publish",
            "Publish",
            "Replicate",
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery",
            "CloseAdmission",
            "ReportFinalBoundary",
            "CommitHandoff",
            "ActivateOwner",
            "Replicate",
            "Replicate",
        ],
        opened,
    );
    wedge_fixed(
        "zombie-handed-back-net",
        Mutant::HandoffKeepsStaleTail,
        property,
        &[
            "Publish",
            "OpenRecovery",
            "Seal",
            "Seal",
            "InstallRecovered",
            "InstallRecovered",
            "ActivateRecovery",
            "CloseAdmission",
            "ReportFinalBoundary",
            "CommitHandoff",
            "ActivateOwner",
            "Replicate",
            "Replicate",
            "Deliver",
            "Deliver",
            "Deliver",
            "Deliver",
        ],
        opened,
    );
    let path: Vec<Action> = vec![
        Publish { node: 0 },
        Publish { node: 0 },
        Replicate { from: 0, to: 1 },
        OpenRecovery { zombie: true },
        Seal { node: 1 },
        Seal { node: 2 },
        InstallRecovered { node: 1 },
        InstallRecovered { node: 2 },
        ActivateRecovery { candidate: 1 },
        CloseAdmission { to: 0 },
        ReportFinalBoundary,
        CommitHandoff,
        ActivateOwner,
    ];
    let walk = |mutant: Option<Mutant>| {
        let m = MoveModel::new(Cfg::named("zombie-handed-back").with_mutant(mutant));
        *common::run(&m, &path)
            .last()
            .expect("the initial state at least")
    };
    let fixed = walk(None);
    assert_eq!(fixed.record.owner, Slot::new(0, 0), "n1 owns again");
    let n1 = &fixed.nodes[0];
    assert_eq!(n1.serving.confirmed, 1, "F: the recovered entry m1");
    assert_eq!(n1.log.len, 1, "the new owner continues at F");
    let old = walk(Some(Mutant::HandoffKeepsStaleTail));
    let n1 = &old.nodes[0];
    assert_eq!(
        (n1.serving.confirmed, n1.log.len, n1.log.at(2).epoch()),
        (1, 2, 1),
        "the old rule keeps m2 of epoch 1 past F at an owner of epoch 3"
    );
    assert_eq!(n1.serving.epoch, 3);
}

/// Findings 32 and 35 (docs/protocol.md): both followers restart on their
/// disks, each acknowledges the owner's one entry while it still knows
/// itself suspended (the owner mutes it), and each is re-admitted. The
/// owner reads the re-admissions from the record (`NoticeReadmission`) and
/// counts both again. Under owner_ignores_readmission it waits for an
/// admitted acknowledgement that nothing asks for: 19 steps without loss;
/// with two messages lost, 19 steps too, the suspension notices dropped.
/// The fixed protocol passes both, so no lost message stands between a
/// re-admission and the owner. The runtime's seed 97 was the same wedge
/// (`runtime/tests/sim.rs`).
#[test]
fn the_owner_reads_readmissions_from_the_record() {
    let property = "what the owner accepted is confirmed once the partition is whole";
    for (config, states) in [
        ("readmitted-silent-net", 640_967),
        ("readmitted-lossy-net", 2_465_205),
    ] {
        let fixed = run(config, None);
        assert!(fixed.complete, "{config}: search complete");
        assert_eq!(fixed.unique_states, states, "{config}: pinned state count");
        assert!(fixed.passed(), "{config}: {:?}", failing(&fixed));
    }
    for (config, states, steps) in [
        (
            "readmitted-silent-net",
            487_947,
            &[
                "Publish",
                "Replicate",
                "Replicate",
                "Crash",
                "Restart",
                "Crash",
                "ReportProgress",
                "Deliver",
                "Deliver",
                "Deliver",
                "Deliver",
                "Rejoin",
                "NoticeRejoin",
                "Restart",
                "Rejoin",
                "Deliver",
                "NoticeRejoin",
                "Deliver",
                "Deliver",
            ][..],
        ),
        (
            "readmitted-lossy-net",
            1_877_525,
            &[
                "Publish",
                "Replicate",
                "Replicate",
                "Crash",
                "Restart",
                "Crash",
                "ReportProgress",
                "Deliver",
                "Deliver",
                "Drop",
                "Deliver",
                "Rejoin",
                "NoticeRejoin",
                "Restart",
                "Rejoin",
                "Deliver",
                "NoticeRejoin",
                "Deliver",
                "Drop",
            ][..],
        ),
    ] {
        let mutant = Mutant::OwnerIgnoresReadmission;
        let r = run(config, Some(mutant));
        assert!(r.complete, "{config}: search complete");
        assert_eq!(r.unique_states, states, "{config}: pinned state count");
        assert_eq!(r.result(property).status, Status::Violated, "{config}");
        assert_eq!(
            step_names(r.result(property)),
            steps,
            "{config}: counterexample"
        );
        assert_eq!(
            failing(&r),
            [property],
            "{config}: the one wedge, nothing else"
        );
    }
}

/// Finding 36: a current follower suspended while a lost instance is
/// suspended too, more than W - 1 = 1 suspended instances in all.
fn suspended_beside_a_lost_instance(_m: &MoveModel, s: &State) -> bool {
    let r = &s.record;
    r.suspended.iter().any(|x| !s.current(x)) && r.suspended.iter().any(|x| s.current(x))
}

/// Findings 36 and 37 on lost-while-suspended (a follower restarts on its
/// disk, is suspended, crashes and comes back on an empty one; another
/// follower and the owner crash). Finding 36: a lost instance stays
/// suspended but holds no rejoin slot, so an intact follower restarts
/// beside it (before, that state was unreachable and the model excused the
/// wedge as past tolerance; the runtime's seed 28 did not heal). Finding
/// 37: a learner re-added with data from an earlier stint is credited with
/// what it holds, so the owner confirms what the re-added copies hold (the
/// progress property failed in 32 steps before).
#[test]
fn a_lost_suspended_instance_holds_no_slot_and_a_readded_copy_counts() {
    let r = run("lost-while-suspended", None);
    assert!(r.complete, "search complete");
    assert_eq!(r.unique_states, 981_674, "pinned state count");
    assert!(r.passed(), "{:?}", failing(&r));
    let m = MoveModel::new(Cfg::named("lost-while-suspended"));
    let opened = Property {
        name: "a follower is suspended beside a lost suspended instance",
        kind: Kind::Sometimes,
        class: Class::Rule,
        check: Check::State(suspended_beside_a_lost_instance),
        applies: |_| true,
    };
    let r = check_properties(&m, &[opened], Options::default());
    let p = &r.results[0];
    assert_eq!(p.status, Status::Reached);
    assert_eq!(
        step_names(p),
        ["Crash", "Restart", "Crash", "Restart", "Crash", "Restart"]
    );
}
