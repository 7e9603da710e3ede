//! The zoo's runtime column (`sim::zoo`): every mutant of the
//! implementation switched on in the simulated nodes over seeds 1 and 2,
//! pinned. The simulator's checks catch two; two more change the trace
//! and pass the checks (the trace validator rejects them:
//! `tests/trace_validate.rs` at the root); the rest never change a trace,
//! because the runtime does not run their paths.

use livemove_impl::Mutant;
use livemove_runtime::sim::zoo::{column, RuntimeVerdict};
use livemove_runtime::sim::{SimConfig, SimFailure};

#[test]
fn every_mutant_over_two_seeds_is_caught_left_to_the_validator_or_not_reached() {
    let rows = column(&SimConfig::new(1), 1..=2, &Mutant::ALL, &mut |_| {}).unwrap();
    assert_eq!(rows.len(), Mutant::ALL.len());
    let mut caught = Vec::new();
    let mut unnoticed = Vec::new();
    let mut not_reached = 0;
    for r in &rows {
        match &r.verdict {
            RuntimeVerdict::Caught { seed, failure } => {
                caught.push((r.mutant, *seed, failure.clone(), r.seeds_run))
            }
            RuntimeVerdict::Unnoticed { seed, line, trace } => {
                assert!(!trace.is_empty());
                unnoticed.push((r.mutant, *seed, *line, r.seeds_run))
            }
            RuntimeVerdict::NotReached => {
                assert_eq!(r.seeds_run, 2, "{}", r.mutant);
                not_reached += 1
            }
        }
    }
    assert_eq!(caught.len(), 2, "{caught:?}");
    let (m, seed, f, run) = &caught[0];
    assert_eq!(
        (*m, *seed, *run),
        (Mutant::RestartCountsOwnSuspension, 1, 1)
    );
    assert!(matches!(f, SimFailure::NotHealed { .. }), "{f}");
    let (m, seed, f, run) = &caught[1];
    assert_eq!(
        (*m, *seed, *run),
        (Mutant::DuplicateAppendAppliesTwice, 1, 1)
    );
    assert!(matches!(f, SimFailure::Duplicate { key: 23, .. }), "{f}");
    // Two change the trace and pass the checks; the trace validator
    // rejects each (`tests/trace_validate.rs` at the root). (A third,
    // `stale_ack_counts`, changed seed 1's trace at line 357 until the
    // owner re-evaluated its confirms on reading a re-admission: the run
    // no longer meets a stale acknowledgement there.) An owner that
    // ignores re-admissions names no copy in its `NoticeReadmission`
    // events, and the trace spec's owner unmutes the copies the record
    // re-admitted; the seed that wedges without the reading is
    // `runtime/tests/sim.rs`'s seed 97.
    assert_eq!(
        unnoticed,
        vec![
            (Mutant::RejoinCountsEarly, 1, 134, 2),
            (Mutant::OwnerIgnoresReadmission, 1, 137, 2),
        ]
    );
    assert_eq!(not_reached, Mutant::ALL.len() - 4);
}

/// With one planned handoff per seed the runtime reaches the handoff's
/// mutants and an epoch change: over seeds 1 and 2 the simulator's checks
/// catch four (three runs that do not heal, one message held twice) and
/// one trace goes to the validator (`docs/zoo.md`).
#[test]
fn with_handoffs_the_column_reaches_the_handoff_mutants() {
    let base = SimConfig {
        handoffs: 1,
        ..SimConfig::new(1)
    };
    let seen = reached(&base);
    assert_eq!(
        seen,
        vec![
            (Mutant::HandoffWithoutBarrier, "not healed", 2, 0),
            (Mutant::RejoinCountsEarly, "unnoticed", 1, 300),
            (Mutant::RestartCountsOwnSuspension, "not healed", 1, 0),
            (Mutant::DuplicateAppendAppliesTwice, "duplicate", 1, 0),
            (Mutant::OldOwnerServesAfterCommit, "not healed", 2, 0),
            (Mutant::OwnerIgnoresReadmission, "unnoticed", 1, 477),
        ]
    );
}

/// `livemove zoo`'s column: four nodes, one planned move, one handoff, one
/// owner kill and four eager writes per seed (`runtime/src/sim/eager.rs`).
/// Over seeds 1 and 2 it reaches eleven: the move and the eager writes add
/// `w_from_assignment` (the learner raises the owner's W) and
/// `recovery_keeps_move` (a learner joins during a recovery), each left to
/// the trace validator (`tests/sim.rs` at the root); the guard mutants of
/// a move's swap and removal first change a trace at seeds 8 and 9
/// (`tests/eager.rs`; `docs/zoo.md` has the column over 1..16).
#[test]
fn with_a_move_and_eager_writes_the_column_reaches_the_guard_mutants() {
    let base = SimConfig {
        nodes: 4,
        moves: 1,
        handoffs: 1,
        recoveries: 1,
        eager_writes: 4,
        heal_steps_max: livemove_runtime::sim::HEAL_STEPS_WITH_MOVES,
        ..SimConfig::new(1)
    };
    let seen = reached(&base);
    assert_eq!(
        seen,
        vec![
            (Mutant::WFromAssignment, "unnoticed", 1, 83),
            (Mutant::RecoveryKeepsMove, "unnoticed", 1, 29),
            (Mutant::HandoffWithoutBarrier, "forked", 1, 0),
            (Mutant::SmallSealQuorum, "unnoticed", 1, 26),
            (Mutant::RejoinCountsEarly, "unnoticed", 1, 44),
            (Mutant::ReceiptsSkipSuspended, "not healed", 1, 0),
            (Mutant::RestartCountsOwnSuspension, "not healed", 2, 0),
            (Mutant::StaleAckCounts, "unnoticed", 1, 273),
            (Mutant::DuplicateAppendAppliesTwice, "duplicate", 1, 0),
            (Mutant::OldOwnerServesAfterCommit, "forked", 1, 0),
            (Mutant::OwnerIgnoresReadmission, "unnoticed", 1, 77),
        ]
    );
}

/// The column over seeds 1 and 2 from `base`: each mutant reached, with how
/// (the simulator's check that caught it, or "unnoticed" for a trace left
/// to the validator), the seed, and the first differing line of an
/// unnoticed trace (0 for a catch).
fn reached(base: &SimConfig) -> Vec<(Mutant, &'static str, u64, usize)> {
    let rows = column(base, 1..=2, &Mutant::ALL, &mut |_| {}).unwrap();
    let mut seen = Vec::new();
    for r in &rows {
        match &r.verdict {
            RuntimeVerdict::Caught { seed, failure } => {
                let how = match failure {
                    SimFailure::NotHealed { .. } => "not healed",
                    SimFailure::Duplicate { .. } => "duplicate",
                    SimFailure::ForkedConfirm { .. } => "forked",
                    other => panic!("{}: {other}", r.mutant),
                };
                seen.push((r.mutant, how, *seed, 0))
            }
            RuntimeVerdict::Unnoticed { seed, line, .. } => {
                seen.push((r.mutant, "unnoticed", *seed, *line))
            }
            RuntimeVerdict::NotReached => {}
        }
    }
    seen
}
