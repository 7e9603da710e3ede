//! The controller process's failure detector: it holds a lease on every
//! node, renewed by each answer of the node to a probe on its port, and
//! opens a recovery (`node::recovery::open_recovery`, one guarded write)
//! for every partition whose record's owner has not answered for a lease.
//! The nodes run the rest of the recovery (`node/recovery.rs`); the other
//! guarded writes of the protocol are made by the node that holds the
//! facts each guard needs, or on an operator's request (`tcp::Frame::Join`,
//! `tcp::Frame::HandOff`).
//!
//! A lease that lapses while the owner is still up (a slow node, a cut
//! between it and the controller) opens a recovery against a live owner:
//! the seals fence it, as for any suspected owner (note 1, "Recovery").

use crate::control::{ControlError, ControlPlane, CrashPoint};
use crate::node::recovery::open_recovery;
use crate::node::Env;
use crate::partition::{Partition, Records};
use crate::tcp::client::NodeClient;
use crate::tcp::{hold, StepLock};
use crate::trace::{emit_shared, Event, SharedTracer};
use livemove_impl::{Msg, NodeId};
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

/// The failure detector's state.
pub struct Controller {
    cfg: ControllerConfig,
    planes: BTreeMap<Partition, Box<dyn ControlPlane>>,
    clients: BTreeMap<NodeId, NodeClient>,
    last_answer: BTreeMap<NodeId, Instant>,
    opened: u64,
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
            opened: 0,
        })
    }

    /// Recoveries this controller opened.
    pub fn opened(&self) -> u64 {
        self.opened
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

    /// Probe and detect every poll period, until a control plane fails.
    pub async fn run(mut self) -> Result<(), ControllerError> {
        let mut timer = tokio::time::interval(self.cfg.poll);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            timer.tick().await;
            self.probe().await;
            self.detect()?;
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
