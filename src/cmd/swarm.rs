//! `livemove check --swarm N`: seeded random walks, reported in the form of
//! `check`: one line per property, the shrunk counterexample under a
//! violated one, a summary and the result.

use super::check::{finish, kind_word, path_json, print_header, print_path, Itf};
use super::EXIT_USAGE;
use livemove_model::checker::check_swarm_with_progress;
use livemove_model::checker::swarm::{SwarmOptions, SwarmProgress, SwarmReport};
use livemove_model::{Cfg, MoveModel};
use serde_json::{json, Value};

pub fn run(
    name: &str,
    cfgs: Vec<Cfg>,
    opts: SwarmOptions,
    as_json: bool,
    itf_file: Option<&std::path::Path>,
) -> u8 {
    let group = cfgs.len() > 1;
    let mut runs = Vec::new();
    let mut all_ok = true;
    let mut itf = Itf::new(itf_file);
    for cfg in cfgs {
        let m = MoveModel::new(cfg);
        if !as_json {
            print_header(&m);
        }
        let mut progress = |p: SwarmProgress| {
            eprintln!(
                "  progress {}: {} of {} walks, {} states visited, {:.0} states/s",
                m.cfg.name,
                p.walks,
                opts.searches,
                p.states_visited,
                p.states_visited as f64 / p.seconds.max(1e-9)
            );
        };
        let r = check_swarm_with_progress(&m, opts, &mut progress);
        all_ok &= r.passed();
        if let Some(v) = r.violations.first() {
            if !itf.write(&m, v.name, &v.path) {
                return EXIT_USAGE;
            }
        }
        if as_json {
            runs.push(to_json(&m, &r));
        } else {
            print_text(&m, &r);
        }
    }
    finish(name, group, as_json, runs, all_ok, itf)
}

fn print_text(m: &MoveModel, r: &SwarmReport) {
    for v in &r.violations {
        println!(
            "  {:10} {:11} {}  (shrunk counterexample: {} steps, from {} in walk {} with seed {}; {} of {} walks violated it)",
            kind_word(v.kind),
            "VIOLATED",
            v.name,
            v.path.steps.len(),
            v.found_len,
            v.search,
            v.search_seed,
            v.searches_hit,
            r.options.searches
        );
        print_path(m, &v.path, "      ");
    }
    for s in &r.reached {
        println!(
            "  {:10} {:11} {}  ({} walks)",
            "sometimes", "reached", s.name, s.searches_hit
        );
    }
    for name in &r.unreached {
        println!("  {:10} {:11} {}", "sometimes", "NOT REACHED", name);
    }
    let o = &r.options;
    println!(
        "  summary: swarm of {} walks, depth at most {}, seed {}, {} worker(s): {} states visited, {} distinct fingerprints, {} walks came to rest, {:.2} s, {:.0} states/s",
        o.searches,
        o.depth,
        o.seed,
        o.workers,
        r.states_visited,
        r.distinct_fingerprints,
        r.terminal_walks,
        r.seconds,
        r.states_per_second()
    );
    println!(
        "  mode: swarm (random walks; no violation found proves nothing holds, and an unreached `sometimes` is not a failure)"
    );
    println!(
        "  result: {}",
        if r.passed() {
            "no violation found"
        } else {
            "FAIL"
        }
    );
}

fn to_json(m: &MoveModel, r: &SwarmReport) -> Value {
    let o = &r.options;
    let violations: Vec<Value> = r
        .violations
        .iter()
        .map(|v| {
            json!({
                "name": v.name,
                "kind": v.kind,
                "class": v.class,
                "status": "violated",
                "counterexample": path_json(m, &v.path),
                "found_steps": v.found_len,
                "search": v.search,
                "search_seed": v.search_seed,
                "searches_hit": v.searches_hit,
            })
        })
        .collect();
    let reached: Vec<Value> = r
        .reached
        .iter()
        .map(|s| json!({"name": s.name, "searches_hit": s.searches_hit}))
        .collect();
    json!({
        "config": m.cfg,
        "mode": "swarm",
        "searches": o.searches,
        "depth": o.depth,
        "seed": o.seed,
        "workers": o.workers,
        "states_visited": r.states_visited,
        "distinct_fingerprints": r.distinct_fingerprints,
        "terminal_walks": r.terminal_walks,
        "seconds": r.seconds,
        "states_per_second": r.states_per_second(),
        "passed": r.passed(),
        "properties": violations,
        "reached": reached,
        "unreached": r.unreached,
    })
}
