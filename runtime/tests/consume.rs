//! Consuming and routing over TCP on 127.0.0.1, each node on a port of its
//! own: a settle (note 2: "deletions must propagate as log events") is a
//! `Delete` entry the owner appends, durable before it is shipped and done
//! once confirmed, so after its confirm it is on W copies' disks; a node
//! that does not own the partition refuses an unrouted settle; and note
//! 2's routed client, started from a node that does not own the
//! partition, reaches the owner, and after a handoff follows the old
//! owner's MOVED to the new one and keeps the new route.

use livemove_impl::routing::{Route, RoutingError};
use livemove_impl::store::Record;
use livemove_impl::{Entry, Epoch, Mutants, NodeId, Op, StorageId};
use livemove_runtime::control::{ControlPlane, FileControlPlane};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::node::NodeError;
use livemove_runtime::partition::Partition;
use livemove_runtime::tcp::client::{ClientError, NodeClient};
use livemove_runtime::tcp::routed::{Hop, RoutedClient, RoutedError};
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

/// W for rf 3.
const W: usize = 2;

struct Cluster {
    root: PathBuf,
    addrs: BTreeMap<NodeId, SocketAddr>,
}

impl Cluster {
    /// Three nodes' ports and the epoch-1 record: n1 owns, n2 and n3
    /// follow, rf 3.
    fn new(root: &Path) -> Cluster {
        let listeners: Vec<std::net::TcpListener> = (0..3)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        let addrs = listeners
            .iter()
            .enumerate()
            .map(|(i, l)| (NodeId(i as u8 + 1), l.local_addr().unwrap()))
            .collect();
        let c = Cluster {
            root: root.to_path_buf(),
            addrs,
        };
        let s = |n| StorageId::first(NodeId(n));
        c.control()
            .create(&Record::initial(s(1), [s(2), s(3)], 3))
            .unwrap();
        c
    }

    fn control(&self) -> Box<dyn ControlPlane> {
        Box::new(FileControlPlane::open(self.root.join("record.json")).unwrap())
    }

    fn trace(&self, n: u8) -> PathBuf {
        self.root.join(format!("n{n}.ndjson"))
    }

    fn data(&self, n: u8) -> PathBuf {
        P.data_dir(&self.root.join(format!("n{n}")))
    }

    fn addr(&self, n: u8) -> SocketAddr {
        self.addrs[&NodeId(n)]
    }

    async fn start(&self, n: u8) -> TcpNode {
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
        .unwrap_or_else(|e| panic!("n{n} did not start: {e}"))
    }

    fn record(&self) -> Record {
        self.control().read().unwrap()
    }

    /// The log on node `n`'s disk (its process must be gone).
    fn disk(&self, n: u8) -> Vec<Entry> {
        DiskLog::open(self.data(n)).unwrap().1.state.entries
    }
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

fn count(path: &Path, action: &str) -> usize {
    let needle = format!(r#""action":"{action}""#);
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&needle))
        .count()
}

#[tokio::test]
async fn a_confirmed_settle_is_a_delete_on_w_copies_disks_and_a_non_owner_refuses_one() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cluster::new(dir.path());
    let n1 = c.start(1).await;
    let n2 = c.start(2).await;
    let n3 = c.start(3).await;

    // Nothing published: nothing delivered, nothing written.
    match n1.settle(P).await {
        Err(TcpError::Node(NodeError::SettleRefused { node, source })) => {
            assert_eq!(node, NodeId(1));
            assert!(
                source.to_string().contains("no delivered message"),
                "{source}"
            );
        }
        other => panic!("a settle with nothing delivered: {other:?}"),
    }
    assert_eq!(n1.status(P).await.unwrap().log_len, 0);

    for k in 1..=5 {
        assert_eq!(n1.publish(P, k).await.unwrap(), k);
    }
    wait_for(&n1, "5 confirmed", |s| s.confirmed == Some(5)).await;

    // Unrouted, on a follower: refused with a typed error naming the node,
    // in process and over its port; nothing is written anywhere.
    match n2.settle(P).await {
        Err(TcpError::Node(NodeError::NotServing { node })) => assert_eq!(node, NodeId(2)),
        other => panic!("an unrouted settle on a follower: {other:?}"),
    }
    let mut on_n3 = NodeClient::new(c.addr(3));
    match on_n3.settle(P).await {
        Err(ClientError::Refused { addr, reason }) => {
            assert_eq!(addr, c.addr(3));
            assert!(reason.contains("node n3 is not serving"), "{reason}");
        }
        other => panic!("an unrouted settle on n3's port: {other:?}"),
    }
    assert_eq!(n1.status(P).await.unwrap().log_len, 5);

    // Three settles over the owner's port, each the oldest delivered
    // message, each waited for its confirm.
    let mut on_n1 = NodeClient::new(c.addr(1));
    for (i, key) in (1..=3u64).enumerate() {
        let (k, pos, epoch) = on_n1.settle(P).await.unwrap();
        assert_eq!(
            (k, pos, epoch),
            (key, 6 + i as u64, Epoch(1)),
            "the oldest delivered message"
        );
        tokio::time::timeout(WAIT_MAX, on_n1.wait_confirmed_at(P, pos, epoch))
            .await
            .expect("the settle is confirmed in time")
            .unwrap();
    }
    let st = n1.status(P).await.unwrap();
    assert_eq!((st.log_len, st.confirmed), (8, Some(8)), "{st:?}");

    for n in [n1, n2, n3] {
        n.kill().await;
    }
    // Every confirmed settle is on the owner and on W copies in all.
    let deletes = |log: &[Entry]| -> Vec<(u64, u64)> {
        log.iter()
            .enumerate()
            .filter_map(|(i, e)| match e.op {
                Op::Delete { key } => Some((i as u64 + 1, key)),
                _ => None,
            })
            .collect()
    };
    let want = vec![(6, 1), (7, 2), (8, 3)];
    let owner = c.disk(1);
    assert_eq!(deletes(&owner), want, "the owner's disk");
    assert!(owner[5..].iter().all(|e| e.epoch == Epoch(1)));
    let holding = (1..=3).filter(|&n| deletes(&c.disk(n)) == want).count();
    assert!(holding >= W, "{holding} copies hold the settles, W is {W}");
    assert_eq!(count(&c.trace(1), "Settle"), 3);
    assert_eq!(count(&c.trace(1), "Publish"), 5);
    assert_eq!(count(&c.trace(2), "Settle"), 0);
}

#[tokio::test]
async fn a_routed_client_from_a_non_owner_reaches_the_owner_and_follows_moved_after_a_handoff() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cluster::new(dir.path());
    let n1 = c.start(1).await;
    let n2 = c.start(2).await;
    let n3 = c.start(3).await;
    wait_for(&n1, "n1 serves", |s| s.admitting).await;

    // Started from n3, which does not own p0: its MOVED names n1 at 1.
    let mut client = RoutedClient::new(vec![c.addr(3)], 5, WAIT_MAX);
    let first = client.publish(P, 1).await.unwrap();
    assert_eq!(
        first.hops,
        vec![Hop::Learned {
            at: c.addr(3),
            to: NodeId(1),
            epoch: Epoch(1)
        }]
    );
    assert_eq!(
        (first.node, first.epoch, first.pos),
        (NodeId(1), Epoch(1), 1)
    );
    client.wait_confirmed(&first, WAIT_MAX).await.unwrap();
    let n1_route = Route {
        owner: NodeId(1),
        epoch: Epoch(1),
    };
    assert_eq!(client.route(P), Some(n1_route));
    // A second client that gives up at its first redirect.
    let mut strict = RoutedClient::new(vec![c.addr(2)], 0, WAIT_MAX);
    let s = strict.publish(P, 2).await.unwrap();
    strict.wait_confirmed(&s, WAIT_MAX).await.unwrap();
    assert_eq!(strict.route(P), Some(n1_route));

    // Hand p0 over to n2; once n2 serves at epoch 2 and n1 has read the
    // record (a few of its 20 ms ticks), n1 answers the cached route with
    // MOVED.
    assert!(n1.hand_off(P, NodeId(2)).await.unwrap());
    wait_for(&n2, "n2 serves at epoch 2", |s| {
        s.serving == Some(Epoch(2)) && s.admitting
    })
    .await;
    assert!(c.record().handoff.is_none(), "{:?}", c.record());
    tokio::time::sleep(Duration::from_millis(200)).await;

    let n2_route = Route {
        owner: NodeId(2),
        epoch: Epoch(2),
    };
    let moved = client.publish(P, 3).await.unwrap();
    assert_eq!(
        moved.hops,
        vec![Hop::Moved {
            from: NodeId(1),
            to: NodeId(2),
            epoch: Epoch(2)
        }],
        "the old owner's MOVED, followed"
    );
    assert_eq!((moved.node, moved.epoch), (NodeId(2), Epoch(2)));
    assert_eq!(client.route(P), Some(n2_route), "the cache took the MOVED");
    assert_eq!(client.addrs().get(&NodeId(2)), Some(&c.addr(2)));
    client.wait_confirmed(&moved, WAIT_MAX).await.unwrap();

    // The next request goes straight to n2.
    let direct = client.settle(P).await.unwrap();
    assert!(direct.hops.is_empty(), "{:?}", direct.hops);
    assert_eq!(
        (direct.node, direct.key),
        (NodeId(2), 1),
        "the oldest message"
    );
    client.wait_confirmed(&direct, WAIT_MAX).await.unwrap();

    // The strict client's request gives up at the MOVED, but learns it.
    match strict.publish(P, 4).await {
        Err(RoutedError::Routing {
            source: RoutingError::HopLimit { hops: 0 },
            ..
        }) => {}
        other => panic!("a request at its hop limit: {other:?}"),
    }
    assert_eq!(strict.route(P), Some(n2_route));
    let retried = strict.publish(P, 4).await.unwrap();
    assert!(retried.hops.is_empty() && retried.node == NodeId(2));
    strict.wait_confirmed(&retried, WAIT_MAX).await.unwrap();

    // A wait for a confirm names the entry's epoch: n2 serves at 2, so a
    // wait for what was appended at 1 is refused rather than answered by
    // another serving state's tail.
    let mut on_n2 = NodeClient::new(c.addr(2));
    match on_n2.wait_confirmed_at(P, 1, Epoch(1)).await {
        Err(ClientError::Refused { reason, .. }) => {
            assert!(
                reason.contains("serves at another epoch than the entry's"),
                "{reason}"
            );
        }
        other => panic!("a wait at an epoch n2 does not serve at: {other:?}"),
    }
    on_n2.wait_confirmed_at(P, 3, Epoch(2)).await.unwrap();

    // An unrouted settle on the old owner is refused; routed, it is not.
    let e = NodeClient::new(c.addr(1)).settle(P).await.unwrap_err();
    assert!(matches!(e, ClientError::Refused { .. }), "{e}");
    let mut from_n1 = RoutedClient::new(vec![c.addr(1)], 5, WAIT_MAX);
    let s = from_n1.settle(P).await.unwrap();
    assert_eq!((s.node, s.key), (NodeId(2), 2));
    from_n1.wait_confirmed(&s, WAIT_MAX).await.unwrap();

    for n in [n1, n2, n3] {
        n.kill().await;
    }
    let log = c.disk(2);
    let ops: Vec<Op> = log.iter().map(|e| e.op).collect();
    assert_eq!(
        ops,
        vec![
            Op::Put { key: 1, value: 1 },
            Op::Put { key: 2, value: 2 },
            Op::Put { key: 3, value: 3 },
            Op::Delete { key: 1 },
            Op::Put { key: 4, value: 4 },
            Op::Delete { key: 2 },
        ]
    );
    assert_eq!(count(&c.trace(2), "Settle"), 2);
}
