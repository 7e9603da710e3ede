//! Three nodes over TCP on 127.0.0.1, each on a port of its own: publishes
//! are confirmed, a follower is killed and restarted on its data directory,
//! comes back suspended, catches up, is re-admitted, and then counts; the
//! owner is killed and the nodes recover the partition at the next epoch.
//! Each once with the record in the file control plane, once in a private
//! etcd.

mod support;

use livemove_impl::store::Record;
use livemove_impl::{Mutants, NodeId, StorageId};
use livemove_runtime::control::{ControlPlane, EtcdConfig, EtcdControlPlane, FileControlPlane};
use livemove_runtime::partition::Partition;
use livemove_runtime::tcp::{PartitionConfig, Status, TcpError, TcpNode, TcpNodeConfig};
use livemove_runtime::trace::Tracer;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The one partition these nodes host.
const P: Partition = Partition(0);

/// How long a condition may take on loopback before the test gives up.
const WAIT_MAX: Duration = Duration::from_secs(20);

/// Where the record lives.
enum Store {
    File(PathBuf),
    Etcd(String),
}

struct Cluster {
    root: PathBuf,
    addrs: BTreeMap<NodeId, SocketAddr>,
    store: Store,
}

impl Cluster {
    fn control(&self) -> Box<dyn ControlPlane> {
        match &self.store {
            Store::File(path) => Box::new(FileControlPlane::open(path).unwrap()),
            Store::Etcd(endpoint) => Box::new(EtcdControlPlane::new(EtcdConfig {
                endpoint: endpoint.clone(),
                key: "livemove/tcp-test".into(),
            })),
        }
    }

    fn trace(&self, n: u8) -> PathBuf {
        self.root.join(format!("n{n}.ndjson"))
    }

    async fn start(&self, n: u8) -> TcpNode {
        // A port a killed process listened on may take a moment to be
        // free again; nothing else is retried.
        for _ in 0..20 {
            match self.try_start(n).await {
                Err(TcpError::Listen { source, .. })
                    if source.kind() == std::io::ErrorKind::AddrInUse =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                r => return r.unwrap_or_else(|e| panic!("n{n} did not start: {e}")),
            }
        }
        panic!("n{n} did not start: its port stayed in use for 2 s");
    }

    async fn try_start(&self, n: u8) -> Result<TcpNode, TcpError> {
        let id = NodeId(n);
        TcpNode::start(TcpNodeConfig {
            id,
            data: self.root.join(format!("n{n}")),
            mutants: Mutants::NONE,
            listen: self.addrs[&id],
            peers: self.addrs.clone(),
            partitions: vec![PartitionConfig {
                partition: P,
                control: self.control(),
                trace: Some(Tracer::append_to(&self.trace(n)).unwrap().shared()),
                step: None,
            }],
            tick: Duration::from_millis(20),
            clock: std::time::Instant::now(),
            fault_requests: false,
            crash: None,
        })
        .await
    }

    fn record(&self) -> Record {
        self.control().read().unwrap()
    }
}

fn free_ports(n: u8) -> BTreeMap<NodeId, SocketAddr> {
    // Bound and released at once: the nodes bind them again right after.
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    listeners
        .iter()
        .enumerate()
        .map(|(i, l)| (NodeId(i as u8 + 1), l.local_addr().unwrap()))
        .collect()
}

async fn wait_for(node: &TcpNode, what: &str, ok: impl Fn(&Status) -> bool) -> Status {
    let deadline = tokio::time::Instant::now() + WAIT_MAX;
    loop {
        let s = node.status(P).await.unwrap();
        if ok(&s) {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {WAIT_MAX:?} for {what}; last status {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn publish(owner: &TcpNode, keys: std::ops::RangeInclusive<u64>) {
    for k in keys {
        let pos = owner.publish(P, k).await.unwrap();
        assert_eq!(pos, k, "one position per message, in order");
    }
}

fn actions(path: &Path) -> BTreeMap<String, usize> {
    let mut count = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *count
            .entry(v["action"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    count
}

#[tokio::test]
async fn with_the_file_store_a_restarted_follower_is_suspended_catches_up_and_counts_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::File(dir.path().join("record.json"));
    kill_and_restart_a_follower(dir.path(), store).await;
}

#[tokio::test]
async fn with_etcd_a_restarted_follower_is_suspended_catches_up_and_counts_again() {
    let name = "with_etcd_a_restarted_follower_is_suspended_catches_up_and_counts_again";
    let Some(etcd) = support::etcd::Etcd::start(name) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    kill_and_restart_a_follower(dir.path(), Store::Etcd(etcd.endpoint())).await;
    drop(etcd);
}

/// Three nodes on the record's first epoch (n1 owns, rf 3), and 5
/// messages published on n1 and confirmed.
async fn three_nodes_with_five_confirmed(
    root: &Path,
    store: Store,
) -> (Cluster, TcpNode, TcpNode, TcpNode) {
    let c = Cluster {
        root: root.to_path_buf(),
        addrs: free_ports(3),
        store,
    };
    let s = |n| StorageId::first(NodeId(n));
    c.control()
        .create(&Record::initial(s(1), [s(2), s(3)], 3))
        .unwrap();
    let n1 = c.start(1).await;
    let n2 = c.start(2).await;
    let n3 = c.start(3).await;
    publish(&n1, 1..=5).await;
    wait_for(&n1, "5 confirmed", |s| s.confirmed == Some(5)).await;
    (c, n1, n2, n3)
}

async fn kill_and_restart_a_follower(root: &Path, store: Store) {
    let (c, n1, n2, n3) = three_nodes_with_five_confirmed(root, store).await;
    let s = |n| StorageId::first(NodeId(n));

    // kill -9 of n3's process: W = 2 is the owner and n2.
    n3.kill().await;
    publish(&n1, 6..=10).await;
    wait_for(&n1, "10 confirmed without n3", |s| s.confirmed == Some(10)).await;

    // Back on the same data directory: a new incarnation, suspended.
    let n3 = c.start(3).await;
    let st = n3.status(P).await.unwrap();
    assert_eq!((st.inc, st.suspended), (1, true), "{st:?}");
    assert!(c.record().suspended.contains(&s(3)));
    wait_for(&n3, "n3 caught up and re-admitted", |s| {
        s.log_len == 10 && !s.suspended
    })
    .await;
    assert!(c.record().suspended.is_empty());

    // With n2 gone, only the re-admitted n3 can make W.
    n2.kill().await;
    publish(&n1, 11..=15).await;
    tokio::time::timeout(WAIT_MAX, n1.wait_confirmed(P, 15))
        .await
        .expect("15 confirmed on the owner and n3 in time")
        .unwrap();
    assert_eq!(n1.status(P).await.unwrap().confirmed, Some(15));
    let e = n3.wait_confirmed(P, 1).await.unwrap_err().to_string();
    assert!(e.contains("not serving"), "{e}");
    assert_eq!(n3.status(P).await.unwrap().log_len, 15);

    n1.kill().await;
    n3.kill().await;
    assert_eq!(c.record().version.0, 3, "one suspension, one re-admission");
    let owner = actions(&c.trace(1));
    assert_eq!(owner.get("Publish"), Some(&15));
    assert!(owner.get("Confirm").is_some_and(|&n| n >= 1), "{owner:?}");
    assert_eq!(owner.get("Rejoin"), Some(&1), "{owner:?}");
    let n3 = actions(&c.trace(3));
    assert_eq!(n3.get("Restart"), Some(&1), "{n3:?}");
    // n3 read its re-admission from the record once: its flag flipped once.
    assert_eq!(n3.get("NoticeRejoin"), Some(&1), "{n3:?}");
    assert!(n3.get("Deliver").is_some_and(|&n| n >= 15), "{n3:?}");
}

#[tokio::test]
async fn with_the_file_store_a_follower_back_on_an_empty_disk_replaces_its_lost_copy() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::File(dir.path().join("record.json"));
    lose_a_followers_disk(dir.path(), store).await;
}

#[tokio::test]
async fn with_etcd_a_follower_back_on_an_empty_disk_replaces_its_lost_copy() {
    let name = "with_etcd_a_follower_back_on_an_empty_disk_replaces_its_lost_copy";
    let Some(etcd) = support::etcd::Etcd::start(name) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    lose_a_followers_disk(dir.path(), Store::Etcd(etcd.endpoint())).await;
    drop(etcd);
}

/// kill -9 of a follower, and its data directory gone: the process comes
/// back on an empty one as the next disk (registered with the control
/// plane), with the next incarnation, and the record marks its old copy
/// lost. Asked to join replacing the copy on its own node, its new
/// instance catches up as a learner and is swapped in; the lost copy
/// leaves, and the new one then makes W with the owner alone.
async fn lose_a_followers_disk(root: &Path, store: Store) {
    let (c, n1, n2, n3) = three_nodes_with_five_confirmed(root, store).await;
    let old = StorageId::first(NodeId(3));
    let fresh = StorageId {
        node: NodeId(3),
        disk: 1,
    };
    n3.kill().await;
    std::fs::remove_dir_all(root.join("n3")).unwrap();
    let n3 = c.start(3).await;
    let st = n3.status(P).await.unwrap();
    assert_eq!((st.inc, st.log_len, st.suspended), (1, 0, false), "{st:?}");
    let r = c.record();
    assert!(r.lost.contains(&old) && r.followers.contains(&old), "{r:?}");
    assert!(!r.is_assigned(fresh), "{r:?}");
    publish(&n1, 6..=8).await;
    wait_for(&n1, "8 confirmed on the owner and n2", |s| {
        s.confirmed == Some(8)
    })
    .await;

    assert!(n3.join(P, Some(NodeId(3))).await.unwrap(), "step 0 written");
    let deadline = tokio::time::Instant::now() + WAIT_MAX;
    loop {
        let r = c.record();
        if r.move_task.is_none() && r.followers.contains(&fresh) {
            assert!(!r.followers.contains(&old) && r.leaving.is_none(), "{r:?}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {WAIT_MAX:?} for the replacement; record {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    wait_for(&n3, "the new copy holds the 8 entries", |s| s.log_len == 8).await;

    // With n2 gone, only the new copy can make W.
    n2.kill().await;
    publish(&n1, 9..=10).await;
    tokio::time::timeout(WAIT_MAX, n1.wait_confirmed(P, 10))
        .await
        .expect("10 confirmed on the owner and the new copy in time")
        .unwrap();
    n1.kill().await;
    n3.kill().await;
    let n3 = actions(&c.trace(3));
    assert_eq!(n3.get("Restart"), Some(&1), "{n3:?}");
    assert_eq!(n3.get("AddLearner"), Some(&1), "{n3:?}");
    let owner = actions(&c.trace(1));
    for step in ["AdmitLearner", "Swap", "OwnerSwitch", "RemoveLeaving"] {
        assert_eq!(owner.get(step), Some(&1), "{step}: {owner:?}");
    }
    let restart = std::fs::read_to_string(c.trace(3)).unwrap();
    assert!(
        restart.contains(
            r#""action":"Restart","node":"n3","inc":1,"suspended":false,"fresh_disk":true"#
        ),
        "{restart}"
    );
}

#[tokio::test]
async fn with_the_file_store_a_killed_owner_is_replaced_by_a_recovery_the_nodes_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::File(dir.path().join("record.json"));
    kill_the_owner_and_recover(dir.path(), store).await;
}

#[tokio::test]
async fn with_etcd_a_killed_owner_is_replaced_by_a_recovery_the_nodes_run() {
    let name = "with_etcd_a_killed_owner_is_replaced_by_a_recovery_the_nodes_run";
    let Some(etcd) = support::etcd::Etcd::start(name) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    kill_the_owner_and_recover(dir.path(), Store::Etcd(etcd.endpoint())).await;
    drop(etcd);
}

/// kill -9 of the owner's process after 5 confirmed publishes; its process
/// comes back on the same data directory, finds it no longer serves and
/// opens a recovery; every node seals, the sealed copies install the
/// recovered tail, one of them activates at epoch 2; the 5 confirmed
/// entries are kept and the new owner confirms 5 more.
async fn kill_the_owner_and_recover(root: &Path, store: Store) {
    let (c, n1, n2, n3) = three_nodes_with_five_confirmed(root, store).await;

    n1.kill().await;
    let n1 = c.start(1).await;
    let nodes = [&n1, &n2, &n3];
    let deadline = tokio::time::Instant::now() + WAIT_MAX;
    let owner = loop {
        let r = c.record();
        if r.epoch.0 == 2 && r.recovery.is_none() {
            break r.owner.node;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {WAIT_MAX:?} for the recovery; record {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let new = nodes[owner.index()];
    wait_for(new, "the new owner serves from the recovered tail", |s| {
        s.confirmed == Some(5)
    })
    .await;
    for k in 6..=10 {
        assert_eq!(
            new.publish(P, k).await.unwrap(),
            k,
            "one position per message"
        );
    }
    tokio::time::timeout(WAIT_MAX, new.wait_confirmed(P, 10))
        .await
        .expect("10 confirmed by the new owner in time")
        .unwrap();
    for n in nodes {
        wait_for(n, "every copy holds the 10 entries", |s| s.log_len == 10).await;
    }
    n1.kill().await;
    n2.kill().await;
    n3.kill().await;
    let mut seen = BTreeMap::new();
    for n in 1..=3 {
        for (action, k) in actions(&c.trace(n)) {
            *seen.entry(action).or_insert(0) += k;
        }
    }
    assert_eq!(seen.get("OpenRecovery"), Some(&1), "{seen:?}");
    assert_eq!(seen.get("Seal"), Some(&3), "{seen:?}");
    assert!(
        seen.get("InstallRecovered").is_some_and(|&k| k >= 2),
        "{seen:?}"
    );
    assert_eq!(seen.get("ActivateRecovery"), Some(&1), "{seen:?}");
}

/// A planner's choice of leaving copy (`Frame::Join { leaving }`): the
/// move takes out the follower it names, not the owner's default (the
/// highest node id); a join naming a node that holds no follower is
/// refused and writes nothing.
#[tokio::test]
async fn a_join_that_names_the_leaving_follower_takes_that_copy_out() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cluster {
        root: dir.path().to_path_buf(),
        addrs: free_ports(4),
        store: Store::File(dir.path().join("record.json")),
    };
    let s = |n| StorageId::first(NodeId(n));
    c.control()
        .create(&Record::initial(s(1), [s(2), s(3)], 3))
        .unwrap();
    let n1 = c.start(1).await;
    let n2 = c.start(2).await;
    let n3 = c.start(3).await;
    let n4 = c.start(4).await;
    publish(&n1, 1..=5).await;
    wait_for(&n1, "5 confirmed", |s| s.confirmed == Some(5)).await;

    let mut client = livemove_runtime::tcp::client::NodeClient::new(c.addrs[&NodeId(4)]);
    let before = c.record();
    assert!(
        !client.join_as(P, None, Some(NodeId(1))).await.unwrap(),
        "n1 owns: no follower of it leaves"
    );
    assert_eq!(c.record(), before, "a refused join writes nothing");
    assert!(client.join_as(P, None, Some(NodeId(2))).await.unwrap());
    let deadline = tokio::time::Instant::now() + WAIT_MAX;
    loop {
        let r = c.record();
        if r.move_task.is_none() && r.followers.contains(&s(4)) {
            assert_eq!(r.followers, [s(3), s(4)].into(), "{r:?}");
            assert!(r.leaving.is_none() && r.owner == s(1), "{r:?}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {WAIT_MAX:?} for the move; record {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let owner = actions(&c.trace(1));
    assert_eq!(owner.get("Swap"), Some(&1), "{owner:?}");
    for n in [n1, n2, n3, n4] {
        n.kill().await;
    }
}
