//! The clients of a run under load: per partition, publishers that each
//! publish a new key, wait for its confirm and publish the next, and a
//! consumer that settles the oldest delivered message and waits for the
//! settle's confirm; all through the routed client (`tcp::routed`), each
//! on a thread of its own until told to stop.
//!
//! A request or a wait that fails (the owner was killed, admission is
//! closed for a handoff, a recovery is under way) is counted and given up:
//! nothing is sent again under the same key. The client is then made
//! afresh, so its next request learns the route again from any node (the
//! routed client keeps a route to a dead node otherwise: runtime/README.md,
//! "What does not exist yet").

use crate::check::Confirmed;
use livemove_impl::Op;
use livemove_runtime::partition::Partition;
use livemove_runtime::tcp::routed::RoutedClient;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long one request may take, redirects included.
const REQUEST_MS_MAX: u64 = 2_000;
/// How long a client waits for one confirm.
const CONFIRM_MS_MAX: u64 = 3_000;
/// The pause after a failure, and a consumer's between two settles.
const PAUSE_MS: u64 = 50;
/// Redirects one request follows.
const HOPS_MAX: u8 = 8;
/// Keys of one client: client `c`'s keys are `c * KEYS_PER_CLIENT + i`.
const KEYS_PER_CLIENT: u64 = 1_000_000;

/// What the clients did.
#[derive(Debug, Default)]
pub struct Tally {
    pub publishes_sent: usize,
    pub publishes_failed: usize,
    pub settles_sent: usize,
    pub settles_failed: usize,
    /// Publishes and settles whose confirm came back.
    pub confirmed: Vec<Confirmed>,
}

impl Tally {
    pub fn publishes_confirmed(&self) -> usize {
        self.confirmed
            .iter()
            .filter(|c| matches!(c.op, Op::Put { .. }))
            .count()
    }

    pub fn settles_confirmed(&self) -> usize {
        self.confirmed.len() - self.publishes_confirmed()
    }

    fn add(&mut self, other: Tally) {
        self.publishes_sent += other.publishes_sent;
        self.publishes_failed += other.publishes_failed;
        self.settles_sent += other.settles_sent;
        self.settles_failed += other.settles_failed;
        self.confirmed.extend(other.confirmed);
    }
}

/// Running clients.
pub struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Tally>>,
}

impl Load {
    /// `publishers` publishers and one consumer per partition, starting
    /// from the nodes at `entries`; client numbers from `first_client` (so
    /// keys of different loads differ).
    pub fn start(
        entries: Vec<SocketAddr>,
        partitions: &[Partition],
        publishers: usize,
        first_client: u64,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let mut client = first_client;
        for &p in partitions {
            for i in 0..=publishers {
                let (entries, stop) = (entries.clone(), stop.clone());
                let consumer = i == publishers;
                let keys = client * KEYS_PER_CLIENT;
                client += 1;
                threads.push(std::thread::spawn(move || {
                    runtime().block_on(run(entries, p, consumer, keys, stop))
                }));
            }
        }
        Load { stop, threads }
    }

    /// Stop every client (each ends its request in flight first) and add
    /// up what they did.
    pub fn stop(self) -> Tally {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Tally::default();
        for t in self.threads {
            all.add(t.join().expect("a client thread panicked"));
        }
        all
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn client(entries: &[SocketAddr]) -> RoutedClient {
    RoutedClient::new(
        entries.to_vec(),
        HOPS_MAX,
        Duration::from_millis(REQUEST_MS_MAX),
    )
}

/// One client's loop: a publisher's (a new key each time) or a consumer's.
async fn run(
    entries: Vec<SocketAddr>,
    p: Partition,
    consumer: bool,
    first_key: u64,
    stop: Arc<AtomicBool>,
) -> Tally {
    let mut t = Tally::default();
    let mut c = client(&entries);
    let mut key = first_key;
    let request = Duration::from_millis(REQUEST_MS_MAX);
    let confirm = Duration::from_millis(CONFIRM_MS_MAX);
    while !stop.load(Ordering::Relaxed) {
        let served = if consumer {
            t.settles_sent += 1;
            tokio::time::timeout(request, c.settle(p)).await
        } else {
            key += 1;
            t.publishes_sent += 1;
            tokio::time::timeout(request, c.publish(p, key)).await
        };
        let done = match served {
            Ok(Ok(s)) => match tokio::time::timeout(confirm, c.wait_confirmed(&s, confirm)).await {
                Ok(Ok(())) => Some(s),
                _ => None,
            },
            _ => None,
        };
        match done {
            Some(s) => t.confirmed.push(Confirmed {
                partition: p,
                pos: s.pos,
                op: if consumer {
                    Op::Delete { key: s.key }
                } else {
                    Op::Put {
                        key: s.key,
                        value: s.key,
                    }
                },
            }),
            None => {
                if consumer {
                    t.settles_failed += 1;
                } else {
                    t.publishes_failed += 1;
                }
                c = client(&entries);
                tokio::time::sleep(Duration::from_millis(PAUSE_MS)).await;
            }
        }
        if consumer {
            tokio::time::sleep(Duration::from_millis(PAUSE_MS)).await;
        }
    }
    t
}

/// Publish message `key` on `p` through a routed client from `entries`
/// and wait for its confirm; `None` if either fails.
pub fn publish_confirmed(entries: &[SocketAddr], p: Partition, key: u64) -> Option<Confirmed> {
    runtime().block_on(async {
        let mut c = client(entries);
        let wait = Duration::from_millis(CONFIRM_MS_MAX);
        let request = Duration::from_millis(REQUEST_MS_MAX);
        let s = tokio::time::timeout(request, c.publish(p, key))
            .await
            .ok()?
            .ok()?;
        tokio::time::timeout(wait, c.wait_confirmed(&s, wait))
            .await
            .ok()?
            .ok()?;
        Some(Confirmed {
            partition: p,
            pos: s.pos,
            op: Op::Put { key, value: key },
        })
    })
}
