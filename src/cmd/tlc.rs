//! `livemove tlc`: check a configuration with TLC on the TLA+ spec in `tla/`
//! and hold the result against the Rust model's: the same number of distinct
//! states, the same reachable states (small configurations), the same
//! verdict on every property.
//!
//! How each kind of property is checked by TLC (tla/README.md says why):
//! - `always` on states: an INVARIANT; `always` on steps: an action property
//!   `[][Step]_vars`;
//! - `eventually`: an INVARIANT that holds in every terminal state (as the
//!   Rust checker does), on every configuration; the same property as a
//!   TLA+ leads-to under weak fairness only when a mutant makes the state
//!   graph cyclic (the model then finds no terminal state to blame);
//! - `sometimes`: one run per property with `Never<Name> == [][~Name]_vars`;
//!   TLC's violation is the example, a clean run means unreached.

mod dump;
mod joined;
pub mod models;
mod mutant;
mod report;
pub(crate) mod tool;

pub use mutant::check_mutant;

use super::{resolve, EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use livemove_model::checker::{self, Options, Status};
use livemove_model::properties::{Class, Kind, Property};
use livemove_model::{Cfg, MoveModel};
use models::{cfg_file, model_name, property_of, Checks};
use report::{write_log, ConfigRun, PropRow};
use serde_json::json;
use std::path::{Path, PathBuf};
use tool::{Outcome, Request, Tlc};

#[derive(clap::Args)]
pub struct Args {
    /// A config or group name (see `livemove check --list`).
    #[arg(long, required_unless_present = "write_models")]
    config: Option<String>,
    /// Check a mutant of the protocol (see `livemove zoo`).
    #[arg(long)]
    mutant: Option<String>,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// TLC worker threads.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Compare the reachable state sets when the model has at most this many
    /// states (TLC dumps every state as text; 0 never compares).
    #[arg(long, default_value_t = 100_000)]
    states_max: usize,
    /// Skip the reachability runs (one TLC run per `sometimes` property).
    #[arg(long)]
    no_reach: bool,
    /// Run TLC's main run (every always and eventually property over every
    /// state, the counts) only where the model has at most this many
    /// states; above it only the reachability runs, which stop at their
    /// examples, and the report says the main run was left out (0: no
    /// limit). A budget for a CI job, not a verdict: the full agreement on
    /// those configurations is `livemove tlc --config NAME`.
    #[arg(long, default_value_t = 0)]
    main_states_max: usize,
    /// Single-property TLC runs (reachability, a mutant's violations) at
    /// once. Each has one worker, so each still finds a shortest example;
    /// several at once use the cores one worker leaves idle.
    #[arg(long, default_value_t = 1)]
    reach_jobs: usize,
    /// Check the eventually properties as separate invariants in the main
    /// run, each evaluating ENABLED Next on its own, instead of joined in
    /// one (the same check; see tla/README.md, "Timings").
    #[arg(long)]
    separate_eventually: bool,
    /// Write one log per configuration (TLC's output and the git revision it
    /// checked) into this folder, e.g. `tla/runs`.
    #[arg(long)]
    log_dir: Option<PathBuf>,
    /// Rewrite tla/MC_*.tla and tla/models/*.cfg from the Rust configs.
    #[arg(long)]
    write_models: bool,
}

/// The spec folder of this checkout.
pub fn tla_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tla")
}

pub fn run(a: Args) -> u8 {
    if a.write_models {
        return write_models();
    }
    let name = a.config.clone().expect("clap requires --config");
    let cfgs = match resolve(&name, a.mutant.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if a.workers == 0 || a.reach_jobs == 0 {
        eprintln!("error: --workers and --reach-jobs must be at least 1");
        return EXIT_USAGE;
    }
    let tlc = match Tlc::find() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAIL;
        }
    };
    let mut all_ok = true;
    let mut runs = Vec::new();
    let mut left_out = Vec::new();
    for cfg in cfgs {
        let m = MoveModel::new(cfg);
        if !a.json {
            println!(
                "config {} ({}): {}",
                m.cfg.name,
                model_name(&m.cfg),
                m.cfg.params()
            );
        }
        let r = match check_config(&tlc, &m, &a) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {}: {e}", m.cfg.name);
                return EXIT_FAIL;
            }
        };
        all_ok &= r.passed();
        if r.main_left_out {
            left_out.push(format!(
                "{} ({} states)",
                m.cfg.name, r.report.unique_states
            ));
        }
        if let Some(dir) = &a.log_dir {
            if let Err(e) = write_log(dir, &m, &r) {
                eprintln!("error: --log-dir: {e}");
                return EXIT_FAIL;
            }
        }
        if a.json {
            runs.push(r.to_json(&m));
        } else {
            r.print(&m);
        }
    }
    if a.json {
        let out = if runs.len() == 1 {
            runs.remove(0)
        } else {
            json!({ "runs": runs })
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serializes")
        );
    } else if Cfg::groups().iter().any(|(g, _)| *g == name) {
        println!("group {name}: {}", if all_ok { "PASS" } else { "FAIL" });
        if !left_out.is_empty() {
            println!(
                "  main runs left out (over --main-states-max {}; reachability runs only): {}",
                a.main_states_max,
                left_out.join(", ")
            );
        }
    }
    if all_ok {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

fn write_models() -> u8 {
    let dir = tla_dir();
    // Files of configurations that no longer exist (or were renamed) go.
    for rel in models::stale_files(&dir) {
        let path = dir.join(&rel);
        if let Err(e) = std::fs::remove_file(&path) {
            eprintln!("error: cannot remove {}: {e}", path.display());
            return EXIT_FAIL;
        }
        println!("removed tla/{rel}");
    }
    for (rel, text) in models::committed_files() {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return EXIT_FAIL;
        }
        println!("wrote tla/{rel}");
    }
    EXIT_OK
}

/// A scratch folder for one configuration's TLC runs, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("livemove-tlc-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run TLC once on `cfg` with `checks`.
fn run_tlc(
    tlc: &Tlc,
    cfg: &Cfg,
    checks: &Checks,
    workers: usize,
    scratch: &Path,
    tag: &str,
    dump: Option<&Path>,
) -> Result<Outcome, String> {
    let run = Run {
        workers,
        tag,
        dump,
        join: false,
        time_limit: None,
    };
    Ok(run_tlc_joining(tlc, cfg, checks, scratch, &run)?.0)
}

/// How to run TLC once.
struct Run<'a> {
    workers: usize,
    /// Names the run's files in the scratch folder.
    tag: &'a str,
    dump: Option<&'a Path>,
    /// Join the eventually properties in one invariant where the spec
    /// allows it (see `joined`).
    join: bool,
    time_limit: Option<std::time::Duration>,
}

/// Run TLC once on `cfg` with `checks`. Returns the outcome and, when the
/// eventually properties were joined, the root module TLC checked.
fn run_tlc_joining(
    tlc: &Tlc,
    cfg: &Cfg,
    checks: &Checks,
    scratch: &Path,
    run: &Run<'_>,
) -> Result<(Outcome, Option<String>), String> {
    let Run {
        workers,
        tag,
        dump,
        join,
        time_limit,
    } = *run;
    let name = model_name(cfg);
    let tla = tla_dir();
    let module = format!("{name}.tla");
    if !tla.join(&module).is_file() {
        return Err(format!(
            "tla/{module} is missing: run `livemove tlc --write-models`"
        ));
    }
    let root = if join {
        let spec_path = tla.join("LiveMove.tla");
        let spec = std::fs::read_to_string(&spec_path)
            .map_err(|e| format!("cannot read {}: {e}", spec_path.display()))?;
        joined::module(&spec, &name, &models::terminal_invariants(cfg, checks))
    } else {
        None
    };
    let cfg_path = scratch.join(format!("{tag}.cfg"));
    let cfg_text = match root {
        Some(_) => models::cfg_file_joined(cfg, checks),
        None => cfg_file(cfg, checks),
    };
    std::fs::write(&cfg_path, cfg_text)
        .map_err(|e| format!("cannot write {}: {e}", cfg_path.display()))?;
    let root_dir = scratch.join(format!("{tag}.root"));
    let root_module = format!("{}.tla", joined::MODULE);
    if let Some(text) = &root {
        std::fs::create_dir_all(&root_dir)
            .map_err(|e| format!("cannot create {}: {e}", root_dir.display()))?;
        let path = root_dir.join(&root_module);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let meta = scratch.join(format!("{tag}.meta"));
    let o = tlc.run(&Request {
        tla_dir: if root.is_some() { &root_dir } else { &tla },
        library: root.is_some().then_some(tla.as_path()),
        module: if root.is_some() {
            &root_module
        } else {
            &module
        },
        cfg: &cfg_path,
        workers,
        dump,
        metadir: &meta,
        time_limit,
    })?;
    let _ = std::fs::remove_dir_all(&meta);
    let _ = std::fs::remove_dir_all(&root_dir);
    Ok((o, root))
}

/// TLC's throughput on `cfg` (the main run of `livemove tlc`, every
/// property checked, no state dump): distinct states, search seconds, and
/// whether TLC completed. Past `limit` TLC is stopped at its next progress
/// report and the figures are that report's.
pub fn throughput(
    cfg: &Cfg,
    workers: usize,
    limit: std::time::Duration,
) -> Result<(u64, f64, bool), String> {
    let tlc = Tlc::find()?;
    let scratch = Scratch::new(&format!("bench-{}-{workers}", cfg.name))?;
    let run = Run {
        workers,
        tag: "bench",
        dump: None,
        join: true,
        time_limit: Some(limit),
    };
    let (o, _) = run_tlc_joining(&tlc, cfg, &Checks::All, &scratch.0, &run)?;
    if o.stopped {
        let (secs, distinct) = o
            .last_progress
            .expect("a stopped run stops at a progress report");
        return Ok((distinct, secs, false));
    }
    if !o.no_error {
        return Err(format!(
            "TLC did not complete on {}: {}",
            cfg.name,
            o.error
                .or(o.violation.map(|v| format!("{} violated", v.name)))
                .unwrap_or_else(|| format!("exit {}", o.exit))
        ));
    }
    let distinct = o
        .distinct
        .ok_or("TLC printed no count of distinct states")?;
    Ok((distinct, o.search_seconds, true))
}

/// The TLC status of a property from a run's violation, if it names it.
fn violated_property(o: &Outcome) -> Option<Property> {
    o.violation.as_ref().and_then(|v| property_of(&v.name))
}

/// Whether a run that checked `name` alone found it violated (TLC does not
/// name a violated temporal property; alone, it can only be this one).
fn violated_alone(o: &Outcome, name: &str) -> bool {
    o.violation.as_ref().is_some_and(|v| {
        v.name == "temporal properties" || property_of(&v.name).is_some_and(|p| p.name == name)
    })
}

fn steps_of(o: &Outcome) -> Option<usize> {
    o.violation
        .as_ref()
        .map(|v| v.trace_states.saturating_sub(1))
}

/// Run TLC on `row`'s property alone and record its verdict there. One
/// worker, so that TLC's trace is a shortest one (these runs stop early;
/// more workers would not pay for their start-up). On a cyclic graph an
/// eventually property is asked as leads-to as well. `tag` names the run's
/// scratch files, distinct for runs at the same time. A TLC error is
/// returned beside the outcome, for the configuration's list.
fn ask_alone(
    tlc: &Tlc,
    cfg: &Cfg,
    scratch: &Path,
    tag: &str,
    row: &mut PropRow,
    cyclic: bool,
) -> Result<(Outcome, Option<String>), String> {
    let name = row.prop.name;
    let checks = if cyclic && row.prop.kind == Kind::Eventually {
        Checks::Leads(name)
    } else {
        Checks::One(name)
    };
    let o = run_tlc(tlc, cfg, &checks, 1, scratch, tag, None)?;
    let sometimes = row.prop.kind == Kind::Sometimes;
    let mut error = None;
    if let Some(e) = &o.error {
        error = Some(format!("TLC on {name}: {e}"));
    } else if violated_alone(&o, name) {
        row.tlc = Some(if sometimes {
            Status::Reached
        } else {
            Status::Violated
        });
        row.tlc_steps = steps_of(&o);
        // A cycle has no shortest counterexample: the model gives a path to
        // a state on it, TLC a lasso. On an acyclic graph the eventually
        // property is an invariant on terminal states like any other.
        row.shortest = !(cyclic && row.prop.kind == Kind::Eventually);
    } else if o.no_error {
        row.tlc = Some(if sometimes {
            Status::Unreached
        } else {
            Status::Holds
        });
    }
    Ok((o, error))
}

/// Ask each of `rows` alone (`ask_alone`), `jobs` TLC runs at a time. The
/// outcomes and errors come back in the order of `rows`, as one run after
/// the other would give them.
fn ask_each_alone(
    tlc: &Tlc,
    cfg: &Cfg,
    scratch: &Path,
    rows: Vec<&mut PropRow>,
    cyclic: bool,
    jobs: usize,
) -> Result<Vec<(Outcome, Option<String>)>, String> {
    let queue = std::sync::Mutex::new(rows.into_iter().enumerate());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for j in 0..jobs {
            let (queue, done) = (&queue, &done);
            s.spawn(move || loop {
                let next = queue.lock().expect("no run panicked").next();
                let Some((i, row)) = next else { break };
                let r = ask_alone(tlc, cfg, scratch, &format!("alone-{j}"), row, cyclic);
                let failed = r.is_err();
                done.lock().expect("no run panicked").push((i, r));
                if failed {
                    break;
                }
            });
        }
    });
    let mut done = done.into_inner().expect("no run panicked");
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

fn check_config(tlc: &Tlc, m: &MoveModel, a: &Args) -> Result<ConfigRun, String> {
    let report = checker::check(m, Options::default());
    let tag = format!(
        "{}{}",
        m.cfg.name,
        m.cfg.mutant.map_or(String::new(), |x| format!("-{x}"))
    );
    let scratch = Scratch::new(&tag)?;
    let mutant = m.cfg.mutant.is_some();
    let committed = tla_dir()
        .join("models")
        .join(format!("{}.cfg", model_name(&m.cfg)));
    if !mutant {
        let want = cfg_file(&m.cfg, &Checks::All);
        if std::fs::read_to_string(&committed).ok().as_deref() != Some(want.as_str()) {
            return Err(format!(
                "{} is missing or stale: run `livemove tlc --write-models`",
                committed.display()
            ));
        }
    }
    let compare_states =
        !mutant && a.states_max > 0 && report.unique_states <= a.states_max && report.complete;
    let dump_base = scratch.0.join("states");
    let checks = if mutant {
        Checks::Outcomes
    } else {
        Checks::All
    };
    let dump = compare_states.then_some(dump_base.as_path());
    let run = Run {
        workers: a.workers,
        tag: "main",
        dump,
        join: !a.separate_eventually,
        time_limit: None,
    };
    let main_left_out =
        !mutant && a.main_states_max > 0 && report.unique_states > a.main_states_max;
    let (mut main, joined_module) = if main_left_out {
        (tool::Outcome::nothing_run(), None)
    } else {
        run_tlc_joining(tlc, &m.cfg, &checks, &scratch.0, &run)?
    };
    // The joined invariant names no property: ask TLC again with the
    // properties apart, which names the one violated, as the run always did.
    let mut joined_violated = None;
    let joined_failed = main
        .violation
        .as_ref()
        .is_some_and(|v| v.name == joined::INVARIANT);
    if joined_module.is_some() && joined_failed {
        let apart = run_tlc(tlc, &m.cfg, &checks, a.workers, &scratch.0, "main", dump)?;
        joined_violated = Some(std::mem::replace(&mut main, apart));
    }
    let mut errors = Vec::new();
    if let Some(e) = &main.error {
        errors.push(format!("TLC: {e}"));
    }
    let states = (compare_states && main.no_error)
        .then(|| dump::compare(m, &dump_base.with_extension("dump"), a.states_max));

    // Always and eventually properties: what the main run decided.
    let mut rows = Vec::new();
    let tlc_violated = violated_property(&main);
    if main.violation.is_some() && tlc_violated.is_none() {
        errors.push(format!(
            "TLC reports `{}`, which names no property of the model",
            main.violation.as_ref().map_or("", |v| v.name.as_str())
        ));
    }
    let cyclic = report.acyclic == Some(false);
    for res in &report.results {
        let prop = livemove_model::properties::all()
            .into_iter()
            .find(|p| p.name == res.name)
            .expect("report names a property");
        let model_steps = res.path.as_ref().map(|p| p.steps.len());
        let checked = match checks {
            Checks::Outcomes => res.class == Class::Outcome,
            _ => true,
        };
        // On a cyclic graph the main run's terminal-state form of an
        // eventually property says nothing about the cycle: such a property
        // is left to a leads-to run of its own.
        let cycle_blind = cyclic && res.kind == Kind::Eventually;
        let (tlc_status, tlc_steps) = if res.kind == Kind::Sometimes || !checked || cycle_blind {
            (None, None)
        } else if tlc_violated.is_some_and(|p| p.name == res.name) {
            (Some(Status::Violated), steps_of(&main))
        } else if main.no_error {
            (Some(Status::Holds), None)
        } else {
            (None, None)
        };
        rows.push(PropRow {
            prop,
            model: res.status,
            model_steps,
            tlc: tlc_status,
            tlc_steps,
            // One worker: plain breadth-first search, a shortest trace;
            // except for an eventually property on a cyclic graph, where
            // the model's path only leads to the cycle.
            shortest: a.workers == 1 && !(cyclic && prop.kind == Kind::Eventually),
        });
    }

    // Sometimes properties: one run each. And for a mutant, every property
    // the model finds violated, asked alone (these runs stop early): this
    // shows each TLA+ property able to fail, rules and step properties
    // included, not only the outcomes the main run checks.
    let reach_runs = !a.no_reach && (main.no_error || !mutant);
    if main_left_out && !reach_runs {
        return Err(format!(
            "the main run is left out (over --main-states-max {}) and so are the reachability runs: nothing would be checked",
            a.main_states_max
        ));
    }
    let alone: Vec<&mut PropRow> = rows
        .iter_mut()
        .filter(|r| {
            if r.prop.kind == Kind::Sometimes {
                reach_runs
            } else {
                mutant && r.model == Status::Violated && r.tlc.is_none()
            }
        })
        .collect();
    let started = std::time::Instant::now();
    let mut reach = Vec::new();
    for (o, error) in ask_each_alone(tlc, &m.cfg, &scratch.0, alone, cyclic, a.reach_jobs)? {
        errors.extend(error);
        reach.push(o);
    }
    let reach_seconds = reach.iter().map(|o| o.seconds).sum();
    let reach_wall_seconds = started.elapsed().as_secs_f64();
    let mutant_verdict = mutant.then(|| (mutant::model_names(&report), mutant::tlc_names(&rows)));

    Ok(ConfigRun {
        workers: a.workers,
        report,
        main,
        joined_module,
        joined_violated,
        reach,
        reach_seconds,
        reach_wall_seconds,
        reach_jobs: a.reach_jobs,
        rows,
        mutant_verdict,
        states,
        errors,
        main_left_out,
    })
}
