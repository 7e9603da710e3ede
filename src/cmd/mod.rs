//! Subcommands. Exit codes: 0 success, 1 a property or check failed, 2 bad usage.

pub mod bench;
pub mod check;
pub mod conform;
pub mod demo;
pub mod explore;
pub mod node;
pub mod plan;
pub mod sim;
pub mod swarm;
pub mod tlc;
pub mod trace;
pub mod validate;
pub mod zoo;

use livemove_model::{Cfg, Mutant};

pub const EXIT_OK: u8 = 0;
pub const EXIT_FAIL: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// Resolve `--config` (a config or a group) and `--mutant`, or print why not.
pub fn resolve(config: &str, mutant: Option<&str>) -> Result<Vec<Cfg>, u8> {
    let m = match mutant.map(str::parse::<Mutant>).transpose() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: --mutant: {e}");
            return Err(EXIT_USAGE);
        }
    };
    match Cfg::resolve(config) {
        Ok(v) => Ok(v.into_iter().map(|c| c.with_mutant(m)).collect()),
        Err(e) => {
            eprintln!("error: --config: {e}");
            Err(EXIT_USAGE)
        }
    }
}

/// A count flag that must be a whole number of at least 1: a zero count
/// would check nothing, so it is refused as bad usage.
pub fn positive_count(s: &str) -> Result<usize, String> {
    match s.parse::<i128>() {
        Ok(n) if n >= 1 => usize::try_from(n).map_err(|_| format!("`{s}` is too large")),
        Ok(_) => Err(format!(
            "`{s}`: must be at least 1 (a count of 0 or less checks nothing)"
        )),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

/// The compact mode's memory budget in GiB when none is given: with it,
/// `check --config full` peaks under 2 GiB (README, "Checking at scale").
pub const DEFAULT_MEMORY_GIB: f64 = 1.5;

/// Every core this process may use (one if that cannot be told).
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` over `items`, `jobs` at a time on threads of their own, each result
/// handed to `report` in the order of `items` as soon as it and every one
/// before it are done. A panic in `f` is propagated.
pub fn par_in_order<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
    mut report: impl FnMut(R),
) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            let (tx, next, f) = (tx.clone(), &next, &f);
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, f(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut held = std::collections::BTreeMap::new();
        let mut due = 0;
        for (i, r) in rx {
            held.insert(i, r);
            while let Some(r) = held.remove(&due) {
                report(r);
                due += 1;
            }
        }
        assert_eq!(
            due,
            items.len(),
            "every item's job reports once (a job thread panicked)"
        );
    });
}

/// [`par_in_order`] collected: the results in the order of `items`.
pub fn par_map<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    par_in_order(items, jobs, f, |r| out.push(r));
    out
}
