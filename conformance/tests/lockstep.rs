//! Lockstep over every edge, with negative conformance and the resume check
//! in every visited state, on the small configs: the correct implementation
//! agrees with the correct model everywhere. Counts are pinned (they change
//! only with the model, the alphabet or the environment guards). The large
//! `ci` configs (recovery-during-move, restart-rejoin, target-lost-after-swap,
//! retry-after-recovery, crashes-rf4) run in `.ci/run` through
//! `livemove conform --config ci`.

use livemove_conformance::lockstep;
use livemove_conformance::report::{Options, RunReport};
use livemove_model::Cfg;

fn run(name: &str) -> RunReport {
    lockstep::run(&Cfg::named(name), None, &Options::default())
}

/// States, edges (reachable, all replayed), negative checks, and the resume
/// verdicts (step enabled, waits on a fact, idle) of one run.
struct Pin {
    states: usize,
    edges: usize,
    negative: usize,
    resume: (usize, usize, usize),
}

fn assert_pinned(r: &RunReport, p: Pin) {
    for d in &r.divergences {
        eprintln!("{}", d.text());
    }
    assert!(r.passed(), "{}", r.text());
    assert_eq!(
        (
            r.states,
            r.edges_reachable,
            r.edges_replayed,
            r.negative_checks
        ),
        (p.states, p.edges, p.edges, p.negative),
        "{}: states, edges reachable, edges replayed, negative checks",
        r.config
    );
    assert_eq!(
        (r.resume_enabled, r.resume_waits, r.resume_idle),
        p.resume,
        "{}: resume enabled, waits, idle",
        r.config
    );
    assert_eq!(
        r.resume_enabled + r.resume_waits + r.resume_idle,
        r.states,
        "{}: resume is checked in every state",
        r.config
    );
}

#[test]
fn join_and_move_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("join-and-move"),
        Pin {
            states: 877,
            edges: 2_708,
            negative: 71_152,
            resume: (514, 90, 273),
        },
    );
}

#[test]
fn handoff_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("handoff"),
        Pin {
            states: 304,
            edges: 742,
            negative: 14_562,
            resume: (42, 48, 214),
        },
    );
}

#[test]
fn rf_increase_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("rf-increase"),
        Pin {
            states: 6_851,
            edges: 15_603,
            negative: 484_708,
            resume: (4_743, 923, 1_185),
        },
    );
}

#[test]
fn drain_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("drain"),
        Pin {
            states: 5_842,
            edges: 19_346,
            negative: 472_186,
            resume: (3_384, 858, 1_600),
        },
    );
}

/// Faults: a zombie owner, seals, install, activation and a fresh disk.
#[test]
fn zombie_recovery_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("zombie-recovery"),
        Pin {
            states: 51_794,
            edges: 109_138,
            negative: 2_600_787,
            resume: (31_752, 700, 19_342),
        },
    );
}

#[test]
fn fresh_disk_zombie_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("fresh-disk-zombie"),
        Pin {
            states: 149_161,
            edges: 349_294,
            negative: 7_802_582,
            resume: (103_580, 3_806, 41_775),
        },
    );
}

/// A crash, a restart on a fresh disk and a move that replaces the lost copy.
#[test]
fn lost_follower_replaced_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("lost-follower-replaced"),
        Pin {
            states: 174_854,
            edges: 500_673,
            negative: 14_359_774,
            resume: (127_558, 16_845, 30_451),
        },
    );
}

/// A crash or a suspicion before and after a handoff's commit.
#[test]
fn handoff_faults_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("handoff-faults"),
        Pin {
            states: 181_208,
            edges: 375_430,
            negative: 9_119_462,
            resume: (120_471, 11_886, 48_851),
        },
    );
}

/// Finding 10: a suspended follower's receipt activates a recovery.
#[test]
fn suspended_during_recovery_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("suspended-during-recovery"),
        Pin {
            states: 2_332,
            edges: 4_584,
            negative: 118_126,
            resume: (1_420, 78, 834),
        },
    );
}

/// Two crashes and two restarts at rf 3: a suspended follower crashes and
/// restarts again.
#[test]
fn crashes_rf3_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("crashes-rf3"),
        Pin {
            states: 5_866,
            edges: 13_291,
            negative: 296_915,
            resume: (3_731, 78, 2_057),
        },
    );
}

#[test]
fn lockstep_edges_equal_the_model_checkers_edges() {
    use livemove_model::checker::{check, Options as CheckOptions};
    use livemove_model::MoveModel;
    for name in ["join-and-move", "handoff"] {
        let m = MoveModel::new(Cfg::named(name));
        let c = check(&m, CheckOptions::default());
        let r = run(name);
        assert_eq!(
            (r.states, r.edges_reachable),
            (c.unique_states, c.edges),
            "{name}"
        );
    }
}
