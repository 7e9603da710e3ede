//! Note 2's routed client over the nodes' ports: the implementation's
//! `routing::TopologyCache` (long-term routes, forward in epoch only) and
//! `routing::RequestDriver` (one request's redirect loop, a hop limit and
//! a deadline) drive `Frame::Routed` requests; the nodes answer each with
//! `routing::server::answer`.
//!
//! The client is given the address of any node (and optionally more). With
//! no route cached for a partition, its first request goes to one of those
//! at epoch 0, which no owner serves at: the owner answers `MOVED` to
//! itself at its epoch (the stale-epoch refusal), any other node `MOVED` to
//! the owner its record names, so the first answer is the route. A `MOVED`
//! updates the cache (`TopologyCache::learn`); an `ASK` sends this one
//! request to the node it names with the ASKING flag, in the same frame
//! (one connection, one request: the flag cannot be separated from the
//! request it is for), and leaves the cache alone; a try-again waits
//! `TRY_AGAIN_PAUSE` and goes along the same route. Every answer but a
//! served one is a hop. A redirect carries the address of the node it
//! names, from the answering node's peer table.
//!
//! `RoutedClient::publish_confirmed` (`retry.rs`) is note 2's producer: a
//! publish whose answer or confirm never came is sent again, with the
//! same key, as a retry the owner answers from its history, after the
//! route is refreshed from the other nodes (the model's `ClientTimeout`
//! and `ClientRetry`).

mod retry;

pub use retry::{
    Answer, AttemptReport, BadPolicy, Outcome, PublishError, Published, RetryPolicy, ATTEMPTS_MAX,
    RETRY_PAUSE_MAX, RETRY_PAUSE_MIN,
};

use super::client::{ClientError, NodeClient, RoutedAnswer};
use super::frame::RoutedOp;
use crate::partition::Partition;
use livemove_impl::routing::{
    ClientReply, Next, PartitionId, Redirect, RequestDriver, Route, RoutingError, TopologyCache,
};
use livemove_impl::{Epoch, NodeId, Position};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The pause before a request goes again along the same route after a
/// try-again (a handoff drains, an owner is not active yet).
pub const TRY_AGAIN_PAUSE: Duration = Duration::from_millis(50);

/// Requests the client sends to learn a partition's first route, across
/// its entry nodes, before it gives up.
pub const BOOTSTRAP_TRIES_MAX: usize = 20;

/// A routed request that could not be served.
#[derive(Debug, thiserror::Error)]
pub enum RoutedError {
    /// The client was given no node to start from.
    #[error("no node address to start from")]
    NoEntry,
    /// No entry node named a route for the partition.
    #[error(
        "{partition}: no route learned after {tries} requests to the given nodes (last: {last})"
    )]
    NoRoute {
        /// The partition.
        partition: Partition,
        /// Requests sent.
        tries: usize,
        /// What the last of them got.
        last: String,
    },
    /// A redirect named a node whose address no answer gave.
    #[error("{partition}: redirected to {node}, whose address is unknown")]
    NoAddress {
        /// The partition.
        partition: Partition,
        /// The node.
        node: NodeId,
    },
    /// The redirect loop gave up (hop limit or deadline).
    #[error("{partition}: {source}")]
    Routing {
        /// The partition.
        partition: Partition,
        /// Why.
        #[source]
        source: RoutingError,
    },
    /// A node answered a publish as a settle or a settle as a publish.
    #[error("{partition}: {node} answered {answer:?} to another request")]
    Mismatch {
        /// The partition.
        partition: Partition,
        /// The node.
        node: NodeId,
        /// Its answer.
        answer: RoutedAnswer,
    },
    /// A node could not be reached, or refused the request once served
    /// (nothing delivered to settle, the owner fenced).
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// One answer other than a served one, as the client followed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind")]
pub enum Hop {
    /// The first route, learned from an entry node's `MOVED` to a request
    /// at epoch 0.
    Learned {
        /// The entry node's address.
        at: SocketAddr,
        /// The owner it names.
        #[serde(serialize_with = "node_name")]
        to: NodeId,
        /// At this epoch.
        epoch: Epoch,
    },
    /// `MOVED`: the route learned.
    Moved {
        /// The node that answered.
        #[serde(serialize_with = "node_name")]
        from: NodeId,
        /// The owner it names.
        #[serde(serialize_with = "node_name")]
        to: NodeId,
        /// At this epoch.
        epoch: Epoch,
    },
    /// `ASK`: this request only.
    Ask {
        /// The node that answered.
        #[serde(serialize_with = "node_name")]
        from: NodeId,
        /// The node it names.
        #[serde(serialize_with = "node_name")]
        to: NodeId,
        /// At this epoch.
        epoch: Epoch,
    },
    /// Try again along the same route.
    TryAgain {
        /// The node that answered.
        #[serde(serialize_with = "node_name")]
        from: NodeId,
    },
    /// A newer route learned by a refresh after an attempt whose answer
    /// never came (the model's `ClientTimeout`): another node's `MOVED`
    /// to a request at epoch 0.
    Refreshed {
        /// The node's address.
        at: SocketAddr,
        /// The owner it names.
        #[serde(serialize_with = "node_name")]
        to: NodeId,
        /// At this epoch, newer than the route cached before.
        epoch: Epoch,
    },
}

fn node_name<S: serde::Serializer>(n: &NodeId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(n)
}

/// A served routed request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Served {
    /// The partition.
    pub partition: Partition,
    /// The message published, or the one settled.
    pub key: u64,
    /// Its entry's position on the owner (durable there, not yet
    /// confirmed unless said).
    pub pos: Position,
    /// The node that served it.
    #[serde(serialize_with = "node_name")]
    pub node: NodeId,
    /// The epoch of the route it was served along.
    pub epoch: Epoch,
    /// The answers followed before it was served, in order.
    pub hops: Vec<Hop>,
    /// For a publish retry answered from the owner's history (nothing
    /// appended): the epoch tag of the entry that held it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<Epoch>,
}

/// Where the first request for a partition with no route goes: one of the
/// entry nodes, whose id the client does not know yet.
#[derive(Clone, Copy)]
enum Target {
    Entry(SocketAddr),
    Node(NodeId),
}

/// A client that routes its requests by a topology cache.
pub struct RoutedClient {
    entries: Vec<SocketAddr>,
    addrs: BTreeMap<NodeId, SocketAddr>,
    conns: BTreeMap<SocketAddr, NodeClient>,
    cache: TopologyCache,
    hops_max: u8,
    timeout: Duration,
    clock: Instant,
}

impl RoutedClient {
    /// A client starting from the nodes at `entries` (any nodes of the
    /// cluster), following at most `hops_max` answers other than a served
    /// one per request, each request within `timeout`.
    pub fn new(entries: Vec<SocketAddr>, hops_max: u8, timeout: Duration) -> Self {
        RoutedClient {
            entries,
            addrs: BTreeMap::new(),
            conns: BTreeMap::new(),
            cache: TopologyCache::default(),
            hops_max,
            timeout,
            clock: Instant::now(),
        }
    }

    /// The cached long-term route of `partition`.
    pub fn route(&self, partition: Partition) -> Option<Route> {
        self.cache.get(PartitionId(partition.0))
    }

    /// The node addresses learned from redirects.
    pub fn addrs(&self) -> &BTreeMap<NodeId, SocketAddr> {
        &self.addrs
    }

    /// Publish message `key` on `partition` along the cached route.
    pub async fn publish(&mut self, partition: Partition, key: u64) -> Result<Served, RoutedError> {
        self.request(partition, RoutedOp::Publish { key }).await
    }

    /// Settle the oldest message `partition`'s owner delivers, along the
    /// cached route; not yet confirmed (`wait_confirmed`).
    pub async fn settle(&mut self, partition: Partition) -> Result<Served, RoutedError> {
        self.request(partition, RoutedOp::Settle).await
    }

    /// Wait until the node that served `served` has confirmed its entry,
    /// at the epoch it served it at, for at most `wait`.
    pub async fn wait_confirmed(
        &mut self,
        served: &Served,
        wait: Duration,
    ) -> Result<(), RoutedError> {
        let addr = self.addr_of(served.partition, served.node)?;
        let c = self.conn(addr);
        // The route's epoch is the one the owner served the request at
        // (`routing::server::answer` serves only at it).
        let confirmed = c.wait_confirmed_at(served.partition, served.pos, served.epoch);
        match tokio::time::timeout(wait, confirmed).await {
            Ok(r) => Ok(r?),
            Err(_) => {
                c.reset();
                Err(ClientError::TimedOut { addr, waited: wait }.into())
            }
        }
    }

    fn now_ms(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }

    fn addr_of(&self, partition: Partition, node: NodeId) -> Result<SocketAddr, RoutedError> {
        self.addrs
            .get(&node)
            .copied()
            .ok_or(RoutedError::NoAddress { partition, node })
    }

    fn conn(&mut self, addr: SocketAddr) -> &mut NodeClient {
        self.conns
            .entry(addr)
            .or_insert_with(|| NodeClient::new(addr))
    }

    /// Send one routed request to `target` and read its answer; a
    /// redirect's address is learned.
    async fn send(
        &mut self,
        partition: Partition,
        target: Target,
        epoch: Epoch,
        asking: bool,
        op: RoutedOp,
    ) -> Result<RoutedAnswer, RoutedError> {
        let addr = match target {
            Target::Entry(a) => a,
            Target::Node(n) => self.addr_of(partition, n)?,
        };
        let answer = self.conn(addr).routed(partition, epoch, asking, op).await?;
        if let RoutedAnswer::Redirect {
            redirect,
            addr: Some(a),
        } = answer
        {
            let to = match redirect {
                Redirect::Moved(r) => r.owner,
                Redirect::Ask { node, .. } => node,
            };
            self.addrs.insert(to, a);
        }
        Ok(answer)
    }

    /// Learn `partition`'s first route from the entry nodes: a request at
    /// epoch 0, which every node answers with a `MOVED` once it knows an
    /// owner. Gives up after `BOOTSTRAP_TRIES_MAX` requests, or at the
    /// first pause that would end past `timeout`, naming what the last
    /// request got.
    async fn bootstrap(
        &mut self,
        partition: Partition,
        op: RoutedOp,
        timeout: Duration,
        hops: &mut Vec<Hop>,
    ) -> Result<(), RoutedError> {
        if self.entries.is_empty() {
            return Err(RoutedError::NoEntry);
        }
        let until = Instant::now() + timeout;
        let pid = PartitionId(partition.0);
        let mut last = String::new();
        let mut tries = 0;
        while tries < BOOTSTRAP_TRIES_MAX {
            let i = tries;
            tries += 1;
            let entry = self.entries[i % self.entries.len()];
            match self
                .send(partition, Target::Entry(entry), Epoch(0), false, op)
                .await
            {
                Ok(RoutedAnswer::Redirect {
                    redirect: Redirect::Moved(route),
                    ..
                }) => {
                    self.cache.learn(pid, route);
                    hops.push(Hop::Learned {
                        at: entry,
                        to: route.owner,
                        epoch: route.epoch,
                    });
                    return Ok(());
                }
                Ok(other) => last = format!("{other:?} from {entry}"),
                Err(RoutedError::Client(e)) => last = e.to_string(),
                Err(e) => return Err(e),
            }
            if Instant::now() + TRY_AGAIN_PAUSE >= until {
                break;
            }
            tokio::time::sleep(TRY_AGAIN_PAUSE).await;
        }
        Err(RoutedError::NoRoute {
            partition,
            tries,
            last,
        })
    }

    async fn request(&mut self, partition: Partition, op: RoutedOp) -> Result<Served, RoutedError> {
        let mut hops = Vec::new();
        let timeout = self.timeout;
        let mut served = self.routed(partition, op, timeout, &mut hops).await?;
        served.hops = hops;
        Ok(served)
    }

    /// Route one request along the cached route (learning the first one
    /// from the entry nodes), following redirects within `timeout` and
    /// the hop limit, until a node serves it; the answers followed are
    /// pushed on `hops` as they come, so that a caller whose request fails
    /// still has them. The `Served` returned has no hops of its own.
    async fn routed(
        &mut self,
        partition: Partition,
        op: RoutedOp,
        timeout: Duration,
        hops: &mut Vec<Hop>,
    ) -> Result<Served, RoutedError> {
        let pid = PartitionId(partition.0);
        if self.cache.get(pid).is_none() {
            self.bootstrap(partition, op, timeout, hops).await?;
        }
        let timeout_ms = timeout.as_millis() as u64;
        let routing = |source| RoutedError::Routing { partition, source };
        let (mut driver, mut attempt) =
            RequestDriver::start(&self.cache, pid, self.now_ms(), timeout_ms, self.hops_max)
                .map_err(routing)?;
        loop {
            let at = attempt.node;
            let answer = self
                .send(
                    partition,
                    Target::Node(at),
                    attempt.epoch,
                    attempt.asking,
                    op,
                )
                .await?;
            let mismatch = || RoutedError::Mismatch {
                partition,
                node: at,
                answer,
            };
            let reply = match answer {
                RoutedAnswer::Published { pos } => {
                    let RoutedOp::Publish { key } = op else {
                        return Err(mismatch());
                    };
                    return Ok(self.served(partition, key, pos, &attempt, None));
                }
                RoutedAnswer::Retried {
                    pos,
                    entry_epoch,
                    held,
                } => {
                    let RoutedOp::PublishRetry { key } = op else {
                        return Err(mismatch());
                    };
                    let held = held.then_some(entry_epoch);
                    return Ok(self.served(partition, key, pos, &attempt, held));
                }
                RoutedAnswer::Settled { key, pos } => {
                    if op != RoutedOp::Settle {
                        return Err(mismatch());
                    }
                    return Ok(self.served(partition, key, pos, &attempt, None));
                }
                RoutedAnswer::Redirect { redirect, .. } => {
                    hops.push(match redirect {
                        Redirect::Moved(r) => Hop::Moved {
                            from: at,
                            to: r.owner,
                            epoch: r.epoch,
                        },
                        Redirect::Ask { node, epoch } => Hop::Ask {
                            from: at,
                            to: node,
                            epoch,
                        },
                    });
                    ClientReply::Redirect(redirect)
                }
                RoutedAnswer::TryAgain => {
                    hops.push(Hop::TryAgain { from: at });
                    tokio::time::sleep(TRY_AGAIN_PAUSE).await;
                    ClientReply::TryAgain
                }
            };
            let now_ms = self.now_ms();
            match driver
                .on_reply(&mut self.cache, reply, now_ms)
                .map_err(routing)?
            {
                Next::Retry(a) => attempt = a,
                Next::Done => unreachable!("invariant broken: the driver is done only on a served answer, which returned above"),
            }
        }
    }

    fn served(
        &self,
        partition: Partition,
        key: u64,
        pos: Position,
        attempt: &livemove_impl::routing::Attempt,
        held: Option<Epoch>,
    ) -> Served {
        Served {
            partition,
            key,
            pos,
            node: attempt.node,
            epoch: attempt.epoch,
            hops: Vec::new(),
            held,
        }
    }
}

fn block_on<T>(
    f: impl std::future::Future<Output = Result<T, RoutedError>>,
) -> Result<T, RoutedError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RoutedError::Client(ClientError::Runtime(e)))?
        .block_on(f)
}

/// Publish message `key` on `partition`, routed from the nodes at
/// `entries`, and wait for its confirm, retrying within `policy`
/// (`RoutedClient::publish_confirmed`; with `resend`, every attempt a
/// retry: `RoutedClient::resend_confirmed`), blocking.
pub fn publish_confirmed_blocking(
    entries: Vec<SocketAddr>,
    partition: Partition,
    key: u64,
    hops_max: u8,
    policy: RetryPolicy,
    resend: bool,
) -> Result<Published, PublishError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PublishError::Routed {
            partition,
            key,
            source: Box::new(RoutedError::Client(ClientError::Runtime(e))),
            attempts: Vec::new(),
        })?;
    rt.block_on(async {
        let mut c = RoutedClient::new(entries, hops_max, policy.attempt_timeout());
        if resend {
            c.resend_confirmed(partition, key, &policy).await
        } else {
            c.publish_confirmed(partition, key, &policy).await
        }
    })
}

/// Settle `count` messages of `partition` one after the other, routed from
/// the nodes at `entries`, each waited for its confirm for at most
/// `wait`, blocking; `done` is called with each settle once it is
/// confirmed, the consumer's "done". Stops at the first failure (nothing
/// left to settle included), which is returned.
pub fn consume_blocking(
    entries: Vec<SocketAddr>,
    partition: Partition,
    count: u64,
    hops_max: u8,
    timeout: Duration,
    wait: Duration,
    mut done: impl FnMut(&Served),
) -> Result<(), RoutedError> {
    block_on(async {
        let mut c = RoutedClient::new(entries, hops_max, timeout);
        for _ in 0..count {
            let s = c.settle(partition).await?;
            c.wait_confirmed(&s, wait).await?;
            done(&s);
        }
        Ok(())
    })
}
