//! A serializable picture of the whole cluster, for harnesses that map it to
//! an abstract state.

use super::{Cluster, ClusterConfig, NodeState, QueueClient, RetainedCopy};
use crate::controller::Known;
use crate::mutant::Mutant;
use crate::net::Msg;
use crate::store::Record;
use serde::Serialize;

/// Everything a harness needs: per node liveness, disk, log with epoch
/// tags, fence, seal and serving state (epoch, counted set, W, admission,
/// confirmed tail, boundaries); the record with its pending recovery
/// (sealed, installed, recovered tail), move and handoff; the controller's
/// plan and what it was told of progress; the queue's clients; the
/// settles its consumer was told are done; the logical clock and the
/// retained copies with their grace periods.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClusterState {
    /// The configuration.
    pub config: ClusterConfig,
    /// Switched-on mutants.
    pub mutants: Vec<Mutant>,
    /// Every node, `n1` first.
    pub nodes: Vec<NodeState>,
    /// The committed record.
    pub record: Record,
    /// The controller's planned moves left, if it plans them.
    pub planned_moves: Option<u8>,
    /// Messages in flight (networked delivery).
    pub in_flight: Vec<Msg>,
    /// What the controller was told of progress (networked delivery).
    pub known: Known,
    /// The queue's clients, `c1` first: cache, request in flight, messages
    /// acknowledged.
    pub clients: Vec<QueueClient>,
    /// The message keys whose settle the consumer was told is done.
    pub settled: Vec<u64>,
    /// The logical clock, in milliseconds.
    pub now_ms: u64,
    /// Copies the record no longer names that keep their data.
    pub retained: Vec<RetainedCopy>,
}

impl Cluster {
    /// The whole state, cloned.
    pub fn snapshot(&self) -> ClusterState {
        ClusterState {
            config: self.config,
            mutants: self.mutants.iter().collect(),
            nodes: self.nodes.iter().map(NodeState::from).collect(),
            record: self.record().clone(),
            planned_moves: self.planned,
            in_flight: self.in_flight.iter().copied().collect(),
            known: self.known.clone(),
            clients: self.clients.clone(),
            settled: self.settled.iter().copied().collect(),
            now_ms: self.now_ms,
            retained: self.retained(),
        }
    }
}
