//! Lockstep over every edge, with negative conformance in every visited
//! state, on the small configs: the correct implementation agrees with the
//! correct model everywhere. Counts are pinned (they change only with the
//! model, the alphabet or the environment guards).

use livemove_conformance::lockstep;
use livemove_conformance::report::{Options, RunReport};
use livemove_model::Cfg;

fn run(name: &str) -> RunReport {
    lockstep::run(&Cfg::named(name), None, &Options::default())
}

fn assert_pinned(r: &RunReport, states: usize, edges: usize, negative: usize) {
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
        (states, edges, edges, negative),
        "{}: states, edges reachable, edges replayed, negative checks",
        r.config
    );
}

#[test]
fn join_and_move_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("join-and-move"), 877, 2_708, 65_033);
}

#[test]
fn handoff_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("handoff"), 304, 742, 15_473);
}

#[test]
fn rf_increase_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("rf-increase"), 5_523, 13_127, 421_261);
}

#[test]
fn drain_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("drain"), 7_578, 25_784, 560_011);
}

/// Faults: a zombie owner, seals, install, activation and a fresh disk.
#[test]
fn zombie_recovery_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("zombie-recovery"), 51_794, 109_138, 2_756_168);
}

#[test]
fn fresh_disk_zombie_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("fresh-disk-zombie"), 83_052, 200_792, 4_435_035);
}

/// A crash, a restart on a fresh disk and a move that replaces the lost copy.
#[test]
fn lost_follower_replaced_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("lost-follower-replaced"), 87_615, 244_639, 6_671_509);
}

/// A crash or a suspicion before and after a handoff's commit.
#[test]
fn handoff_faults_every_edge_agrees_and_every_disabled_action_is_refused() {
    assert_pinned(&run("handoff-faults"), 184_434, 398_898, 9_836_895);
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
