//! `livemove check`: explore a configuration (or a group) and report.

use super::{resolve, EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use livemove_model::checker::swarm::SwarmOptions;
use livemove_model::checker::{self, AcyclicityCheck, Mode, Options, Path, Progress, Report};
use livemove_model::properties::Kind;
use livemove_model::trace::itf::ItfMeta;
use livemove_model::view::{diff, pending, view};
use livemove_model::{Cfg, MoveModel};
use serde_json::{json, Map, Value};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    /// A config or group name (see --list).
    #[arg(long, required_unless_present = "list")]
    config: Option<String>,
    /// List the configs with their parameters.
    #[arg(long)]
    list: bool,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Check a mutant of the protocol (see `livemove zoo`).
    #[arg(long)]
    mutant: Option<String>,
    /// Also print the example path of every reached `sometimes` property.
    #[arg(long)]
    examples: bool,
    /// Stop after this many unique states, at least 1 (the run is then incomplete and fails).
    #[arg(long, allow_negative_numbers = true, value_parser = super::positive_count)]
    max_states: Option<usize>,
    /// Keep every state whole (no fingerprints, no collision possible; about
    /// twenty times the memory of the default compact mode).
    #[arg(long)]
    exact: bool,
    /// Memory budget in GiB: past it, frontier states go to temporary files
    /// (compact mode; the visited set, about 10 bytes per state, stays in
    /// memory).
    #[arg(long, value_name = "GIB", conflicts_with = "exact", value_parser = parse_gib,
          default_value_t = super::DEFAULT_MEMORY_GIB)]
    memory: f64,
    /// Threads expanding states (compact mode) or running walks (swarm);
    /// default: every core. Counts, verdicts and counterexamples are the
    /// same for any number (model/tests/modes.rs, model/tests/swarm.rs).
    #[arg(long, value_name = "N", conflicts_with = "exact", value_parser = clap::value_parser!(u16).range(1..))]
    workers: Option<u16>,
    /// How the acyclicity behind the `eventually` properties is checked
    /// (compact mode): `measure` checks on every edge that the progress
    /// measure does not fall and then only the edges that leave it
    /// unchanged, falling back to `edges` if it falls; `edges` keeps every
    /// edge and checks them all after the search; `auto` is `measure`
    /// unless messages are in flight. Verdicts and paths are the same.
    #[arg(long, value_name = "HOW", conflicts_with = "exact", default_value = "auto",
          value_parser = ["auto", "measure", "edges"])]
    acyclicity: String,
    /// Swarm mode: instead of the exhaustive search, run N independent
    /// seeded random walks of at most --depth steps, checking every property
    /// along each, and report each violation with a shrunk trace. For state
    /// spaces beyond exhaustive reach; more machines run the same command
    /// with different --seed values.
    #[arg(long, value_name = "N", value_parser = super::positive_count,
          conflicts_with_all = ["exact", "memory", "max_states", "examples"])]
    swarm: Option<usize>,
    /// Swarm mode: the most steps one walk takes (at least 1).
    #[arg(long, value_name = "D", requires = "swarm", default_value_t = 100, value_parser = super::positive_count)]
    depth: usize,
    /// Swarm mode: the seed walk k's own seed is derived from (with k).
    #[arg(long, value_name = "S", requires = "swarm", default_value_t = 1)]
    seed: u64,
    /// Also write the counterexample in the Informal Trace Format to this
    /// file (with several, the first violated property's, in report order,
    /// of the first failing config). Nothing is written when nothing fails.
    #[arg(long, value_name = "PATH")]
    itf: Option<std::path::PathBuf>,
}

fn parse_gib(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(g) if g > 0.0 && g.is_finite() => Ok(g),
        _ => Err(format!("`{s}` is not a positive number of GiB")),
    }
}

pub fn run(a: Args) -> u8 {
    if a.list {
        list();
        return EXIT_OK;
    }
    let name = a.config.expect("clap requires --config without --list");
    let cfgs = match resolve(&name, a.mutant.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some(searches) = a.swarm {
        let opts = SwarmOptions {
            searches,
            depth: a.depth,
            seed: a.seed,
            workers: a.workers.map_or_else(super::all_cores, usize::from),
        };
        return super::swarm::run(&name, cfgs, opts, a.json, a.itf.as_deref());
    }
    let group = cfgs.len() > 1;
    let mut runs = Vec::new();
    let mut all_ok = true;
    let mut itf = Itf::new(a.itf.as_deref());
    for cfg in cfgs {
        let m = MoveModel::new(cfg);
        if !a.json {
            print_header(&m);
        }
        let mode = if a.exact { Mode::Exact } else { Mode::Compact };
        let memory = Some((a.memory * (1u64 << 30) as f64) as usize);
        let workers = a.workers.map_or_else(super::all_cores, usize::from);
        let acyclicity = match a.acyclicity.as_str() {
            "measure" => AcyclicityCheck::Measure,
            "edges" => AcyclicityCheck::Edges,
            _ => AcyclicityCheck::Auto,
        };
        let r = run_one(&m, a.max_states, mode, memory, workers, acyclicity);
        all_ok &= r.passed();
        if let Some(p) = r
            .results
            .iter()
            .find(|p| p.status == checker::Status::Violated)
        {
            if !itf.write(&m, p.name, p.path.as_ref().expect("a violation has a path")) {
                return EXIT_USAGE;
            }
        }
        if a.json {
            runs.push(to_json(&m, &r));
        } else {
            print_text(&m, &r, a.examples);
        }
    }
    finish(&name, group, a.json, runs, all_ok, itf)
}

/// The end of a `check` run, exhaustive or swarm: the JSON of every run
/// (one object for a single config), or a group's verdict line; the ITF
/// file; the exit code.
pub fn finish(
    name: &str,
    group: bool,
    as_json: bool,
    mut runs: Vec<Value>,
    all_ok: bool,
    itf: Itf,
) -> u8 {
    if as_json {
        let out = if group {
            json!({ "runs": runs })
        } else {
            runs.remove(0)
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("report serializes")
        );
    } else if group {
        println!("group {name}: {}", if all_ok { "PASS" } else { "FAIL" });
    }
    itf.finish();
    if all_ok {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

/// Run the checker with progress on stderr about once a second.
pub fn run_one(
    m: &MoveModel,
    max_states: Option<usize>,
    mode: Mode,
    memory: Option<usize>,
    workers: usize,
    acyclicity: AcyclicityCheck,
) -> Report {
    let mut progress = |p: Progress| {
        eprintln!(
            "  progress {}: {} states, {:.0} states/s, depth {}",
            m.cfg.name,
            p.unique_states,
            p.unique_states as f64 / p.seconds.max(1e-9),
            p.depth
        );
    };
    checker::check(
        m,
        Options {
            max_states,
            progress: Some(&mut progress),
            mode,
            memory,
            workers,
            acyclicity,
            ..Options::default()
        },
    )
}

/// The lines that open one config's report.
pub fn print_header(m: &MoveModel) {
    println!("config {}: {}", m.cfg.name, m.cfg.about);
    println!("  {}", m.cfg.params());
    let _ = std::io::stdout().flush();
}

fn list() {
    for c in Cfg::all() {
        println!("{:24} {}", c.name, c.about);
        println!("{:24} {}", "", c.params());
    }
    for (g, members) in Cfg::groups() {
        println!("{:24} group: {}", g, members.join(", "));
    }
}

fn status_word(r: &checker::PropResult) -> &'static str {
    match r.status {
        checker::Status::Holds => "holds",
        checker::Status::Violated => "VIOLATED",
        checker::Status::Reached => "reached",
        // A search cut short proves no `always` or `eventually` property.
        checker::Status::Unreached if r.kind != Kind::Sometimes => "UNPROVEN",
        checker::Status::Unreached => "NOT REACHED",
    }
}

pub fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Always => "always",
        Kind::Sometimes => "sometimes",
        Kind::Eventually => "eventually",
    }
}

/// Numbered steps, each the action and only the fields that changed.
pub fn print_path(m: &MoveModel, p: &Path, indent: &str) {
    let mut before = view(m, &p.init);
    for (i, (a, s)) in p.steps.iter().enumerate() {
        let after = view(m, s);
        println!("{indent}{:>2}. {a}", i + 1);
        for c in diff(&before, &after) {
            println!("{indent}      {c}");
        }
        before = after;
    }
}

fn print_text(m: &MoveModel, r: &Report, examples: bool) {
    for p in &r.results {
        let len = p.path.as_ref().map(|x| x.steps.len());
        let note = match (p.status, len) {
            (checker::Status::Reached, Some(n)) => format!("  (example: {n} steps)"),
            (checker::Status::Violated, Some(n)) => {
                format!("  (shortest counterexample: {n} steps)")
            }
            _ => String::new(),
        };
        println!(
            "  {:10} {:11} {}{}",
            kind_word(p.kind),
            status_word(p),
            p.name,
            note
        );
        if let Some(path) = &p.path {
            if !p.ok() || examples {
                print_path(m, path, "      ");
            }
        }
        if p.kind == Kind::Eventually && p.status == checker::Status::Violated {
            let last = p
                .path
                .as_ref()
                .map(|x| x.steps.last().map_or(x.init, |(_, s)| *s));
            let terminal = last.is_some_and(|s| {
                let mut succ = Vec::new();
                m.successors(&s, &mut succ);
                succ.is_empty()
            });
            if !terminal {
                println!(
                    "      (the path ends on a cycle whose every state misses the goal: the partition never rests)"
                );
            } else {
                println!(
                    "      (a state the partition can never leave: no action is enabled there, and it holds)"
                );
                if let Some((_, last)) = p.path.as_ref().and_then(|x| x.steps.last()) {
                    for line in pending(m, last) {
                        println!("        {line}");
                    }
                }
            }
        }
        if let (Some(n), Kind::Eventually) = (p.terminals_checked, p.kind) {
            if p.ok() && n == 0 {
                println!("      (no terminal state in scope here: holds vacuously in this config)");
            } else if p.ok() {
                println!("      ({n} terminal states in scope)");
            }
        }
    }
    println!(
        "  summary: unique states {}, total states {}, max depth {}, terminal states {} ({} after a fault, within tolerance), {:.2} s, {:.0} unique states/s, search {}",
        r.unique_states,
        r.total_states,
        r.max_depth,
        r.terminal_states,
        r.terminal_states_after_faults,
        r.seconds,
        r.unique_states as f64 / r.seconds.max(1e-9),
        if r.complete { "complete" } else { "INCOMPLETE (state cap reached: nothing is proven)" }
    );
    println!("  {}", mode_line(r));
    if let Some(a) = &r.acyclicity {
        println!("  acyclicity: {a}");
    }
    println!("  result: {}", if r.passed() { "PASS" } else { "FAIL" });
}

/// How states were stored, and for fingerprints the chance one hid a state.
pub fn mode_line(r: &Report) -> String {
    match r.collision_probability {
        Some(p) => format!(
            "mode: {}, {} worker(s) (64-bit fingerprints; probability that a collision hid a state, n(n-1)/2^65: {p:.1e}; frontier at most {} MiB in memory, {} MiB on disk)",
            r.mode,
            r.workers,
            r.footprint.frontier_bytes >> 20,
            r.footprint.frontier_disk_bytes >> 20
        ),
        None => format!("mode: {} (every state stored whole)", r.mode),
    }
}

/// A path as `[{action, changed}]` for JSON.
pub fn path_json(m: &MoveModel, p: &Path) -> Value {
    let mut before = view(m, &p.init);
    let mut steps = Vec::new();
    for (a, s) in &p.steps {
        let after = view(m, s);
        let mut changed = Map::new();
        for c in diff(&before, &after) {
            changed.insert(c.path, json!({"before": c.before, "after": c.after}));
        }
        steps.push(json!({"action": a, "changed": changed}));
        before = after;
    }
    Value::Array(steps)
}

pub fn to_json(m: &MoveModel, r: &Report) -> Value {
    let props: Vec<Value> = r
        .results
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "kind": p.kind,
                "class": p.class,
                "status": p.status,
                "counterexample": p.path.as_ref().map(|x| path_json(m, x)),
                "terminals_checked": p.terminals_checked,
                "pending": (p.kind == Kind::Eventually && p.status == checker::Status::Violated)
                    .then(|| p.path.as_ref().and_then(|x| x.steps.last()).map(|(_, s)| pending(m, s)))
                    .flatten(),
            })
        })
        .collect();
    json!({
        "config": m.cfg,
        "mode": r.mode,
        "workers": r.workers,
        "collision_probability": r.collision_probability,
        "complete": r.complete,
        "acyclic": r.acyclic,
        "acyclicity": r.acyclicity,
        "unique_states": r.unique_states,
        "total_states": r.total_states,
        "max_depth": r.max_depth,
        "terminal_states": r.terminal_states,
        "terminal_states_after_faults": r.terminal_states_after_faults,
        "seconds": r.seconds,
        "passed": r.passed(),
        "properties": props,
    })
}

/// `--itf PATH`: the first counterexample of a run goes there.
pub struct Itf<'a> {
    file: Option<&'a std::path::Path>,
    written: bool,
}

impl<'a> Itf<'a> {
    pub fn new(file: Option<&'a std::path::Path>) -> Itf<'a> {
        Itf {
            file,
            written: false,
        }
    }

    /// Write the counterexample of `property` unless one was written;
    /// false if the file could not be written.
    pub fn write(&mut self, m: &MoveModel, property: &str, path: &Path) -> bool {
        let Some(file) = self.file.filter(|_| !self.written) else {
            return true;
        };
        let what = ItfMeta {
            kind: "counterexample",
            property: Some(property),
            seed: None,
        };
        match super::trace::write_itf(file, m, path, &what) {
            Ok(()) => {
                self.written = true;
                eprintln!(
                    "wrote the counterexample of `{property}` ({} steps) to {} (ITF)",
                    path.steps.len(),
                    file.display()
                );
                true
            }
            Err(e) => {
                eprintln!("error: --itf {e}");
                false
            }
        }
    }

    /// Say so when `--itf` was given and there was nothing to write.
    pub fn finish(&self) {
        if let (Some(file), false) = (self.file, self.written) {
            eprintln!(
                "--itf: no property was violated, so no counterexample was written to {}",
                file.display()
            );
        }
    }
}
