//! `livemove sim --seeds A..B`: run the deterministic simulator of the
//! runtime's node code for each seed and print one row per seed (seed,
//! steps, messages, published, confirmed, faults, verdict), then the seeds
//! that failed, each with the command that replays it.

use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use clap::Parser;
use livemove_impl::{Mutant, Mutants};
use livemove_runtime::fsutil::ledger::SyncPoint;
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
    /// Planned owner handoffs each seed's fault phase may start (to a
    /// seeded follower); the healing phase must finish them.
    #[arg(long, default_value_t = 0)]
    handoffs: u64,
    /// Planned follower moves each seed's fault phase may start (a node
    /// that holds no copy joins; needs `--nodes` above 3).
    #[arg(long, default_value_t = 0)]
    moves: u64,
    /// Kills of the serving owner each seed's fault phase may make; each
    /// needs a recovery (opened by the restarted owner or by the
    /// controller's failure detector after a lease, run by the nodes),
    /// which the healing phase must finish.
    #[arg(long, default_value_t = 0)]
    recoveries: u64,
    /// Lapses of a live owner's lease each seed's fault phase may make:
    /// the detector opens a recovery against a zombie that still serves
    /// until the seals fence it.
    #[arg(long, default_value_t = 0)]
    suspicions: u64,
    /// Lost disks each seed's fault phase may make, each on another node:
    /// a killed follower comes back on an empty data directory (a new
    /// storage instance) and the controller replaces its lost instance
    /// with it; the healing phase must finish every replacement.
    #[arg(long, default_value_t = 0)]
    disk_losses: u64,
    /// Power losses each seed's fault phase may make: a node's machine
    /// loses power (a follower, a node that is down, or the owner, which
    /// then needs a recovery), and its disk keeps only what was fsynced
    /// and a seeded part of the rest; the healing phase restarts it.
    #[arg(long, default_value_t = 0)]
    power_losses: u64,
    /// A test switch for power losses: the nodes skip one fsync, one of
    /// `append` (the disk log's `sync_data` after appending), `truncate`,
    /// `replace-file` (a replaced file's fsync before its rename),
    /// `replace-dir` (the directory's fsync after the rename) or
    /// `create-dir` (the directory's after the segment is created).
    #[arg(long, value_parser = parse_sync_point)]
    skip_fsync: Option<SyncPoint>,
    /// Eager writes each seed's fault phase may try: a guarded write
    /// (`AdmitLearner`, `Swap`, `RemoveLeaving`, `Rejoin`, a learner's
    /// `AddLearner` during a recovery) made without checking its guard, as
    /// a writer acting on a stale record or report would; the store must
    /// refuse what the record does not allow.
    #[arg(long, default_value_t = 0)]
    eager_writes: u64,
    /// Producer retries each seed's fault phase may make: the newest
    /// message sent again with its key, as if its answer had been lost,
    /// which an owner holding it answers from its history.
    #[arg(long, default_value_t = 0)]
    publish_retries: u64,
    /// Nodes of each seed's cluster (rf 3).
    #[arg(long, default_value_t = 3)]
    nodes: u8,
    /// The zoo's runtime column: every mutant of the implementation (or
    /// only `--mutant`) over the seeds, each judged by the simulator's
    /// checks, and a trace that differs from the correct code's but passes
    /// them by the trace validator (TLC), when Java and TLC are there.
    #[arg(long)]
    zoo: bool,
}

fn parse_sync_point(s: &str) -> Result<SyncPoint, String> {
    s.parse()
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

/// The healing bound: longer when a learner must catch up.
fn heal_steps(moves: u64) -> u64 {
    if moves > 0 {
        sim::HEAL_STEPS_WITH_MOVES
    } else {
        SimConfig::new(0).heal_steps_max
    }
}

pub fn run(args: Args) -> u8 {
    if let (Some(p), 0) = (args.skip_fsync, args.power_losses) {
        // A kill keeps the page cache: without a power loss nothing a
        // skipped fsync leaves unsynced can be lost, so the run would
        // check nothing about it.
        eprintln!(
            "error: --skip-fsync {}: needs --power-losses N (a kill alone never loses what a skipped fsync left unsynced)",
            p.name()
        );
        return EXIT_USAGE;
    }
    if args.zoo {
        return zoo(&args);
    }
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
    let (mut steps, mut messages, mut events, mut handoffs, mut moves) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut owner_kills, mut suspicions, mut unconfirmed_lost) = (0u64, 0u64, 0u64);
    let (mut disk_losses, mut replacements, mut swap_backs) = (0u64, 0u64, 0u64);
    let (mut power_losses, mut owner_power_losses, mut power_bytes_lost) = (0u64, 0u64, 0u64);
    let (mut eager_attempts, mut eager_accepted) = (0u64, 0u64);
    let (mut retries, mut retries_held) = (0u64, 0u64);
    let started = std::time::Instant::now();
    for seed in args.seeds.clone() {
        let cfg = SimConfig {
            fault_steps: args.fault_steps as u64,
            publish_max: args.publish_max as u64,
            trace: args.trace_dir.is_some(),
            faults: args.faults.unwrap_or_default(),
            mutants,
            handoffs: args.handoffs,
            moves: args.moves,
            recoveries: args.recoveries,
            suspicions: args.suspicions,
            disk_losses: args.disk_losses,
            power_losses: args.power_losses,
            skip_sync: args.skip_fsync,
            eager_writes: args.eager_writes,
            publish_retries: args.publish_retries,
            nodes: args.nodes,
            heal_steps_max: heal_steps(args.moves + args.disk_losses),
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
        handoffs += r.handoffs;
        moves += r.moves;
        owner_kills += r.owner_kills;
        suspicions += r.suspicions;
        disk_losses += r.disk_losses;
        replacements += r.replacements;
        swap_backs += r.swap_backs;
        power_losses += r.power_losses;
        owner_power_losses += r.owner_power_losses;
        power_bytes_lost += r.power_bytes_lost;
        eager_attempts += r.eager_attempts;
        eager_accepted += r.eager_accepted;
        retries += r.retries;
        retries_held += r.retries_held;
        unconfirmed_lost += r.unconfirmed_lost;
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
        "{seeds} seeds, {steps} steps, {messages} messages{}{} in {:.1} s; {} failed",
        match (args.handoffs > 0, args.moves > 0) {
            (false, false) => String::new(),
            (true, false) => format!(", {handoffs} handoffs"),
            (false, true) => format!(", {moves} moves"),
            (true, true) => format!(", {handoffs} handoffs, {moves} moves"),
        } + &if args.recoveries > 0 || args.suspicions > 0 {
            format!(
                ", {owner_kills} owners killed and {suspicions} suspected alive, \
                 {unconfirmed_lost} unconfirmed publishes discarded by recoveries"
            )
        } else {
            String::new()
        } + &if args.disk_losses > 0 {
            format!(", {disk_losses} disks lost, {replacements} replacements, {swap_backs} swapped back")
        } else {
            String::new()
        } + &if args.power_losses > 0 {
            format!(
                ", {power_losses} power losses ({owner_power_losses} of a serving owner; \
                 {power_bytes_lost} bytes never made durable lost)"
            )
        } else {
            String::new()
        } + &if args.eager_writes > 0 {
            format!(", {eager_attempts} eager writes tried, {eager_accepted} taken by the store")
        } else {
            String::new()
        } + &if args.publish_retries > 0 {
            format!(
                ", {retries} producer retries ({retries_held} answered from the owner's history)"
            )
        } else {
            String::new()
        },
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
        let mut r = String::new();
        for (flag, n) in [
            ("handoffs", args.handoffs),
            ("moves", args.moves),
            ("recoveries", args.recoveries),
            ("suspicions", args.suspicions),
            ("disk-losses", args.disk_losses),
            ("power-losses", args.power_losses),
            ("eager-writes", args.eager_writes),
            ("publish-retries", args.publish_retries),
        ] {
            if n > 0 {
                r += &format!(" --{flag} {n}");
            }
        }
        if let Some(p) = args.skip_fsync {
            r += &format!(" --skip-fsync {}", p.name());
        }
        if args.nodes != 3 {
            r += &format!(" --nodes {}", args.nodes);
        }
        println!("failed seed {seed}: replay with `livemove sim --seeds {seed}{m}{r}`");
    }
    // A fault asked for that no seed made checked nothing of its path.
    let mut unexercised = false;
    for (flag, asked, made, what) in [
        ("handoffs", args.handoffs, handoffs, "started a handoff"),
        ("moves", args.moves, moves, "started a move"),
        (
            "recoveries",
            args.recoveries,
            owner_kills,
            "killed an owner",
        ),
        (
            "suspicions",
            args.suspicions,
            suspicions,
            "suspected a live owner",
        ),
        (
            "disk-losses",
            args.disk_losses,
            disk_losses,
            "lost a follower's disk",
        ),
        (
            "power-losses",
            args.power_losses,
            power_losses,
            "cut a node's power",
        ),
        (
            "eager-writes",
            args.eager_writes,
            eager_attempts,
            "tried an eager write",
        ),
        (
            "publish-retries",
            args.publish_retries,
            retries,
            "retried a publish",
        ),
    ] {
        if asked > 0 && made == 0 {
            eprintln!(
                "error: --{flag} {asked}: no seed of {}..{} {what}, so nothing of that path was \
                 checked; widen --seeds",
                args.seeds.start(),
                args.seeds.end()
            );
            unexercised = true;
        }
    }
    if failed.is_empty() && !unexercised {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

/// What the runtime column says of one mutant, for people.
pub struct RuntimeCell {
    /// The mutant.
    pub mutant: Mutant,
    /// "caught", "MISSED" or "not reached".
    pub word: &'static str,
    /// How, where.
    pub detail: String,
}

/// The runtime column over `seeds` for `mutants`: the simulator's checks,
/// then the trace validator for a trace they let through. `progress` hears
/// each cell.
pub fn runtime_column(
    base: &SimConfig,
    seeds: RangeInclusive<u64>,
    mutants: &[Mutant],
    progress: &mut dyn FnMut(&RuntimeCell),
) -> Result<Vec<RuntimeCell>, String> {
    use sim::zoo::RuntimeVerdict;
    let tlc = super::tlc::tool::Tlc::find().ok();
    let mut cells = Vec::new();
    let mut judge = |row: &sim::zoo::RuntimeRow| {
        let cell = match &row.verdict {
            RuntimeVerdict::Caught { seed, failure } => RuntimeCell {
                mutant: row.mutant,
                word: "caught",
                detail: format!("seed {seed}: {failure}"),
            },
            RuntimeVerdict::NotReached => RuntimeCell {
                mutant: row.mutant,
                word: "not reached",
                detail: format!(
                    "{} seeds, every trace the correct code's: the runtime does not run its path",
                    row.seeds_run
                ),
            },
            RuntimeVerdict::Unnoticed { seed, line, trace } => {
                match tlc
                    .as_ref()
                    .map(|t| validate_text(t, trace, base.nodes, base.rf))
                {
                    // The traces agree before `line`: an event there that
                    // no step explains is the correct code's too, and
                    // says nothing of the mutant.
                    Some(Ok(Some(event))) if event < *line => RuntimeCell {
                        mutant: row.mutant,
                        word: "MISSED",
                        detail: format!(
                            "seed {seed}: the trace differs at line {line}, but event {event}, before it, is explained by no step: the correct code's trace is invalid there too"
                        ),
                    },
                    Some(Ok(Some(event))) => RuntimeCell {
                        mutant: row.mutant,
                        word: "caught",
                        detail: format!(
                            "seed {seed}: invalid trace, event {event} explained by no step (differs from the correct trace at line {line})"
                        ),
                    },
                    Some(Ok(None)) => RuntimeCell {
                        mutant: row.mutant,
                        word: "MISSED",
                        detail: format!(
                            "seed {seed}: the trace differs at line {line}, passes every check and validates"
                        ),
                    },
                    Some(Err(e)) => RuntimeCell {
                        mutant: row.mutant,
                        word: "MISSED",
                        detail: format!("seed {seed}: the trace differs at line {line}; TLC: {e}"),
                    },
                    None => RuntimeCell {
                        mutant: row.mutant,
                        word: "MISSED",
                        detail: format!(
                            "seed {seed}: the trace differs at line {line}, passes every check (no TLC here to validate it)"
                        ),
                    },
                }
            }
        };
        progress(&cell);
        cells.push(cell);
    };
    sim::zoo::column(base, seeds, mutants, &mut judge).map_err(|e| e.to_string())?;
    Ok(cells)
}

/// Validate one trace's text with TLC: `Some(event)` when an event is
/// explained by no step.
fn validate_text(
    tlc: &super::tlc::tool::Tlc,
    trace: &[u8],
    nodes: u8,
    rf: u8,
) -> Result<Option<usize>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    let file = dir.path().join("trace.ndjson");
    std::fs::write(&file, trace).map_err(|e| format!("{}: {e}", file.display()))?;
    let args = super::validate::Args {
        files: vec![file.clone()],
        nodes: Some(u64::from(nodes)),
        rf: Some(u64::from(rf)),
        tla_dir: "tla".into(),
        rename: Vec::new(),
        keep: false,
    };
    match super::validate::validate(tlc, &file, &args)? {
        (_, super::validate::Verdict::Valid { .. }) => Ok(None),
        (_, super::validate::Verdict::Unexplained { position, .. }) => Ok(Some(position)),
    }
}

fn zoo(args: &Args) -> u8 {
    let mutants: Vec<Mutant> = match args.mutant.as_deref().map(str::parse::<Mutant>) {
        None => Mutant::ALL.to_vec(),
        Some(Ok(m)) => vec![m],
        Some(Err(e)) => {
            eprintln!("error: --mutant: {e}");
            return EXIT_USAGE;
        }
    };
    let base = SimConfig {
        fault_steps: args.fault_steps as u64,
        publish_max: args.publish_max as u64,
        faults: args.faults.unwrap_or_default(),
        handoffs: args.handoffs,
        moves: args.moves,
        recoveries: args.recoveries,
        suspicions: args.suspicions,
        disk_losses: args.disk_losses,
        power_losses: args.power_losses,
        skip_sync: args.skip_fsync,
        eager_writes: args.eager_writes,
        publish_retries: args.publish_retries,
        nodes: args.nodes,
        heal_steps_max: heal_steps(args.moves + args.disk_losses),
        ..SimConfig::new(*args.seeds.start())
    };
    let started = std::time::Instant::now();
    println!("{:32} {:11}  how", "mutant", "runtime");
    let cells = runtime_column(&base, args.seeds.clone(), &mutants, &mut |c| {
        println!("{:32} {:11}  {}", c.mutant.name(), c.word, c.detail)
    });
    let cells = match cells {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAIL;
        }
    };
    let count = |w: &str| cells.iter().filter(|c| c.word == w).count();
    println!(
        "{} mutants over seeds {}..={}: {} caught, {} missed, {} not reached by the runtime; {:.1} s",
        cells.len(),
        args.seeds.start(),
        args.seeds.end(),
        count("caught"),
        count("MISSED"),
        count("not reached"),
        started.elapsed().as_secs_f64()
    );
    if count("MISSED") > 0 {
        return EXIT_FAIL;
    }
    // A column in which no mutant changed any trace checked nothing: it
    // says nothing about the runtime's checks, so it does not pass.
    if count("caught") == 0 {
        eprintln!(
            "error: nothing was checked: no seed's trace changed under {} over seeds {}..={}; \
             widen --seeds or add --handoffs / --moves so the runtime runs the mutants' paths",
            if cells.len() == 1 {
                "the mutant"
            } else {
                "any mutant"
            },
            args.seeds.start(),
            args.seeds.end()
        );
        return EXIT_FAIL;
    }
    EXIT_OK
}
