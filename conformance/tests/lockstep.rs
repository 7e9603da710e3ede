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
            negative: 113_078,
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
            negative: 24_021,
            resume: (42, 48, 214),
        },
    );
}

#[test]
fn rf_increase_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("rf-increase"),
        Pin {
            states: 6_583,
            edges: 15_185,
            negative: 787_075,
            resume: (4_513, 915, 1_155),
        },
    );
}

#[test]
fn drain_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("drain"),
        Pin {
            states: 5_026,
            edges: 16_458,
            negative: 645_948,
            resume: (2_804, 780, 1_442),
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
            negative: 4_260_043,
            resume: (31_752, 700, 19_342),
        },
    );
}

#[test]
fn fresh_disk_zombie_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("fresh-disk-zombie"),
        Pin {
            states: 147_735,
            edges: 344_092,
            negative: 12_396_648,
            resume: (102_408, 3_628, 41_699),
        },
    );
}

/// A crash, a restart on a fresh disk and a move that replaces the lost copy.
#[test]
fn lost_follower_replaced_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("lost-follower-replaced"),
        Pin {
            states: 159_078,
            edges: 459_838,
            negative: 20_723_044,
            resume: (115_214, 15_780, 28_084),
        },
    );
}

/// A crash or a suspicion before and after a handoff's commit.
#[test]
fn handoff_faults_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("handoff-faults"),
        Pin {
            states: 179_972,
            edges: 373_335,
            negative: 14_848_695,
            resume: (119_713, 11_886, 48_373),
        },
    );
}

/// Finding 34: three suspicions in a row; each recovery chooses only among
/// sealed copies that hold the tail the one before confirmed.
#[test]
fn three_recoveries_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("three-recoveries"),
        Pin {
            states: 465_062,
            edges: 1_211_656,
            negative: 38_266_275,
            resume: (380_506, 0, 84_556),
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
            negative: 193_963,
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
            negative: 487_136,
            resume: (3_731, 78, 2_057),
        },
    );
}

/// A follower loses its disk and comes back empty on the same node.
#[test]
fn disk_lost_replaced_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("disk-lost-replaced"),
        Pin {
            states: 756,
            edges: 1_472,
            negative: 63_393,
            resume: (438, 26, 292),
        },
    );
}

/// Messages in flight: every delivery, loss and duplicate of an append,
/// an acknowledgement, a refusal, a suspension notice and a progress
/// report, and a refusal of each one no longer in flight.
#[test]
fn handoff_net_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("handoff-net"),
        Pin {
            states: 241_761,
            edges: 1_100_201,
            negative: 19_462_225,
            resume: (12_894, 29_486, 199_381),
        },
    );
}

/// A follower's disk lost and replaced on the same node, with progress
/// reports that arrive late, twice or never: a report on the lost instance
/// never speaks for the fresh one.
#[test]
fn disk_lost_replaced_net_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("disk-lost-replaced-net"),
        Pin {
            states: 162_498,
            edges: 674_381,
            negative: 13_396_935,
            resume: (42_272, 9_058, 111_168),
        },
    );
}

/// Late acknowledgements across a restart, a suspension notice and a
/// recovery's receipts.
#[test]
fn suspended_during_recovery_net_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("suspended-during-recovery-net"),
        Pin {
            states: 895_941,
            edges: 3_913_025,
            negative: 75_141_135,
            resume: (466_602, 4_322, 425_017),
        },
    );
}

/// Note 2's "does timeout retry cause duplicate effects?": the producer's
/// retry across a recovery and a handoff, answered from the owner's history
/// or appended; the retry a node that does not serve must refuse.
#[test]
fn publish_retry_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("publish-retry"),
        Pin {
            states: 78_071,
            edges: 164_530,
            negative: 6_462_470,
            resume: (54_273, 4_816, 18_982),
        },
    );
}

/// Note 2's client routing through a handoff's cutover: try again while
/// admission is closed, ASK between commit and activation, MOVED after, the
/// hop limit, and the acknowledgement only after the confirm; every client
/// action the model disables (a second request in flight, an answer from a
/// node that is down, an acknowledgement before the confirm) is refused.
#[test]
fn client_handoff_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("client-handoff"),
        Pin {
            states: 6_728,
            edges: 20_772,
            negative: 513_782,
            resume: (1_240, 666, 4_822),
        },
    );
}

/// Two producers through one handoff's cutover, each with its own route
/// and request: the implementation's clients `c1` and `c2` answer, redirect
/// and acknowledge as the model's two clients on every edge, and a client
/// the model disables is refused (`NoClient` for none, the guards of each).
#[test]
fn two_clients_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("two-clients"),
        Pin {
            states: 63_645,
            edges: 243_264,
            negative: 4_745_132,
            resume: (8_206, 4_936, 50_503),
        },
    );
}

/// The client through a crash or a suspicion of its owner: timeouts, the
/// refresh from the record, and retries answered from the recovered history.
#[test]
fn client_recovery_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("client-recovery"),
        Pin {
            states: 33_986,
            edges: 95_403,
            negative: 2_713_288,
            resume: (20_818, 608, 12_560),
        },
    );
}

/// Note 2's "how are deletions synchronized?": the consumer settles a
/// confirmed message while the owner crashes, is suspected or hands off;
/// the consumer's record of done settles (confirms and activations) agrees
/// with the model's, and every settle the model disables (off the owner,
/// admission closed, nothing delivered) is refused.
#[test]
fn settle_recovery_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("settle-recovery"),
        Pin {
            states: 140_431,
            edges: 290_524,
            negative: 11_603_184,
            resume: (93_501, 8_978, 37_952),
        },
    );
}

/// A settle folded into a checkpoint: the owner settles, confirms,
/// checkpoints and reclaims while a learner catches up from the checkpoint.
#[test]
fn settle_retention_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(
        &run("settle-retention"),
        Pin {
            states: 27_842,
            edges: 86_870,
            negative: 3_597_578,
            resume: (17_944, 4_300, 5_598),
        },
    );
}

#[test]
fn lockstep_edges_equal_the_model_checkers_edges() {
    use livemove_model::checker::{check, Options as CheckOptions};
    use livemove_model::MoveModel;
    for name in ["join-and-move", "handoff", "handoff-net"] {
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
