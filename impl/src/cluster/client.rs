//! The queue's client (note 2, routing after Redis Cluster's MOVED and ASK):
//! a producer with a topology cache that publishes through redirects, one
//! request at a time, built on `routing`.
//!
//! - `client_publish`: a new message (the next producer sequence, which is
//!   the message key) is sent along the cached route, carrying its epoch.
//! - `answer_client`: the node the request is at answers from its own view
//!   (`server_view`, `routing::answer`). An `Ok` is an acceptance: the node
//!   appends the message, or finds its key in its history (the producer
//!   retry's lookup, `Serving::publish_retry`). Any other answer goes to the
//!   request's `RequestDriver`: a hop, a MOVED learned forward in epoch, a
//!   one-shot ASK, and at the hop limit the request gives up.
//! - `ack_client`: the node that accepted acknowledges, once it serves and
//!   its confirmed tail covers the message.
//! - `client_timeout`: the request's deadline passes (the node is down, the
//!   answer or the acknowledgement is late or lost); the client drops it
//!   and refreshes its cache from the record, forward in epoch only.
//! - `client_retry`: the message that ended unacknowledged is sent again,
//!   with the same key, along the cached route.
//!
//! A cluster has any number of clients (`with_clients`), each a producer
//! with its own id, topology cache and request; every action names the
//! producer it is about. Message keys are drawn from the cluster's one
//! counter, so a key names its producer and that producer's sequence at
//! once, and a retry (the same key) is found in an owner's history
//! whatever other producers published in between.
//!
//! The cluster keeps no clock: a request's deadline is never checked by
//! the driver, its passing is `client_timeout`. A producer the cluster does
//! not have is refused all five with `ClusterError::NoClient`.

use super::{Cluster, ClusterError, Outcome};
use crate::entry::Op;
use crate::ids::{NodeId, Position, ProducerId};
use crate::mutant::Mutant;
use crate::owner::{Retried, Serving};
use crate::routing::{
    answer, Attempt, ClientReply, Next, PartitionId, RequestDriver, Route, RoutingError, Served,
    ServerView, TopologyCache,
};
use crate::store::HandoffPhase;
use serde::Serialize;
use std::collections::BTreeSet;

/// The partition the in-memory cluster serves, as the client's cache names it.
pub const PARTITION: PartitionId = PartitionId(0);

/// Where the client's request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestPhase {
    /// Sent to the attempt's node, awaiting its answer.
    Sent,
    /// The attempt's node accepted it; it awaits the acknowledgement.
    Accepted,
}

/// The client's request in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClientRequest {
    key: u64,
    driver: RequestDriver,
    attempt: Attempt,
    phase: RequestPhase,
}

impl ClientRequest {
    /// The message key (the producer sequence) it carries.
    pub fn key(&self) -> u64 {
        self.key
    }
    /// Where it is (or was accepted), with the epoch it carries and the
    /// ASKING flag of this attempt.
    pub fn attempt(&self) -> Attempt {
        self.attempt
    }
    /// Answers other than an acceptance it followed.
    pub fn hops(&self) -> u8 {
        self.driver.hops()
    }
    /// Where it stands.
    pub fn phase(&self) -> RequestPhase {
        self.phase
    }
}

/// The queue's client: its topology cache, the hop limit of each request,
/// the request in flight, the message awaiting its acknowledgement and
/// the messages acknowledged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QueueClient {
    producer: ProducerId,
    hops_max: u8,
    cache: TopologyCache,
    request: Option<ClientRequest>,
    /// The message sent last and not acknowledged (in flight, or ended by
    /// a timeout or the hop limit and waiting for a retry).
    pending: Option<u64>,
    acked: BTreeSet<u64>,
}

impl QueueClient {
    /// Its producer id.
    pub fn producer(&self) -> ProducerId {
        self.producer
    }
    /// The hop limit of each request.
    pub fn hops_max(&self) -> u8 {
        self.hops_max
    }
    /// The cached (stable) route of the cluster's partition.
    pub fn route(&self) -> Option<Route> {
        self.cache.get(PARTITION)
    }
    /// The topology cache.
    pub fn cache(&self) -> &TopologyCache {
        &self.cache
    }
    /// The request in flight, if any.
    pub fn request(&self) -> Option<&ClientRequest> {
        self.request.as_ref()
    }
    /// The key of the message sent last and not acknowledged, if any.
    pub fn pending(&self) -> Option<u64> {
        self.pending
    }
    /// The keys of the messages acknowledged to the client.
    pub fn acked(&self) -> &BTreeSet<u64> {
        &self.acked
    }
}

impl Cluster {
    /// The same cluster with `count` clients of the queue, producers `c1`
    /// to `c<count>`, whose requests follow at most `hops_max` answers
    /// other than an acceptance; each cache starts with the record's owner
    /// at the record's epoch.
    pub fn with_clients(mut self, hops_max: u8, count: u8) -> Self {
        let route = self.record_route();
        self.clients = (1..=count)
            .map(|k| {
                let mut cache = TopologyCache::default();
                cache.learn(PARTITION, route);
                QueueClient {
                    producer: ProducerId(k),
                    hops_max,
                    cache,
                    request: None,
                    pending: None,
                    acked: BTreeSet::new(),
                }
            })
            .collect();
        self
    }

    /// The same cluster with one client, producer `c1` (`with_clients`).
    pub fn with_client(self, hops_max: u8) -> Self {
        self.with_clients(hops_max, 1)
    }

    /// The client of producer `p`, if the cluster has it.
    pub fn client(&self, p: ProducerId) -> Option<&QueueClient> {
        self.clients.get(p.0.checked_sub(1)? as usize)
    }

    /// Every client, `c1` first.
    pub fn clients(&self) -> &[QueueClient] {
        &self.clients
    }

    /// What `node` knows when a request reaches it: its serving state (if
    /// it serves: up, serving, not fenced), the record's owner and epoch,
    /// and, if it is the old owner of a committed handoff whose new owner
    /// has not activated and no recovery is pending, that new owner at the
    /// record's epoch. A node that is down answers nothing (`NodeDown`).
    pub fn server_view(&self, node: NodeId) -> Result<ServerView, ClusterError> {
        self.alive(node)?;
        let r = self.record();
        let serving = self.serves(node).map(|s| Served {
            epoch: s.epoch(),
            admission_open: s.admission_open(),
        });
        let handoff_to = r
            .handoff
            .as_ref()
            .filter(|h| {
                h.phase == HandoffPhase::Committed && h.from.node == node && r.recovery.is_none()
            })
            .map(|h| Route {
                owner: h.to.node,
                epoch: r.epoch,
            });
        Ok(ServerView {
            node,
            serving,
            record_owner: self.record_route(),
            handoff_to,
        })
    }

    /// `ClientPublish`: producer `p`'s client, with no request in flight,
    /// sends a new message (the next key) along its cached route.
    pub fn client_publish(&mut self, p: ProducerId) -> Result<Outcome, ClusterError> {
        self.atomically("client_publish", |c| {
            c.idle_client(p)?;
            let key = c.next_key();
            c.send_request(p, key)
        })
    }

    /// `ClientRetry`: the client, with no request in flight, sends the
    /// message that ended unacknowledged again (same key) along its cached
    /// route.
    pub fn client_retry(&mut self, p: ProducerId) -> Result<Outcome, ClusterError> {
        self.atomically("client_retry", |c| {
            let key = c
                .idle_client(p)?
                .pending
                .ok_or(ClusterError::NothingUnacknowledged)?;
            c.send_request(p, key)
        })
    }

    /// `AnswerClient`: the node the request is at (up) answers it. An
    /// acceptance appends the message, or finds its key in the node's
    /// history; any other answer costs a hop, and at the hop limit the
    /// request gives up (its message waits for a retry).
    pub fn answer_client(&mut self, p: ProducerId) -> Result<Outcome, ClusterError> {
        self.atomically("answer_client", |c| {
            let req = c
                .client_ref(p)?
                .request
                .clone()
                .ok_or(ClusterError::NoRequestInFlight)?;
            let node = req.attempt.node;
            if req.phase == RequestPhase::Accepted {
                return Err(ClusterError::RequestAccepted { node });
            }
            let reply = answer(&c.server_view(node)?, &req.attempt);
            if reply == ClientReply::Ok {
                return c.accept(p, node, req.key);
            }
            let cl = c.client_mut(p)?;
            let QueueClient { cache, request, .. } = cl;
            let r = request.as_mut().expect("checked above");
            // No clock here: the deadline is `client_timeout`'s.
            match r.driver.on_reply(cache, reply, 0) {
                Ok(Next::Retry(next)) => {
                    r.attempt = next;
                    Ok(Outcome::ClientRedirected { reply, next })
                }
                Ok(Next::Done) => {
                    panic!("invariant broken: a request driver finished on {reply:?}")
                }
                Err(RoutingError::HopLimit { hops }) => {
                    *request = None;
                    Ok(Outcome::ClientGaveUp { key: req.key, hops })
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    /// `AckClient`: the node that accepted the request acknowledges it, once
    /// it serves and its confirmed tail covers the message (the first entry
    /// that carries its key).
    pub fn ack_client(&mut self, p: ProducerId) -> Result<Outcome, ClusterError> {
        self.atomically("ack_client", |c| {
            let req = c
                .client_ref(p)?
                .request
                .clone()
                .filter(|r| r.phase == RequestPhase::Accepted)
                .ok_or(ClusterError::NothingAccepted)?;
            let node = req.attempt.node;
            c.alive(node)?;
            let s = c.serves(node).ok_or(ClusterError::NotServing { node })?;
            let pos = c.nodes[node.index()]
                .replica
                .entries()
                .iter()
                .position(|e| matches!(e.op, Op::Put { key, .. } if key == req.key))
                .map(|i| i as Position + 1)
                .ok_or(ClusterError::MessageNotHeld { node, key: req.key })?;
            let tail = s.confirmed_tail();
            if pos > tail && !c.mutants.on(Mutant::AckBeforeConfirm) {
                return Err(ClusterError::NotConfirmed { node, pos, tail });
            }
            let cl = c.client_mut(p)?;
            cl.acked.insert(req.key);
            cl.request = None;
            cl.pending = None;
            Ok(Outcome::ClientAcked {
                key: req.key,
                node,
                pos,
            })
        })
    }

    /// `ClientTimeout`: the request's deadline passes; the client drops it
    /// (its message waits for a retry) and refreshes its cache from the
    /// record, forward in epoch only.
    pub fn client_timeout(&mut self, p: ProducerId) -> Result<Outcome, ClusterError> {
        self.atomically("client_timeout", |c| {
            let fresh = c.record_route();
            let cl = c.client_mut(p)?;
            let req = cl.request.take().ok_or(ClusterError::NoRequestInFlight)?;
            cl.cache.learn(PARTITION, fresh);
            let route = cl
                .route()
                .expect("invariant broken: the client's cache lost its route");
            Ok(Outcome::ClientTimedOut {
                key: req.key,
                route,
            })
        })
    }

    /// The owner and epoch the committed record names.
    fn record_route(&self) -> Route {
        let r = self.record();
        Route {
            owner: r.owner.node,
            epoch: r.epoch,
        }
    }

    /// `node`'s serving state, if it serves: up, serving, and its replica
    /// not fenced at the serving epoch (it could append).
    pub(crate) fn serves(&self, node: NodeId) -> Option<&Serving> {
        let n = self.node(node).ok()?;
        let s = n.serving.as_ref()?;
        (n.alive && n.replica.fenced_against(s.epoch(), self.mutants).is_none()).then_some(s)
    }

    fn client_ref(&self, p: ProducerId) -> Result<&QueueClient, ClusterError> {
        self.client(p).ok_or(ClusterError::NoClient { producer: p })
    }

    fn client_mut(&mut self, p: ProducerId) -> Result<&mut QueueClient, ClusterError> {
        p.0.checked_sub(1)
            .and_then(|i| self.clients.get_mut(i as usize))
            .ok_or(ClusterError::NoClient { producer: p })
    }

    /// Producer `p`'s client, if it has no request in flight.
    fn idle_client(&self, p: ProducerId) -> Result<&QueueClient, ClusterError> {
        let cl = self.client_ref(p)?;
        match &cl.request {
            Some(r) => Err(ClusterError::RequestInFlight { key: r.key }),
            None => Ok(cl),
        }
    }

    /// Send `key` along producer `p`'s cached route as a new request.
    fn send_request(&mut self, p: ProducerId, key: u64) -> Result<Outcome, ClusterError> {
        let mutants = self.mutants;
        let cl = self.client_mut(p)?;
        // No clock here: the deadline is `client_timeout`'s.
        let (driver, to) = RequestDriver::start(&cl.cache, PARTITION, 0, u64::MAX, cl.hops_max)?;
        cl.request = Some(ClientRequest {
            key,
            driver: driver.with_mutants(mutants),
            attempt: to,
            phase: RequestPhase::Sent,
        });
        cl.pending = Some(key);
        Ok(Outcome::ClientSent { key, to })
    }

    /// `node` answered `Ok`: it appends the message, or finds its key in its
    /// history.
    fn accept(&mut self, p: ProducerId, node: NodeId, key: u64) -> Result<Outcome, ClusterError> {
        let mutants = self.mutants;
        let n = &mut self.nodes[node.index()];
        let s = n
            .serving
            .as_mut()
            .expect("invariant broken: a node that accepts a request serves");
        let epoch = s.epoch();
        let (pos, epoch, appended) =
            match s.publish_retry(&mut n.replica, Op::Put { key, value: key }, mutants)? {
                Retried::Held { pos, epoch } => (pos, epoch, false),
                Retried::Appended { pos, persist } => {
                    n.persist(&persist);
                    (pos, epoch, true)
                }
            };
        let cl = self.client_mut(p)?;
        let r = cl
            .request
            .as_mut()
            .expect("invariant broken: an accepted request is in flight");
        r.phase = RequestPhase::Accepted;
        Ok(Outcome::ClientAccepted {
            node,
            key,
            pos,
            epoch,
            appended,
        })
    }
}
