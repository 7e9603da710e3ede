//! Confirm latency while copies move: the demo (`livemove demo`, here in
//! process, the file control plane in the target directory) on 5 nodes, rf
//! 3, its clients publishing and consuming on every partition; the planner
//! moves copies and ownership onto the node that joins while another is
//! killed and comes back. Per seed, the confirm latency's p50 and p99 in
//! the three phases, and p99 during the moves over p99 before (the issue's
//! "p99 during moves over p99 before"); every run must lose nothing and
//! confirm nothing twice. Prints a table. Run with `cargo bench -p
//! livemove-runtime --bench moves` (`-- PARTITIONS SECONDS SEEDS`, default
//! `16 10 3`).

use livemove_impl::Mutants;
use livemove_runtime::demo::{run_blocking, DemoConfig};
use livemove_runtime::partition::Records;
use std::time::Duration;

fn main() {
    let arg = |k: usize, default: u64| {
        std::env::args()
            .filter(|a| !a.starts_with('-'))
            .nth(k)
            .and_then(|a| a.parse::<u64>().ok())
            .unwrap_or(default)
    };
    let (partitions, seconds, seeds) = (arg(1, 16), arg(2, 10), arg(3, 3));
    println!(
        "{partitions} partitions, {seconds} s of traffic, 5 nodes (one joins), rf 3, \
         5 publishes/s per partition, a node killed during the moves"
    );
    println!(
        "{:>4} {:>9} {:>9} {:>8} {:>11} {:>11} {:>10} {:>10} {:>7} {:>9} {:>9}",
        "seed",
        "published",
        "entries",
        "moves",
        "p50 before",
        "p99 before",
        "p99 during",
        "p99 after",
        "during",
        "pause ms",
        "lost/dup"
    );
    let mut ratios = Vec::new();
    for seed in 1..=seeds {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary directory");
        let root = dir.path().to_path_buf();
        let cfg = DemoConfig {
            nodes: 5,
            partitions: partitions as u32,
            rf: 3,
            steady_seconds: seconds as f64 / 2.0,
            rate: 5.0,
            seed,
            records: Records::Files {
                dir: root.join("records"),
            },
            root,
            tick: Duration::from_millis(20),
            lease: Duration::from_millis(1000),
            down: Duration::from_millis(2000),
            moves_in_flight: 4,
            deadline: Duration::from_secs(120),
            mutants: Mutants::NONE,
        };
        let r = match run_blocking(cfg, None) {
            Ok(r) => r,
            Err(e) => {
                println!("{seed:>4} failed: {e}");
                std::process::exit(1);
            }
        };
        assert_eq!(
            (r.lost_confirmed, r.duplicates),
            (0, 0),
            "seed {seed}: a confirmed message lost or confirmed twice"
        );
        let during = r.p99_ms_during / r.p99_ms_before;
        ratios.push(during);
        println!(
            "{:>4} {:>9} {:>9} {:>8} {:>11.1} {:>11.1} {:>10.1} {:>10.1} {:>6.2}x {:>9.0} {:>9}",
            seed,
            r.published,
            r.confirmed,
            format!("{}+{}", r.moves, r.handoffs),
            r.p50_ms_before,
            r.p99_ms_before,
            r.p99_ms_during,
            r.p99_ms_after,
            during,
            r.handoff_pause_ms,
            format!("{}/{}", r.lost_confirmed, r.duplicates),
        );
    }
    ratios.sort_by(|a, b| a.total_cmp(b));
    println!(
        "p99 during the moves over p99 before: median {:.2}x (min {:.2}x, max {:.2}x); \
         entries: confirmed on the final owners (publishes and settles); moves: follower moves + \
         handoffs carried out; pause: the longest handoff's write pause",
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1]
    );
}
