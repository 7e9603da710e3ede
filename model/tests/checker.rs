//! The checker itself: it agrees with Stateright's BFS on state counts, it
//! never calls a truncated search complete, property names are unique, and
//! every safety property can fail (a switch that breaks the guard it rests
//! on makes it fail with a pinned counterexample length).

use livemove_model::checker::{check, Options, Status};
use livemove_model::properties;
use livemove_model::state::State;
use livemove_model::types::Slot;
use livemove_model::{Cfg, MoveModel, Mutant};
use stateright::{Checker, Model};

#[test]
fn stateright_bfs_counts_the_same_states() {
    for name in ["join-and-move", "handoff", "rf-increase", "drain"] {
        let m = MoveModel::new(Cfg::named(name));
        let ours = check(&m, Options::default()).unique_states;
        let theirs = m.clone().checker().spawn_bfs().join();
        assert!(theirs.is_done(), "{name}: stateright did not finish");
        assert!(
            theirs.discoveries().is_empty(),
            "{name}: stateright found a violation"
        );
        assert_eq!(
            theirs.unique_state_count(),
            ours,
            "{name}: state counts differ"
        );
    }
}

#[test]
fn property_names_are_unique() {
    let mut names: Vec<_> = properties::all().iter().map(|p| p.name).collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "two properties share a name");
}

#[test]
fn a_truncated_search_is_incomplete_and_proves_nothing() {
    let m = MoveModel::new(Cfg::named("recovery-during-move"));
    let r = check(
        &m,
        Options {
            max_states: Some(1000),
            ..Options::default()
        },
    );
    assert!(!r.complete);
    assert!(!r.passed());
    assert!(r.unique_states < 2000);
    for p in &r.results {
        assert_ne!(
            p.status,
            Status::Holds,
            "`{}` reported as holding on a truncated search",
            p.name
        );
    }
}

/// Run `config` with `mutant` and return the length of the shortest
/// counterexample to `property`.
fn breaks(config: &str, mutant: Mutant, property: &str) -> usize {
    let m = MoveModel::new(Cfg::named(config).with_mutant(Some(mutant)));
    let r = check(&m, Options::default());
    let p = r.result(property);
    assert_eq!(
        p.status,
        Status::Violated,
        "{mutant} on {config} should violate `{property}`"
    );
    p.path.as_ref().expect("violation has a path").steps.len()
}

#[test]
fn every_safety_property_fails_when_its_guard_is_broken() {
    let cases = [
        (
            "join-and-move",
            Mutant::LearnerCounts,
            "no confirmed entry is lost",
            4,
        ),
        (
            "handoff",
            Mutant::HandoffWithoutBarrier,
            "one confirmed history",
            10,
        ),
        (
            "zombie-recovery",
            Mutant::NoSealFencing,
            "a stale owner never confirms what the current owner lacks",
            9,
        ),
        (
            "handoff",
            Mutant::HandoffWithoutBarrier,
            "a committed handoff's new owner holds F and its old owner accepted nothing after it",
            4,
        ),
        (
            "join-and-move",
            Mutant::WFromAssignment,
            "W comes from the configured replication factor",
            1,
        ),
        (
            "join-and-move",
            Mutant::SwapBeforeAdmission,
            "the owner counts only committed, eligible, unsuspended followers",
            3,
        ),
        (
            "recovery-during-move",
            Mutant::RecoveryKeepsMove,
            "no move step or uncommitted handoff while a recovery is pending",
            2,
        ),
        (
            "join-and-move",
            Mutant::RemoveBeforeBoundary,
            "removal waits for the target to cover B",
            8,
        ),
        (
            "zombie-recovery",
            Mutant::NoSealFencing,
            "fencing is enforced where writes are accepted",
            4,
        ),
        (
            "zombie-recovery",
            Mutant::NoSealFencing,
            "a pending recovery activates",
            6,
        ),
    ];
    let wrong: Vec<String> = cases
        .into_iter()
        .filter_map(|(config, mutant, property, len)| {
            let got = breaks(config, mutant, property);
            (got != len).then(|| format!("{mutant} on {config}: `{property}`: {got}, pinned {len}"))
        })
        .collect();
    assert!(wrong.is_empty(), "changed lengths:\n{}", wrong.join("\n"));
}

/// No switch lets the controller suspend W followers (restarts beyond the
/// cap are not admitted), so this property is shown to be able to fail on a
/// hand-built state instead.
#[test]
fn the_suspension_cap_property_rejects_w_suspended_followers() {
    let m = MoveModel::new(Cfg::named("restart-rejoin"));
    let mut s: State = m.init();
    assert!(properties::suspended_below_w(&m, &s));
    // rf 4: W = 3, so three suspended followers break the cap.
    for n in 1..4 {
        s.record.suspended = s.record.suspended.with(Slot::new(n, 0));
    }
    assert!(!properties::suspended_below_w(&m, &s));
}

#[test]
fn counterexamples_replay_through_the_model() {
    let m =
        MoveModel::new(Cfg::named("join-and-move").with_mutant(Some(Mutant::RemoveBeforeBoundary)));
    let r = check(&m, Options::default());
    let path = r
        .result("no confirmed entry is lost")
        .path
        .clone()
        .expect("violated");
    let mut s = m.init();
    for (a, t) in &path.steps {
        s = m.apply(&s, *a).expect("each step is enabled");
        assert_eq!(s, *t);
    }
    assert!(!properties::no_confirmed_entry_lost(&m, &s));
}
