//! Note 2's producer retries over TCP on 127.0.0.1 ("does timeout retry
//! cause duplicate effects?"): a publish whose answer never came is sent
//! again with the same key, after the client refreshed its route from the
//! other nodes (the model's `ClientTimeout`), and the owner answers it from
//! its history (`Serving::publish_retry`). Three scenarios, each the
//! model's: the answer lost after the append and a handoff before the
//! retry (the new owner holds the key: "a retry after an owner change is
//! answered from the producer's sequence"); the first attempt on an owner
//! cut from its followers, discarded by the recovery that replaces it (the
//! new owner lacks it: "a retry appends a publish the serving owner
//! lacks"); and a cached route to a node that is down.

use livemove_impl::store::Record;
use livemove_impl::{Entry, Epoch, Msg, Mutants, NodeId, Op, StorageId};
use livemove_runtime::control::{ControlPlane, FileControlPlane};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::node::recovery::open_recovery;
use livemove_runtime::node::Env;
use livemove_runtime::partition::Partition;
use livemove_runtime::tcp::routed::{Answer, Hop, Outcome, Published, RetryPolicy, RoutedClient};
use livemove_runtime::tcp::{FaultChange, Link, PartitionConfig, Status, TcpNode, TcpNodeConfig};
use livemove_runtime::trace::{Event, Tracer};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The one partition these nodes host.
const P: Partition = Partition(0);

/// How long a condition may take on loopback before the test gives up.
const WAIT_MAX: Duration = Duration::from_secs(20);

struct Cluster {
    root: PathBuf,
    addrs: BTreeMap<NodeId, SocketAddr>,
}

impl Cluster {
    /// Three nodes' ports and the epoch-1 record: n1 owns, n2 and n3
    /// follow, rf 3 (W 2).
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

    async fn three(&self) -> [TcpNode; 3] {
        let nodes = [
            self.start(1).await,
            self.start(2).await,
            self.start(3).await,
        ];
        wait_for(&nodes[0], "n1 serves", |s| s.admitting).await;
        nodes
    }

    fn record(&self) -> Record {
        self.control().read().unwrap()
    }

    /// The log on node `n`'s disk (its process must be gone).
    fn disk(&self, n: u8) -> Vec<Entry> {
        DiskLog::open(P.data_dir(&self.root.join(format!("n{n}"))))
            .unwrap()
            .1
            .state
            .entries
    }

    /// The controller's failure detector, with n1 down: the recovery's
    /// opening, then the record once a copy activated at epoch 2.
    async fn recover(&self) -> Record {
        let mut control = self.control();
        let r = control.read().unwrap();
        assert!(open_recovery(control.as_mut(), &r, &mut Quiet).unwrap());
        let deadline = tokio::time::Instant::now() + WAIT_MAX;
        loop {
            let r = self.record();
            if r.epoch == Epoch(2) && r.recovery.is_none() {
                return r;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "waited {WAIT_MAX:?} for the recovery; record {r:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Every `RetryPublish` event of every node's trace, and the keys of
    /// every `Publish`.
    fn traced(&self) -> (Vec<Retried>, Vec<u64>) {
        let mut retries = Vec::new();
        let mut publishes = Vec::new();
        for n in 1..=3 {
            for line in std::fs::read_to_string(self.trace(n)).unwrap().lines() {
                let e: serde_json::Value = serde_json::from_str(line).unwrap();
                let u = |f: &str| e[f].as_u64().unwrap();
                match e["action"].as_str().unwrap() {
                    "RetryPublish" => retries.push((
                        e["node"].as_str().unwrap().to_string(),
                        u("pos"),
                        u("epoch"),
                        u("key"),
                        e["held"].as_bool().unwrap(),
                    )),
                    "Publish" => publishes.push(u("key")),
                    _ => {}
                }
            }
        }
        (retries, publishes)
    }
}

/// A `RetryPublish` event: node, pos, epoch, key, held.
type Retried = (String, u64, u64, u64, bool);

/// The test's controller traces nothing.
struct Quiet;

impl Env for Quiet {
    fn now_ms(&self) -> u64 {
        0
    }
    fn send(&mut self, msg: Msg) {
        panic!("the failure detector sends no message: {msg}");
    }
    fn tracing(&self) -> bool {
        false
    }
    fn trace(&mut self, _: Event) {}
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
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Generous for loopback: many attempts, each exchange within 5 s (a
/// lost answer here is a closed connection, known at once, so the
/// timeout only bounds a confirm on a loaded machine).
fn policy() -> RetryPolicy {
    RetryPolicy::new(60, Duration::from_secs(5), WAIT_MAX).unwrap()
}

/// How many entries of `log` carry message `key`.
fn copies(log: &[Entry], key: u64) -> usize {
    log.iter()
        .filter(|e| matches!(e.op, Op::Put { key: k, .. } if k == key))
        .count()
}

/// Publish `keys` through `client`, each confirmed at its first attempt.
async fn publish_all(client: &mut RoutedClient, keys: std::ops::RangeInclusive<u64>) {
    for k in keys {
        let p = client.publish_confirmed(P, k, &policy()).await.unwrap();
        assert_eq!(
            (p.pos, p.answer, p.attempts.len()),
            (k, Answer::Appended, 1)
        );
    }
}

/// Run `client`'s publish of `key` on its own task, so the test can change
/// the cluster while it retries.
fn spawn_publish(
    mut client: RoutedClient,
    key: u64,
) -> tokio::task::JoinHandle<(RoutedClient, Published)> {
    tokio::spawn(async move {
        let p = client
            .publish_confirmed(P, key, &policy())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        (client, p)
    })
}

fn refreshed_to(p: &Published) -> Vec<(NodeId, Epoch)> {
    p.attempts
        .iter()
        .flat_map(|a| &a.hops)
        .filter_map(|h| match *h {
            Hop::Refreshed { to, epoch, .. } => Some((to, epoch)),
            _ => None,
        })
        .collect()
}

/// Step 1 of the model's story: m3 is appended by n1 and confirmed on two
/// copies, its answer is lost (n1's client link cut: the request is
/// carried out, the connection closed), n1 hands off to n2; the client's
/// retry, its route refreshed from n2 and n3, reaches n2, which holds m3
/// at position 3 with epoch tag 1 and answers from its history, confirmed
/// at epoch 2. One copy of m3 in every log, one `Publish` of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_a_lost_answer_and_a_handoff_is_answered_from_the_new_owners_history() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cluster::new(dir.path());
    let [n1, n2, n3] = c.three().await;
    let mut client = RoutedClient::new(vec![c.addr(3), c.addr(2)], 5, WAIT_MAX);
    publish_all(&mut client, 1..=2).await;

    n1.faults().apply(FaultChange::Cut(Link::Clients));
    let retrying = spawn_publish(client, 3);
    wait_for(&n1, "m3 confirmed on n1", |s| s.confirmed == Some(3)).await;
    assert!(n1.hand_off(P, NodeId(2)).await.unwrap());
    wait_for(&n2, "n2 serves at epoch 2", |s| s.serving == Some(Epoch(2))).await;

    let (_, p) = tokio::time::timeout(WAIT_MAX, retrying)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.node, p.epoch, p.pos, p.answer, p.entry_epoch),
        (NodeId(2), Epoch(2), 3, Answer::Held, Epoch(1)),
        "{p:#?}"
    );
    assert!(!p.attempts[0].retry);
    match &p.attempts[0].outcome {
        Outcome::NoAnswer { error } => {
            assert!(error.contains("closed without an answer"), "{error}")
        }
        other => panic!("the first attempt's answer is lost: {other}"),
    }
    assert!(p.attempts[1..].iter().all(|a| a.retry));
    assert_eq!(refreshed_to(&p), vec![(NodeId(2), Epoch(2))], "{p:#?}");

    for n in [n1, n2, n3] {
        n.kill().await;
    }
    for n in 1..=3 {
        assert_eq!(copies(&c.disk(n), 3), 1, "n{n}'s log");
    }
    let (retries, publishes) = c.traced();
    assert_eq!(publishes, vec![1, 2, 3], "m3 appended once");
    assert!(
        retries.contains(&("n2".into(), 3, 1, 3, true)),
        "n2 answered from its history: {retries:?}"
    );
    assert!(retries.iter().all(|r| r.4), "nothing appended: {retries:?}");
}

/// m3 reaches only n1, cut from its followers, and its answer is lost.
/// With the client link healed, the retry reaches n1, which holds m3
/// (appended by the first attempt) and answers from its history, but
/// cannot confirm it: the client waits for the confirm, which never
/// comes, and does not report the publish. n1 dies and the recovery that
/// replaces it seals n2 and n3, which never held m3. The client's next
/// retry reaches the new owner, which lacks it and appends it once, at
/// epoch 2, confirmed there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_to_an_owner_that_lacks_the_message_appends_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cluster::new(dir.path());
    let [n1, n2, n3] = c.three().await;
    let mut client = RoutedClient::new(vec![c.addr(2), c.addr(3)], 5, WAIT_MAX);
    publish_all(&mut client, 1..=2).await;
    wait_for(&n1, "m2 confirmed", |s| s.confirmed == Some(2)).await;

    for l in [Link::Node(NodeId(2)), Link::Node(NodeId(3)), Link::Clients] {
        n1.faults().apply(FaultChange::Cut(l));
    }
    let retrying = spawn_publish(client, 3);
    wait_for(&n1, "m3 durable on n1", |s| s.log_len == 3).await;
    n1.faults().apply(FaultChange::Heal(Link::Clients));
    let deadline = tokio::time::Instant::now() + WAIT_MAX;
    let traced_on_n1 = || std::fs::read_to_string(c.trace(1)).unwrap();
    while !traced_on_n1().contains(r#""action":"RetryPublish""#) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no retry reached n1"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The event is written before the answer is sent: let the answer
    // reach the client, which then waits for a confirm n1 cannot give.
    tokio::time::sleep(Duration::from_millis(300)).await;
    n1.kill().await;
    let r = c.recover().await;
    let owner = r.owner.node;

    let (_, p) = tokio::time::timeout(WAIT_MAX, retrying)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.node, p.epoch, p.pos, p.answer, p.entry_epoch),
        (owner, Epoch(2), 3, Answer::Appended, Epoch(2)),
        "{p:#?}"
    );
    let held_unconfirmed = p.attempts.iter().any(|a| {
        matches!(
            a.outcome,
            Outcome::Unconfirmed {
                node: NodeId(1),
                pos: 3,
                epoch: Epoch(1),
                answer: Answer::Held,
                ..
            }
        )
    });
    assert!(
        held_unconfirmed,
        "n1's held answer, never confirmed: {p:#?}"
    );
    assert_eq!(refreshed_to(&p), vec![(owner, Epoch(2))], "{p:#?}");

    n2.kill().await;
    n3.kill().await;
    for n in 2..=3 {
        let log = c.disk(n);
        assert_eq!(copies(&log, 3), 1, "n{n}'s log");
        assert_eq!(log[2].epoch, Epoch(2), "n{n}: the retry's entry");
    }
    let old = c.disk(1);
    assert_eq!(
        (copies(&old, 3), old[2].epoch),
        (1, Epoch(1)),
        "n1's unconfirmed attempt"
    );
    let (retries, publishes) = c.traced();
    assert_eq!(publishes, vec![1, 2, 3], "the first attempt, on n1");
    let appended: Vec<_> = retries.iter().filter(|r| !r.4).collect();
    assert_eq!(
        appended,
        vec![&(owner.to_string(), 3, 2, 3, false)],
        "appended once, by the new owner: {retries:?}"
    );
    assert!(
        retries.contains(&("n1".into(), 3, 1, 3, true)),
        "n1 answered from its history: {retries:?}"
    );
}

/// The client's cached route names n1, which is down (a recovery made
/// another node owner at epoch 2): its attempt cannot connect, it
/// refreshes the route from n2 and n3, and the retry is appended there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_to_a_node_that_is_down_is_refreshed_from_another_node() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cluster::new(dir.path());
    let [n1, n2, n3] = c.three().await;
    let mut client = RoutedClient::new(vec![c.addr(2), c.addr(3)], 5, WAIT_MAX);
    publish_all(&mut client, 1..=1).await;
    n1.kill().await;
    let owner = c.recover().await.owner.node;

    let p = client.publish_confirmed(P, 2, &policy()).await.unwrap();
    assert_eq!(
        (p.node, p.epoch, p.pos, p.answer),
        (owner, Epoch(2), 2, Answer::Appended),
        "{p:#?}"
    );
    assert_eq!(p.attempts.len(), 2, "{p:#?}");
    // Its connection to n1 was closed by n1's death (or, opened again,
    // refused): no answer from n1 either way.
    match &p.attempts[0].outcome {
        Outcome::NoAnswer { error } => {
            assert!(error.starts_with(&format!("{}: ", c.addr(1))), "{error}")
        }
        other => panic!("n1 is down: {other}"),
    }
    assert!(p.attempts[1].retry);
    assert!(
        matches!(
            p.attempts[1].hops.first(),
            Some(Hop::Refreshed { to, epoch: Epoch(2), .. }) if *to == owner
        ),
        "{p:#?}"
    );
    n2.kill().await;
    n3.kill().await;
}
