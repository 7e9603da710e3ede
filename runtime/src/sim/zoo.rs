//! The zoo's runtime column: each mutant of the implementation switched on
//! in the simulated nodes (and the store), run over a range of seeds, and
//! judged by the simulator's own checks (a confirmed message lost, a
//! message held twice, a run that does not heal).
//!
//! Each seed is run once with the correct node code and once with the
//! mutant, both traced. The simulator is deterministic, so a mutant whose
//! traces equal the correct ones byte for byte on every seed never changed
//! what the nodes did: the runtime does not reach its path (the runtime
//! runs the serving path, restarts and re-admission; moves, handoffs,
//! recoveries, retention and the routed client are not driven by it yet).
//! A mutant whose trace differs somewhere and that no check catches is
//! reported as such, with the first seed and line that differ, for the
//! trace validator to judge (`livemove zoo` and `livemove sim --zoo` hand
//! that trace to TLC).

use super::{run, SimConfig, SimError, SimFailure};
use livemove_impl::{Mutant, Mutants};
use std::ops::RangeInclusive;

/// What the runtime made of one mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeVerdict {
    /// The first seed whose run failed one of the simulator's checks.
    Caught {
        /// The seed.
        seed: u64,
        /// What failed.
        failure: SimFailure,
    },
    /// Some seed's trace differs from the correct code's, and every seed
    /// passed the simulator's checks.
    Unnoticed {
        /// The first seed whose trace differs.
        seed: u64,
        /// The first line (1-based) of that trace that differs.
        line: usize,
        /// The mutant's trace of that seed (NDJSON).
        trace: Vec<u8>,
    },
    /// Every seed's trace is the correct code's, byte for byte.
    NotReached,
}

/// One mutant's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeRow {
    /// The mutant.
    pub mutant: Mutant,
    /// Seeds run before the verdict (all of them unless caught).
    pub seeds_run: u64,
    /// The verdict.
    pub verdict: RuntimeVerdict,
}

/// The first line (1-based) where `a` and `b` differ, if they do.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    let mut la = a.split(|c| *c == b'\n');
    let mut lb = b.split(|c| *c == b'\n');
    let mut n = 0;
    loop {
        n += 1;
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (None, None) => return Some(n),
            _ => return Some(n),
        }
    }
}

/// Run `mutants` over `seeds` on top of `base` (its seed, trace flag and
/// mutants are replaced), calling `progress` after each row.
pub fn column(
    base: &SimConfig,
    seeds: RangeInclusive<u64>,
    mutants: &[Mutant],
    progress: &mut dyn FnMut(&RuntimeRow),
) -> Result<Vec<RuntimeRow>, SimError> {
    let cfg = |seed: u64, mutants: Mutants| SimConfig {
        seed,
        trace: true,
        mutants,
        ..base.clone()
    };
    let mut correct = Vec::new();
    for seed in seeds.clone() {
        let r = run(&cfg(seed, Mutants::NONE))?;
        if let Err(failure) = r.verdict {
            return Err(SimError::CorrectFails { seed, failure });
        }
        correct.push(r.trace);
    }
    let mut rows = Vec::new();
    for &m in mutants {
        let mut verdict = RuntimeVerdict::NotReached;
        let mut seeds_run = 0;
        for (seed, good) in seeds.clone().zip(&correct) {
            seeds_run += 1;
            let r = run(&cfg(seed, Mutants::only(m)))?;
            if let Err(failure) = r.verdict {
                verdict = RuntimeVerdict::Caught { seed, failure };
                break;
            }
            if verdict == RuntimeVerdict::NotReached {
                if let Some(line) = first_difference(good, &r.trace) {
                    verdict = RuntimeVerdict::Unnoticed {
                        seed,
                        line,
                        trace: r.trace,
                    };
                }
            }
        }
        let row = RuntimeRow {
            mutant: m,
            seeds_run,
            verdict,
        };
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn first_difference_names_the_line() {
        assert_eq!(first_difference(b"a\nb\n", b"a\nb\n"), None);
        assert_eq!(first_difference(b"a\nb\n", b"a\nc\n"), Some(2));
        assert_eq!(first_difference(b"a\n", b"a\nb\n"), Some(2));
        assert_eq!(first_difference(b"x", b"y"), Some(1));
    }
}
