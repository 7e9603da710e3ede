//! `livemove demo`: a live cluster in one process (`livemove_runtime::demo`):
//! nodes over TCP on 127.0.0.1, each partition's log on disk, the records in
//! files or a private etcd, a controller, one client per partition that
//! publishes and consumes (settles); a node
//! joins, the rebalance planner moves copies and ownership onto it round by
//! round until it proposes nothing, a node is killed
//! in the middle and comes back. A progress line about every second on
//! standard error, then the report (`--json`: one object on standard
//! output). Every partition's trace is then validated against the spec
//! with TLC. Exit 1 when an acknowledged message was lost, a message was
//! confirmed twice, a confirmed position is on fewer than W copies, a
//! settle told done is missing from the final history or a message was
//! settled twice there, or a trace is invalid.

use super::tlc::tool::Tlc;
use super::validate::{self, Verdict};
use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use clap::{Args as ClapArgs, ValueEnum};
use livemove_impl::{Mutant, Mutants};
use livemove_runtime::demo::{self, placement, DemoConfig, DemoReport, Progress};
use livemove_runtime::partition::{Partition, Records};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, ValueEnum)]
pub enum Store {
    /// The embedded file control plane (nothing to install).
    File,
    /// A private etcd started for the run (needs `etcd` on PATH).
    Etcd,
}

#[derive(ClapArgs)]
pub struct Args {
    /// Nodes in all; the last one joins during the run.
    #[arg(long, default_value_t = 5)]
    nodes: u8,
    /// Partitions, each with rf copies.
    #[arg(long, default_value_t = 32, value_parser = super::positive_count)]
    partitions: usize,
    /// The replication factor.
    #[arg(long, default_value_t = 3)]
    rf: u8,
    /// Seconds of traffic: half before the moves, half after them.
    #[arg(long, default_value_t = 30.0)]
    seconds: f64,
    /// Chooses the node killed during the moves.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the records live.
    #[arg(long, value_enum, default_value = "file")]
    store: Store,
    /// Publishes per second of each partition's client.
    #[arg(long, default_value_t = 5.0)]
    rate: f64,
    /// Keep the data directories and traces here (default: a temporary
    /// directory, removed at the end unless the run failed).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Do not validate the traces (the report's `trace_valid` is null).
    #[arg(long)]
    no_validate: bool,
    /// The report as one JSON object on standard output.
    #[arg(long)]
    json: bool,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
    /// How long the killed node stays down, in milliseconds.
    #[arg(long, default_value_t = 2000, value_parser = super::positive_count)]
    down_ms: usize,
    /// The controller's lease on a node, in milliseconds.
    #[arg(long, default_value_t = 1000, value_parser = super::positive_count)]
    lease_ms: usize,
    /// Switch on a mutant of the implementation and the plan (see
    /// `livemove zoo`): `no_replacement` starts a move while a follower is
    /// down without replacing it, which the trace validator rejects.
    #[arg(long)]
    mutant: Option<String>,
}

/// A private etcd for the run, killed on drop.
struct PrivateEtcd {
    child: Child,
    endpoint: String,
}

impl PrivateEtcd {
    fn start(dir: &Path) -> Result<PrivateEtcd, String> {
        let port = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .map_err(|e| format!("no free port: {e}"))
        };
        let (client, peer) = (port()?, port()?);
        let endpoint = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let log = std::fs::File::create(dir.join("etcd.log"))
            .map_err(|e| format!("{}: {e}", dir.join("etcd.log").display()))?;
        let child = Command::new("etcd")
            .args(["--name", "demo"])
            .arg("--data-dir")
            .arg(dir.join("etcd"))
            .args(["--listen-client-urls", &endpoint])
            .args(["--advertise-client-urls", &endpoint])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("demo={peer_url}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("--store etcd: cannot start `etcd` ({e}); install etcd-server"))?;
        let mut etcd = PrivateEtcd { child, endpoint };
        let start = Instant::now();
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_millis(500))
            .build();
        loop {
            let healthy = agent
                .get(&format!("{}/health", etcd.endpoint))
                .call()
                .ok()
                .and_then(|r| r.into_string().ok())
                .is_some_and(|b| b.contains("\"true\""));
            if healthy {
                return Ok(etcd);
            }
            if let Ok(Some(status)) = etcd.child.try_wait() {
                return Err(format!(
                    "etcd exited with {status}; see {}",
                    dir.join("etcd.log").display()
                ));
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = etcd.child.kill();
                return Err("etcd was not healthy within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for PrivateEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn show(p: &Progress) {
    let mut err = std::io::stderr().lock();
    for n in &p.notes {
        let _ = writeln!(err, "  * {n}");
    }
    let up: Vec<String> = p.up.iter().map(|n| n.to_string()).collect();
    let _ = writeln!(
        err,
        "{:6.1}s {:7} up [{}] | {:6.0} confirmed/s | p50 {:6.1} ms p99 {:6.1} ms | moves done {}/{} | recoveries {}",
        p.elapsed_s,
        p.phase,
        up.join(" "),
        p.per_second,
        p.p50_ms,
        p.p99_ms,
        p.done.0,
        p.done.1,
        p.recoveries
    );
    for (part, kind, phase, bytes, why) in p.pending.iter().filter(|m| m.2 != "planned").take(8) {
        let _ = writeln!(
            err,
            "          {part} {kind:7} {phase:22} {bytes:>8} B behind  {why}"
        );
    }
}

/// The renaming that reads partition `p`'s trace with its first owner as
/// n1, its followers as n2.., the other nodes after them in order.
fn renaming(p: Partition, nodes: u8, rf: u8) -> Vec<(u64, u64)> {
    let (owner, followers) = placement(p, nodes - 1, rf);
    let mut order: Vec<u64> = std::iter::once(owner)
        .chain(followers)
        .map(|n| u64::from(n.0))
        .collect();
    for n in 1..=u64::from(nodes) {
        if !order.contains(&n) {
            order.push(n);
        }
    }
    order
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, i as u64 + 1))
        .collect()
}

/// Validate every partition's trace with TLC, two at a time; the first
/// invalid one is printed. `Err` when TLC could not run.
fn validate_all(
    root: &Path,
    partitions: u32,
    nodes: u8,
    rf: u8,
    quiet: bool,
) -> Result<bool, String> {
    let tlc = Tlc::find()?;
    let parts: Vec<Partition> = (0..partitions).map(Partition).collect();
    let started = Instant::now();
    let results: Vec<Result<(Partition, usize, Verdict), String>> = std::thread::scope(|s| {
        let threads = super::all_cores().min(parts.len());
        let chunks: Vec<Vec<Partition>> = (0..threads)
            .map(|k| parts.iter().copied().skip(k).step_by(threads).collect())
            .collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let tlc = &tlc;
                s.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|p| {
                            let file = demo::trace_path(root, p);
                            let args = validate::Args {
                                files: vec![file.clone()],
                                nodes: Some(u64::from(nodes)),
                                rf: Some(u64::from(rf)),
                                tla_dir: "tla".into(),
                                rename: renaming(p, nodes, rf),
                                keep: false,
                            };
                            validate::validate(tlc, &file, &args)
                                .map(|(t, v)| (p, t.events.len(), v))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a validation thread panicked"))
            .collect()
    });
    let mut all_valid = true;
    let mut events = 0;
    for r in results {
        let (p, n, v) = r?;
        events += n;
        if let Verdict::Unexplained { position, reasons } = v {
            all_valid = false;
            eprintln!(
                "{p}: trace invalid at event {position} of {n} ({}): {}",
                demo::trace_path(root, p).display(),
                reasons.join("; ")
            );
        }
    }
    if !quiet {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "validated {partitions} traces with TLC: {events} events in {secs:.0} s ({:.0} events/s)",
            events as f64 / secs
        );
    }
    Ok(all_valid)
}

fn print(r: &DemoReport) {
    let v = match r.trace_valid {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "not validated",
    };
    println!(
        "demo: seed {}, store {}, {} nodes, {} partitions, {:.1} s",
        r.seed, r.store, r.nodes, r.partitions, r.seconds
    );
    println!(
        "  published {}  acknowledged {}  confirmed {}",
        r.published, r.acknowledged, r.confirmed
    );
    println!(
        "  acknowledged but lost {}  duplicates {}  under-replicated {}  (each must be 0)",
        r.lost_confirmed, r.duplicates, r.under_replicated
    );
    println!(
        "  retries {} ({} during the moves, {} answered from the owner's history)",
        r.retries, r.retries_during_moves, r.retries_held
    );
    println!(
        "  publishes given up during the moves {}  given up, maybe appended {}",
        r.failed_during_moves, r.uncertain
    );
    println!(
        "  consumed: settles sent {}  told done {}  failed {}  confirmed {}",
        r.settles_sent, r.settled, r.settles_failed, r.settles_confirmed
    );
    println!(
        "  settled but lost {}  settled twice {}  (each must be 0)",
        r.settled_lost, r.settled_twice
    );
    println!(
        "  confirm latency p50/p99 ms: before {:.1}/{:.1}  during {:.1}/{:.1}  after {:.1}/{:.1}",
        r.p50_ms_before,
        r.p99_ms_before,
        r.p50_ms_during,
        r.p99_ms_during,
        r.p50_ms_after,
        r.p99_ms_after
    );
    println!(
        "  planner: {} rounds proposed {} moves and {} handoffs; {}",
        r.planner_rounds,
        r.planned_moves,
        r.planned_handoffs,
        if r.converged {
            "its last round proposed nothing (balanced)"
        } else {
            "it still proposed moves at the end"
        }
    );
    println!(
        "  moves {}  handoffs {} carried out (longest write pause {:.0} ms)  moves asked again {}  recoveries {}",
        r.moves, r.handoffs, r.handoff_pause_ms, r.moves_restarted, r.recoveries
    );
    let per_node: Vec<String> = r
        .copies_per_node
        .iter()
        .map(|(n, c)| format!("{n} {c}/{}", r.owned_per_node.get(n).copied().unwrap_or(0)))
        .collect();
    println!(
        "  copies/owned per node at the end: {}",
        per_node.join("  ")
    );
    println!(
        "  trace: {} events in {}, valid: {v}",
        r.trace_events, r.trace_dir
    );
}

pub fn run(args: Args) -> u8 {
    let Ok(partitions) = u32::try_from(args.partitions) else {
        eprintln!("error: --partitions {}: too many", args.partitions);
        return EXIT_USAGE;
    };
    if !(args.seconds > 0.0 && args.rate > 0.0) {
        eprintln!("error: --seconds and --rate must be positive");
        return EXIT_USAGE;
    }
    if args.nodes < args.rf + 1 || args.rf < 2 || args.nodes > 16 {
        eprintln!(
            "error: --nodes {} --rf {}: rf >= 2 and rf + 1 <= nodes <= 16 (one node joins)",
            args.nodes, args.rf
        );
        return EXIT_USAGE;
    }
    let mutants = match args.mutant.as_deref().map(str::parse::<Mutant>).transpose() {
        Ok(m) => m.map_or(Mutants::NONE, Mutants::only),
        Err(e) => {
            eprintln!("error: --mutant: {e}");
            return EXIT_USAGE;
        }
    };
    let (root, _temp) = match &args.dir {
        Some(d) => {
            if d.exists()
                && std::fs::read_dir(d)
                    .map(|mut i| i.next().is_some())
                    .unwrap_or(true)
            {
                eprintln!("error: --dir {}: exists and is not empty", d.display());
                return EXIT_USAGE;
            }
            (d.clone(), None)
        }
        None => match tempfile::Builder::new().prefix("livemove-demo-").tempdir() {
            Ok(t) => (t.path().to_path_buf(), Some(t)),
            Err(e) => {
                eprintln!("error: temporary directory: {e}");
                return EXIT_FAIL;
            }
        },
    };
    if let Err(e) = std::fs::create_dir_all(&root) {
        eprintln!("error: {}: {e}", root.display());
        return EXIT_FAIL;
    }
    let (_etcd, records) = match args.store {
        Store::File => (
            None,
            Records::Files {
                dir: root.join("records"),
            },
        ),
        Store::Etcd => match PrivateEtcd::start(&root) {
            Ok(e) => {
                let r = Records::Etcd {
                    endpoint: e.endpoint.clone(),
                    prefix: "livemove-demo".into(),
                };
                (Some(e), r)
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FAIL;
            }
        },
    };
    let cfg = DemoConfig {
        nodes: args.nodes,
        partitions,
        rf: args.rf,
        steady_seconds: args.seconds / 2.0,
        rate: args.rate,
        seed: args.seed,
        records,
        root: root.clone(),
        tick: Duration::from_millis(20),
        lease: Duration::from_millis(args.lease_ms as u64),
        down: Duration::from_millis(args.down_ms as u64),
        moves_in_flight: 4,
        deadline: Duration::from_secs(120),
        mutants,
    };
    let progress: Option<demo::ShowProgress> = if args.quiet {
        None
    } else {
        Some(Box::new(show))
    };
    let mut report = match demo::run_blocking(cfg, progress) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            if let Some(t) = _temp {
                eprintln!("the run's directory is kept: {}", t.keep().display());
            }
            return EXIT_FAIL;
        }
    };
    if !args.no_validate {
        match validate_all(&root, partitions, args.nodes, args.rf, args.quiet) {
            Ok(v) => report.trace_valid = Some(v),
            Err(e) => {
                eprintln!("error: validating the traces: {e}");
                return EXIT_FAIL;
            }
        }
    }
    let failed = report.lost_confirmed > 0
        || report.duplicates > 0
        || report.under_replicated > 0
        || report.settled_lost > 0
        || report.settled_twice > 0
        || report.trace_valid == Some(false);
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&report).expect("a report is plain data")
        );
    } else {
        print(&report);
    }
    if failed {
        if let Some(t) = _temp {
            eprintln!("the run's directory is kept: {}", t.keep().display());
        }
        EXIT_FAIL
    } else {
        EXIT_OK
    }
}
