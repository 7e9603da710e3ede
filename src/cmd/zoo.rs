//! `livemove zoo`: every mutant against every available checker: the model,
//! conformance, TLC, and the runtime's simulator with its trace validator.

use super::{EXIT_FAIL, EXIT_OK};
use livemove_model::zoo::{self, ZooRow};
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Mutants checked at a time in the conformance and TLC columns, each
    /// on its own thread (TLC with one worker, so that its counterexamples
    /// are shortest ones); the default, one per core.
    #[arg(long, default_value_t = super::all_cores(), value_parser = super::positive_count)]
    jobs: usize,
}

/// What conformance said of one mutant: the config and step where the
/// mutant implementation first disagrees with the correct model.
struct ConformCell {
    caught: bool,
    detail: String,
}

fn conformance_column(
    rows: &[ZooRow],
    jobs: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<ConformCell> {
    super::par_map(rows, jobs, |r| {
        let c = livemove_conformance::catches(r.mutant);
        let cell = match c {
            Some(c) => ConformCell {
                caught: true,
                detail: format!("{} step {} {}", c.config, c.step + 1, c.action),
            },
            None => ConformCell {
                caught: false,
                detail: "no divergence".into(),
            },
        };
        progress(&format!("conformance {}: {}", r.mutant, cell.detail));
        cell
    })
}

/// What TLC said of one mutant on its zoo config: "caught" when it finds
/// the model's outcome property violated (or unreached), "n/a" without Java
/// or TLC (see `livemove tlc`).
///
/// A mutant whose zoo config lies outside `ci` (learner_keeps_old_epoch:
/// about ten million states, hours of TLC) is not run and says so: the
/// column reads "not run", the summary line counts it, and the model and
/// conformance columns still have to catch it.
fn tlc_column(rows: &[ZooRow], jobs: usize, progress: &(dyn Fn(&str) + Sync)) -> Vec<String> {
    let ci: Vec<String> = livemove_model::Cfg::resolve("ci")
        .expect("the ci group exists")
        .into_iter()
        .map(|c| c.name)
        .collect();
    super::par_map(rows, jobs, |r| {
        if r.config.is_some_and(|c| !ci.iter().any(|x| x == c)) {
            let word = "not run".to_string();
            progress(&format!(
                "tlc {}: not run (config {} is outside ci; TLC would take hours)",
                r.mutant,
                r.config.unwrap_or("-")
            ));
            return word;
        }
        let word = match super::tlc::check_mutant(r.mutant, r.property) {
            Ok(Some(p)) if Some(p) == r.property => "caught".to_string(),
            Ok(Some(p)) => format!("other: {p}"),
            Ok(None) => "MISSED".to_string(),
            Err(_) => "n/a".to_string(),
        };
        progress(&format!("tlc {}: {word}", r.mutant));
        word
    })
}

/// Seeds of the runtime column: 16 simulated runs per mutant on four
/// nodes, each with one planned handoff, one planned move, one owner kill
/// and four eager writes (`livemove sim --zoo --nodes 4 --moves 1
/// --handoffs 1 --recoveries 1 --eager-writes 4` runs any other range;
/// every mutant it catches over 1..=32 it catches by seed 9).
const RUNTIME_SEEDS: std::ops::RangeInclusive<u64> = 1..=16;

/// The runtime column (`livemove sim --zoo`): the implementation's mutant
/// of the same name in the simulated nodes over [`RUNTIME_SEEDS`].
fn runtime_column(rows: &[ZooRow], progress: &mut dyn FnMut(&str)) -> Vec<super::sim::RuntimeCell> {
    let mutants: Vec<livemove_impl::Mutant> = rows
        .iter()
        .map(|r| {
            r.mutant
                .name()
                .parse()
                .expect("the model and the implementation name the same mutants")
        })
        .collect();
    // One planned handoff, one planned move and one owner kill per seed,
    // and writers acting on stale records (eager writes): the move reaches
    // the owner's mutants of a learner's W, the eager writes the store's
    // relaxed guards of moves and of a recovery.
    let base = livemove_runtime::sim::SimConfig {
        nodes: 4,
        handoffs: 1,
        moves: 1,
        recoveries: 1,
        eager_writes: 4,
        heal_steps_max: livemove_runtime::sim::HEAL_STEPS_WITH_MOVES,
        ..livemove_runtime::sim::SimConfig::new(1)
    };
    super::sim::runtime_column(&base, RUNTIME_SEEDS, &mutants, &mut |c| {
        progress(&format!("runtime {}: {} ({})", c.mutant, c.word, c.detail))
    })
    .unwrap_or_else(|e| {
        progress(&format!("runtime column: {e}"));
        mutants
            .iter()
            .map(|&mutant| super::sim::RuntimeCell {
                mutant,
                word: "MISSED",
                detail: e.clone(),
            })
            .collect()
    })
}

pub fn run(a: Args) -> u8 {
    let start = std::time::Instant::now();
    let progress = |msg: &str| eprintln!("  {msg}");
    let z = zoo::run(&mut |m: &str| progress(m));
    let conform = conformance_column(&z.rows, a.jobs, &progress);
    let tlc = tlc_column(&z.rows, a.jobs, &progress);
    let runtime = runtime_column(&z.rows, &mut |m: &str| progress(m));
    let ok = z.correct_passes
        && z.rows.iter().all(ZooRow::caught)
        && conform.iter().all(|c| c.caught)
        && tlc
            .iter()
            .all(|t| t == "caught" || t == "n/a" || t == "not run")
        && runtime.iter().all(|c| c.word != "MISSED");
    let not_run = tlc.iter().filter(|t| *t == "not run").count();
    if a.json {
        let rows: Vec<_> = z
            .rows
            .iter()
            .zip(&conform)
            .zip(&tlc)
            .zip(&runtime)
            .map(|(((r, c), tlc), rt)| {
                json!({
                    "name": r.mutant.name(),
                    "section": r.mutant.section(),
                    "idea": r.mutant.idea(),
                    "config": r.config,
                    "property": r.property,
                    "counterexample_len": r.len,
                    "model": if r.property.is_some() { "caught" } else { "missed" },
                    "conformance": if c.caught { "caught" } else { "missed" },
                    "conformance_detail": c.detail,
                    "tlc": tlc,
                    "runtime": rt.word,
                    "runtime_detail": rt.detail,
                })
            })
            .collect();
        let out = json!({"correct_passes": z.correct_passes, "runtime_seeds": [RUNTIME_SEEDS.start(), RUNTIME_SEEDS.end()], "seconds": start.elapsed().as_secs_f64(), "mutants": rows});
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serializes")
        );
    } else {
        println!(
            "correct protocol: {} on every config of the zoo",
            if z.correct_passes { "passes" } else { "FAILS" }
        );
        println!(
            "{:26} {:24} {:>4}  {:7} {:11} {:7} {:11}  property violated / wrong idea",
            "mutant", "config", "len", "model", "conformance", "tlc", "runtime",
        );
        // Rows print grouped by section, in the sections' order, whatever
        // the order of `Mutant::ALL`.
        let mut rows: Vec<_> = z
            .rows
            .iter()
            .zip(&conform)
            .zip(&tlc)
            .zip(&runtime)
            .collect();
        rows.sort_by_key(|(((r, _), _), _)| {
            livemove_model::Mutant::SECTIONS
                .iter()
                .position(|s| *s == r.mutant.section())
                .expect("every section is listed")
        });
        let mut section = "";
        for (((r, c), tlc), rt) in rows {
            let this = r.mutant.section();
            if this != section {
                println!("-- {this}");
                section = this;
            }
            println!(
                "{:26} {:24} {:>4}  {:7} {:11} {:7} {:11}  {}",
                r.mutant.name(),
                r.config.unwrap_or("-"),
                r.len.map(|n| n.to_string()).unwrap_or("-".into()),
                if r.property.is_some() {
                    "caught"
                } else {
                    "MISSED"
                },
                if c.caught { "caught" } else { "MISSED" },
                tlc,
                rt.word,
                r.property.unwrap_or("-"),
            );
            let pad = format!(
                "{:26} {:24} {:>4}  {:7} {:11} {:7} {:11}",
                "", "", "", "", "", "", ""
            );
            println!("{pad}  ({})", r.mutant.idea());
            println!("{pad}  conformance: {}", c.detail);
            println!("{pad}  runtime: {}", rt.detail);
        }
        println!(
            "runtime: seeds {}..={} of `livemove sim --nodes 4 --moves 1 --handoffs 1 --recoveries 1 --eager-writes 4`; {} caught, {} not reached (the runtime does not run their paths yet)",
            RUNTIME_SEEDS.start(),
            RUNTIME_SEEDS.end(),
            runtime.iter().filter(|c| c.word == "caught").count(),
            runtime.iter().filter(|c| c.word == "not reached").count(),
        );
        if not_run > 0 {
            println!(
                "tlc: {not_run} mutant(s) not run: their config is outside ci and too large for TLC here"
            );
        }
        println!("{:.1} s", start.elapsed().as_secs_f64());
    }
    if ok {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}
