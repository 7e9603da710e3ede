//! Disk loss, and a move whose target dies, between real processes: four
//! `livemove node` processes (rf 3: n1 owns, n2 and n3 follow, n4 holds
//! nothing) and a `livemove controller`, with nothing asked of the nodes
//! but publishes once they run.
//!
//! - A follower's disk lost: n3 is killed with SIGKILL and started again
//!   on an empty data directory. It registers as the next disk (n3/d1)
//!   and marks its old instance lost; the controller, reading the loss in
//!   the record with nothing pending, asks n3 to join replacing n3/d0 (the
//!   lowest follower lost or down, by its own node's new instance:
//!   `controller::decide::replacement`), and the owner runs the move to
//!   its end. The partition ends with rf counted copies on current
//!   instances of live nodes, and the record names no lost instance.
//! - A move onto n4 whose target is killed after the swap and left down:
//!   the controller's lease on n4 lapses, a lease later it asks the owner's
//!   node to swap the leaving copy back (`Node::swap_back`), and the owner
//!   removes n4's copy. For the kill to land between the swap and the
//!   removal, the owner's resend timer ticks once a second (its move
//!   steps run on its tick, one per tick), and a publish confirmed right
//!   after the kill holds the removal back (the target must cover the
//!   owner's confirmed tail).
//!
//! At the end, read back from the disks: every publish whose confirm the
//! client got is on the final owner and on W counted copies at its
//! position, and no copy holds a message twice. Each case runs with the
//! record in files and in a private etcd.

mod common;
#[path = "../runtime/tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use livemove_impl::store::{MovePhase, Record};
use livemove_impl::{NodeId, Op, StorageId};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::partition::{Partition, Records};
use livemove_runtime::tcp::client;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const P0: Partition = Partition(0);
/// How long one phase may take on loopback before the test gives up.
const WAIT_MAX: Duration = Duration::from_secs(40);
/// The controller's lease on a node.
const LEASE_MS: &str = "1000";
/// The owner's resend timer in the swap back case: its move steps run one
/// per tick, so the swap and the removal are two ticks apart: the test has
/// about 4 s to kill the target and confirm a publish, on a machine as busy
/// as CI.
const SLOW_TICK_MS: &str = "2000";

fn s(node: u8, disk: u32) -> StorageId {
    StorageId {
        node: NodeId(node),
        disk,
    }
}

/// The processes of one run, killed when it ends, passed or not.
struct Cluster {
    root: PathBuf,
    /// `--store DIR` or `--etcd URL --etcd-prefix P`.
    store: Vec<String>,
    records: Records,
    addrs: Vec<SocketAddr>,
    nodes: BTreeMap<u8, Child>,
    controller: Option<Child>,
    next_key: u64,
    /// (key, position) of every publish whose confirm came back.
    confirmed: Vec<(u64, u64)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in self.nodes.values_mut().chain(self.controller.as_mut()) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Cluster {
    /// The epoch-1 record (n1 owns, n2 and n3 follow) and nothing running.
    fn new(root: PathBuf, store: Vec<String>, records: Records) -> Cluster {
        let mut init = vec!["client", "init", "--rf", "3", "--nodes", "3"];
        init.extend(store.iter().map(String::as_str));
        let o = common::livemove(&init);
        assert!(o.status.success(), "{}", common::stderr(&o));
        Cluster {
            root,
            store,
            records,
            addrs: common::free_ports(4),
            nodes: BTreeMap::new(),
            controller: None,
            next_key: 1,
            confirmed: Vec::new(),
        }
    }

    fn addr(&self, n: u8) -> SocketAddr {
        self.addrs[usize::from(n) - 1]
    }

    fn data(&self, n: u8) -> PathBuf {
        self.root.join(format!("n{n}"))
    }

    fn peers(&self, cmd: &mut Command, except: u8) {
        for (i, a) in self.addrs.iter().enumerate() {
            if i + 1 != usize::from(except) {
                cmd.arg("--peer").arg(format!("n{}={a}", i + 1));
            }
        }
    }

    /// Start node `n` on its data directory, with `extra` flags.
    fn start(&mut self, n: u8, extra: &[&str]) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_livemove"));
        cmd.args(["node", "--id", &n.to_string()])
            .arg("--data")
            .arg(self.data(n))
            .arg("--listen")
            .arg(self.addr(n).to_string())
            .args(&self.store)
            .args(extra)
            .arg("--trace")
            .arg(self.root.join("traces"));
        self.peers(&mut cmd, n);
        let log = std::fs::File::create(self.root.join(format!("n{n}.log"))).unwrap();
        let child = cmd
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the node starts");
        assert!(self.nodes.insert(n, child).is_none(), "n{n} was running");
    }

    fn start_controller(&mut self) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_livemove"));
        cmd.arg("controller")
            .args(&self.store)
            .args(["--lease-ms", LEASE_MS, "--trace"])
            .arg(self.root.join("traces"));
        self.peers(&mut cmd, 0);
        let log = std::fs::File::create(self.root.join("controller.log")).unwrap();
        let child = cmd
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the controller starts");
        self.controller = Some(child);
    }

    /// SIGKILL: no shutdown code runs in the node.
    fn kill(&mut self, n: u8) {
        let mut c = self.nodes.remove(&n).expect("running");
        c.kill().expect("SIGKILL");
        c.wait().expect("reaped");
    }

    fn record(&self) -> Record {
        self.records
            .open(P0)
            .and_then(|mut c| c.read())
            .expect("the record reads")
    }

    fn status(&self, n: u8) -> Option<livemove_runtime::tcp::Status> {
        client::status_blocking(self.addr(n), P0).ok()
    }

    /// Fail if a process of the run exited: none is meant to.
    fn alive(&mut self) {
        for (n, c) in self.nodes.iter_mut() {
            if let Some(st) = c.try_wait().unwrap() {
                let log = std::fs::read_to_string(self.root.join(format!("n{n}.log")));
                panic!("n{n} exited ({st}): {log:?}");
            }
        }
        if let Some(c) = self.controller.as_mut() {
            if let Some(st) = c.try_wait().unwrap() {
                let log = std::fs::read_to_string(self.root.join("controller.log"));
                panic!("the controller exited ({st}): {log:?}");
            }
        }
    }

    fn until(&mut self, what: &str, done: impl Fn(&Cluster) -> bool) {
        let start = Instant::now();
        loop {
            self.alive();
            if done(self) {
                return;
            }
            assert!(
                start.elapsed() < WAIT_MAX,
                "waited for {what}; record {:?}",
                self.record()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// n1..n4 and the controller up, n1 serving at epoch 1.
    fn boot(&mut self, owner_flags: &[&str]) {
        self.start(1, owner_flags);
        for n in 2..=4 {
            self.start(n, &[]);
        }
        self.start_controller();
        self.until("every node up and n1 serving", |c| {
            (1..=4).all(|n| c.status(n).is_some())
                && c.status(1).is_some_and(|s| s.serving.is_some())
        });
    }

    /// Publish `n` messages on n1, the owner throughout, each confirmed.
    fn publish(&mut self, n: usize) {
        let addr = self.addr(1);
        for _ in 0..n {
            let key = self.next_key;
            self.next_key += 1;
            let pos = client::publish_blocking(addr, P0, key)
                .unwrap_or_else(|e| panic!("publish {key} on n1: {e}"));
            client::wait_confirmed_blocking(addr, P0, pos, WAIT_MAX)
                .unwrap_or_else(|e| panic!("confirm of {key} at {pos}: {e}"));
            self.confirmed.push((key, pos));
        }
    }

    /// The storage instance node `n`'s data directory holds now.
    fn current(&self, n: u8) -> StorageId {
        let file = self.data(n).join("p0").join("disk");
        let disk =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        s(n, disk.trim().parse().expect("a disk number"))
    }

    /// The count of `action` events in node `n`'s trace (every start of it
    /// appends to one file).
    fn traced(&self, n: u8, action: &str) -> usize {
        let path = self.root.join("traces").join(format!("n{n}-p0.ndjson"));
        let needle = format!(r#""action":"{action}""#);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .filter(|l| l.contains(&needle))
            .count()
    }

    /// Stop every process, then check the record and the disks: the
    /// partition settled with rf counted copies on current instances of
    /// live nodes, no lost instance named, every confirmed publish on the
    /// final owner and on W counted copies at its position, no message
    /// twice on any copy. Returns the final record.
    fn finish(&mut self) -> Record {
        self.alive();
        let r = self.record();
        let live: BTreeSet<u8> = self
            .nodes
            .keys()
            .copied()
            .filter(|&n| self.status(n).is_some())
            .collect();
        if let Some(mut c) = self.controller.take() {
            c.kill().expect("SIGKILL");
            c.wait().expect("reaped");
        }
        let running: Vec<u8> = self.nodes.keys().copied().collect();
        for n in running {
            self.kill(n);
        }
        assert!(
            r.move_task.is_none() && r.handoff.is_none() && r.recovery.is_none(),
            "settled: {r:?}"
        );
        let counted = r.counted();
        assert_eq!(counted.len(), usize::from(r.rf), "rf counted copies: {r:?}");
        for c in &counted {
            assert_eq!(*c, self.current(c.node.0), "{c} is not its node's disk");
            assert!(live.contains(&c.node.0), "{c}'s node is not up");
        }
        let mut named = r.assigned();
        named.extend(r.eligible.iter().copied());
        named.extend(r.suspended.iter().copied());
        assert!(
            named.is_disjoint(&r.lost),
            "the record names a lost instance: {r:?}"
        );
        let mut logs = BTreeMap::new();
        for n in 1..=4u8 {
            let (_, recovered) = DiskLog::open(self.data(n).join("p0")).unwrap();
            let keys: Vec<u64> = recovered
                .state
                .entries
                .iter()
                .filter_map(|e| match e.op {
                    Op::Put { key, .. } => Some(key),
                    _ => None,
                })
                .collect();
            let distinct: BTreeSet<u64> = keys.iter().copied().collect();
            assert_eq!(
                distinct.len(),
                keys.len(),
                "n{n} holds a message twice: {keys:?}"
            );
            logs.insert(self.current(n), recovered.state.entries);
        }
        for &(key, pos) in &self.confirmed {
            let at = |s: &StorageId| logs.get(s).and_then(|l| l.get(pos as usize - 1)).copied();
            let entry = at(&r.owner);
            assert!(
                matches!(entry, Some(e) if matches!(e.op, Op::Put { key: k, .. } if k == key)),
                "confirmed message {key} at {pos} is not on the final owner {}: {entry:?}",
                r.owner
            );
            let holders: Vec<&StorageId> = counted.iter().filter(|s| at(s) == entry).collect();
            assert!(
                holders.len() >= usize::from(r.confirm_w),
                "confirmed message {key} at {pos} is on {holders:?}, fewer than W = {}",
                r.confirm_w
            );
        }
        r
    }
}

/// n3's disk lost: the controller has its new instance replace its old.
fn a_lost_follower_is_replaced(mut c: Cluster) {
    c.boot(&[]);
    c.publish(5);

    c.kill(3);
    c.publish(3);
    let dir = c.data(3);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    c.start(3, &[]);
    // Confirmed by n1 and n2 while n3's new instance catches up.
    c.publish(3);
    c.until("n3/d0 replaced by n3/d1", |c| {
        let r = c.record();
        r.move_task.is_none()
            && r.followers == BTreeSet::from([s(2, 0), s(3, 1)])
            && r.eligible.is_disjoint(&r.lost)
    });
    c.publish(2);

    let r = c.finish();
    assert_eq!(r.lost, BTreeSet::from([s(3, 0)]), "{r:?}");
    assert_eq!(r.epoch.0, 1, "no recovery: {r:?}");
    assert_eq!(r.owner, s(1, 0));
    assert_eq!(c.confirmed.len(), 13);
    // n3 came back once, on an empty disk, and joined once, as the
    // replacement's learner; nobody but the controller asked it to. The
    // owner ran the move: the swap took n3's old instance out.
    assert_eq!(c.traced(3, "Restart"), 1);
    assert_eq!(c.traced(3, "AddLearner"), 1);
    for step in ["AdmitLearner", "Swap", "OwnerSwitch", "RemoveLeaving"] {
        assert_eq!(c.traced(1, step), 1, "{step}");
    }
    assert_eq!(c.traced(1, "SwapBack"), 0);
    let restart = std::fs::read_to_string(c.root.join("traces/n3-p0.ndjson")).unwrap();
    assert!(restart.contains(r#""fresh_disk":true"#), "{restart}");
    let swap = std::fs::read_to_string(c.root.join("traces/n1-p0.ndjson")).unwrap();
    assert!(
        swap.lines()
            .any(|l| l.contains(r#""action":"Swap""#) && l.contains(r#""leaving":"n3""#)),
        "the swap took n3's copy out"
    );
}

/// A move onto n4 whose target dies after the swap: swapped back.
fn a_gone_target_is_swapped_back(mut c: Cluster) {
    c.boot(&["--tick-ms", SLOW_TICK_MS]);
    c.publish(5);

    let o = common::livemove(&[
        "client",
        "join",
        "--node",
        &c.addr(4).to_string(),
        "--partition",
        "0",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(common::stdout(&o).trim(), "started", "the join committed");
    c.until("n4 swapped in", |c| {
        c.record().move_task.is_some_and(|m| {
            m.target == s(4, 0) && m.phase != MovePhase::Learner && m.phase != MovePhase::Admitted
        })
    });
    c.kill(4);
    // Confirmed by n1 and n2 (n4 is down): n4 cannot cover the owner's
    // confirmed tail any more, so the owner cannot remove n3's copy.
    c.publish(1);
    let r = c.record();
    assert!(
        r.move_task.as_ref().is_some_and(|m| m.target == s(4, 0)),
        "the move onto n4 ended before n4 was killed and a publish confirmed; \
         the owner's {SLOW_TICK_MS} ms tick was too short on this machine: {r:?}"
    );
    c.publish(2);
    c.until("n3 swapped back, n4 removed", |c| {
        let r = c.record();
        r.move_task.is_none() && !r.assigned().iter().any(|x| x.node == NodeId(4))
    });
    c.publish(2);
    // An operator's swap back with no move pending changes nothing.
    let o = common::livemove(&[
        "client",
        "swap-back",
        "--node",
        &c.addr(1).to_string(),
        "--partition",
        "0",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(common::stdout(&o).trim(), "refused");

    let r = c.finish();
    assert_eq!(r.followers, BTreeSet::from([s(2, 0), s(3, 0)]), "{r:?}");
    assert!(!r.eligible.contains(&s(4, 0)), "{r:?}");
    assert!(r.lost.is_empty(), "{r:?}");
    assert_eq!(r.epoch.0, 1, "no recovery: {r:?}");
    assert_eq!(c.confirmed.len(), 10);
    // One swap onto n4, one swap back of n3 at the controller's request,
    // and one removal, n4's: the planned move's (n3's) was never made.
    assert_eq!(c.traced(4, "AddLearner"), 1);
    for (step, times) in [
        ("AdmitLearner", 1),
        ("Swap", 1),
        ("SwapBack", 1),
        ("RemoveLeaving", 1),
    ] {
        assert_eq!(c.traced(1, step), times, "{step}");
    }
}

fn file_cluster(name: &str) -> Cluster {
    let root = common::tmp("lost", name);
    let records = root.join("records");
    Cluster::new(
        root,
        vec!["--store".into(), records.display().to_string()],
        Records::Files { dir: records },
    )
}

fn etcd_cluster(name: &str, etcd: &etcd::Etcd) -> Cluster {
    let root = common::tmp("lost", name);
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
    )
}

fn cleanup(root: &Path) {
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn with_the_file_store_the_controller_replaces_a_follower_whose_disk_was_lost() {
    let c = file_cluster("replace");
    let root = c.root.clone();
    a_lost_follower_is_replaced(c);
    cleanup(&root);
}

#[test]
fn with_etcd_the_controller_replaces_a_follower_whose_disk_was_lost() {
    let Some(etcd) = etcd::Etcd::start("with_etcd_the_controller_replaces_a_follower") else {
        return;
    };
    let c = etcd_cluster("replace-etcd", &etcd);
    let root = c.root.clone();
    a_lost_follower_is_replaced(c);
    cleanup(&root);
}

#[test]
fn with_the_file_store_the_controller_swaps_back_a_move_whose_target_died() {
    let c = file_cluster("swap-back");
    let root = c.root.clone();
    a_gone_target_is_swapped_back(c);
    cleanup(&root);
}

#[test]
fn with_etcd_the_controller_swaps_back_a_move_whose_target_died() {
    let Some(etcd) = etcd::Etcd::start("with_etcd_the_controller_swaps_back") else {
        return;
    };
    let c = etcd_cluster("swap-back-etcd", &etcd);
    let root = c.root.clone();
    a_gone_target_is_swapped_back(c);
    cleanup(&root);
}
