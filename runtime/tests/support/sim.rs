//! Running simulated seeds in the tests.

use livemove_runtime::sim::{self, SimConfig, SimReport};

/// Run `cfg`; an error of the run itself (not a failed check) fails the
/// test, naming the seed.
pub fn run(cfg: &SimConfig) -> SimReport {
    sim::run(cfg).unwrap_or_else(|e| panic!("seed {}: {e}", cfg.seed))
}

/// Run `cfg`, which must pass; `flags` are the command line's for it, so a
/// failure names the command that replays it.
pub fn passing(cfg: &SimConfig, flags: &str) -> SimReport {
    let r = run(cfg);
    let seed = cfg.seed;
    assert_eq!(
        r.verdict,
        Ok(()),
        "seed {seed} failed: replay with `livemove sim --seeds {seed} {flags}`"
    );
    r
}
