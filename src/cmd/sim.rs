//! `livemove sim --seeds A..B`: run the deterministic simulator of the
//! runtime's node code for each seed and print one row per seed (seed,
//! steps, messages, published, confirmed, faults, verdict), then the seeds
//! that failed, each with the command that replays it.

use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use clap::Parser;
use livemove_impl::{Mutant, Mutants};
use livemove_runtime::sim::{self, Faults, SimConfig};
use std::ops::RangeInclusive;
use std::path::PathBuf;

#[derive(Parser)]
pub struct Args {
    /// Seeds to run, both ends included: `1..200`, or one seed `7`.
    #[arg(long, value_parser = parse_seeds)]
    seeds: RangeInclusive<u64>,
    /// Steps of the fault phase of each seed.
    #[arg(long, default_value_t = 400, value_parser = super::positive_count)]
    fault_steps: usize,
    /// Messages published during the fault phase, at most.
    #[arg(long, default_value_t = 24, value_parser = super::positive_count)]
    publish_max: usize,
    /// The fault schedule, any of
    /// `drop=8,duplicate=5,crash=2,restart=3,cut=1,cut_ms=300,torn=50,delay_ms=30`
    /// (percent of fault-phase steps; the longest cut and message delay;
    /// percent of kills that tear the last record).
    #[arg(long, value_parser = parse_faults)]
    faults: Option<Faults>,
    /// Write each seed's NDJSON trace to DIR/seed-<n>.ndjson.
    #[arg(long)]
    trace_dir: Option<PathBuf>,
    /// Switch on a mutant of the implementation (see `livemove zoo`).
    #[arg(long)]
    mutant: Option<String>,
}

/// Parse `A..B` (both included) or a single seed.
pub fn parse_seeds(s: &str) -> Result<RangeInclusive<u64>, String> {
    let num = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{x}` in `{s}` is not a seed (a whole number)"))
    };
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.strip_prefix('=').unwrap_or(b))?),
        None => (num(s)?, num(s)?),
    };
    if a > b {
        return Err(format!(
            "`{s}`: the first seed is after the last, no seed to run"
        ));
    }
    Ok(a..=b)
}

/// Parse `name=value,...` over the default fault schedule.
pub fn parse_faults(s: &str) -> Result<Faults, String> {
    let mut f = Faults::default();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}`: expected `name=value`"))?;
        let v: u64 = value
            .trim()
            .parse()
            .map_err(|_| format!("`{part}`: `{value}` is not a whole number"))?;
        let slot = match name.trim() {
            "drop" => &mut f.drop_pct,
            "duplicate" => &mut f.duplicate_pct,
            "crash" => &mut f.crash_pct,
            "restart" => &mut f.restart_pct,
            "cut" => &mut f.cut_pct,
            "cut_ms" => &mut f.cut_ms_max,
            "torn" => &mut f.torn_pct,
            "delay_ms" => &mut f.delay_ms_max,
            other => {
                return Err(format!(
                "`{other}` is not a fault (drop, duplicate, crash, restart, cut, cut_ms, torn, delay_ms)"
            ))
            }
        };
        *slot = v;
    }
    Ok(f)
}

pub fn run(args: Args) -> u8 {
    let mutants = match args.mutant.as_deref().map(str::parse::<Mutant>).transpose() {
        Ok(m) => m.map_or(Mutants::NONE, Mutants::only),
        Err(e) => {
            eprintln!("error: --mutant: {e}");
            return EXIT_USAGE;
        }
    };
    if let Some(dir) = &args.trace_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: --trace-dir {}: {e}", dir.display());
            return EXIT_USAGE;
        }
    }
    println!(
        "{:>8} {:>7} {:>9} {:>9} {:>9} {:>7} {:>6} {:>5}  verdict",
        "seed", "steps", "messages", "published", "confirmed", "crashes", "drops", "dups"
    );
    let mut failed = Vec::new();
    let (mut steps, mut messages, mut events) = (0u64, 0u64, 0u64);
    let started = std::time::Instant::now();
    for seed in args.seeds.clone() {
        let cfg = SimConfig {
            fault_steps: args.fault_steps as u64,
            publish_max: args.publish_max as u64,
            trace: args.trace_dir.is_some(),
            faults: args.faults.unwrap_or_default(),
            mutants,
            ..SimConfig::new(seed)
        };
        let r = match sim::run(&cfg) {
            Ok(r) => r,
            Err(e @ sim::SimError::Config(_)) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
            Err(e) => {
                eprintln!("error: seed {seed}: {e}");
                return EXIT_FAIL;
            }
        };
        if let Some(dir) = &args.trace_dir {
            let path = dir.join(format!("seed-{seed}.ndjson"));
            if let Err(e) = std::fs::write(&path, &r.trace) {
                eprintln!("error: {}: {e}", path.display());
                return EXIT_FAIL;
            }
        }
        steps += r.steps;
        messages += r.messages;
        events += r.trace_events;
        let verdict = match &r.verdict {
            Ok(()) => "ok".to_string(),
            Err(f) => {
                failed.push(seed);
                format!("FAILED: {f}")
            }
        };
        println!(
            "{:>8} {:>7} {:>9} {:>9} {:>9} {:>7} {:>6} {:>5}  {verdict}",
            r.seed, r.steps, r.messages, r.published, r.confirmed, r.crashes, r.drops, r.duplicates
        );
    }
    let seeds = args.seeds.end() - args.seeds.start() + 1;
    println!(
        "{seeds} seeds, {steps} steps, {messages} messages{} in {:.1} s; {} failed",
        if args.trace_dir.is_some() {
            format!(", {events} trace events")
        } else {
            String::new()
        },
        started.elapsed().as_secs_f64(),
        failed.len()
    );
    for seed in &failed {
        let m = args
            .mutant
            .as_deref()
            .map_or(String::new(), |m| format!(" --mutant {m}"));
        println!("failed seed {seed}: replay with `livemove sim --seeds {seed}{m}`");
    }
    if failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}
