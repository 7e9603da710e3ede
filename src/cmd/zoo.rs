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

pub fn run(a: Args) -> u8 {
    let mut progress = |msg: &str| eprintln!("  {msg}");
    let z = zoo::run(&mut progress);
    let ok = z.correct_passes && z.rows.iter().all(ZooRow::caught);
    if a.json {
        let rows: Vec<_> = z
            .rows
            .iter()
            .map(|r| {
                json!({
                    "name": r.mutant.name(),
                    "idea": r.mutant.idea(),
                    "config": r.config,
                    "property": r.property,
                    "counterexample_len": r.len,
                    "model": if r.property.is_some() { "caught" } else { "missed" },
                    "conformance": "n/a",
                    "tlc": "n/a",
                })
            })
            .collect();
        let out =
            json!({"correct_passes": z.correct_passes, "seconds": z.seconds, "mutants": rows});
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
            "{:26} {:24} {:>4}  {:7} {:11} {:4}  property violated / wrong idea",
            "mutant", "config", "len", "model", "conformance", "tlc",
        );
        for r in &z.rows {
            println!(
                "{:26} {:24} {:>4}  {:7} {:11} {:4}  {}",
                r.mutant.name(),
                r.config.unwrap_or("-"),
                r.len.map(|n| n.to_string()).unwrap_or("-".into()),
                if r.property.is_some() {
                    "caught"
                } else {
                    "MISSED"
                },
                "n/a",
                "n/a",
                r.property.unwrap_or("-"),
            );
            println!(
                "{:26} {:24} {:>4}  {:7} {:11} {:4}  ({})",
                "",
                "",
                "",
                "",
                "",
                "",
                r.mutant.idea()
            );
        }
        println!("{:.1} s", z.seconds);
    }
    if ok {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}
