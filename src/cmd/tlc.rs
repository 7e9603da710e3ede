//! `livemove tlc`: check a configuration with TLC on the TLA+ spec in `tla/`
//! and hold the result against the Rust model's: the same number of distinct
//! states, the same reachable states (small configurations), the same
//! verdict on every property.
//!
//! How each kind of property is checked by TLC (tla/README.md says why):
//! - `always` on states: an INVARIANT; `always` on steps: an action property
//!   `[][Step]_vars`;
//! - `eventually`: an INVARIANT that holds in every terminal state (as the
//!   Rust checker does), plus, in the liveness configurations, the same
//!   property as a real TLA+ leads-to under weak fairness;
//! - `sometimes`: one run per property with `Never<Name> == [][~Name]_vars`;
//!   TLC's violation is the example, a clean run means unreached.

mod dump;
pub mod models;
mod tool;

use super::{resolve, EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use livemove_model::checker::{self, Options, Report, Status};
use livemove_model::properties::{Class, Kind, Property};
use livemove_model::{Cfg, MoveModel, Mutant};
use models::{cfg_file, model_name, property_of, Checks};
use serde_json::{json, Value};
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
    if a.workers == 0 {
        eprintln!("error: --workers must be at least 1");
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
    }
    if all_ok {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

fn write_models() -> u8 {
    let dir = tla_dir();
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

/// TLC's verdict on one property next to the model's.
struct PropRow {
    prop: Property,
    model: Status,
    model_steps: Option<usize>,
    /// `None`: this TLC run did not decide it (it stopped at another one).
    tlc: Option<Status>,
    tlc_steps: Option<usize>,
    /// Whether TLC's trace is a shortest one (one worker: plain
    /// breadth-first search), so its length must equal the model's.
    shortest: bool,
}

impl PropRow {
    fn agrees(&self) -> bool {
        match self.tlc {
            None => true,
            Some(t) => {
                t == self.model
                    && (!self.shortest
                        || self.tlc_steps.is_none()
                        || self.tlc_steps == self.model_steps)
            }
        }
    }
}

/// Everything one configuration produced.
struct ConfigRun {
    workers: usize,
    report: Report,
    main: Outcome,
    reach: Vec<Outcome>,
    reach_seconds: f64,
    rows: Vec<PropRow>,
    /// For a mutant: the outcome property the model and TLC each name.
    mutant_verdict: Option<(Option<&'static str>, Option<&'static str>)>,
    states: Option<Result<dump::Comparison, String>>,
    errors: Vec<String>,
}

impl ConfigRun {
    fn tlc_complete(&self) -> bool {
        self.main.no_error
    }
    fn counts_equal(&self) -> Option<bool> {
        self.tlc_complete()
            .then(|| self.main.distinct == Some(self.report.unique_states as u64))
    }
    fn properties_agree(&self) -> bool {
        let rows = self.rows.iter().all(PropRow::agrees);
        let mutant = self.mutant_verdict.is_none_or(|(m, t)| m == t);
        rows && mutant && self.errors.is_empty()
    }
    fn state_sets_equal(&self) -> Option<bool> {
        self.states
            .as_ref()
            .map(|r| r.as_ref().is_ok_and(|c| c.equal()))
    }
    fn passed(&self) -> bool {
        self.counts_equal() != Some(false)
            && (self.tlc_complete() || self.report.results.iter().any(|p| !p.ok()))
            && self.properties_agree()
            && self.state_sets_equal() != Some(false)
    }
    /// TLC's distinct states per second of search (Java start-up and
    /// parsing left out, as the model's time leaves out building it).
    fn tlc_rate(&self) -> f64 {
        self.main.distinct.unwrap_or(0) as f64 / self.main.search_seconds.max(1e-9)
    }
    fn model_rate(&self) -> f64 {
        self.report.unique_states as f64 / self.report.seconds.max(1e-9)
    }
    fn ratio(&self) -> f64 {
        self.model_rate() / self.tlc_rate().max(1e-9)
    }

    fn print(&self, m: &MoveModel) {
        let w = if self.workers == 1 {
            "worker"
        } else {
            "workers"
        };
        println!(
            "  TLC    {:>9} distinct states in {:>7.2} s = {:>9.0} states/s ({} {w}, {:.2} s with start-up){}",
            self.main.distinct.map_or("?".into(), |d| d.to_string()),
            self.main.search_seconds,
            self.tlc_rate(),
            self.workers,
            self.main.seconds,
            if self.tlc_complete() {
                ""
            } else {
                ", stopped early"
            }
        );
        println!(
            "  model  {:>9} unique states   in {:>7.2} s = {:>9.0} states/s",
            self.report.unique_states,
            self.report.seconds,
            self.model_rate()
        );
        println!(
            "  ratio  {:.0}x (model states/s over TLC states/s)",
            self.ratio()
        );
        match self.counts_equal() {
            Some(true) => println!("  counts equal"),
            Some(false) => println!("  COUNTS DIFFER"),
            None => println!("  counts not compared (TLC stopped at a violation)"),
        }
        match &self.states {
            None => println!(
                "  state sets not compared (over --states-max, a mutant, or TLC stopped early)"
            ),
            Some(Ok(c)) if c.equal() => {
                println!(
                    "  state sets equal ({} states, one canonical text)",
                    c.tlc_states
                )
            }
            Some(Ok(c)) => print!("  STATE SETS DIFFER\n{}", c.describe()),
            Some(Err(e)) => println!("  STATE SETS NOT COMPARED: {e}"),
        }
        for r in &self.rows {
            let tlc = r.tlc.map_or("-", word);
            let steps = match (r.model_steps, r.tlc_steps) {
                (Some(a), Some(b)) => format!("  (model {a} steps, TLC {b})"),
                (Some(a), None) => format!("  (model {a} steps)"),
                _ => String::new(),
            };
            println!(
                "  {:10} model {:11} TLC {:11} {}{}{}",
                kind_word(r.prop.kind),
                word(r.model),
                tlc,
                r.prop.name,
                steps,
                if r.agrees() { "" } else { "  DISAGREE" }
            );
        }
        if let Some((mv, tv)) = self.mutant_verdict {
            println!(
                "  mutant {}: model names `{}`, TLC names `{}`",
                m.cfg.mutant.map_or("none", Mutant::name),
                mv.unwrap_or("-"),
                tv.unwrap_or("-")
            );
        }
        if !self.reach.is_empty() {
            println!(
                "  single-property TLC runs (reachability; each violation of a mutant): {} in {:.2} s",
                self.reach.len(),
                self.reach_seconds
            );
        }
        for e in &self.errors {
            println!("  ERROR {e}");
        }
        println!(
            "  properties {}",
            if self.properties_agree() {
                "agree"
            } else {
                "DISAGREE"
            }
        );
        println!("  result: {}", if self.passed() { "PASS" } else { "FAIL" });
    }

    fn to_json(&self, m: &MoveModel) -> Value {
        let props: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                json!({
                    "name": r.prop.name,
                    "tla": models::tla_name(r.prop.name),
                    "kind": r.prop.kind,
                    "model": r.model,
                    "tlc": r.tlc,
                    "model_steps": r.model_steps,
                    "tlc_steps": r.tlc_steps,
                    "agree": r.agrees(),
                })
            })
            .collect();
        json!({
            "config": m.cfg.name,
            "mutant": m.cfg.mutant.map(Mutant::name),
            "tlc_model": model_name(&m.cfg),
            "workers": self.workers,
            "tlc_distinct": self.main.distinct,
            "tlc_seconds": self.main.search_seconds,
            "tlc_wall_seconds": self.main.seconds,
            "tlc_complete": self.tlc_complete(),
            "model_unique": self.report.unique_states,
            "model_seconds": self.report.seconds,
            "ratio": self.ratio(),
            "counts_equal": self.counts_equal(),
            "properties_agree": self.properties_agree(),
            "state_sets_equal": self.state_sets_equal(),
            "mutant_property": self.mutant_verdict.map(|(mv, tv)| json!({"model": mv, "tlc": tv})),
            "single_property_runs": self.reach.len(),
            "single_property_seconds": self.reach_seconds,
            "properties": props,
            "errors": self.errors,
            "passed": self.passed(),
        })
    }
}

fn word(s: Status) -> &'static str {
    match s {
        Status::Holds => "holds",
        Status::Violated => "VIOLATED",
        Status::Reached => "reached",
        Status::Unreached => "unreached",
    }
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Always => "always",
        Kind::Sometimes => "sometimes",
        Kind::Eventually => "eventually",
    }
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
    let name = model_name(cfg);
    let tla = tla_dir();
    let module = format!("{name}.tla");
    if !tla.join(&module).is_file() {
        return Err(format!(
            "tla/{module} is missing: run `livemove tlc --write-models`"
        ));
    }
    let cfg_path = scratch.join(format!("{tag}.cfg"));
    std::fs::write(&cfg_path, cfg_file(cfg, checks))
        .map_err(|e| format!("cannot write {}: {e}", cfg_path.display()))?;
    let meta = scratch.join(format!("{tag}.meta"));
    let o = tlc.run(&Request {
        tla_dir: &tla,
        module: &module,
        cfg: &cfg_path,
        workers,
        dump,
        metadir: &meta,
    })?;
    let _ = std::fs::remove_dir_all(&meta);
    Ok(o)
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

/// The outcome property the model names for a mutant: the shortest
/// counterexample among violated outcomes, else an unreached outcome (the
/// bug zoo's rule).
fn model_mutant_property(r: &Report) -> Option<&'static str> {
    let mut best: Option<(&'static str, Option<usize>)> = None;
    for p in r
        .results
        .iter()
        .filter(|p| p.class == Class::Outcome && !p.ok())
    {
        let len = p.path.as_ref().map(|x| x.steps.len());
        let better = match (best, len) {
            (None, _) | (Some((_, None)), Some(_)) => true,
            (Some((_, Some(b))), Some(l)) => l < b,
            _ => false,
        };
        if better {
            best = Some((p.name, len));
        }
    }
    best.map(|b| b.0)
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
    let main = run_tlc(
        tlc,
        &m.cfg,
        &checks,
        a.workers,
        &scratch.0,
        "main",
        compare_states.then_some(dump_base.as_path()),
    )?;
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
        let (tlc_status, tlc_steps) = if res.kind == Kind::Sometimes || !checked {
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
            shortest: a.workers == 1,
        });
    }

    // Sometimes properties: one run each, with one worker so that TLC's
    // example is a shortest one (these runs stop early; more workers would
    // not pay for their start-up).
    let mut reach = Vec::new();
    let mut reach_seconds = 0.0;
    if !a.no_reach && (main.no_error || !mutant) {
        for row in rows.iter_mut().filter(|r| r.prop.kind == Kind::Sometimes) {
            let o = run_tlc(
                tlc,
                &m.cfg,
                &Checks::One(row.prop.name),
                1,
                &scratch.0,
                "reach",
                None,
            )?;
            reach_seconds += o.seconds;
            if let Some(e) = &o.error {
                errors.push(format!("TLC on {}: {e}", row.prop.name));
            } else if violated_property(&o).is_some_and(|p| p.name == row.prop.name) {
                row.tlc = Some(Status::Reached);
                row.tlc_steps = steps_of(&o);
                row.shortest = true;
            } else if o.no_error {
                row.tlc = Some(Status::Unreached);
            }
            reach.push(o);
        }
    }

    // A mutant: every property the model finds violated, TLC must find
    // violated too when asked about it alone (these runs stop early). This
    // shows each TLA+ property able to fail, rules and step properties
    // included, not only the outcomes the main run checks.
    let mut alone_seconds = 0.0;
    if mutant {
        for row in rows.iter_mut().filter(|r| {
            r.prop.kind != Kind::Sometimes && r.model == Status::Violated && r.tlc.is_none()
        }) {
            let o = run_tlc(
                tlc,
                &m.cfg,
                &Checks::One(row.prop.name),
                1,
                &scratch.0,
                "alone",
                None,
            )?;
            alone_seconds += o.seconds;
            if let Some(e) = &o.error {
                errors.push(format!("TLC on {}: {e}", row.prop.name));
            } else if violated_alone(&o, row.prop.name) {
                row.tlc = Some(Status::Violated);
                row.tlc_steps = steps_of(&o);
                // A cycle has no shortest counterexample: the model gives a
                // path to a state on it, TLC a lasso.
                row.shortest = row.prop.kind == Kind::Always;
            } else if o.no_error {
                row.tlc = Some(Status::Holds);
            }
            reach.push(o);
        }
    }
    reach_seconds += alone_seconds;
    let mutant_verdict =
        mutant.then(|| (model_mutant_property(&report), tlc_mutant_property(&rows)));

    Ok(ConfigRun {
        workers: a.workers,
        report,
        main,
        reach,
        reach_seconds,
        rows,
        mutant_verdict,
        states,
        errors,
    })
}

/// The outcome property TLC names for a mutant, by the model's rule: the
/// shortest counterexample among violated outcomes (TLC's traces, with the
/// model's length for a cycle), else an unreached outcome.
fn tlc_mutant_property(rows: &[PropRow]) -> Option<&'static str> {
    let mut best: Option<(&'static str, Option<usize>)> = None;
    for r in rows.iter().filter(|r| r.prop.class == Class::Outcome) {
        let len = match r.tlc {
            Some(Status::Violated) if r.shortest => r.tlc_steps,
            Some(Status::Violated) => r.model_steps,
            Some(Status::Unreached) => None,
            _ => continue,
        };
        let better = match (best, len) {
            (None, _) | (Some((_, None)), Some(_)) => true,
            (Some((_, Some(b))), Some(l)) => l < b,
            _ => false,
        };
        if better {
            best = Some((r.prop.name, len));
        }
    }
    best.map(|b| b.0)
}

/// For the bug zoo: the outcome property TLC finds violated (or unreached)
/// for `mutant` on its zoo configuration, given the one the model named.
/// `Err` when Java or TLC is missing (the zoo then prints "n/a").
pub fn check_mutant(
    mutant: Mutant,
    model_says: Option<&'static str>,
) -> Result<Option<&'static str>, String> {
    let tlc = Tlc::find()?;
    let cfg = Cfg::named(livemove_model::zoo::config_for(mutant)).with_mutant(Some(mutant));
    let scratch = Scratch::new(&format!("zoo-{mutant}"))?;
    let main = run_tlc(&tlc, &cfg, &Checks::Outcomes, 1, &scratch.0, "main", None)?;
    if let Some(e) = main.error {
        return Err(format!("TLC: {e}"));
    }
    if let Some(p) = violated_property(&main) {
        if Some(p.name) == model_says || model_says.is_none() {
            return Ok(Some(p.name));
        }
        // TLC stopped at another outcome first: ask it about the model's
        // choice alone.
        let name = model_says.expect("checked above");
        let o = run_tlc(
            &tlc,
            &cfg,
            &Checks::One(name),
            1,
            &scratch.0,
            "confirm",
            None,
        )?;
        return Ok(Some(if violated_alone(&o, name) {
            name
        } else {
            p.name
        }));
    }
    // No outcome violated: look for an outcome that is no longer reached.
    let mut candidates: Vec<&'static str> = livemove_model::properties::for_cfg(&cfg)
        .into_iter()
        .filter(|p| p.kind == Kind::Sometimes && p.class == Class::Outcome)
        .map(|p| p.name)
        .collect();
    candidates.sort_by_key(|n| Some(*n) != model_says);
    for name in candidates {
        let o = run_tlc(&tlc, &cfg, &Checks::One(name), 1, &scratch.0, "reach", None)?;
        if o.no_error {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

fn git(args: &[&str]) -> Option<String> {
    let o = std::process::Command::new("git")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The revision this checkout is at, `+dirty` when it has local changes.
pub fn revision() -> String {
    let head = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        format!("{head}+dirty")
    } else {
        head
    }
}

fn write_log(dir: &Path, m: &MoveModel, r: &ConfigRun) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let name = match m.cfg.mutant {
        Some(x) => format!("{}-{x}.log", m.cfg.name),
        None => format!("{}.log", m.cfg.name),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut s = format!(
        "revision: {}\nunix_time: {now}\nconfig: {} ({})\nparams: {}\nresult: {}\nsummary: {}\n",
        revision(),
        m.cfg.name,
        model_name(&m.cfg),
        m.cfg.params(),
        if r.passed() { "PASS" } else { "FAIL" },
        r.to_json(m)
    );
    for o in std::iter::once(&r.main).chain(&r.reach) {
        s.push_str(&format!(
            "\n==== {}\n---- exit {} in {:.2} s\n{}",
            o.command, o.exit, o.seconds, o.output
        ));
    }
    if let Some(Ok(c)) = &r.states {
        if !c.equal() {
            s.push_str(&c.describe());
        }
    }
    let path = dir.join(name);
    std::fs::write(&path, s).map_err(|e| format!("{}: {e}", path.display()))
}
