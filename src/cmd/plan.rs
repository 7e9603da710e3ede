//! `livemove plan`: run the rebalance planner on built-in or synthetic
//! clusters and report each against its lower bounds; inspect scores and
//! moves; and the operator commands over a coordination record.

use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use livemove_impl::operator::{list_moves, Operator, Progress};
use livemove_impl::planner::scenarios::{self, Report, Scenario, NAMES};
use livemove_impl::planner::sim::Sim;
use livemove_impl::planner::{Policy, ScoreVector};
use livemove_impl::store::{CoordinationStore, FileRecordStorage, Record, StoreError};
use livemove_impl::{Mutants, NodeId, StorageId};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    op: Option<Op>,
    #[command(flatten)]
    which: Which,
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Weight of the history dimension in the score (default 1; 0 balances
    /// copies without regard to their size).
    #[arg(long)]
    history_weight: Option<f64>,
    /// Weight of the traffic dimension in the score (default 1).
    #[arg(long)]
    traffic_weight: Option<f64>,
}

/// Which cluster: a built-in scenario, a synthetic one, or (for the
/// scenario run) every built-in scenario.
#[derive(clap::Args, Clone)]
struct Which {
    /// A built-in scenario (without it and without --nodes, all of them).
    #[arg(long, conflicts_with_all = ["nodes", "partitions", "seed"])]
    scenario: Option<String>,
    /// Synthetic cluster: nodes (the last tenth join empty).
    #[arg(long, requires = "partitions")]
    nodes: Option<u32>,
    /// Synthetic cluster: partitions, three copies each.
    #[arg(long, requires = "nodes")]
    partitions: Option<u32>,
    /// Synthetic cluster: seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(clap::Subcommand)]
enum Op {
    /// The score vector per node, at the start or after some rounds.
    Scores {
        #[command(flatten)]
        which: Which,
        /// Rounds to run first.
        #[arg(long, default_value_t = 0)]
        round: u64,
        #[arg(long)]
        json: bool,
    },
    /// Moves in progress with phase, bytes remaining and blocking reason:
    /// of a scenario after some rounds, or of a coordination record.
    Moves {
        #[command(flatten)]
        which: Which,
        /// Rounds to run first (scenario).
        #[arg(long, default_value_t = 1)]
        round: u64,
        /// A coordination record file: list its move through the operator API.
        #[arg(long, conflicts_with = "scenario")]
        record: Option<PathBuf>,
        /// The target's durable prefix (record).
        #[arg(long, default_value_t = 0)]
        target_durable: u64,
        /// The owner's log tail (record).
        #[arg(long, default_value_t = 0)]
        owner_tail: u64,
        /// The owner's confirmed tail (record).
        #[arg(long, default_value_t = 0)]
        owner_confirmed: u64,
        /// Average bytes per log entry (record).
        #[arg(long, default_value_t = 1)]
        entry_bytes: u64,
        #[arg(long)]
        json: bool,
    },
    /// Create a coordination record: OWNER serves with FOLLOWERS.
    Init {
        #[arg(long)]
        record: PathBuf,
        /// The owner, e.g. n1.
        #[arg(long)]
        owner: String,
        /// The followers, e.g. n2,n3.
        #[arg(long, value_delimiter = ',')]
        followers: Vec<String>,
    },
    /// Pause rebalancing cluster-wide: no new move or handoff starts.
    Pause {
        #[arg(long)]
        record: PathBuf,
    },
    /// Resume rebalancing.
    Resume {
        #[arg(long)]
        record: PathBuf,
    },
    /// Request a move of the follower on LEAVING to TARGET (step 0).
    Request {
        #[arg(long)]
        record: PathBuf,
        /// The joining node, e.g. n4.
        #[arg(long)]
        target: String,
        /// The follower that leaves, e.g. n3.
        #[arg(long)]
        leaving: String,
    },
    /// Cancel the move in flight (before its swap).
    Cancel {
        #[arg(long)]
        record: PathBuf,
    },
}

pub fn run(a: Args) -> u8 {
    match a.op {
        None => match policy(a.history_weight, a.traffic_weight) {
            Ok(p) => run_scenarios(&a.which, &p, a.json),
            Err(code) => code,
        },
        Some(Op::Scores { which, round, json }) => scores(&which, round, json),
        Some(Op::Moves {
            which,
            round,
            record: Some(path),
            target_durable,
            owner_tail,
            owner_confirmed,
            entry_bytes,
            json,
        }) => {
            if which.nodes.is_some() {
                eprintln!("error: --record lists a record's move; it takes no --nodes");
                return EXIT_USAGE;
            }
            let _ = round;
            record_moves(
                &path,
                Progress {
                    target_durable,
                    owner_tail,
                    owner_confirmed,
                    entry_bytes,
                },
                json,
            )
        }
        Some(Op::Moves {
            which, round, json, ..
        }) => scenario_moves(&which, round, json),
        Some(Op::Init {
            record,
            owner,
            followers,
        }) => init(&record, &owner, &followers),
        Some(Op::Pause { record }) => operate(&record, |o| o.pause().map(|_| ())),
        Some(Op::Resume { record }) => operate(&record, |o| o.resume().map(|_| ())),
        Some(Op::Request {
            record,
            target,
            leaving,
        }) => {
            let (t, l) = match (storage(&target, "--target"), storage(&leaving, "--leaving")) {
                (Ok(t), Ok(l)) => (t, l),
                (Err(e), _) | (_, Err(e)) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            operate(&record, |o| o.request_move(t, l).map(|_| ()))
        }
        Some(Op::Cancel { record }) => operate(&record, |o| o.cancel_move().map(|_| ())),
    }
}

/// The scenarios `which` names, or a usage error.
fn chosen(which: &Which) -> Result<Vec<Scenario>, u8> {
    let r = match (&which.scenario, which.nodes, which.partitions) {
        (Some(name), _, _) => scenarios::by_name(name).map(|s| vec![s]),
        (None, Some(n), Some(p)) => scenarios::synthetic(n, p, which.seed).map(|s| vec![s]),
        _ => NAMES.iter().map(|n| scenarios::by_name(n)).collect(),
    };
    r.map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })
}

fn one(which: &Which) -> Result<Scenario, u8> {
    if which.scenario.is_none() && which.nodes.is_none() {
        eprintln!("error: name a cluster with --scenario NAME or --nodes N --partitions P");
        return Err(EXIT_USAGE);
    }
    chosen(which).map(|mut v| v.remove(0))
}

fn clock() -> impl FnMut() -> f64 {
    let t0 = Instant::now();
    move || t0.elapsed().as_secs_f64() * 1e3
}

/// What must never happen in any run: a limit exceeded, a move inside a
/// cooldown, two copies in one domain, a move while a recovery is pending
/// or rebalancing is paused.
fn broken(r: &Report) -> Vec<String> {
    let mut v = Vec::new();
    if r.peak_transfers > r.limits.cluster_max
        || r.peak_node_incoming > r.limits.node_incoming_max
        || r.peak_node_outgoing > r.limits.node_outgoing_max
    {
        v.push("transfer limits exceeded".to_string());
    }
    if r.cooldown_violations > 0 {
        v.push(format!("{} moves inside a cooldown", r.cooldown_violations));
    }
    if r.domain_violations > 0 {
        v.push(format!(
            "{} partitions with two copies in one domain",
            r.domain_violations
        ));
    }
    if r.moves_while_held > 0 {
        v.push(format!("{} moves planned while held", r.moves_while_held));
    }
    v
}

fn ratio(r: &Report) -> Option<f64> {
    (r.moves_lower_bound > 0).then(|| r.moves as f64 / r.moves_lower_bound as f64)
}

/// The default policy with the weights given on the command line.
fn policy(history: Option<f64>, traffic: Option<f64>) -> Result<Policy, u8> {
    let mut p = Policy::default();
    for (flag, v, slot) in [
        ("--history-weight", history, &mut p.weights.history),
        ("--traffic-weight", traffic, &mut p.weights.traffic),
    ] {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                eprintln!("error: {flag} {v}: a weight is a finite number >= 0");
                return Err(EXIT_USAGE);
            }
            *slot = v;
        }
    }
    Ok(p)
}

fn run_scenarios(which: &Which, policy: &Policy, json: bool) -> u8 {
    let list = match chosen(which) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let mut reports = Vec::new();
    for s in &list {
        match scenarios::run(s, policy, &mut clock()) {
            Ok(r) => reports.push(r),
            Err(e) => {
                eprintln!("error: scenario {}: {e}", s.name);
                return EXIT_FAIL;
            }
        }
    }
    let broken: Vec<String> = reports
        .iter()
        .flat_map(|r| {
            broken(r)
                .into_iter()
                .map(move |b| format!("{}: {b}", r.name))
        })
        .collect();
    if json {
        let rows: Vec<_> = reports
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "moves": r.moves,
                    "moves_lower_bound": r.moves_lower_bound,
                    "bytes_moved": r.bytes_moved,
                    "bytes_lower_bound": r.bytes_lower_bound,
                    "handoffs": r.handoffs,
                    "max_over_mean": r.max_over_mean,
                    "rounds": r.rounds,
                    "peak_transfers": r.peak_transfers,
                    "reversals": r.reversals,
                    "moved_twice": r.moved_twice,
                    "plan_ms_p50": r.plan_ms_p50,
                    "plan_ms_p99": r.plan_ms_p99,
                })
            })
            .collect();
        let out = json!({ "scenarios": rows });
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serializes")
        );
    } else {
        print_table(&list, &reports);
    }
    for b in &broken {
        eprintln!("BROKEN {b}");
    }
    if broken.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

fn print_table(list: &[Scenario], reports: &[Report]) {
    println!(
        "{:17} {:>6} {:>6} {:>5} {:>11} {:>11} {:>9} {:>8} {:>6} {:>6} {:>7} {:>4} {:>6} {:>8} {:>8}",
        "scenario", "moves", "LB", "ratio", "followers", "handoffs", "GiB", "max/mean", "rounds",
        "peak", "node", "rev", "twice", "p50 ms", "p99 ms"
    );
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    for r in reports {
        println!(
            "{:17} {:>6} {:>6} {:>5} {:>11} {:>11} {:>9} {:>8.3} {:>6} {:>6} {:>7} {:>4} {:>6} {:>8.2} {:>8.2}",
            r.name,
            r.moves,
            r.moves_lower_bound,
            ratio(r).map_or("-".to_string(), |x| format!("{x:.3}")),
            format!("{}/{}", r.follower_moves, r.follower_moves_lower_bound),
            format!("{}/{}", r.handoffs, r.handoffs_lower_bound),
            format!("{:.0}/{:.0}", gib(r.bytes_moved), gib(r.bytes_lower_bound)),
            r.max_over_mean,
            r.rounds,
            format!("{}/{}", r.peak_transfers, r.limits.cluster_max),
            format!("{}/{}", r.peak_node_incoming.max(r.peak_node_outgoing), r.limits.node_incoming_max),
            r.reversals,
            r.moved_twice,
            r.plan_ms_p50,
            r.plan_ms_p99,
        );
    }
    println!();
    for (s, r) in list.iter().zip(reports) {
        println!("{}: {}", s.name, s.about);
        println!(
            "  end: owned {}..{}, copies {}..{} per live node; settled {}; retained-copy starts {}; \
             refused: domain {}, catch-up {}; over the whole run: reversals {}, moved twice (one kind) {}, \
             moved more than once (any kind) {}; held rounds {}",
            r.owned_range.0,
            r.owned_range.1,
            r.copies_range.0,
            r.copies_range.1,
            r.settled,
            r.from_retained,
            r.refused_domain,
            r.refused_catch_up,
            r.reversals_any_time,
            r.moved_twice_any_time,
            r.moved_twice_any_kind,
            r.held_rounds,
        );
    }
    println!();
    println!("moves = follower moves + handoffs; LB = copies bound + owned bound (band +-1 around each node's share);");
    println!("peak = most transfers in flight / cluster limit; node = most into or off one node / per-node limit;");
    println!("rev = A->B->A reversals within 50 rounds; twice = partitions moved twice (one kind) within 50 rounds;");
    println!("p50/p99 = plan time per round (this machine, this run).");
}

/// Run `s` for `rounds` rounds (stopping early is not needed: a settled
/// cluster just plans nothing).
fn simulate(s: &Scenario, rounds: u64) -> Result<Sim, u8> {
    let mut sim = Sim::new(
        s.view.clone(),
        s.history.clone(),
        Policy::default(),
        scenarios::ROUND_SECS,
    );
    let mut c = clock();
    for round in 1..=rounds {
        if round > 1 {
            sim.advance();
        }
        if let Err(e) = sim.round(&mut c) {
            eprintln!("error: {e}");
            return Err(EXIT_FAIL);
        }
    }
    Ok(sim)
}

fn scores(which: &Which, rounds: u64, json: bool) -> u8 {
    let s = match one(which) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let sim = match simulate(&s, rounds) {
        Ok(sim) => sim,
        Err(code) => return code,
    };
    let loads = livemove_impl::planner::Loads::compute(&sim.view, &sim.policy);
    let rows: Vec<(usize, ScoreVector)> = (0..sim.view.nodes.len())
        .map(|n| (n, loads.score(n as u32)))
        .collect();
    if json {
        let nodes: Vec<_> = rows
            .iter()
            .map(|(n, v)| {
                json!({"node": n, "domain": sim.view.nodes[*n].domain, "capacity": sim.view.nodes[*n].capacity,
                       "draining": sim.view.nodes[*n].draining, "score": v})
            })
            .collect();
        let out = json!({"scenario": s.name, "round": rounds, "mean_total": loads.mean_total(), "nodes": nodes});
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serializes")
        );
        return EXIT_OK;
    }
    println!(
        "{} after {rounds} rounds; 1.00 is the cluster mean in each dimension, total mean {:.2}",
        s.name,
        loads.mean_total()
    );
    println!(
        "{:>5} {:>6} {:>5} {:>7} {:>9} {:>8} {:>8} {:>7} {:>7}",
        "node", "domain", "cap", "owned", "followed", "history", "traffic", "sync", "total"
    );
    for (n, v) in rows {
        let spec = &sim.view.nodes[n];
        println!(
            "{:>5} {:>6} {:>5} {:>7.3} {:>9.3} {:>8.3} {:>8.3} {:>7.3} {:>7.3}{}",
            n,
            spec.domain,
            spec.capacity,
            v.owned,
            v.followed,
            v.history,
            v.traffic,
            v.sync,
            v.total,
            if spec.draining { "  draining" } else { "" }
        );
    }
    EXIT_OK
}

fn scenario_moves(which: &Which, rounds: u64, json: bool) -> u8 {
    let s = match one(which) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let sim = match simulate(&s, rounds) {
        Ok(sim) => sim,
        Err(code) => return code,
    };
    let blocking = sim.view.recovery_pending.then_some("recovery pending");
    if json {
        let moves: Vec<_> = sim
            .view
            .transfers
            .iter()
            .map(|t| {
                json!({"partition": t.partition, "target": t.target, "leaving": t.leaving, "phase": "learner",
                       "bytes_remaining": t.bytes_remaining, "secs_remaining": t.secs_remaining,
                       "blocking": blocking.unwrap_or("catching_up")})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"scenario": s.name, "round": rounds, "moves": moves})
            )
            .expect("serializes")
        );
        return EXIT_OK;
    }
    println!(
        "{} after {rounds} rounds: {} moves in progress",
        s.name,
        sim.view.transfers.len()
    );
    println!(
        "{:>9} {:>6} {:>7} {:>8} {:>15} {:>8}  blocking",
        "partition", "target", "leaving", "phase", "bytes remaining", "secs"
    );
    for t in &sim.view.transfers {
        println!(
            "{:>9} {:>6} {:>7} {:>8} {:>15} {:>8.1}  {}",
            t.partition,
            t.target,
            t.leaving,
            "learner",
            t.bytes_remaining,
            t.secs_remaining,
            blocking.unwrap_or("catching up to the owner's tail")
        );
    }
    EXIT_OK
}

/// `n4` or `n4/d1`: a node and its disk incarnation.
fn storage(s: &str, flag: &str) -> Result<StorageId, String> {
    let bad = || format!("{flag}: `{s}` is not a node like n4 or n4/d1");
    let (node, disk) = match s.split_once('/') {
        Some((n, d)) => (
            n,
            d.strip_prefix('d')
                .ok_or_else(bad)?
                .parse()
                .map_err(|_| bad())?,
        ),
        None => (s, 0),
    };
    let n: u8 = node
        .strip_prefix('n')
        .ok_or_else(bad)?
        .parse()
        .map_err(|_| bad())?;
    if n == 0 {
        return Err(format!("{flag}: nodes are numbered from n1"));
    }
    Ok(StorageId {
        node: NodeId(n),
        disk,
    })
}

fn open(path: &Path) -> Result<CoordinationStore<FileRecordStorage>, u8> {
    if !path.exists() {
        eprintln!(
            "error: --record {}: no such file; create one with `livemove plan init --record {} --owner n1 --followers n2,n3`",
            path.display(),
            path.display()
        );
        return Err(EXIT_USAGE);
    }
    // The file exists, so `open` loads it and never persists the placeholder.
    let placeholder = Record::initial(StorageId::first(NodeId(1)), [], 1);
    CoordinationStore::open(FileRecordStorage::new(path), placeholder, Mutants::NONE).map_err(|e| {
        eprintln!("error: --record {}: {e}", path.display());
        EXIT_FAIL
    })
}

fn init(path: &Path, owner: &str, followers: &[String]) -> u8 {
    if path.exists() {
        eprintln!("error: --record {}: already exists", path.display());
        return EXIT_USAGE;
    }
    let parsed = storage(owner, "--owner").and_then(|o| {
        followers
            .iter()
            .map(|f| storage(f, "--followers"))
            .collect::<Result<Vec<_>, _>>()
            .map(|f| (o, f))
    });
    let (o, f) = match parsed {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    if f.contains(&o) {
        eprintln!("error: --followers: {owner} is the owner");
        return EXIT_USAGE;
    }
    let rf = (f.len() + 1) as u8;
    match CoordinationStore::open(
        FileRecordStorage::new(path),
        Record::initial(o, f, rf),
        Mutants::NONE,
    ) {
        Ok(s) => {
            println!(
                "record {} at version {}",
                path.display(),
                s.record().version.0
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: --record {}: {e}", path.display());
            EXIT_FAIL
        }
    }
}

fn operate(
    path: &Path,
    f: impl FnOnce(&mut Operator<'_, FileRecordStorage>) -> Result<(), StoreError>,
) -> u8 {
    let mut store = match open(path) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let result = f(&mut Operator::new(&mut store));
    match result {
        Ok(()) => {
            let r = store.record();
            println!(
                "committed version {}; paused {}; move {}",
                r.version.0,
                r.paused,
                r.move_task.as_ref().map_or("none".to_string(), |m| format!(
                    "{} ({:?})",
                    m.target, m.phase
                ))
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("refused: {e}");
            EXIT_FAIL
        }
    }
}

fn record_moves(path: &Path, p: Progress, json: bool) -> u8 {
    let store = match open(path) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let moves = list_moves(store.record(), p);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"paused": store.record().paused, "moves": moves}))
                .expect("serializes")
        );
        return EXIT_OK;
    }
    println!("paused: {}; {} move(s)", store.record().paused, moves.len());
    for m in moves {
        println!(
            "target {} leaving {} phase {:?} bytes remaining {} blocking {}",
            m.target,
            m.leaving.map_or("-".to_string(), |l| l.to_string()),
            m.phase,
            m.bytes_remaining,
            m.blocking.map_or("none".to_string(), |b| format!("{b:?}"))
        );
    }
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean() -> Report {
        let s = scenarios::by_name("add-one-node").unwrap();
        scenarios::run(&s, &Policy::default(), &mut || 0.0).unwrap()
    }

    #[test]
    fn a_clean_run_is_not_broken_and_each_violation_is_named() {
        let r = clean();
        assert!(broken(&r).is_empty(), "{:?}", broken(&r));
        let mut over = r.clone();
        over.peak_node_incoming = over.limits.node_incoming_max + 1;
        assert_eq!(broken(&over), ["transfer limits exceeded"]);
        let mut cooled = r.clone();
        cooled.cooldown_violations = 2;
        assert_eq!(broken(&cooled), ["2 moves inside a cooldown"]);
        let mut doubled = r.clone();
        doubled.domain_violations = 1;
        assert_eq!(
            broken(&doubled),
            ["1 partitions with two copies in one domain"]
        );
        let mut held = r;
        held.moves_while_held = 3;
        assert_eq!(broken(&held), ["3 moves planned while held"]);
    }
}
