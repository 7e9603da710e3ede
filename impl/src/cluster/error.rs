//! Errors of the in-memory cluster's API boundary: a refused action names
//! its failed precondition and leaves the cluster unchanged.

use crate::controller::ControllerError;
use crate::ids::{NodeId, Position, ProducerId, StorageId};
use crate::net::NetError;
use crate::owner::OwnerError;
use crate::replica::ReplicaError;
use crate::routing::RoutingError;
use crate::store::StoreError;

/// A refused action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// No such node in this cluster.
    #[error("no node {node}")]
    UnknownNode {
        /// The node named.
        node: NodeId,
    },
    /// The node is down.
    #[error("{node} is down")]
    NodeDown {
        /// The node named.
        node: NodeId,
    },
    /// The node is up (restart needs a crashed node).
    #[error("{node} is up")]
    NodeAlive {
        /// The node named.
        node: NodeId,
    },
    /// Sender and receiver are the same node.
    #[error("{node} cannot replicate to itself")]
    SameNode {
        /// The node named.
        node: NodeId,
    },
    /// The node does not serve (it is not an owner, or stopped serving).
    #[error("{node} is not serving")]
    NotServing {
        /// The node named.
        node: NodeId,
    },
    /// The record's owner is not up and serving at the record's epoch.
    #[error("owner {owner} is not serving")]
    OwnerNotServing {
        /// The record's owner.
        owner: StorageId,
    },
    /// The receiver is not assigned a copy the sender replicates to.
    #[error("{node} is not a replication target")]
    NotAssigned {
        /// The receiver.
        node: NodeId,
    },
    /// No follower of the record lives on that node.
    #[error("no follower on {node}")]
    NoFollowerOn {
        /// The node named.
        node: NodeId,
    },
    /// A move's target on the node the record names as owner.
    #[error("{node} is the owner's node: it cannot be a move's target")]
    TargetIsOwner {
        /// The node named.
        node: NodeId,
    },
    /// The node's progress report is still in flight: the owner keeps one
    /// outstanding and sends again after it is delivered or lost.
    #[error("{node} has a progress report in flight already")]
    ReportOutstanding {
        /// The reporting node.
        node: NodeId,
    },
    /// Networked delivery: the process does not know itself suspended, so
    /// it has no re-admission to notice.
    #[error("{node} does not know itself suspended")]
    NotKnownSuspended {
        /// The node named.
        node: NodeId,
    },
    /// Networked delivery: the record still suspends the node's current
    /// storage instance, so there is no re-admission to notice yet.
    #[error("the record still suspends {storage}")]
    StillSuspended {
        /// The node's current storage instance.
        storage: StorageId,
    },
    /// Networked delivery: re-admissions are read by the record's owner,
    /// serving at the record's epoch; the node named is not it.
    #[error("{node} is not the record's owner serving at the record's epoch")]
    NotRecordOwner {
        /// The node named.
        node: NodeId,
    },
    /// Networked delivery: the owner muted no copy that the record no
    /// longer suspends, so there is no re-admission to read.
    #[error("owner {owner} muted no copy the record has re-admitted")]
    NothingReadmitted {
        /// The owner's storage instance.
        owner: StorageId,
    },
    /// Retention (truncate, install a checkpoint) with messages in flight:
    /// checkpoints are not messages yet.
    #[error("retention needs atomic delivery: checkpoints are not messages yet")]
    RetentionNeedsAtomicDelivery,
    /// The producer has published nothing yet, so it has nothing to retry.
    #[error("nothing published yet: no publish to retry")]
    NothingToRetry,
    /// The cluster has no client of this producer (`Cluster::with_clients`):
    /// there is no one to publish, answer, acknowledge or time out.
    #[error("no client {producer}: the cluster was built without it")]
    NoClient {
        /// The producer asked for.
        producer: ProducerId,
    },
    /// The client has a request in flight already: one at a time.
    #[error("the client has a request in flight already (key {key})")]
    RequestInFlight {
        /// The key the request in flight carries.
        key: u64,
    },
    /// Every message the client sent was acknowledged (or it sent none):
    /// it has nothing to retry.
    #[error("no unacknowledged message to retry")]
    NothingUnacknowledged,
    /// The client has no request in flight: nothing to answer or time out.
    #[error("the client has no request in flight")]
    NoRequestInFlight,
    /// The client's request was accepted already: it awaits its
    /// acknowledgement, not an answer.
    #[error("the request was accepted by {node}: it awaits its acknowledgement")]
    RequestAccepted {
        /// The node that accepted it.
        node: NodeId,
    },
    /// No accepted request awaits an acknowledgement.
    #[error("no accepted request awaits an acknowledgement")]
    NothingAccepted,
    /// The node that accepted the client's message no longer holds it.
    #[error("{node} does not hold the message with key {key}")]
    MessageNotHeld {
        /// The node that accepted it.
        node: NodeId,
        /// The message key.
        key: u64,
    },
    /// The acknowledgement waits for the confirm: the accepting node's
    /// confirmed tail is below the message.
    #[error("{node} has not confirmed position {pos} yet (confirmed tail {tail})")]
    NotConfirmed {
        /// The node that accepted the message.
        node: NodeId,
        /// The message's position in its log.
        pos: Position,
        /// Its confirmed tail.
        tail: Position,
    },
    /// The client's request driver gave up for a reason other than the hop
    /// limit (which is an outcome: `Outcome::ClientGaveUp`).
    #[error(transparent)]
    Routing(#[from] RoutingError),
    /// No copy to replace and no planned move left: the controller starts
    /// no move.
    #[error("no copy to replace and no planned move left")]
    NoPlannedMove,
    /// The node's storage is not a retained copy: the record names it, or
    /// it holds no data.
    #[error("{node} holds no retained copy ({storage} is assigned, eligible or empty)")]
    NotRetained {
        /// The node named.
        node: NodeId,
        /// Its current storage instance.
        storage: StorageId,
    },
    /// The retained copy's grace period is not over.
    #[error("retained copy {storage} keeps its data for {left_ms} ms more")]
    GraceNotOver {
        /// The retained instance.
        storage: StorageId,
        /// Milliseconds of grace left.
        left_ms: u64,
    },
    /// Something pending could still use the retained copy.
    #[error("retained copy {storage} may still be needed: {pending} is pending")]
    RetainedInUse {
        /// The retained instance.
        storage: StorageId,
        /// What is pending.
        pending: &'static str,
    },
    /// The coordination store refused the guarded write.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The owner refused.
    #[error(transparent)]
    Owner(#[from] OwnerError),
    /// A replica refused for a reason other than fencing.
    #[error(transparent)]
    Replica(#[from] ReplicaError),
    /// The network refused a send, a delivery, a loss or a duplicate.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The controller has no report it may act on.
    #[error(transparent)]
    Controller(#[from] ControllerError),
}
