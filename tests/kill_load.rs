//! `kill -9` of real processes inside a `Persist` batch, and at random
//! moments under load.
//!
//! - Inside a batch (`--crash-at persist:K`, `control::crash::batch`):
//!   three `livemove node` processes and a `livemove controller`, one
//!   partition (rf 3, n1 owns). n1, started with `persist:1`, dies inside
//!   its first batch of more than one step: with clients publishing at
//!   once, a group commit of several appends, of which only the first is
//!   on its disk. Its disk opens cleanly to exactly that (no torn tail, no
//!   error), and no client was answered for a position of the batch. n1
//!   stays down: the controller opens a recovery and n2 and n3 recover
//!   the partition at epoch 2 without that append, and the new owner
//!   confirms more there. n1, started again with `persist:1`, is now a
//!   follower holding a stale epoch-1 suffix: the new owner's append at
//!   the first position past the recovered tail makes it truncate and
//!   append in one batch, and it dies between the two. Its disk opens
//!   cleanly to the truncated log; started again unarmed, it catches up
//!   and is re-admitted.
//! - Under load (`schedule`): four nodes and the controller, two
//!   partitions (rf 3), per partition two publishers and a consumer through
//!   the routed client (`load`), while a schedule drawn from a seed kills
//!   a random process (a node or the controller) with SIGKILL after a
//!   random pause, starts it again on its data directory after another,
//!   five times, and asks for a planned move and a planned handoff at
//!   random places among the kills. One node restart in three is armed
//!   with `persist:1` or `persist:2`: if the node makes that many batches
//!   of more than one step (an install, a truncate-and-append, a new
//!   epoch's first append), it dies inside the last of them and is started
//!   again at once, unarmed. Then a healing phase: no more kills,
//!   every process up, every partition settled (nothing pending, no copy
//!   suspended, the owner serving at the record's epoch) and confirming
//!   a publish.
//!
//! Each run ends the same way, read back from the disks with every
//! process stopped (`check`): every publish and every settle whose
//! confirm the client got is on the final owner and on W counted copies
//! at its position, and no copy holds a message, or its settle, twice.
//!
//! The seeds run by default are pinned; `LIVEMOVE_KILL_SEEDS` (file store)
//! and `LIVEMOVE_KILL_ETCD_SEEDS` (etcd) run others (`1..20`, `3,7`), for
//! a longer soak: runtime/README.md, "Kills under load".

mod common;
#[path = "../runtime/tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;

#[path = "kill_load/check.rs"]
mod check;
#[path = "kill_load/cluster.rs"]
mod cluster;
#[path = "kill_load/load.rs"]
mod load;
#[path = "kill_load/schedule.rs"]
mod schedule;

use check::Confirmed;
use cluster::{name, Cluster, CONTROLLER};
use livemove_impl::{Epoch, NodeId};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::partition::{Partition, Records};
use livemove_runtime::tcp::client;
use schedule::Step;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const P0: Partition = Partition(0);
/// How long one phase may take before the test gives up.
const WAIT_MAX: Duration = Duration::from_secs(60);
/// Kills per seed under load.
const KILLS: usize = 5;
/// Publishers per partition under load (besides one consumer).
const PUBLISHERS: usize = 2;
/// Nodes and partitions under load.
const NODES: u8 = 4;
const PARTITIONS: u32 = 2;
/// Concurrent clients of the burst that makes an owner's group commit.
const BURST_CLIENTS: u64 = 8;

fn file_cluster(name: &str, nodes: u8, partitions: u32) -> Cluster {
    let root = common::tmp("kill", name);
    let records = root.join("records");
    Cluster::new(
        root,
        vec!["--store".into(), records.display().to_string()],
        Records::Files { dir: records },
        nodes,
        partitions,
    )
}

fn etcd_cluster(name: &str, etcd: &etcd::Etcd, nodes: u8, partitions: u32) -> Cluster {
    let root = common::tmp("kill", name);
    let endpoint = etcd.endpoint();
    Cluster::new(
        root,
        vec![
            "--etcd".into(),
            endpoint.clone(),
            "--etcd-prefix".into(),
            name.into(),
        ],
        Records::Etcd {
            endpoint,
            prefix: name.into(),
        },
        nodes,
        partitions,
    )
}

/// Publish `n` messages on `p`, each a new key from `next_key`, until each
/// is confirmed (a publish or a wait that fails is given up and a new key
/// tried).
fn publish(c: &mut Cluster, p: Partition, n: usize, next_key: &mut u64, out: &mut Vec<Confirmed>) {
    for _ in 0..n {
        let start = Instant::now();
        loop {
            c.alive();
            assert!(start.elapsed() < WAIT_MAX, "no publish confirmed on {p}");
            *next_key += 1;
            if let Some(done) = load::publish_confirmed(&c.addrs(), p, *next_key) {
                out.push(done);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A death inside a batch, as the crash point's stderr line names it.
#[derive(Debug, PartialEq, Eq)]
struct Death {
    applied: Vec<String>,
    not_applied: Vec<String>,
}

/// The death line in `log`: `... SIGKILL inside batch K after S of N
/// steps: applied [a, b] not applied [c] p0`.
fn death(who: &str, log: &str) -> Death {
    let line = log
        .lines()
        .find(|l| l.starts_with(&format!("crash-point {who}: SIGKILL inside batch ")))
        .unwrap_or_else(|| panic!("{who} did not die inside a batch:\n{log}"));
    let list = |after: &str| -> Vec<String> {
        let from = line.find(after).expect("the list") + after.len();
        let to = from + line[from..].find(']').expect("the list's end");
        line[from..to]
            .split(", ")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    Death {
        applied: list(" applied ["),
        not_applied: list(" not applied ["),
    }
}

/// Wait until process `n` exits by itself; its stderr.
fn died(c: &mut Cluster, n: u8, what: &str) -> String {
    let start = Instant::now();
    loop {
        if let Some(e) = c.exited(n) {
            return e.log;
        }
        assert!(start.elapsed() < WAIT_MAX, "{} did not die {what}", name(n));
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_owner_and_a_follower_killed_inside_a_persist_batch_come_back_and_lose_nothing_confirmed() {
    let mut c = file_cluster("persist", 3, 1);
    let root = c.root.clone();
    c.start(1, Some("persist:1"));
    for n in [2, 3, CONTROLLER] {
        c.start(n, None);
    }
    c.until("n1 serves", WAIT_MAX, |c| c.settled(P0));
    let mut confirmed = Vec::new();
    let mut key = 0;
    // One publish at a time: batches of one append, n1 lives.
    publish(&mut c, P0, 3, &mut key, &mut confirmed);
    assert!(c.running(1));

    // The owner inside a group commit: clients publish at once on n1's
    // port (unrouted publishes queued together are one batch) until it
    // dies; each answer is a position n1 made durable before answering.
    let addr = c.addr(1);
    let burst: Vec<_> = (0..BURST_CLIENTS)
        .map(|i| {
            std::thread::spawn(move || {
                let mut answered = Vec::new();
                let mut key = 1_000_000 * (i + 1);
                while let Ok(pos) = client::publish_blocking(addr, P0, key) {
                    answered.push(pos);
                    key += 1;
                }
                answered
            })
        })
        .collect();
    let log = died(&mut c, 1, "inside a group commit");
    let answered: Vec<u64> = burst.into_iter().flat_map(|t| t.join().unwrap()).collect();
    let d = death("n1", &log);
    let [first] = d.applied.as_slice() else {
        panic!("one step applied: {d:?}")
    };
    let p: u64 = first
        .strip_prefix("append@")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an append first: {d:?}"));
    let rest: Vec<String> = (1..=d.not_applied.len() as u64)
        .map(|i| format!("append@{}", p + i))
        .collect();
    assert!(!rest.is_empty() && d.not_applied == rest, "{d:?}");
    assert!(
        answered.iter().all(|&a| a < p),
        "a client was answered for a position of the batch at {p}: {answered:?}"
    );
    let (_, on_disk) = DiskLog::open(p0(&c, 1)).expect("n1's log opens");
    assert_eq!(on_disk.torn_tail, None, "no torn tail: whole steps");
    assert_eq!(
        on_disk.state.entries.len() as u64,
        p,
        "the batch's first append and nothing after it"
    );
    eprintln!(
        "n1 died in a group commit of {} appends at {p} (answered before: {})",
        1 + rest.len(),
        answered.len()
    );

    // Left down: the controller's lease lapses and n2 and n3 recover the
    // partition without the append only n1 holds.
    c.until("recovered without n1", WAIT_MAX, |c| {
        let r = c.record(P0);
        r.epoch >= Epoch(2) && r.owner.node != NodeId(1) && c.settled(P0)
    });
    let owner = c.record(P0).owner.node.0;
    let tail = c.status(owner, P0).expect("the owner answers").log_len;
    assert!(
        tail < p,
        "the recovered tail {tail} holds n1's lone append {p}"
    );
    publish(&mut c, P0, 2, &mut key, &mut confirmed);

    // n1 again, armed: a follower now, whose entries past the recovered
    // tail are stale. The new owner walks it from position 1; at
    // tail + 1 it truncates and appends in one batch, and dies between.
    c.start(1, Some("persist:1"));
    let log = died(&mut c, 1, "inside a truncate-and-append");
    let d = death("n1", &log);
    let at = tail + 1;
    assert_eq!(
        d,
        Death {
            applied: vec![format!("truncate@{at}")],
            not_applied: vec![format!("append@{at}")],
        }
    );
    let (_, on_disk) = DiskLog::open(p0(&c, 1)).expect("n1's log opens");
    assert_eq!(on_disk.torn_tail, None);
    assert_eq!(
        on_disk.state.entries.len() as u64,
        tail,
        "truncated, not appended"
    );
    assert!(on_disk.state.fence >= Epoch(2), "the new epoch is durable");

    // Unarmed, it comes back on that disk, catches up and is re-admitted.
    c.start(1, None);
    c.until("n1 re-admitted", WAIT_MAX, |c| {
        c.settled(P0)
            && c.status(1, P0)
                .is_some_and(|s| !s.restarting && !s.suspended)
    });
    publish(&mut c, P0, 2, &mut key, &mut confirmed);

    let records = BTreeMap::from([(P0, c.record(P0))]);
    c.stop_all();
    assert_eq!(check::disks(&root, &c.nodes(), &records, &confirmed), 7);
    drop(c);
    let _ = std::fs::remove_dir_all(&root);
}

/// Node `n`'s log of p0.
fn p0(c: &Cluster, n: u8) -> std::path::PathBuf {
    P0.data_dir(&c.data(n))
}

/// What one seed did.
#[derive(Debug, Default)]
struct Report {
    kills: BTreeMap<u8, usize>,
    /// Deaths inside a batch, of nodes started again armed.
    batch_kills: BTreeMap<u8, usize>,
    moves_started: usize,
    handoffs_started: usize,
    tally: load::Tally,
    epochs: Vec<u64>,
    secs: f64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kills: Vec<String> = self
            .kills
            .iter()
            .map(|(n, k)| format!("{} {k}", name(*n)))
            .collect();
        let batch: Vec<String> = self
            .batch_kills
            .iter()
            .map(|(n, k)| format!("{} {k}", name(*n)))
            .collect();
        let t = &self.tally;
        write!(
            f,
            "kills {} ({}), inside a batch {} ({}); move started {}, handoff started {}; publishes sent {}, confirmed {}, failed {}; settles sent {}, confirmed {}, failed {}; final epochs {:?}; lost 0, twice 0; {:.1} s",
            self.kills.values().sum::<usize>(),
            kills.join(", "),
            self.batch_kills.values().sum::<usize>(),
            batch.join(", "),
            self.moves_started,
            self.handoffs_started,
            t.publishes_sent,
            t.publishes_confirmed(),
            t.publishes_failed,
            t.settles_sent,
            t.settles_confirmed(),
            t.settles_failed,
            self.epochs,
            self.secs
        )
    }
}

/// One seed under load: boot, the fault phase with clients running, the
/// healing phase, the check from the disks.
fn under_load(mut c: Cluster, seed: u64) -> Report {
    let started = Instant::now();
    let plan = schedule::plan(seed, KILLS, NODES, PARTITIONS);
    eprintln!(
        "seed {seed}: {}",
        plan.iter()
            .map(Step::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    );
    for n in c.nodes() {
        c.start(n, None);
    }
    c.start(CONTROLLER, None);
    c.until("every partition served", WAIT_MAX, |c| {
        c.partitions.iter().all(|&p| c.settled(p))
    });
    c.restart_crashed = true;
    let mut report = Report::default();
    let clients = load::Load::start(c.addrs(), &c.partitions, PUBLISHERS, 1);
    for step in plan {
        match step {
            Step::Kill {
                who,
                after_ms,
                down_ms,
                arm,
            } => {
                pause(&mut c, after_ms);
                // Not running only if it died at its crash point a moment
                // ago and `alive` has not started it again yet.
                if c.running(who) {
                    c.kill(who);
                }
                pause(&mut c, down_ms);
                if !c.running(who) {
                    let arm = arm.map(|k| format!("persist:{k}"));
                    c.start(who, arm.as_deref());
                }
            }
            Step::Move {
                partition,
                after_ms,
            } => {
                pause(&mut c, after_ms);
                let r = c.record(partition);
                let free = c
                    .nodes()
                    .into_iter()
                    .find(|&n| !r.assigned().iter().any(|s| s.node.0 == n));
                if let Some(n) = free {
                    if matches!(client::join_blocking(c.addr(n), partition, None), Ok(true)) {
                        report.moves_started += 1;
                    }
                }
            }
            Step::HandOff {
                partition,
                after_ms,
            } => {
                pause(&mut c, after_ms);
                let r = c.record(partition);
                let to = r
                    .followers
                    .iter()
                    .filter(|s| !r.suspended.contains(s))
                    .map(|s| s.node)
                    .min();
                if let Some(to) = to {
                    let owner = c.addr(r.owner.node.0);
                    if matches!(client::hand_off_blocking(owner, partition, to), Ok(true)) {
                        report.handoffs_started += 1;
                    }
                }
            }
        }
    }
    report.tally = clients.stop();
    assert!(
        report.tally.publishes_confirmed() > 0,
        "nothing confirmed during the fault phase"
    );

    // Healing: every process up, every partition settled and confirming.
    for n in c.nodes().into_iter().chain([CONTROLLER]) {
        if !c.running(n) {
            c.start(n, None);
        }
    }
    c.until("every partition settled", WAIT_MAX, |c| {
        c.partitions.iter().all(|&p| c.settled(p))
    });
    let mut key = 900_000_000;
    let mut healed = Vec::new();
    for p in c.partitions.clone() {
        publish(&mut c, p, 1, &mut key, &mut healed);
    }
    let mut confirmed = report.tally.confirmed.clone();
    confirmed.extend(healed);
    let records: BTreeMap<Partition, _> = c.partitions.iter().map(|&p| (p, c.record(p))).collect();
    report.epochs = records.values().map(|r| r.epoch.0).collect();
    c.stop_all();
    let checked = check::disks(&c.root, &c.nodes(), &records, &confirmed);
    assert_eq!(checked, confirmed.len());
    report.kills = c.kills.clone();
    report.batch_kills = c.batch_kills.clone();
    report.secs = started.elapsed().as_secs_f64();
    let root = c.root.clone();
    drop(c);
    let _ = std::fs::remove_dir_all(root);
    report
}

/// Sleep `ms`, failing early if a process exits by itself meanwhile.
fn pause(c: &mut Cluster, ms: u64) {
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        c.alive();
        std::thread::sleep(
            Duration::from_millis(10).min(end.saturating_duration_since(Instant::now())),
        );
    }
}

/// The seeds in `var` (`1..20`, `3`, `1,4,9`, `2..=5`), else `pinned`.
fn seeds(var: &str, pinned: &[u64]) -> Vec<u64> {
    let Ok(v) = std::env::var(var) else {
        return pinned.to_vec();
    };
    let num = |s: &str| -> u64 {
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={v}: `{s}` is not a seed"))
    };
    v.split(',')
        .flat_map(|part| match part.split_once("..") {
            Some((a, b)) => num(a)..=num(b.strip_prefix('=').unwrap_or(b)),
            None => num(part)..=num(part),
        })
        .collect()
}

/// Run every seed, each on a fresh cluster from `cluster`; report each,
/// and fail naming every seed that failed and how to run it again.
fn seeded(var: &str, pinned: &[u64], test: &str, cluster: impl Fn(u64) -> Cluster) {
    let mut failed = Vec::new();
    let mut totals = Report::default();
    for seed in seeds(var, pinned) {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            under_load(cluster(seed), seed)
        }));
        match run {
            Ok(r) => {
                eprintln!("seed {seed}: {r}");
                for (n, k) in &r.kills {
                    *totals.kills.entry(*n).or_default() += k;
                }
                for (n, k) in &r.batch_kills {
                    *totals.batch_kills.entry(*n).or_default() += k;
                }
                totals.tally.publishes_sent += r.tally.publishes_sent;
                totals.tally.confirmed.extend(r.tally.confirmed);
                totals.secs += r.secs;
            }
            Err(_) => {
                eprintln!("seed {seed} FAILED: run it again with {var}={seed} cargo test -p livemove --test kill_load {test}");
                failed.push(seed);
            }
        }
    }
    eprintln!(
        "{var}: kills {} ({:?}), inside a batch {} ({:?}), publishes sent {}, confirmed {} (settles {}), {:.1} s",
        totals.kills.values().sum::<usize>(),
        totals.kills,
        totals.batch_kills.values().sum::<usize>(),
        totals.batch_kills,
        totals.tally.publishes_sent,
        totals.tally.publishes_confirmed(),
        totals.tally.settles_confirmed(),
        totals.secs
    );
    assert!(failed.is_empty(), "seeds failed: {failed:?}");
}

#[test]
fn with_the_file_store_seeded_kills_under_load_lose_nothing_confirmed() {
    seeded(
        "LIVEMOVE_KILL_SEEDS",
        &[4, 8],
        "with_the_file_store",
        |seed| file_cluster(&format!("load-{seed}"), NODES, PARTITIONS),
    );
}

#[test]
fn with_etcd_seeded_kills_under_load_lose_nothing_confirmed() {
    let Some(etcd) = etcd::Etcd::start("with_etcd_seeded_kills_under_load") else {
        return;
    };
    seeded("LIVEMOVE_KILL_ETCD_SEEDS", &[9], "with_etcd", |seed| {
        etcd_cluster(&format!("load-etcd-{seed}"), &etcd, NODES, PARTITIONS)
    });
}
