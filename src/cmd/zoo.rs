//! `livemove zoo`: every mutant against every available checker.

use super::{EXIT_FAIL, EXIT_OK};
use livemove_model::zoo::{self, ZooRow};
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
}

/// What conformance said of one mutant: the config and step where the
/// mutant implementation first disagrees with the correct model.
struct ConformCell {
    caught: bool,
    detail: String,
}

fn conformance_column(rows: &[ZooRow], progress: &mut dyn FnMut(&str)) -> Vec<ConformCell> {
    rows.iter()
        .map(|r| {
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
        .collect()
}

/// What TLC said of one mutant on its zoo config: "caught" when it finds
/// the model's outcome property violated (or unreached), "n/a" without Java
/// or TLC (see `livemove tlc`).
///
/// A mutant whose zoo config lies outside `ci` (learner_keeps_old_epoch:
/// about ten million states, hours of TLC) is not run and says so: the
/// column reads "not run", the summary line counts it, and the model and
/// conformance columns still have to catch it.
fn tlc_column(rows: &[ZooRow], progress: &mut dyn FnMut(&str)) -> Vec<String> {
    let ci: Vec<String> = livemove_model::Cfg::resolve("ci")
        .expect("the ci group exists")
        .into_iter()
        .map(|c| c.name)
        .collect();
    rows.iter()
        .map(|r| {
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
        .collect()
}

pub fn run(a: Args) -> u8 {
    let start = std::time::Instant::now();
    let mut progress = |msg: &str| eprintln!("  {msg}");
    let z = zoo::run(&mut progress);
    let conform = conformance_column(&z.rows, &mut progress);
    let tlc = tlc_column(&z.rows, &mut progress);
    let ok = z.correct_passes
        && z.rows.iter().all(ZooRow::caught)
        && conform.iter().all(|c| c.caught)
        && tlc
            .iter()
            .all(|t| t == "caught" || t == "n/a" || t == "not run");
    let not_run = tlc.iter().filter(|t| *t == "not run").count();
    if a.json {
        let rows: Vec<_> = z
            .rows
            .iter()
            .zip(&conform)
            .zip(&tlc)
            .map(|((r, c), tlc)| {
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
                })
            })
            .collect();
        let out = json!({"correct_passes": z.correct_passes, "seconds": start.elapsed().as_secs_f64(), "mutants": rows});
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
            "{:26} {:24} {:>4}  {:7} {:11} {:7}  property violated / wrong idea",
            "mutant", "config", "len", "model", "conformance", "tlc",
        );
        // Rows print grouped by section, in the sections' order, whatever
        // the order of `Mutant::ALL`.
        let mut rows: Vec<_> = z.rows.iter().zip(&conform).zip(&tlc).collect();
        rows.sort_by_key(|((r, _), _)| {
            livemove_model::Mutant::SECTIONS
                .iter()
                .position(|s| *s == r.mutant.section())
                .expect("every section is listed")
        });
        let mut section = "";
        for ((r, c), tlc) in rows {
            let this = r.mutant.section();
            if this != section {
                println!("-- {this}");
                section = this;
            }
            println!(
                "{:26} {:24} {:>4}  {:7} {:11} {:7}  {}",
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
                r.property.unwrap_or("-"),
            );
            println!(
                "{:26} {:24} {:>4}  {:7} {:11} {:7}  ({})",
                "",
                "",
                "",
                "",
                "",
                "",
                r.mutant.idea()
            );
            println!(
                "{:26} {:24} {:>4}  {:7} {:11} {:7}  conformance: {}",
                "", "", "", "", "", "", c.detail
            );
        }
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
