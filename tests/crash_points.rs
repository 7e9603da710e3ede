//! `kill -9` at every guarded-write boundary of real processes.
//!
//! Four `livemove node` processes and a `livemove controller` run one
//! partition (rf 3; n1 owns, n2 and n3 follow, n4 holds nothing) through a
//! scenario that makes every kind of guarded write the runtime's processes
//! make in the course of one: a follower restart (n3 killed and started
//! again: `Suspend`, the owner's `Rejoin`), a planned move onto n4
//! (`AddLearner`, `AdmitLearner`, `Swap`, `OwnerSwitch`, `RemoveLeaving`),
//! a planned handoff from n1 to n2 (`CloseAdmission`,
//! `ReportFinalBoundary`, `CommitHandoff`, `ActivateOwner`), and a
//! recovery of n2, killed and left down until the controller's lease lapses
//! (`OpenRecovery`, `Seal`, `InstallRecovered`, `ActivateRecovery`), then
//! n2 started again (`Suspend`, `Rejoin`).
//!
//! A clean run, every process started with `--crash-at count`, names each
//! process's committed writes; they are pinned (`CLEAN`). Then, for each
//! process and each of its writes, and for `before` and `after`, the
//! scenario runs from scratch with that process started with `--crash-at
//! before:K` or `after:K`: it must die at its K-th write, of the pinned
//! kind; the test starts it again on the same data directory and drives
//! the scenario on to its end, whoever owns the partition by then (a crash
//! may turn a handoff into a recovery, or abort a move that is then asked
//! for again). At the end, read back from the disks: every publish whose
//! confirm the client got is on the final owner and on W counted copies
//! at its position, and no copy holds a message twice.
//!
//! Which of n1 and n4 activates the recovery (and so re-admits n2) is a
//! race between them; those two boundaries are crossed by arming both at
//! the write after their receipts, and whichever makes it dies.
//!
//! The traces are written but not validated: each process writes its own
//! file, and the validator needs one order of every process's steps of a
//! partition (`livemove demo` has it from a step lock shared in one
//! process; runtime/README.md, "Crash points").

mod common;
#[path = "../runtime/tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use livemove_impl::store::Record;
use livemove_impl::{Op, StorageId};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::partition::{Partition, Records};
use livemove_runtime::tcp::client;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const P0: Partition = Partition(0);
/// How long one phase may take before the test gives up.
const WAIT_MAX: Duration = Duration::from_secs(40);
/// The controller's lease.
const LEASE_MS: &str = "1000";
/// The controller, among node numbers.
const CONTROLLER: u8 = 0;

/// A process of the scenario: a node (or the controller, 0) and which of
/// its planned starts (0: the first; crash restarts are not counted).
type Slot = (u8, usize);

/// The writes each planned process of the clean run commits, in order.
/// n1 and n4 each end with `SEALED_TAIL`, and whichever activates the
/// recovery also writes `ACTIVATOR`.
const CLEAN: &[(Slot, &[&str])] = &[
    (
        (1, 0),
        &[
            "Rejoin",
            "AdmitLearner",
            "Swap",
            "OwnerSwitch",
            "RemoveLeaving",
            "CloseAdmission",
            "ReportFinalBoundary",
            "CommitHandoff",
            "Seal",
            "InstallRecovered",
        ],
    ),
    ((2, 0), &["ActivateOwner"]),
    ((2, 1), &["Suspend"]),
    ((3, 0), &[]),
    ((3, 1), &["Suspend"]),
    ((4, 0), &["AddLearner", "Seal", "InstallRecovered"]),
    ((CONTROLLER, 0), &["OpenRecovery"]),
];
/// What the copy that activates the recovery writes after its receipt.
const ACTIVATOR: &[&str] = &["ActivateRecovery", "Rejoin"];

fn name(n: u8) -> String {
    if n == CONTROLLER {
        "controller".into()
    } else {
        format!("n{n}")
    }
}

struct Proc {
    child: Child,
    /// The planned start it is, if it is one.
    slot: Option<usize>,
    /// Its `--crash-at`, if any.
    crash_at: Option<String>,
    log: PathBuf,
}

/// Where a process died.
#[derive(Debug)]
struct Death {
    node: u8,
    slot: usize,
    /// Its stderr line naming the write.
    line: String,
}

/// One run of the scenario.
struct Run {
    root: PathBuf,
    /// `--store DIR` or `--etcd URL`.
    store: Vec<String>,
    records: Records,
    addrs: Vec<SocketAddr>,
    procs: BTreeMap<u8, Proc>,
    planned: BTreeMap<u8, usize>,
    starts: usize,
    /// `--crash-at` of planned processes; `count` for every other planned
    /// one when `count` is set.
    arm: BTreeMap<Slot, String>,
    count: bool,
    deaths: Vec<Death>,
    next_key: u64,
    /// (key, position) of every publish whose confirm came back.
    confirmed: Vec<(u64, u64)>,
    /// The writes of each planned process, read from their logs.
    writes: BTreeMap<Slot, Vec<String>>,
}

impl Run {
    fn new(root: PathBuf, store: Vec<String>, records: Records) -> Run {
        std::fs::create_dir_all(root.join("logs")).unwrap();
        Run {
            root,
            store,
            records,
            addrs: common::free_ports(4),
            procs: BTreeMap::new(),
            planned: BTreeMap::new(),
            starts: 0,
            arm: BTreeMap::new(),
            count: false,
            deaths: Vec::new(),
            next_key: 1,
            confirmed: Vec::new(),
            writes: BTreeMap::new(),
        }
    }

    fn addr(&self, n: u8) -> SocketAddr {
        self.addrs[usize::from(n) - 1]
    }

    /// Start node `n` (or the controller); a planned start may be armed.
    fn start(&mut self, n: u8, planned: bool) {
        let slot = planned.then(|| {
            let s = self.planned.entry(n).or_insert(0);
            *s += 1;
            *s - 1
        });
        let crash_at = slot.and_then(|s| {
            self.arm
                .get(&(n, s))
                .cloned()
                .or_else(|| self.count.then(|| "count".to_string()))
        });
        self.starts += 1;
        let log = self
            .root
            .join("logs")
            .join(format!("{}-{}.log", name(n), self.starts));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_livemove"));
        if n == CONTROLLER {
            cmd.arg("controller")
                .args(&self.store)
                .args(["--lease-ms", LEASE_MS]);
        } else {
            cmd.args(["node", "--id", &n.to_string()])
                .arg("--data")
                .arg(self.root.join(name(n)))
                .arg("--listen")
                .arg(self.addr(n).to_string())
                .args(&self.store);
        }
        cmd.arg("--trace").arg(self.root.join("traces"));
        for (i, a) in self.addrs.iter().enumerate() {
            if i + 1 != usize::from(n) {
                cmd.arg("--peer").arg(format!("n{}={a}", i + 1));
            }
        }
        if let Some(c) = &crash_at {
            cmd.args(["--crash-at", c]);
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the process starts");
        self.procs.insert(
            n,
            Proc {
                child,
                slot,
                crash_at,
                log,
            },
        );
    }

    /// A planned SIGKILL of the scenario (not a crash point).
    fn kill(&mut self, n: u8) {
        let mut p = self.procs.remove(&n).expect("running");
        p.child.kill().expect("SIGKILL");
        p.child.wait().expect("reaped");
        self.note_writes(n, &p);
    }

    fn note_writes(&mut self, n: u8, p: &Proc) {
        if let Some(s) = p.slot {
            let text = std::fs::read_to_string(&p.log).unwrap();
            let ws = text
                .lines()
                .filter_map(|l| l.split_once(" committed: "))
                .map(|(_, w)| w.split(' ').next().unwrap().to_string())
                .collect();
            self.writes.insert((n, s), ws);
        }
    }

    /// A process that died at its crash point is started again on its
    /// data directory (unarmed); any other death fails the test.
    fn reap(&mut self) {
        let dead: Vec<u8> = self
            .procs
            .iter_mut()
            .filter_map(|(n, p)| p.child.try_wait().unwrap().map(|_| *n))
            .collect();
        for n in dead {
            let p = self.procs.remove(&n).unwrap();
            let text = std::fs::read_to_string(&p.log).unwrap();
            let line = text.lines().find(|l| l.contains(" SIGKILL "));
            let (Some(slot), Some(_), Some(line)) = (p.slot, &p.crash_at, line) else {
                panic!("{} exited, not at a crash point:\n{text}", name(n));
            };
            self.note_writes(n, &p);
            self.deaths.push(Death {
                node: n,
                slot,
                line: line.to_string(),
            });
            self.start(n, false);
        }
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

    /// Wait, starting crashed processes again meanwhile, until `done`;
    /// `nudge` runs at each poll (to ask again for what a crash undid).
    fn until(&mut self, what: &str, mut done: impl FnMut(&mut Run) -> bool) {
        self.until_nudging(what, &mut done, |_| {})
    }

    fn until_nudging(
        &mut self,
        what: &str,
        mut done: impl FnMut(&mut Run) -> bool,
        mut nudge: impl FnMut(&mut Run),
    ) {
        let start = Instant::now();
        loop {
            self.reap();
            if done(self) {
                return;
            }
            assert!(
                start.elapsed() < WAIT_MAX,
                "waited for {what}; record {:?}; deaths {:?}",
                self.record(),
                self.deaths
            );
            nudge(self);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the record's owner serves at the record's epoch with
    /// nothing pending.
    fn settled(&self) -> bool {
        let r = self.record();
        r.recovery.is_none()
            && r.handoff.is_none()
            && r.move_task.is_none()
            && self
                .status(r.owner.node.0)
                .is_some_and(|s| s.serving == Some(r.epoch))
    }

    /// Publish `n` messages on whoever owns the partition, each a new key,
    /// and wait for each confirm; a publish or a confirm that fails (the
    /// owner died, admission closed) is given up and a new key tried.
    fn publish(&mut self, n: usize) {
        for _ in 0..n {
            let start = Instant::now();
            loop {
                self.reap();
                assert!(start.elapsed() < WAIT_MAX, "no publish confirmed");
                let owner = self.record().owner.node.0;
                let key = self.next_key;
                self.next_key += 1;
                let addr = self.addr(owner);
                if let Ok(pos) = client::publish_blocking(addr, P0, key) {
                    let wait = Duration::from_secs(5);
                    if client::wait_confirmed_blocking(addr, P0, pos, wait).is_ok() {
                        self.confirmed.push((key, pos));
                        break;
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Node `n` restarted and is a counted copy again (or never was
    /// suspended).
    fn back(&self, n: u8) -> bool {
        let r = self.record();
        r.suspended.is_empty()
            && r.recovery.is_none()
            && self
                .status(n)
                .is_some_and(|s| !s.restarting && !s.suspended)
    }

    fn scenario(&mut self) {
        for n in [1, 2, 3, 4, CONTROLLER] {
            self.start(n, true);
        }
        self.until("every node up", |r| (1..=4).all(|n| r.status(n).is_some()));
        self.until("n1 serves", |r| r.settled());
        self.publish(3);

        // A follower restart: Suspend, Rejoin.
        self.kill(3);
        self.publish(2);
        self.start(3, true);
        self.until("n3 back and re-admitted", |r| r.back(3));
        self.publish(1);

        // A move onto n4, asked for again when a recovery aborted it.
        let n4 = |r: &Record| r.assigned().iter().any(|s| s.node.0 == 4);
        self.until_nudging(
            "n4 moved in",
            |r| n4(&r.record()) && r.settled(),
            |r| {
                let rec = r.record();
                if !n4(&rec) && rec.move_task.is_none() && rec.recovery.is_none() {
                    let _ = client::join_blocking(r.addr(4), P0, None);
                }
            },
        );
        self.publish(1);

        // A handoff to the lowest follower, asked for again while the
        // owner is still the one it was (a recovery may move it instead).
        let from = self.record().owner.node.0;
        self.until_nudging(
            "ownership handed over",
            |r| r.record().owner.node.0 != from && r.settled(),
            |r| {
                let rec = r.record();
                let to = rec.followers.iter().map(|s| s.node).min();
                let open = r
                    .status(from)
                    .is_some_and(|s| s.admitting && s.serving == Some(rec.epoch));
                if let (Some(to), true, true) = (to, rec.owner.node.0 == from, open) {
                    if rec.handoff.is_none() && rec.move_task.is_none() {
                        let _ = client::hand_off_blocking(r.addr(from), P0, to);
                    }
                }
            },
        );
        self.publish(1);

        // A recovery: the owner killed and left down for the controller.
        let rec = self.record();
        let (victim, epoch) = (rec.owner.node.0, rec.epoch);
        self.kill(victim);
        self.until("recovered without the owner", |r| {
            let rec = r.record();
            rec.epoch > epoch && rec.owner.node.0 != victim && r.settled()
        });
        self.publish(1);
        self.start(victim, true);
        self.until("the old owner back and re-admitted", |r| r.back(victim));
        self.publish(2);
    }

    /// Stop every process and check the disks against the confirms.
    fn finish(&mut self) {
        self.reap();
        let nodes: Vec<u8> = self.procs.keys().copied().collect();
        for n in nodes {
            self.kill(n);
        }
        let r = self.record();
        let mut logs = BTreeMap::new();
        for n in 1..=4u8 {
            let (_, recovered) = DiskLog::open(self.root.join(name(n)).join("p0")).unwrap();
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
            logs.insert(n, recovered.state.entries);
        }
        let counted: BTreeSet<StorageId> = r.counted();
        for &(key, pos) in &self.confirmed {
            let at = |n: u8| logs[&n].get(pos as usize - 1).copied();
            let entry = at(r.owner.node.0);
            assert!(
                matches!(entry, Some(e) if matches!(e.op, Op::Put { key: k, .. } if k == key)),
                "confirmed message {key} at {pos} is not on the final owner {}: {entry:?}",
                r.owner
            );
            let holders: Vec<&StorageId> =
                counted.iter().filter(|s| at(s.node.0) == entry).collect();
            assert!(
                holders.len() >= usize::from(r.confirm_w),
                "confirmed message {key} at {pos} is on {holders:?}, fewer than W = {}",
                r.confirm_w
            );
        }
        assert_eq!(self.confirmed.len(), 11, "{:?}", self.confirmed);
    }
}

fn file_run(name: &str) -> Run {
    let root = common::tmp("crash", name);
    let records = root.join("records");
    init(&records.display().to_string(), &["--store"]);
    Run::new(
        root,
        vec!["--store".into(), records.display().to_string()],
        Records::Files { dir: records },
    )
}

fn init(store: &str, flag: &[&str]) {
    let mut args = vec!["client", "init", "--rf", "3", "--nodes", "3"];
    args.extend_from_slice(flag);
    args.push(store);
    let o = common::livemove(&args);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

/// Every boundary of the pinned clean run: (the slots armed, K of each,
/// the kind expected). The activator's boundaries arm n1 and n4 both.
fn boundaries() -> Vec<(Vec<(Slot, usize)>, &'static str)> {
    let mut out = Vec::new();
    for (slot, kinds) in CLEAN {
        for (i, kind) in kinds.iter().enumerate() {
            out.push((vec![(*slot, i + 1)], *kind));
        }
    }
    let prefix = |n: u8| CLEAN.iter().find(|(s, _)| *s == (n, 0)).unwrap().1.len();
    for (j, kind) in ACTIVATOR.iter().enumerate() {
        let armed = vec![((1, 0), prefix(1) + j + 1), ((4, 0), prefix(4) + j + 1)];
        out.push((armed, *kind));
    }
    out
}

/// Run the scenario with `armed` crash points (`when` is `before` or
/// `after`) and check where the processes died.
fn crash_run(mut run: Run, when: &str, armed: &[(Slot, usize)], kind: &str) {
    for (slot, k) in armed {
        run.arm.insert(*slot, format!("{when}:{k}"));
    }
    run.scenario();
    run.finish();
    let what = format!("{when} {kind} at {armed:?}");
    let expected = |d: &Death, kind: &str| {
        let k = armed
            .iter()
            .find(|(s, _)| *s == (d.node, d.slot))
            .map(|(_, k)| *k)
            .expect("only armed processes die");
        format!(
            "crash-point {}: SIGKILL {when} write {k}: {kind} p0",
            name(d.node)
        )
    };
    if let [_] = armed {
        assert_eq!(run.deaths.len(), 1, "{what}: {:?}", run.deaths);
        assert_eq!(run.deaths[0].line, expected(&run.deaths[0], kind), "{what}");
    } else {
        // The activator died at its write; the other copy, armed at the
        // same boundary of its own count, may die later at its K-th write
        // of whatever the scenario became (a second recovery after the
        // activator's restart).
        assert!(
            run.deaths.iter().any(|d| d.line == expected(d, kind)),
            "{what}: {:?}",
            run.deaths
        );
        for d in &run.deaths {
            let at = expected(d, "");
            assert!(
                d.line.starts_with(at.trim_end_matches(" p0")),
                "{what}: {d:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&run.root);
}

fn matrix(when: &str) {
    let started = Instant::now();
    let all = boundaries();
    assert_eq!(all.len(), 19, "the boundaries of the scenario");
    for (i, (armed, kind)) in all.iter().enumerate() {
        let run = file_run(&format!("{when}-{i}"));
        crash_run(run, when, armed, kind);
        eprintln!(
            "{when} {kind} at {armed:?}: ok ({:.1} s in all)",
            started.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn a_clean_run_commits_the_pinned_guarded_writes() {
    let mut run = file_run("clean");
    run.count = true;
    run.scenario();
    run.finish();
    assert!(run.deaths.is_empty(), "{:?}", run.deaths);
    let mut tails = Vec::new();
    for (slot, kinds) in CLEAN {
        let got = run.writes.get(slot).cloned().unwrap_or_default();
        let (head, tail) = got.split_at(kinds.len().min(got.len()));
        assert_eq!(head, *kinds, "{slot:?}: {got:?}");
        if !tail.is_empty() {
            tails.push((*slot, tail.to_vec()));
        }
    }
    // Exactly one of n1 and n4 activated the recovery and re-admitted n2.
    assert_eq!(tails.len(), 1, "{tails:?}");
    assert!([(1, 0), (4, 0)].contains(&tails[0].0), "{tails:?}");
    assert_eq!(tails[0].1, ACTIVATOR, "{tails:?}");
    let total: usize = run.writes.values().map(Vec::len).sum();
    assert_eq!(total, 19, "guarded writes of the clean run");
    let _ = std::fs::remove_dir_all(&run.root);
}

#[test]
fn a_process_killed_right_before_each_guarded_write_restarts_and_the_scenario_ends() {
    matrix("before");
}

#[test]
fn a_process_killed_right_after_each_guarded_write_restarts_and_the_scenario_ends() {
    matrix("after");
}

#[test]
fn with_etcd_processes_killed_at_a_handoff_commit_and_at_the_recovery_opening() {
    let name = "with_etcd_processes_killed_at_a_handoff_commit_and_at_the_recovery_opening";
    let Some(etcd) = etcd::Etcd::start(name) else {
        return;
    };
    for (i, (when, armed, kind)) in [
        ("before", (1u8, 0usize), 8usize, "CommitHandoff"),
        ("after", (CONTROLLER, 0), 1, "OpenRecovery"),
    ]
    .into_iter()
    .map(|(w, s, k, kind)| (w, (s, k), kind))
    .enumerate()
    {
        let root = common::tmp("crash", &format!("etcd-{i}"));
        let prefix = format!("crash{i}");
        let endpoint = etcd.endpoint();
        let o = common::livemove(&[
            "client",
            "init",
            "--rf",
            "3",
            "--nodes",
            "3",
            "--etcd",
            &endpoint,
            "--etcd-prefix",
            &prefix,
        ]);
        assert!(o.status.success(), "{}", common::stderr(&o));
        let run = Run::new(
            root,
            vec![
                "--etcd".into(),
                endpoint.clone(),
                "--etcd-prefix".into(),
                prefix.clone(),
            ],
            Records::Etcd { endpoint, prefix },
        );
        crash_run(run, when, &[armed], kind);
    }
    drop(etcd);
}
