//! `livemove bench`: model-checking throughput, median of N runs, as a table.

use super::{resolve, EXIT_OK};
use livemove_model::checker::{self, Options};
use livemove_model::MoveModel;

#[derive(clap::Args)]
pub struct Args {
    /// A config or group name.
    #[arg(long, default_value = "ci")]
    config: String,
    /// Runs per config, at least 1; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = super::positive_count)]
    runs: usize,
}

/// Peak resident memory of this process so far, in MiB (Linux).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn run(a: Args) -> u8 {
    let cfgs = match resolve(&a.config, None) {
        Ok(c) => c,
        Err(code) => return code,
    };
    println!(
        "{:24} {:>12} {:>12} {:>10} {:>14}",
        "config", "unique", "edges", "median s", "unique/s"
    );
    for cfg in cfgs {
        let m = MoveModel::new(cfg);
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..a.runs {
            let r = checker::check(&m, Options::default());
            times.push(r.seconds);
            last = Some(r);
        }
        times.sort_by(|x, y| x.total_cmp(y));
        let median = times[times.len() / 2];
        let r = last.expect("at least one run");
        println!(
            "{:24} {:>12} {:>12} {:>10.3} {:>14.0}",
            m.cfg.name,
            r.unique_states,
            r.edges,
            median,
            r.unique_states as f64 / median.max(1e-9)
        );
    }
    if let Some(mib) = peak_rss_mib() {
        println!("peak resident memory: {mib:.0} MiB");
    }
    EXIT_OK
}
