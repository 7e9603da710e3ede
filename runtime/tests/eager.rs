//! Eager writes in the simulator (`SimConfig::eager_writes`,
//! `runtime/src/sim/eager.rs`): guarded writes tried without checking
//! their guards, as a writer acting on a stale record would. The correct
//! store refuses each or takes a legitimate write, and every run passes;
//! a mutant of a store guard lets one through, and the run's trace changes
//! where, without eager writes, it does not (the trace validator rejects
//! it: `tests/sim.rs` at the root; `docs/zoo.md`).

use livemove_impl::Mutant;
use livemove_runtime::sim::zoo::{column, RuntimeVerdict};
use livemove_runtime::sim::{self, SimConfig, HEAL_STEPS_WITH_MOVES};

/// Three nodes, one handoff and one owner kill per seed.
fn handoffs(seed: u64, eager_writes: u64) -> SimConfig {
    SimConfig {
        handoffs: 1,
        recoveries: 1,
        eager_writes,
        ..SimConfig::new(seed)
    }
}

/// Four nodes, one move as well.
fn moves(seed: u64, eager_writes: u64) -> SimConfig {
    SimConfig {
        nodes: 4,
        moves: 1,
        heal_steps_max: HEAL_STEPS_WITH_MOVES,
        ..handoffs(seed, eager_writes)
    }
}

/// Over seeds 1..=8 of each config: every run passes, and the attempts and
/// the writes the store took are pinned (most are refused: the record does
/// not allow them yet; the ones taken are the writes the owner would make
/// a tick later).
#[test]
fn the_correct_store_refuses_or_takes_a_legitimate_write_and_every_run_passes() {
    let mut seen = Vec::new();
    for (name, cfg) in [
        ("handoffs", handoffs as fn(u64, u64) -> SimConfig),
        ("moves", moves),
    ] {
        let (mut tried, mut taken) = (0, 0);
        for seed in 1..=8 {
            let r = sim::run(&cfg(seed, 4)).unwrap();
            assert_eq!(
                r.verdict,
                Ok(()),
                "{name} seed {seed}: replay with `livemove sim --seeds {seed} --eager-writes 4 \
                 --handoffs 1 --recoveries 1{}`",
                if name == "moves" {
                    " --nodes 4 --moves 1"
                } else {
                    ""
                }
            );
            assert!(r.eager_accepted <= r.eager_attempts);
            tried += r.eager_attempts;
            taken += r.eager_accepted;
        }
        seen.push((name, tried, taken));
    }
    assert_eq!(seen, vec![("handoffs", 27, 3), ("moves", 30, 1)]);
}

/// Eager writes change the run (they draw from the seed's generator and
/// write to the record), and a seed with them replays byte for byte. A run
/// without them draws nothing more: the traces pinned elsewhere
/// (`tests/sim.rs`, `tests/zoo.rs`) are unchanged.
#[test]
fn eager_writes_change_the_run_and_replay_the_same() {
    let traced = |cfg: SimConfig| sim::run(&SimConfig { trace: true, ..cfg }).unwrap().trace;
    let with = traced(moves(3, 4));
    assert_ne!(with, traced(moves(3, 0)));
    assert_eq!(traced(moves(3, 4)), with);
}

/// The guard mutants of moves are reached only through eager writes: with
/// none, the owner writes each step once its own acknowledgements satisfy
/// the guard, and every trace is the correct code's; with four per seed
/// the relaxed guard takes a write the correct store refuses.
#[test]
fn eager_writes_reach_the_guard_mutants_of_moves() {
    let mutants = [
        Mutant::SwapBeforeAdmission,
        Mutant::RemoveBeforeBoundary,
        Mutant::RecoveryKeepsMove,
    ];
    let verdicts = |eager_writes: u64| {
        column(&moves(1, eager_writes), 1..=9, &mutants, &mut |_| {})
            .unwrap()
            .into_iter()
            .map(|r| match r.verdict {
                RuntimeVerdict::Caught { seed, failure } => {
                    panic!("{} caught at seed {seed}: {failure}", r.mutant)
                }
                RuntimeVerdict::Unnoticed { seed, line, .. } => (r.mutant, Some((seed, line))),
                RuntimeVerdict::NotReached => (r.mutant, None),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        verdicts(0),
        mutants.iter().map(|m| (*m, None)).collect::<Vec<_>>()
    );
    assert_eq!(
        verdicts(4),
        vec![
            (Mutant::SwapBeforeAdmission, Some((8, 126))),
            (Mutant::RemoveBeforeBoundary, Some((9, 213))),
            (Mutant::RecoveryKeepsMove, Some((1, 29))),
        ]
    );
}
