//! `livemove check`: explore a configuration (or a group) and report.

use super::{resolve, EXIT_FAIL, EXIT_OK};
use livemove_model::checker::{self, Options, Path, Progress, Report};
use livemove_model::properties::Kind;
use livemove_model::view::{diff, view};
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
    let group = cfgs.len() > 1;
    let mut runs = Vec::new();
    let mut all_ok = true;
    for cfg in cfgs {
        let m = MoveModel::new(cfg);
        if !a.json {
            println!("config {}: {}", m.cfg.name, m.cfg.about);
            println!("  {}", m.cfg.params());
            let _ = std::io::stdout().flush();
        }
        let r = run_one(&m, a.max_states);
        all_ok &= r.passed();
        if a.json {
            runs.push(to_json(&m, &r));
        } else {
            print_text(&m, &r, a.examples);
        }
    }
    if a.json {
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
    if all_ok {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

/// Run the checker with progress on stderr about once a second.
pub fn run_one(m: &MoveModel, max_states: Option<usize>) -> Report {
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
            ..Options::default()
        },
    )
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

fn kind_word(k: Kind) -> &'static str {
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
            if r.acyclic == Some(false) {
                println!("      (the state graph has a cycle; the path ends on it)");
            } else {
                println!(
                    "      (the path ends in a terminal state where the property does not hold)"
                );
            }
        }
    }
    println!(
        "  summary: unique states {}, total states {}, max depth {}, {:.2} s, {:.0} unique states/s, search {}",
        r.unique_states,
        r.total_states,
        r.max_depth,
        r.seconds,
        r.unique_states as f64 / r.seconds.max(1e-9),
        if r.complete { "complete" } else { "INCOMPLETE (state cap reached: nothing is proven)" }
    );
    println!("  result: {}", if r.passed() { "PASS" } else { "FAIL" });
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
            })
        })
        .collect();
    json!({
        "config": m.cfg,
        "complete": r.complete,
        "acyclic": r.acyclic,
        "unique_states": r.unique_states,
        "total_states": r.total_states,
        "max_depth": r.max_depth,
        "seconds": r.seconds,
        "passed": r.passed(),
        "properties": props,
    })
}
