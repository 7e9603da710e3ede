//! The in-memory cluster: nodes plus the coordination store, one method per
//! shared action, each applied atomically.
//!
//! Every action either returns an `Outcome` or refuses with a
//! `ClusterError` that names the failed precondition; a refused action
//! leaves the cluster exactly as it was (it runs on a copy that is dropped).
//! A replicate that reaches a replica fenced against the sender is not a
//! refusal of the action: the replica refuses the append, the sender learns
//! the newer epoch and stops serving, and the action returns
//! `Outcome::Refused`.
//!
//! With `Delivery::Atomic` (the default), effects are delivered
//! synchronously inside the action that causes them:
//! replica `Persist` commands go to the node's in-memory disk, the owner
//! observes each record change it would see in production (not while it is
//! suspected by a pending recovery), and a node that learns of a newer
//! epoch stops serving. With `Delivery::Networked` the serving path's
//! messages (appends, acknowledgements, refusals, suspension notices) are
//! put in flight instead and handed over one at a time by `deliver`;
//! `drop_msg` and `duplicate` are the network's faults (`network.rs`).
//! No decision on that path then depends on a delivery happening inside
//! the action that sent it. The owner reports copies' progress to the
//! controller as messages too (`report_progress`), and the controller's
//! guarded writes that wait on a copy read only what it was told
//! (`progress.rs`). A copy marks its acknowledgements from what it knows
//! of its own suspension, which it reads from the record on its own time
//! (`notice_rejoin` in `faults.rs`), not from the record at each delivery.
//!
//! Getters: `config`, `mutants`, `record`, `nodes`, `node`, `snapshot`,
//! `in_flight`, `known`, `client`, `clients`, `server_view`, `settled`.
//! Actions: see `serving.rs`, `moves.rs`, `handoff.rs`, `faults.rs`,
//! `recovery.rs`, `network.rs`, `progress.rs`, `retention.rs`, the queue's
//! clients in `client.rs` (configured with `with_clients`) and its consumer
//! in `consumer.rs`.

mod aborts;
mod client;
mod consumer;
mod error;
mod faults;
mod handoff;
mod moves;
mod network;
mod node;
mod outcome;
mod progress;
mod recovery;
mod retained;
mod retention;
mod serving;
mod snapshot;

pub use client::{ClientRequest, QueueClient, RequestPhase, PARTITION};
pub use error::ClusterError;
pub use node::{Node, NodeState};
pub use outcome::Outcome;
pub use retained::RetainedCopy;
pub use snapshot::ClusterState;

use crate::controller::Known;
use crate::entry::common_prefix;
use crate::ids::{NodeId, Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use crate::net::InFlight;
use crate::owner::{RecordView, Serving};
use crate::replica::Replica;
use crate::store::{CoordinationStore, MemRecordStorage, Record, Write};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Nodes the in-memory cluster supports; node ids are `u8` and sets are small.
pub const NODES_MAX: u8 = 16;

/// How the serving path's messages travel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Each `replicate` delivers the append and its acknowledgement (or
    /// refusal) inside the action; a restart's suspension and a rejoin
    /// reach the owner at once.
    #[default]
    Atomic,
    /// Appends, acknowledgements, refusals and suspension notices are
    /// messages in flight (`network.rs`): a driver delivers, drops and
    /// duplicates them, in any order.
    Networked,
}

/// The shape of a cluster: `nodes` nodes, replication factor `rf`; `n1`
/// owns at epoch 1 with `n2..n(rf)` as followers, the rest start empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// How many nodes.
    pub nodes: u8,
    /// The configured replication factor.
    pub rf: u8,
    /// How the serving path's messages travel.
    #[serde(default)]
    pub delivery: Delivery,
    /// How long a copy the record stops naming keeps its data before the
    /// node may discard it (note 1, "After removal"), in milliseconds of
    /// the cluster's logical clock.
    #[serde(default = "default_retained_grace_ms")]
    pub retained_grace_ms: u64,
}

/// The default grace period of a retained copy: one hour.
pub const DEFAULT_RETAINED_GRACE_MS: u64 = 3_600_000;

fn default_retained_grace_ms() -> u64 {
    DEFAULT_RETAINED_GRACE_MS
}

impl ClusterConfig {
    /// `nodes` nodes at replication factor `rf`, atomic delivery.
    pub fn atomic(nodes: u8, rf: u8) -> Self {
        ClusterConfig {
            nodes,
            rf,
            delivery: Delivery::Atomic,
            retained_grace_ms: DEFAULT_RETAINED_GRACE_MS,
        }
    }
    /// `nodes` nodes at replication factor `rf`, messages in flight.
    pub fn networked(nodes: u8, rf: u8) -> Self {
        ClusterConfig {
            nodes,
            rf,
            delivery: Delivery::Networked,
            retained_grace_ms: DEFAULT_RETAINED_GRACE_MS,
        }
    }
    /// The same configuration with a retained copy's grace period of `ms`.
    pub fn with_retained_grace_ms(mut self, ms: u64) -> Self {
        self.retained_grace_ms = ms;
        self
    }
}

/// The in-memory cluster. Equality compares everything, durable storage
/// included (a refused action must leave all of it as it was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    config: ClusterConfig,
    mutants: Mutants,
    store: CoordinationStore<MemRecordStorage>,
    nodes: Vec<Node>,
    next_key: u64,
    /// The controller's plan: planned moves (follower moves and rf
    /// increases) it may still start; `None` when moves are not planned
    /// ahead (every `add_learner` is its own request). See `aborts.rs`.
    planned: Option<u8>,
    /// Messages in flight (always empty with atomic delivery).
    in_flight: InFlight,
    /// What the controller was told of progress (networked delivery; it
    /// stays empty with atomic delivery, where the controller reads the
    /// copies' logs at the moment of a write).
    known: Known,
    /// The queue's clients, `c1` first (`with_clients`).
    clients: Vec<client::QueueClient>,
    /// The consumer's record: the message keys whose settle it was told is
    /// done (`consumer.rs`).
    settled: BTreeSet<u64>,
    /// The logical clock, in milliseconds (`retained.rs`).
    now_ms: u64,
}

impl Cluster {
    /// A cluster as `config` describes, serving at epoch 1.
    pub fn new(config: ClusterConfig) -> Self {
        assert!(
            (1..=NODES_MAX).contains(&config.nodes),
            "invalid config: {} nodes (1..={NODES_MAX})",
            config.nodes
        );
        assert!(
            (1..=config.nodes).contains(&config.rf),
            "invalid config: rf {} with {} nodes",
            config.rf,
            config.nodes
        );
        let ids: Vec<NodeId> = (1..=config.nodes).map(NodeId).collect();
        let owner = StorageId::first(ids[0]);
        let followers = ids[1..usize::from(config.rf)]
            .iter()
            .map(|n| StorageId::first(*n));
        let initial = Record::initial(owner, followers, config.rf);
        let store = CoordinationStore::open(MemRecordStorage::default(), initial, Mutants::NONE)
            .expect("in-memory storage cannot fail");
        let mut nodes: Vec<Node> = ids
            .iter()
            .map(|n| Node::new(*n, Replica::new(StorageId::first(*n))))
            .collect();
        let record = store.record().clone();
        let serving = Serving::activate(
            owner,
            record.epoch,
            record.counted(),
            record.confirm_w,
            0,
            view_of(&record),
        );
        let serving = match config.delivery {
            Delivery::Atomic => serving,
            Delivery::Networked => serving.networked(),
        };
        // Every copy the epoch-1 record assigns knows epoch 1, as a copy
        // assigned by a later record learns its epoch with its first append.
        for s in record.counted() {
            let n = &mut nodes[s.node.index()];
            let persist = n.replica.observe_epoch(record.epoch);
            n.persist(&persist);
        }
        nodes[0].serving = Some(serving);
        Cluster {
            config,
            mutants: Mutants::NONE,
            store,
            nodes,
            next_key: 1,
            planned: None,
            in_flight: InFlight::default(),
            known: Known::default(),
            clients: Vec::new(),
            settled: BTreeSet::new(),
            now_ms: 0,
        }
    }

    /// The same cluster with a plan of `moves` planned moves: `add_learner`
    /// starts a planned move only while one is left, a replacement of a
    /// copy that is down or lost needs none, and a planned move cancelled
    /// for a reason is given back.
    pub fn with_planned_moves(mut self, moves: u8) -> Self {
        self.planned = Some(moves);
        self
    }

    /// Planned moves the controller may still start (`None`: not planned).
    pub fn planned_moves(&self) -> Option<u8> {
        self.planned
    }

    /// The same cluster with mutant `m` switched on.
    pub fn with_mutant(mut self, m: Mutant) -> Self {
        self.mutants = self.mutants.with(m);
        self.store.set_mutants(self.mutants);
        self
    }

    /// The configuration.
    pub fn config(&self) -> ClusterConfig {
        self.config
    }
    /// The committed coordination record.
    pub fn record(&self) -> &Record {
        self.store.record()
    }
    /// Every node, `n1` first.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// One node.
    pub fn node(&self, id: NodeId) -> Result<&Node, ClusterError> {
        if id.0 == 0 || id.0 > self.config.nodes {
            return Err(ClusterError::UnknownNode { node: id });
        }
        Ok(&self.nodes[id.index()])
    }

    /// Run `f` on a copy and keep the copy only if `f` succeeds.
    fn atomically<T>(
        &mut self,
        action: &'static str,
        f: impl FnOnce(&mut Cluster) -> Result<T, ClusterError>,
    ) -> Result<T, ClusterError>
    where
        T: std::fmt::Debug,
    {
        let span = tracing::info_span!("action", name = action);
        let _enter = span.enter();
        let mut next = self.clone();
        match f(&mut next) {
            Ok(v) => {
                tracing::info!(outcome = ?v, "{action}");
                next.note_retained();
                *self = next;
                Ok(v)
            }
            Err(e) => {
                tracing::debug!(error = %e, "{action} refused");
                Err(e)
            }
        }
    }

    fn node_mut(&mut self, id: NodeId) -> Result<&mut Node, ClusterError> {
        self.node(id)?;
        Ok(&mut self.nodes[id.index()])
    }

    fn alive_mut(&mut self, id: NodeId) -> Result<&mut Node, ClusterError> {
        let n = self.node_mut(id)?;
        if !n.alive {
            return Err(ClusterError::NodeDown { node: id });
        }
        Ok(n)
    }

    fn alive(&self, id: NodeId) -> Result<&Node, ClusterError> {
        let n = self.node(id)?;
        if !n.alive {
            return Err(ClusterError::NodeDown { node: id });
        }
        Ok(n)
    }

    /// The node running storage instance `s` now, if its disk is still `s`.
    fn holder(&self, s: StorageId) -> Option<&Node> {
        let n = self.node(s.node).ok()?;
        (n.replica.id() == s).then_some(n)
    }

    /// The record owner's history (its durable log), if its disk exists.
    fn owner_log(&self) -> &[crate::entry::Entry] {
        self.holder(self.record().owner)
            .map_or(&[], |n| n.replica.entries())
    }

    /// How far `s` durably holds the record owner's history, as the copy
    /// reports it: a copy whose process is down reports nothing (note 1:
    /// "T reports durable progress at or beyond B"). Under
    /// `covers_by_length` the report is the log's length, not the prefix it
    /// shares with the owner's history.
    fn durable(&self, s: StorageId) -> Position {
        self.holder(s).filter(|n| n.alive).map_or(0, |n| {
            if self.mutants.on(Mutant::CoversByLength) {
                n.replica.len()
            } else {
                common_prefix(n.replica.entries(), self.owner_log())
            }
        })
    }

    /// The record owner's serving state, if it is up and serving at the record's epoch.
    fn owner_serving(&self) -> Result<&Serving, ClusterError> {
        let r = self.record();
        let not = ClusterError::OwnerNotServing { owner: r.owner };
        let n = self.holder(r.owner).ok_or(not.clone())?;
        match &n.serving {
            Some(s) if n.alive && s.me() == r.owner && s.epoch() == r.epoch => Ok(s),
            _ => Err(not),
        }
    }

    fn owner_serving_mut(&mut self) -> Result<&mut Serving, ClusterError> {
        self.owner_serving()?;
        let owner = self.record().owner;
        Ok(self.nodes[owner.node.index()]
            .serving
            .as_mut()
            .expect("checked above"))
    }

    /// The storage instance a node runs now.
    fn storage_of(&self, id: NodeId) -> Result<StorageId, ClusterError> {
        Ok(self.node(id)?.replica.id())
    }

    /// Commit one guarded write and let the owner observe the result.
    fn write(&mut self, w: Write) -> Result<Record, ClusterError> {
        let r = self.store.write_current(w)?.clone();
        if r.recovery.is_none() {
            if let Ok(s) = self.owner_serving_mut() {
                s.observe(view_of(&r));
            }
        }
        Ok(r)
    }

    /// A node learned of `epoch`: its replica records it and, if it served
    /// at an older epoch, it stops serving.
    fn learn_epoch(&mut self, id: NodeId, epoch: crate::ids::Epoch) {
        let n = &mut self.nodes[id.index()];
        let persist = n.replica.observe_epoch(epoch);
        n.persist(&persist);
        if n.serving.as_ref().is_some_and(|s| s.epoch() < epoch) {
            tracing::info!(node = %id, epoch = epoch.0, "saw a newer epoch: stops serving");
            n.serving = None;
        }
    }

    /// Whether messages travel through the network.
    pub(crate) fn networked(&self) -> bool {
        self.config.delivery == Delivery::Networked
    }

    /// A new serving state, taking messages when delivery is networked.
    pub(crate) fn serve(&self, s: Serving) -> Serving {
        if self.networked() {
            s.networked()
        } else {
            s
        }
    }

    fn next_key(&mut self) -> u64 {
        let k = self.next_key;
        self.next_key += 1;
        k
    }

    /// The key of the newest publish the producer sent, if any.
    fn last_key(&self) -> Option<u64> {
        self.next_key.checked_sub(1).filter(|k| *k > 0)
    }
}

/// The part of the record an owner watches.
pub(crate) fn view_of(r: &Record) -> RecordView {
    RecordView {
        version: r.version,
        learners: r.learners.clone(),
        suspended: r.suspended.clone(),
        assigned_copies: r.assigned().len() as u8,
    }
}

#[cfg(test)]
mod tests;
