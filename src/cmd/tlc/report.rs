//! One configuration's result: TLC's verdict on each property beside the
//! model's, the counts, the state-set comparison; printed as text, JSON or
//! a run log that records the git revision it checked.

use super::dump;
use super::models::{self, model_name};
use super::tool::Outcome;
use livemove_model::checker::{Report, Status};
use livemove_model::properties::{Kind, Property};
use livemove_model::{MoveModel, Mutant};
use serde_json::{json, Value};
use std::path::Path;

/// TLC's verdict on one property next to the model's.
pub(super) struct PropRow {
    pub prop: Property,
    pub model: Status,
    pub model_steps: Option<usize>,
    /// `None`: this TLC run did not decide it (it stopped at another one).
    pub tlc: Option<Status>,
    pub tlc_steps: Option<usize>,
    /// Whether TLC's trace is a shortest one (one worker: plain
    /// breadth-first search), so its length must equal the model's.
    pub shortest: bool,
}

impl PropRow {
    pub fn agrees(&self) -> bool {
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
pub(super) struct ConfigRun {
    pub workers: usize,
    pub report: Report,
    pub main: Outcome,
    /// The root module of the main run when it joined the eventually
    /// properties in one invariant (`joined`), and the joined run TLC found
    /// violated, before `main` ran them apart to name the property.
    pub joined_module: Option<String>,
    pub joined_violated: Option<Outcome>,
    pub reach: Vec<Outcome>,
    /// The single-property runs' seconds added up, and the wall-clock time
    /// they took, `reach_jobs` at a time.
    pub reach_seconds: f64,
    pub reach_wall_seconds: f64,
    pub reach_jobs: usize,
    pub rows: Vec<PropRow>,
    /// For a mutant: the outcome property the model and TLC each name.
    pub mutant_verdict: Option<(Option<&'static str>, Option<&'static str>)>,
    pub states: Option<Result<dump::Comparison, String>>,
    pub errors: Vec<String>,
    /// `--main-states-max` left the main run out: only the reachability
    /// runs decided anything, and the report says so.
    pub main_left_out: bool,
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
    pub fn passed(&self) -> bool {
        if self.main_left_out {
            // What ran (the reachability runs) must agree, and at least one
            // must have run: a configuration where nothing ran is no pass.
            return !self.reach.is_empty() && self.properties_agree();
        }
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

    pub fn print(&self, m: &MoveModel) {
        if self.main_left_out {
            println!(
                "  TLC    main run left out ({} model states, over --main-states-max): always and \
                 eventually properties and the counts not checked by TLC here; \
                 `livemove tlc --config {}` checks them",
                self.report.unique_states, m.cfg.name
            );
        } else {
            self.print_main();
        }
        self.print_rest(m);
    }

    fn print_main(&self) {
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
    }

    fn print_rest(&self, m: &MoveModel) {
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
        if self.joined_module.is_some() {
            println!(
                "  eventually properties: {}",
                if self.joined_violated.is_some() {
                    "joined in one invariant, violated; checked again apart"
                } else {
                    "joined in one invariant (ENABLED Next once per state)"
                }
            );
        }
        if !self.reach.is_empty() {
            println!(
                "  single-property TLC runs (reachability; each violation of a mutant): {} in {:.2} s \
                 ({:.2} s of wall clock, {} at a time)",
                self.reach.len(),
                self.reach_seconds,
                self.reach_wall_seconds,
                self.reach_jobs
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
        println!(
            "  result: {}{}",
            if self.passed() { "PASS" } else { "FAIL" },
            if self.main_left_out {
                " (reachability runs only: the main run was left out)"
            } else {
                ""
            }
        );
    }

    pub fn to_json(&self, m: &MoveModel) -> Value {
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
            "main_left_out": self.main_left_out,
            "model_unique": self.report.unique_states,
            "model_seconds": self.report.seconds,
            "ratio": self.ratio(),
            "counts_equal": self.counts_equal(),
            "properties_agree": self.properties_agree(),
            "state_sets_equal": self.state_sets_equal(),
            "mutant_property": self.mutant_verdict.map(|(mv, tv)| json!({"model": mv, "tlc": tv})),
            "eventually_joined": self.joined_module.is_some(),
            "joined_violated": self.joined_violated.is_some(),
            "single_property_runs": self.reach.len(),
            "single_property_seconds": self.reach_seconds,
            "single_property_wall_seconds": self.reach_wall_seconds,
            "single_property_jobs": self.reach_jobs,
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

pub(super) fn write_log(dir: &Path, m: &MoveModel, r: &ConfigRun) -> Result<(), String> {
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
    if let Some(text) = &r.joined_module {
        s.push_str(&format!(
            "\n==== the main run's root module ({}.tla, beside its .cfg)\n{text}",
            super::joined::MODULE
        ));
    }
    for o in r.joined_violated.iter().chain([&r.main]).chain(&r.reach) {
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
