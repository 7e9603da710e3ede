//! Three `livemove node` processes on 127.0.0.1 ports of their own: the
//! owner's publishes are confirmed; a follower killed with SIGKILL and
//! started again on its data directory comes back suspended, catches up,
//! is re-admitted, and then makes W with the owner alone. Once with the
//! record in a file, once in a private etcd. And two partitions with
//! different owners under a `livemove controller` process: the owner of
//! one is killed with SIGKILL and stays down; the controller's lease on it
//! lapses, it opens the recovery, the other nodes recover that partition
//! at epoch 2 while the other partition goes on serving.

mod common;
#[path = "../runtime/tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;
use common::{free_ports, livemove, stderr, stdout};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a condition may take on loopback before the test gives up.
const WAIT_MAX: Duration = Duration::from_secs(30);

/// Node processes, killed when the test ends, passed or not.
struct Nodes {
    root: PathBuf,
    /// `--store DIR` or `--etcd URL`.
    store: Vec<String>,
    addrs: Vec<SocketAddr>,
    children: Vec<Option<Child>>,
}

impl Nodes {
    fn start(&mut self, n: usize) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_livemove"));
        cmd.args(["node", "--id", &n.to_string()])
            .arg("--data")
            .arg(self.root.join(format!("n{n}")))
            .arg("--listen")
            .arg(self.addrs[n - 1].to_string())
            .args(&self.store)
            .arg("--trace")
            .arg(self.root.join("traces"));
        for (i, a) in self.addrs.iter().enumerate() {
            if i + 1 != n {
                cmd.arg("--peer").arg(format!("n{}={a}", i + 1));
            }
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the node starts");
        self.children[n - 1] = Some(child);
    }

    /// SIGKILL: no shutdown code runs in the node.
    fn kill(&mut self, n: usize) {
        let mut c = self.children[n - 1].take().expect("running");
        c.kill().expect("SIGKILL");
        c.wait().expect("reaped");
    }

    fn addr(&self, n: usize) -> String {
        self.addrs[n - 1].to_string()
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for c in self.children.iter_mut().flatten() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn status_of(nodes: &Nodes, n: usize, partition: u32) -> Option<Value> {
    let p = partition.to_string();
    let o = livemove(&[
        "client",
        "status",
        "--node",
        &nodes.addr(n),
        "--partition",
        &p,
    ]);
    o.status
        .success()
        .then(|| serde_json::from_str(stdout(&o).trim()).expect("one JSON object"))
}

fn wait_for(nodes: &Nodes, n: usize, what: &str, ok: impl Fn(&Value) -> bool) {
    wait_for_on(nodes, n, 0, what, ok)
}

fn wait_for_on(nodes: &Nodes, n: usize, partition: u32, what: &str, ok: impl Fn(&Value) -> bool) {
    let start = Instant::now();
    loop {
        let s = status_of(nodes, n, partition);
        if s.as_ref().is_some_and(&ok) {
            return;
        }
        assert!(
            start.elapsed() < WAIT_MAX,
            "waited for {what}; last status {s:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Publish `keys` on n1's p0, key k at position k.
fn publish(nodes: &Nodes, keys: std::ops::RangeInclusive<u64>) {
    let after = keys.start() - 1;
    publish_on(nodes, 1, 0, keys, after);
}

/// Publish `keys` on node `n`'s copy of `partition`; the first lands at
/// position `after + 1`.
fn publish_on(
    nodes: &Nodes,
    n: usize,
    partition: u32,
    keys: std::ops::RangeInclusive<u64>,
    after: u64,
) {
    let p = partition.to_string();
    let first = *keys.start();
    for k in keys {
        let o = livemove(&[
            "client",
            "publish",
            "--node",
            &nodes.addr(n),
            "--partition",
            &p,
            "--key",
            &k.to_string(),
        ]);
        assert!(
            o.status.success(),
            "publish {k} on n{n} {p}: {}",
            stderr(&o)
        );
        assert_eq!(
            stdout(&o).trim(),
            (after + k - first + 1).to_string(),
            "one position per message"
        );
    }
}

fn count(trace: &Path, action: &str) -> usize {
    let needle = format!(r#""action":"{action}""#);
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&needle))
        .count()
}

#[test]
fn with_the_file_store_a_follower_killed_with_sigkill_restarts_on_its_disk_and_counts_again() {
    let root = common::tmp("node", "sigkill-file");
    let store = vec![
        "--store".to_string(),
        root.join("records").display().to_string(),
    ];
    kill_and_restart_a_follower(root, store);
}

#[test]
fn with_etcd_a_follower_killed_with_sigkill_restarts_on_its_disk_and_counts_again() {
    let name = "with_etcd_a_follower_killed_with_sigkill_restarts_on_its_disk_and_counts_again";
    let Some(etcd) = etcd::Etcd::start(name) else {
        return;
    };
    let root = common::tmp("node", "sigkill-etcd");
    let store = vec!["--etcd".to_string(), etcd.endpoint()];
    kill_and_restart_a_follower(root, store);
    drop(etcd);
}

fn kill_and_restart_a_follower(root: PathBuf, store: Vec<String>) {
    let mut init = vec!["client", "init", "--rf", "3"];
    init.extend(store.iter().map(String::as_str));
    let o = livemove(&init);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut nodes = Nodes {
        root: root.clone(),
        store,
        addrs: free_ports(3),
        children: vec![None, None, None],
    };
    for n in 1..=3 {
        nodes.start(n);
    }
    for n in 1..=3 {
        wait_for(&nodes, n, &format!("n{n} up"), |_| true);
    }

    publish(&nodes, 1..=5);
    wait_for(&nodes, 1, "5 confirmed", |s| s["confirmed"] == 5);

    nodes.kill(3);
    publish(&nodes, 6..=10);
    wait_for(&nodes, 1, "10 confirmed on the owner and n2", |s| {
        s["confirmed"] == 10
    });

    nodes.start(3);
    wait_for(
        &nodes,
        3,
        "n3 back as incarnation 1, caught up, re-admitted",
        |s| s["inc"] == 1 && s["log_len"] == 10 && s["suspended"] == false,
    );

    nodes.kill(2);
    publish(&nodes, 11..=15);
    wait_for(&nodes, 1, "15 confirmed on the owner and n3", |s| {
        s["confirmed"] == 15
    });

    let trace = |n: usize| root.join("traces").join(format!("n{n}-p0.ndjson"));
    assert_eq!(count(&trace(1), "Publish"), 15);
    assert_eq!(count(&trace(1), "Rejoin"), 1);
    assert_eq!(count(&trace(3), "Restart"), 1);
    assert!(
        count(&trace(3), "Deliver") >= 15,
        "n3 took at least one append per message"
    );
}

#[test]
fn the_controller_recovers_the_partitions_of_an_owner_killed_with_sigkill() {
    let root = common::tmp("node", "controller");
    let records = root.join("records").display().to_string();
    let store = vec![
        "--store".to_string(),
        records.clone(),
        "--partitions".to_string(),
        "2".to_string(),
    ];
    // p0: n1 owns, n2 and n3 follow; p1: n2 owns, n3 and n1 follow.
    let o = livemove(&[
        "client",
        "init",
        "--rf",
        "3",
        "--nodes",
        "3",
        "--store",
        &records,
        "--partitions",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("p1: record v1 at epoch e1, owner n2"),
        "{}",
        stdout(&o)
    );
    let mut nodes = Nodes {
        root: root.clone(),
        store: store.clone(),
        addrs: free_ports(3),
        children: vec![None, None, None],
    };
    for n in 1..=3 {
        nodes.start(n);
    }
    let mut controller = Command::new(env!("CARGO_BIN_EXE_livemove"));
    controller
        .arg("controller")
        .args(&store)
        .args(["--lease-ms", "300", "--trace"])
        .arg(root.join("traces"));
    for (i, a) in nodes.addrs.iter().enumerate() {
        controller.arg("--peer").arg(format!("n{}={a}", i + 1));
    }
    let controller = Controller(
        controller
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the controller starts"),
    );
    for n in 1..=3 {
        wait_for(&nodes, n, &format!("n{n} up"), |_| true);
    }
    publish_on(&nodes, 1, 0, 1..=5, 0);
    publish_on(&nodes, 2, 1, 101..=105, 0);
    wait_for_on(&nodes, 1, 0, "p0: 5 confirmed", |s| s["confirmed"] == 5);
    wait_for_on(&nodes, 2, 1, "p1: 5 confirmed", |s| s["confirmed"] == 5);

    nodes.kill(1);
    // The lease lapses, the controller opens p0's recovery, n2 and n3 seal
    // and install, one of them serves p0 at epoch 2 with the 5 kept.
    let start = Instant::now();
    let new_owner = loop {
        let serving = (2..=3).find(|&n| {
            status_of(&nodes, n, 0).is_some_and(|s| s["serving"] == 2 && s["confirmed"] == 5)
        });
        if let Some(n) = serving {
            break n;
        }
        assert!(start.elapsed() < WAIT_MAX, "p0 not recovered at epoch 2");
        std::thread::sleep(Duration::from_millis(50));
    };
    publish_on(&nodes, new_owner, 0, 6..=8, 5);
    wait_for_on(&nodes, new_owner, 0, "p0: 8 confirmed at epoch 2", |s| {
        s["confirmed"] == 8
    });
    // p1's owner never stopped: its confirms go on with n1 down.
    publish_on(&nodes, 2, 1, 106..=108, 5);
    wait_for_on(&nodes, 2, 1, "p1: 8 confirmed", |s| s["confirmed"] == 8);
    assert_eq!(
        status_of(&nodes, 2, 1).unwrap()["serving"],
        1,
        "p1 was never recovered"
    );
    let traces = root.join("traces");
    assert_eq!(
        count(&traces.join("controller-p0.ndjson"), "OpenRecovery"),
        1
    );
    assert_eq!(
        count(&traces.join("controller-p1.ndjson"), "OpenRecovery"),
        0
    );
    drop(controller);
}

/// The controller process, killed when the test ends.
struct Controller(Child);

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
