//! The controller process: a failure detector that holds a lease on every
//! node, renewed by each answer of the node to a probe on its port, and
//! three decisions it takes from every partition's record at each poll:
//!
//! - it opens a recovery (`node::recovery::open_recovery`, one guarded
//!   write) for every partition whose record's owner has not answered for
//!   a lease;
//! - while the record names a lost follower and nothing is pending, it
//!   asks the node `decide::replacement` chooses to join as the learner of
//!   a move that replaces the lowest follower that is lost or down
//!   (`tcp::Frame::Join` with `replaces`; note 1, "Lost follower
//!   replaced");
//! - when a swapped move's target has been gone for a lease (lost, or its
//!   own lease lapsed: `decide::TargetWatch`), it asks the owner's node to
//!   swap the leaving copy back (`tcp::Frame::SwapBack`).
//!
//! The last two are the simulator's controller too (`crate::sim`): both
//! call `decide`. The controller makes no guarded write for them: the node
//! asked holds the facts the guard needs (its own instance, the owner's
//! acknowledgements and confirmed tail) and writes it itself; a node that
//! declines (`Started(false)`: still restarting, a race, the store's
//! guard) or cannot be reached is asked again at a later poll, while the
//! decision still stands. The nodes run the rest of the recovery
//! (`node/recovery.rs`) and of the move (`node/moves.rs`); the other
//! guarded writes of the protocol are made by the node that holds the
//! facts each guard needs, or on an operator's request
//! (`tcp::Frame::Join`, `tcp::Frame::HandOff`).
//!
//! A lease that lapses while the owner is still up (a slow node, a cut
//! between it and the controller) opens a recovery against a live owner:
//! the seals fence it, as for any suspected owner (note 1, "Recovery"). A
//! swapped move's target whose process is down is gone once its lease has
//! lapsed, and swapped back a lease after that: two leases in all.

pub mod decide;

use crate::control::{ControlError, ControlPlane, CrashPoint};
use crate::node::recovery::open_recovery;
use crate::node::Env;
use crate::partition::{Partition, Records};
use crate::tcp::client::{ClientError, NodeClient};
use crate::tcp::{hold, StepLock};
use crate::trace::{emit_shared, Event, SharedTracer};
use decide::{Facts, Replacement, TargetWatch};
use livemove_impl::store::Record;
use livemove_impl::{Msg, NodeId, StorageId};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How a controller is started.
pub struct ControllerConfig {
    /// Where the records are.
    pub records: Records,
    /// The partitions it watches.
    pub partitions: Vec<Partition>,
    /// Every node's address.
    pub nodes: BTreeMap<NodeId, SocketAddr>,
    /// How long a node may go without answering before the partitions it
    /// owns are recovered.
    pub lease: Duration,
    /// How often every node is probed and every record read.
    pub poll: Duration,
    /// Trace of each partition (the controller's `OpenRecovery` events).
    pub traces: BTreeMap<Partition, SharedTracer>,
    /// Each partition's step lock, held through the controller's write
    /// and its trace event (see `tcp::PartitionConfig::step`).
    pub steps: BTreeMap<Partition, StepLock>,
    /// The start of the run's clock, for trace times.
    pub clock: Instant,
    /// A crash point on the controller's guarded writes (tests only;
    /// `None`: the control planes are used as they are).
    pub crash: Option<CrashPoint>,
}

/// The controller stopped.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// A partition's control plane failed (not a refusal: those are
    /// retried at the next poll).
    #[error("controller: {partition}: {source}")]
    Control {
        /// The partition.
        partition: Partition,
        /// What failed.
        #[source]
        source: ControlError,
    },
    /// The tokio runtime of the controller process could not start.
    #[error("controller: tokio runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// A request of the controller to a node that got no usable answer. Not
/// fatal: the controller logs it and asks again at a later poll while the
/// decision stands.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The node chosen for a replacement did not answer the join request,
    /// or refused it.
    #[error("controller: {partition}: {node} asked to join replacing {replaces}: {source}")]
    Join {
        /// The partition.
        partition: Partition,
        /// The node asked.
        node: NodeId,
        /// The follower its copy would replace.
        replaces: StorageId,
        /// What failed.
        #[source]
        source: ClientError,
    },
    /// The owner's node did not answer the swap back request, or refused
    /// it.
    #[error(
        "controller: {partition}: {node} (the owner) asked to swap the leaving copy back: {source}"
    )]
    SwapBack {
        /// The partition.
        partition: Partition,
        /// The owner's node.
        node: NodeId,
        /// What failed.
        #[source]
        source: ClientError,
    },
    /// The node to ask is not among the controller's nodes (`--peer`).
    #[error("controller: {partition}: no address for {node}, which the record names")]
    NoAddress {
        /// The partition.
        partition: Partition,
        /// The node.
        node: NodeId,
    },
}

/// What the controller asks a node for, decided from a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ask {
    /// Join as the learner of a replacement (`Node::join_replacing`).
    Join(Replacement),
    /// Swap the leaving copy back (`Node::swap_back`), asked of the owner.
    SwapBack(NodeId),
}

/// The controller's facts: a storage instance is lost when the record says
/// so (the node that came back on an empty disk wrote it), a node is up
/// while its lease holds.
struct Leases<'a> {
    record: &'a Record,
    last_answer: &'a BTreeMap<NodeId, Instant>,
    now: Instant,
    lease: Duration,
}

impl Facts for Leases<'_> {
    fn lost(&self, s: StorageId) -> bool {
        self.record.lost.contains(&s)
    }
    fn up(&self, n: NodeId) -> bool {
        self.last_answer
            .get(&n)
            .is_some_and(|t| self.now.duration_since(*t) <= self.lease)
    }
}

/// The controller's environment for one partition: it only traces.
struct TraceOnly {
    trace: Option<SharedTracer>,
    clock: Instant,
}

impl Env for TraceOnly {
    fn now_ms(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }
    fn send(&mut self, msg: Msg) {
        tracing::warn!(%msg, "the controller sends no protocol message: dropped");
    }
    fn tracing(&self) -> bool {
        self.trace.is_some()
    }
    fn trace(&mut self, event: Event) {
        let t_ms = self.now_ms();
        if let Some(t) = &self.trace {
            if let Err(e) = emit_shared(t, t_ms, &event) {
                tracing::error!(error = %e, "controller trace write failed");
            }
        }
    }
}

/// The controller's state: its leases on the nodes, and on each
/// partition's swapped move target.
pub struct Controller {
    cfg: ControllerConfig,
    planes: BTreeMap<Partition, Box<dyn ControlPlane>>,
    clients: BTreeMap<NodeId, NodeClient>,
    last_answer: BTreeMap<NodeId, Instant>,
    watches: BTreeMap<Partition, TargetWatch>,
    started: Instant,
    opened: u64,
    replacements: u64,
    swap_backs: u64,
}

impl Controller {
    /// Open every partition's control plane. Every node's lease starts
    /// now.
    pub fn new(cfg: ControllerConfig) -> Result<Controller, ControllerError> {
        let mut planes = BTreeMap::new();
        for &p in &cfg.partitions {
            let plane = cfg
                .records
                .open(p)
                .map_err(|source| ControllerError::Control {
                    partition: p,
                    source,
                })?;
            let plane = match &cfg.crash {
                Some(c) => c.wrap(p.to_string(), plane, livemove_impl::Mutants::NONE),
                None => plane,
            };
            planes.insert(p, plane);
        }
        let now = Instant::now();
        let clients = cfg
            .nodes
            .iter()
            .map(|(&n, &a)| (n, NodeClient::new(a)))
            .collect();
        let last_answer = cfg.nodes.keys().map(|&n| (n, now)).collect();
        Ok(Controller {
            cfg,
            planes,
            clients,
            last_answer,
            watches: BTreeMap::new(),
            started: now,
            opened: 0,
            replacements: 0,
            swap_backs: 0,
        })
    }

    /// Recoveries this controller opened.
    pub fn opened(&self) -> u64 {
        self.opened
    }

    /// Replacements this controller started (a node it asked joined).
    pub fn replacements(&self) -> u64 {
        self.replacements
    }

    /// Swap backs this controller had written (an owner it asked did).
    pub fn swap_backs(&self) -> u64 {
        self.swap_backs
    }

    /// Probe every node once (`Frame::Ping`, answered by the node's
    /// connection, not its busy task); a node that answers within half the
    /// lease renews its lease.
    pub async fn probe(&mut self) {
        let wait = self.cfg.lease / 2;
        for (&n, c) in self.clients.iter_mut() {
            match tokio::time::timeout(wait, c.ping()).await {
                Ok(Ok(())) => {
                    self.last_answer.insert(n, Instant::now());
                }
                Ok(Err(_)) => {}
                Err(_) => c.reset(),
            }
        }
    }

    /// Open a recovery for every partition whose owner's lease lapsed and
    /// that has none pending. Returns how many were opened.
    pub fn detect(&mut self) -> Result<u64, ControllerError> {
        let now = Instant::now();
        let mut opened = 0;
        for (&partition, plane) in self.planes.iter_mut() {
            let failed = |source| ControllerError::Control { partition, source };
            let record = plane.read().map_err(failed)?;
            if record.recovery.is_some() {
                continue;
            }
            let owner = record.owner.node;
            let lapsed = self
                .last_answer
                .get(&owner)
                .is_none_or(|t| now.duration_since(*t) > self.cfg.lease);
            if !lapsed {
                continue;
            }
            let mut env = TraceOnly {
                trace: self.cfg.traces.get(&partition).cloned(),
                clock: self.cfg.clock,
            };
            let opened_now = {
                let lock = self.cfg.steps.get(&partition).cloned();
                let _step = hold(&lock);
                open_recovery(plane.as_mut(), &record, &mut env).map_err(failed)?
            };
            if opened_now {
                tracing::info!(%partition, %owner, "owner's lease lapsed: recovery opened");
                opened += 1;
            }
        }
        self.opened += opened;
        Ok(opened)
    }

    /// What to ask of which node now, per partition: a replacement's join
    /// (`decide::replacement`) or an owner's swap back
    /// (`decide::TargetWatch`), from the record and the leases.
    fn decide(&mut self) -> Result<Vec<(Partition, Ask)>, ControllerError> {
        let now = Instant::now();
        let now_ms = now.duration_since(self.started).as_millis() as u64;
        let lease_ms = self.cfg.lease.as_millis() as u64;
        let mut asks = Vec::new();
        for (&partition, plane) in self.planes.iter_mut() {
            let record = plane
                .read()
                .map_err(|source| ControllerError::Control { partition, source })?;
            let facts = Leases {
                record: &record,
                last_answer: &self.last_answer,
                now,
                lease: self.cfg.lease,
            };
            let watch = self.watches.entry(partition).or_default();
            if let Some(owner) = watch.due(&record, &facts, now_ms, lease_ms) {
                asks.push((partition, Ask::SwapBack(owner)));
            } else if let Some(rep) =
                decide::replacement(&record, self.cfg.nodes.keys().copied(), &facts)
            {
                asks.push((partition, Ask::Join(rep)));
            }
        }
        Ok(asks)
    }

    /// Ask `node` for `ask` on `partition`, waiting at most half a lease:
    /// whether its guarded write committed.
    async fn ask(&mut self, partition: Partition, ask: Ask) -> Result<bool, AskError> {
        let node = match ask {
            Ask::Join(rep) => rep.by,
            Ask::SwapBack(owner) => owner,
        };
        let wait = self.cfg.lease / 2;
        let Some(c) = self.clients.get_mut(&node) else {
            return Err(AskError::NoAddress { partition, node });
        };
        let addr = c.addr();
        let asked = match ask {
            Ask::Join(rep) => {
                tokio::time::timeout(wait, c.join(partition, Some(rep.replaces.node))).await
            }
            Ask::SwapBack(_) => tokio::time::timeout(wait, c.swap_back(partition)).await,
        };
        let answer = asked.unwrap_or_else(|_| {
            c.reset();
            Err(ClientError::TimedOut { addr, waited: wait })
        });
        answer.map_err(|source| match ask {
            Ask::Join(rep) => AskError::Join {
                partition,
                node,
                replaces: rep.replaces,
                source,
            },
            Ask::SwapBack(_) => AskError::SwapBack {
                partition,
                node,
                source,
            },
        })
    }

    /// Take the replacement and swap back decisions of every partition and
    /// ask the nodes for them. Returns how many guarded writes the nodes
    /// asked made; a node that could not be asked is logged, and asked
    /// again at a later poll if the decision still stands.
    pub async fn replace(&mut self) -> Result<u64, ControllerError> {
        let mut made = 0;
        for (partition, ask) in self.decide()? {
            match self.ask(partition, ask).await {
                Ok(true) => {
                    made += 1;
                    match ask {
                        Ask::Join(rep) => {
                            self.replacements += 1;
                            tracing::info!(%partition, node = %rep.by, replaces = %rep.replaces, "replacement started: the node joined as its learner");
                        }
                        Ask::SwapBack(owner) => {
                            self.swap_backs += 1;
                            self.watches.entry(partition).or_default().done();
                            tracing::info!(%partition, %owner, "the swapped move's target is gone: its leaving copy swapped back");
                        }
                    }
                }
                Ok(false) => {
                    tracing::debug!(%partition, ?ask, "the node declined (the record's state or a race); asked again later");
                }
                Err(e) => tracing::warn!(error = %e, "asked again later"),
            }
        }
        Ok(made)
    }

    /// Probe, detect and replace every poll period, until a control plane
    /// fails.
    pub async fn run(mut self) -> Result<(), ControllerError> {
        let mut timer = tokio::time::interval(self.cfg.poll);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            timer.tick().await;
            self.probe().await;
            self.detect()?;
            self.replace().await?;
        }
    }
}

/// Run a controller on a current-thread tokio runtime of its own until a
/// control plane fails: the body of `livemove controller`.
pub fn run_blocking(cfg: ControllerConfig) -> Result<(), ControllerError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ControllerError::Runtime)?;
    rt.block_on(async { Controller::new(cfg)?.run().await })
}
