//! `livemove conform`: hold the model and the implementation together.
//!
//! Modes: lockstep over every reachable edge with negative conformance (the
//! default), `--traces DIR|FILE` (replay exported traces), `--walks N`
//! (seeded random deep walks). `--mutant` switches a mutant on in the
//! implementation only; the model stays the correct protocol (a trace file
//! names its own model mutant, which the implementation also gets unless
//! `--mutant` says otherwise).

use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use livemove_conformance::replay::{self, Counts, Stop};
use livemove_conformance::report::{Options, RunReport};
use livemove_conformance::{env, lockstep, walk, Divergence};
use livemove_model::{Cfg, Mutant};
use serde_json::json;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// A config or group name (optional with --traces).
    #[arg(long, required_unless_present = "traces")]
    config: Option<String>,
    /// Switch this mutant on in the implementation (the model stays correct).
    #[arg(long)]
    mutant: Option<String>,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Replay trace files: a directory of `*.json` or one file.
    #[arg(long)]
    traces: Option<PathBuf>,
    /// Run N seeded random walks (N at least 1) instead of lockstep.
    #[arg(long, conflicts_with = "traces", value_parser = super::positive_count)]
    walks: Option<usize>,
    /// Longest random walk, in steps (at least 1; only with --walks).
    #[arg(long, default_value_t = 64, requires = "walks", value_parser = super::positive_count)]
    depth: usize,
    /// Seed of the first walk (walk k uses seed + k; only with --walks).
    #[arg(long, default_value_t = 1, requires = "walks")]
    seed: u64,
    /// Skip negative conformance (refusals of disabled actions).
    #[arg(long)]
    no_negative: bool,
    /// Where failing traces are written.
    #[arg(long, default_value = "target/conform")]
    out: PathBuf,
    /// Steps shown before the one that disagrees.
    #[arg(long, default_value_t = 8)]
    context: usize,
    /// Distinct divergences reported per run.
    #[arg(long, default_value_t = 10)]
    divergences_max: usize,
    /// Configs of a group checked at a time, each on its own thread (the
    /// default: one per core). Reports print in the group's order whatever
    /// the order they finish in.
    #[arg(long, default_value_t = super::all_cores(), value_parser = super::positive_count)]
    jobs: usize,
}

pub fn run(a: Args) -> u8 {
    let mutant = match a.mutant.as_deref().map(str::parse::<Mutant>).transpose() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: --mutant: {e}");
            return EXIT_USAGE;
        }
    };
    let opts = Options {
        negative: !a.no_negative,
        out_dir: Some(a.out.clone()),
        context_steps: a.context,
        divergences_max: a.divergences_max,
        ..Options::default()
    };
    let mut runs: Vec<RunReport> = Vec::new();
    let print = |r: RunReport, runs: &mut Vec<RunReport>| {
        if !a.json {
            print!("{}", r.text());
            let _ = std::io::stdout().flush();
        }
        runs.push(r);
    };
    if let Some(path) = &a.traces {
        let files = match trace_files(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: --traces {}: {e}", path.display());
                return EXIT_USAGE;
            }
        };
        if files.is_empty() {
            eprintln!(
                "error: --traces {}: no trace files (`*.json`) found: nothing to replay",
                path.display()
            );
            return EXIT_USAGE;
        }
        if let Some(c) = a.config.as_deref() {
            if let Err(e) = Cfg::resolve(c) {
                eprintln!("error: --config: {e}");
                return EXIT_USAGE;
            }
        }
        let found = traces(&files, a.config.as_deref(), mutant, &opts);
        for e in found.iter().flat_map(|r| &r.errors) {
            eprintln!("error: {e}");
        }
        if found.iter().all(|r| r.traces_replayed == 0) {
            eprintln!(
                "error: --traces {}: none of {} trace file(s) was replayed{}",
                path.display(),
                files.len(),
                match a.config.as_deref() {
                    Some(c) => format!(" (none is for config `{c}`)"),
                    None => String::new(),
                }
            );
            for r in found {
                print(r, &mut runs);
            }
            return EXIT_FAIL;
        }
        for r in found {
            print(r, &mut runs);
        }
    } else {
        let name = a.config.as_deref().expect("clap requires --config");
        let cfgs = match Cfg::resolve(name) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: --config: {e}");
                return EXIT_USAGE;
            }
        };
        let n = match a.walks {
            Some(n) => match u32::try_from(n) {
                Ok(n) => Some(n),
                Err(_) => {
                    eprintln!("error: --walks {n}: at most {} walks", u32::MAX);
                    return EXIT_USAGE;
                }
            },
            None => None,
        };
        let one = |cfg: &Cfg| match n {
            Some(n) => walk::run(cfg, mutant, n, a.depth, a.seed, &opts),
            None => lockstep::run(cfg, mutant, &opts),
        };
        super::par_in_order(&cfgs, a.jobs, one, |r| print(r, &mut runs));
    }
    let ok = runs.iter().all(RunReport::passed);
    if a.json {
        let out = if runs.len() == 1 {
            serde_json::to_value(&runs[0]).expect("report serializes")
        } else {
            json!({ "runs": runs })
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("report serializes")
        );
    } else if runs.len() > 1 {
        println!("{} runs: {}", runs.len(), if ok { "PASS" } else { "FAIL" });
    }
    if ok {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

fn trace_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    Ok(v)
}

/// Replay each trace file, one run per config (in file order).
fn traces(
    files: &[PathBuf],
    only: Option<&str>,
    mutant: Option<Mutant>,
    opts: &Options,
) -> Vec<RunReport> {
    let mut runs: Vec<(RunReport, f64)> = Vec::new();
    let run_for = |config: &str, mu: Option<Mutant>, runs: &mut Vec<(RunReport, f64)>| {
        let key = mu.map(|x| x.name().to_string());
        match runs
            .iter()
            .position(|(r, _)| r.config == config && r.mutant == key)
        {
            Some(i) => i,
            None => {
                runs.push((
                    RunReport {
                        config: config.into(),
                        mutant: key,
                        mode: "traces".into(),
                        ..RunReport::default()
                    },
                    0.0,
                ));
                runs.len() - 1
            }
        }
    };
    for f in files {
        let start = Instant::now();
        let (t, m) = match replay::read_trace(f) {
            Ok(x) => x,
            Err(e) => {
                let i = run_for("(unreadable)", mutant, &mut runs);
                runs[i].0.errors.push(e);
                continue;
            }
        };
        if only.is_some_and(|c| {
            c != t.config && Cfg::resolve(c).map_or(true, |g| !g.iter().any(|x| x.name == t.config))
        }) {
            continue;
        }
        let mu = mutant.or(t.mutant);
        let i = run_for(&t.config, mu, &mut runs);
        let rel = env::relaxed(&m);
        let steps: Vec<_> = t.steps.iter().map(|s| s.action).collect();
        let r = &mut runs[i].0;
        r.traces_replayed += 1;
        r.edges_reachable += steps.len();
        match replay::actions(&m, &rel, mu, &steps, opts.negative) {
            Ok(n) => add(r, n),
            Err(Stop::ModelRejects {
                step,
                action,
                guard,
            }) => r.errors.push(format!(
                "{}: steps[{step}]: `{action}` is not allowed by the model: guard `{guard}` fails",
                f.display()
            )),
            Err(Stop::Diverged {
                prefix,
                action,
                mismatch,
            }) => {
                r.edges_replayed += prefix.len();
                let d = Divergence::new(
                    &m,
                    mu,
                    t.seed,
                    &prefix,
                    action,
                    mismatch,
                    opts.context_steps,
                );
                r.push(d, &m, opts);
            }
        }
        r.states += steps.len() + 1;
        runs[i].1 += start.elapsed().as_secs_f64();
    }
    runs.into_iter()
        .map(|(mut r, s)| {
            r.finish(s);
            r
        })
        .collect()
}

fn add(r: &mut RunReport, n: Counts) {
    r.edges_replayed += n.steps;
    r.negative_checks += n.negative_checks;
    r.negative_skipped += n.negative_skipped;
}
