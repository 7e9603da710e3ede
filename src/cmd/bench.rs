//! `livemove bench`: model-checking throughput and memory, median of N runs,
//! as a table, for each storage mode asked for.
//!
//! Each row runs in a child process of its own (this command again, with the
//! hidden `--row`), so that its peak resident memory is its own and not what
//! an earlier row left in the allocator.

use super::{resolve, EXIT_FAIL, EXIT_OK};
use livemove_model::checker::{self, AcyclicityCheck, Mode, Options};
use livemove_model::{Cfg, MoveModel};
use serde_json::{json, Value};
use std::process::Command;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Modes {
    Compact,
    Exact,
    /// Exact then compact, one row each, and their ratios.
    Both,
}

#[derive(clap::Args)]
pub struct Args {
    /// A config or group name.
    #[arg(long, default_value = "ci")]
    config: String,
    /// Runs per config, at least 1; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = super::positive_count)]
    runs: usize,
    /// Storage mode(s) to measure.
    #[arg(long, value_enum, default_value = "compact")]
    mode: Modes,
    /// Compact mode: worker counts to measure, one row each (default: one
    /// and every core, e.g. `1,2`).
    #[arg(long, value_delimiter = ',')]
    workers: Vec<usize>,
    /// Compact mode: how acyclicity is checked, one row per way (as for
    /// `check`; e.g. `auto,edges` measures the progress measure against
    /// keeping every edge, side by side).
    #[arg(long, value_delimiter = ',', default_value = "auto",
          value_parser = ["auto", "measure", "edges"])]
    acyclicity: Vec<String>,
    /// Compact mode's memory budget in GiB (frontier states past it go to
    /// disk), as for `check`.
    #[arg(long, value_name = "GIB", default_value_t = super::DEFAULT_MEMORY_GIB)]
    memory: f64,
    /// Also run TLC on each config with each worker count of the compact
    /// rows (every property checked, as `livemove tlc` does) and print its
    /// distinct states per second beside ours, with the ratios.
    #[arg(long)]
    tlc: bool,
    /// With --tlc: stop a TLC run at its first progress report (about once
    /// a minute) past this many seconds, and take its rate from that report.
    #[arg(long, value_name = "S", default_value_t = 120, requires = "tlc", value_parser = super::positive_count)]
    tlc_seconds: usize,
    /// Measure one config in one mode and print it as JSON (what each row's
    /// child process runs).
    #[arg(long, hide = true)]
    row: bool,
}

/// A field of /proc/self/status in KiB (Linux).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The `--acyclicity` value as the checker's option.
fn acyclicity_check(how: &str) -> AcyclicityCheck {
    match how {
        "measure" => AcyclicityCheck::Measure,
        "edges" => AcyclicityCheck::Edges,
        _ => AcyclicityCheck::Auto,
    }
}

/// CPU seconds this process has used, all threads, user and system (Linux;
/// in clock ticks of 10 ms).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The child's side: run the checker `runs` times, print one JSON object.
fn row(
    cfg: Cfg,
    mode: Mode,
    runs: usize,
    memory: Option<usize>,
    workers: usize,
    acyclicity: AcyclicityCheck,
) -> u8 {
    let m = MoveModel::new(cfg);
    let mut times = Vec::new();
    let mut last = None;
    let cpu_before = cpu_seconds();
    for _ in 0..runs.max(1) {
        let r = checker::check(
            &m,
            Options {
                mode,
                memory,
                workers,
                acyclicity,
                ..Options::default()
            },
        );
        times.push(r.seconds);
        last = Some(r);
    }
    times.sort_by(|x, y| x.total_cmp(y));
    let r = last.expect("at least one run");
    let f = &r.footprint;
    println!(
        "{}",
        json!({
            "unique": r.unique_states,
            "edges": r.edges,
            "median": times[times.len() / 2],
            "cpu": cpu_seconds().zip(cpu_before).map(|(a, b)| (a - b) / times.len() as f64),
            "peak_kib": status_kib("VmHWM:"),
            "own_bytes": f.visited_bytes + f.frontier_bytes + f.edges_bytes,
            "disk_bytes": f.frontier_disk_bytes + f.edges_disk_bytes,
            "collision": r.collision_probability,
            "acyclicity": r.acyclicity,
            "passed": r.passed(),
        })
    );
    EXIT_OK
}

/// The parent's side: one child per row.
fn measure(
    name: &str,
    mode: Mode,
    workers: usize,
    acyclicity: &str,
    a: &Args,
) -> Result<Value, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "--row", "--config", name, "--runs"])
        .arg(a.runs.to_string())
        .args(["--mode", &mode.to_string()])
        .args(["--workers", &workers.to_string()]);
    if mode == Mode::Compact {
        cmd.args(["--memory", &a.memory.to_string()])
            .args(["--acyclicity", acyclicity]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run the {name} row: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the {name} row ({mode}) failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("the {name} row printed no JSON: {e}"))
}

pub fn run(a: Args) -> u8 {
    let cfgs = match resolve(&a.config, None) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let modes: &[Mode] = match a.mode {
        Modes::Compact => &[Mode::Compact],
        Modes::Exact => &[Mode::Exact],
        Modes::Both => &[Mode::Exact, Mode::Compact],
    };
    if a.row {
        let [cfg] = &cfgs[..] else {
            eprintln!("--row measures one config, `{}` names a group", a.config);
            return EXIT_FAIL;
        };
        let memory =
            (modes[0] == Mode::Compact).then_some((a.memory * (1u64 << 30) as f64) as usize);
        let workers = a.workers.first().copied().unwrap_or(1).max(1);
        return row(
            cfg.clone(),
            modes[0],
            a.runs,
            memory,
            workers,
            acyclicity_check(a.acyclicity.first().map_or("auto", String::as_str)),
        );
    }
    let workers: Vec<usize> = if a.workers.is_empty() {
        let mut w = vec![1, super::all_cores()];
        w.dedup();
        w
    } else {
        a.workers.clone()
    };
    let mut plan: Vec<(Mode, usize, &str)> = Vec::new();
    for &mode in modes {
        match mode {
            Mode::Exact => plan.push((mode, 1, "")),
            Mode::Compact => {
                for how in &a.acyclicity {
                    plan.extend(workers.iter().map(|&w| (mode, w.max(1), how.as_str())));
                }
            }
        }
    }
    println!(
        "{:26} {:15} {:>3} {:>11} {:>11} {:>9} {:>10} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8}",
        "config",
        "mode",
        "w",
        "unique",
        "edges",
        "median s",
        "unique/s",
        "u/cpu-s",
        "peak MiB",
        "B/state",
        "own B/st",
        "disk MiB",
        "P(coll)"
    );
    let mut all_ok = true;
    let mut ratios = Vec::new();
    let mut versus = Vec::new();
    for cfg in &cfgs {
        let mut rows = Vec::new();
        for &(mode, workers, how) in &plan {
            let v = match measure(&cfg.name, mode, workers, how, &a) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("{e}");
                    return EXIT_FAIL;
                }
            };
            let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
            let unique = num("unique");
            let rate = unique / num("median").max(1e-9);
            let peak = num("peak_kib") * 1024.0;
            all_ok &= v["passed"].as_bool() == Some(true);
            // How acyclicity was checked: `m` by the measure, `e` by every
            // edge (what `auto` chose, or what a fallen measure left).
            let by = match v["acyclicity"]["by"].as_str() {
                Some("measure") => "/m",
                Some("edges") => "/e",
                _ => "",
            };
            println!(
                "{:26} {:15} {:>3} {:>11} {:>11} {:>9.3} {:>10.0} {:>10} {:>9.0} {:>8.1} {:>8.1} {:>8.0} {:>8}",
                cfg.name,
                format!("{mode}{}{by}", if how.is_empty() { String::new() } else { format!(" {how}") }),
                workers,
                unique,
                num("edges"),
                num("median"),
                rate,
                // Below the clock's 10 ms ticks the rate means nothing.
                Some(num("cpu"))
                    .filter(|&c| c >= 0.05)
                    .map_or("-".into(), |c| format!("{:.0}", unique / c)),
                peak / 1048576.0,
                peak / unique,
                num("own_bytes") / unique,
                num("disk_bytes") / 1048576.0,
                v["collision"]
                    .as_f64()
                    .map_or("-".into(), |p| format!("{p:.1e}")),
            );
            rows.push((mode, workers, how, rate, peak));
            if a.tlc && mode == Mode::Compact {
                let limit = std::time::Duration::from_secs(a.tlc_seconds as u64);
                match super::tlc::throughput(cfg, workers, limit) {
                    Ok((distinct, secs, complete)) => {
                        let tlc_rate = distinct as f64 / secs.max(1e-9);
                        // Throughput on different state spaces compares nothing.
                        let same = !complete || distinct as f64 == unique;
                        all_ok &= same;
                        versus.push(format!(
                            "{:26} {:>3} {:>11.0} {:>12} {:>9.1} {:>9} {:>10.0} {:>9.1}{}",
                            cfg.name,
                            workers,
                            rate,
                            distinct,
                            secs,
                            if complete { "yes" } else { "stopped" },
                            tlc_rate,
                            rate / tlc_rate,
                            if same {
                                ""
                            } else {
                                "  (TLC's count differs from ours!)"
                            }
                        ));
                    }
                    Err(e) => {
                        eprintln!("TLC on {} with {workers} worker(s): {e}", cfg.name);
                        versus.push(format!(
                            "{:26} {:>3} {:>11.0} TLC failed: {e}",
                            cfg.name, workers, rate
                        ));
                        all_ok = false;
                    }
                }
            }
        }
        let exact = rows.iter().find(|r| r.0 == Mode::Exact);
        // The first way of checking acyclicity asked for: its worker rows.
        let first_how = a.acyclicity.first().map_or("auto", String::as_str);
        let compact: Vec<_> = rows
            .iter()
            .filter(|r| r.0 == Mode::Compact && r.2 == first_how)
            .collect();
        let ratio = |x: f64, y: Option<f64>| y.map_or("-".to_string(), |y| format!("{:.2}", x / y));
        if let Some(first) = compact.first() {
            let last = compact.last().expect("non-empty");
            // Each other way against the first, with the same workers.
            let others: Vec<String> = rows
                .iter()
                .filter(|r| r.0 == Mode::Compact && r.2 != first_how)
                .filter_map(|r| {
                    let base = compact.iter().find(|c| c.1 == r.1)?;
                    Some(format!(
                        "{:.2} (w {}, {first_how}/{})",
                        base.3 / r.3,
                        r.1,
                        r.2
                    ))
                })
                .collect();
            ratios.push(format!(
                "{:26} {:>16} {:>16} {:>20} {}",
                cfg.name,
                ratio(first.3, exact.map(|e| e.3)),
                ratio(first.4, exact.map(|e| e.4)),
                if compact.len() > 1 {
                    format!("{:.2} ({} vs {})", last.3 / first.3, last.1, first.1)
                } else {
                    "-".into()
                },
                others.join(", ")
            ));
        }
    }
    println!(
        "w: workers; u/cpu-s: unique states per CPU second (all threads; \
         the rate a loaded machine does not distort); peak MiB: the row's process at its peak (resident); B/state: that over \
         unique states; own B/st: the checker's visited set, widest frontier and in-memory \
         adjacency over unique states; disk MiB: frontier and adjacency in temporary files, at \
         most; P(coll): n(n-1)/2^65"
    );
    if !ratios.is_empty() {
        println!(
            "\n{:26} {:>16} {:>16} {:>20} acyclicity: unique/s",
            "", "unique/s c/e", "peak RSS c/e", "workers speedup"
        );
        for line in ratios {
            println!("{line}");
        }
    }
    if !versus.is_empty() {
        println!(
            "\n{:26} {:>3} {:>11} {:>12} {:>9} {:>9} {:>10} {:>9}",
            "versus TLC",
            "w",
            "ours u/s",
            "TLC distinct",
            "TLC s",
            "TLC done",
            "TLC d/s",
            "ours/TLC"
        );
        for line in versus {
            println!("{line}");
        }
        println!(
            "TLC: the main run of `livemove tlc` (every property, one JVM per row, run once); \
             TLC s: its search alone, Java start-up left out; a run still going past --tlc-seconds \
             is stopped at its next progress report (about once a minute) and its rate taken \
             there; ours/TLC: unique states per second over TLC's distinct states per second, \
             the same number of workers on both sides"
        );
    }
    if all_ok {
        EXIT_OK
    } else {
        eprintln!("a benchmarked config did not pass");
        EXIT_FAIL
    }
}
