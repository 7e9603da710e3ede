//! The zoo's runtime column (`sim::zoo`): every mutant of the
//! implementation switched on in the simulated nodes over seeds 1 and 2,
//! pinned. The simulator's checks catch two; four more change the trace and
//! pass the checks (the trace validator judges them: `tests/sim.rs` at the
//! root); the rest never change a trace, because the runtime does not run
//! their paths.

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
        (Mutant::RestartCountsOwnSuspension, 2, 2)
    );
    assert!(matches!(f, SimFailure::NotHealed { .. }), "{f}");
    let (m, seed, f, run) = &caught[1];
    assert_eq!(
        (*m, *seed, *run),
        (Mutant::DuplicateAppendAppliesTwice, 1, 1)
    );
    assert!(matches!(f, SimFailure::Duplicate { key: 22, .. }), "{f}");
    // Finding 32's re-acknowledgement changed the message flow of seeds 1
    // and 2: `stale_ack_counts` is reached again, and so are finding 32's
    // own mutants. A missing re-acknowledgement (`rejoin_stays_silent`)
    // shows in the NoticeRejoin event, which names the one it sent; the
    // seed that wedges without it is `runtime/tests/sim.rs`'s seed 97.
    assert_eq!(
        unnoticed,
        vec![
            (Mutant::RejoinCountsEarly, 1, 360, 2),
            (Mutant::StaleAckCounts, 1, 366, 2),
            (Mutant::RejoinStaysSilent, 1, 65, 2),
            (Mutant::SuspensionOutOfOrder, 1, 328, 2),
        ]
    );
    assert_eq!(not_reached, Mutant::ALL.len() - 6);
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
    let rows = column(&base, 1..=2, &Mutant::ALL, &mut |_| {}).unwrap();
    let mut seen: Vec<(Mutant, &str, u64, usize)> = Vec::new();
    for r in &rows {
        match &r.verdict {
            RuntimeVerdict::Caught { seed, failure } => {
                let how = match failure {
                    SimFailure::NotHealed { .. } => "not healed",
                    SimFailure::Duplicate { .. } => "duplicate",
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
    assert_eq!(
        seen,
        vec![
            (Mutant::HandoffWithoutBarrier, "not healed", 2, 0),
            (Mutant::RejoinCountsEarly, "unnoticed", 1, 202),
            (Mutant::RestartCountsOwnSuspension, "not healed", 1, 0),
            (Mutant::StaleAckCounts, "unnoticed", 1, 216),
            (Mutant::DuplicateAppendAppliesTwice, "duplicate", 1, 0),
            (Mutant::OldOwnerServesAfterCommit, "not healed", 2, 0),
            (Mutant::RejoinStaysSilent, "unnoticed", 1, 65),
            (Mutant::SuspensionOutOfOrder, "unnoticed", 1, 314),
        ]
    );
}
