//! Errors of the node's API boundary.

use crate::control::ControlError;
use crate::disk_log::DiskLogError;
use livemove_impl::owner::OwnerError;
use livemove_impl::replica::ReplicaError;
use livemove_impl::NodeId;
use std::path::PathBuf;

/// A node could not start, or stopped: its disk or its control plane
/// failed. Protocol refusals (a fenced append, a stale acknowledgement, a
/// guarded write refused by a rule) are not errors: the node handles them.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The replica's log on disk failed; the node stops rather than
    /// acknowledge what it may not hold.
    #[error("node {node}: disk log: {source}")]
    Disk {
        /// The node.
        node: NodeId,
        /// What failed.
        #[source]
        source: DiskLogError,
    },
    /// The control plane could not be read or written.
    #[error("node {node}: control plane: {source}")]
    Control {
        /// The node.
        node: NodeId,
        /// What failed.
        #[source]
        source: ControlError,
    },
    /// The data directory's storage file (`storage::DISK_FILE`) could not
    /// be read or written.
    #[error("node {node}: storage file {}: {source}", path.display())]
    StorageFile {
        /// The node.
        node: NodeId,
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The data directory holds a log but no storage file: which instance
    /// the data belongs to is unknown, and registering it as a new one
    /// would let two instances claim the same history.
    #[error("node {node}: {} is missing beside a non-empty log", path.display())]
    MissingStorageId {
        /// The node.
        node: NodeId,
        /// The file that should be there.
        path: PathBuf,
    },
    /// A publish reached a node that is not serving.
    #[error("node {node} is not serving")]
    NotServing {
        /// The node.
        node: NodeId,
    },
    /// The serving owner refused a publish (admission closed, fenced).
    #[error("node {node}: publish refused: {source}")]
    Refused {
        /// The node.
        node: NodeId,
        /// The owner's reason.
        #[source]
        source: OwnerError,
    },
    /// The serving owner refused a settle (admission closed, nothing
    /// delivered to settle, fenced); nothing was written.
    #[error("node {node}: settle refused: {source}")]
    SettleRefused {
        /// The node.
        node: NodeId,
        /// The owner's reason.
        #[source]
        source: OwnerError,
    },
    /// The recovered tail does not extend this copy's checkpoint: a
    /// checkpoint holds only confirmed history and every recovered tail
    /// holds all of it, so the store or this disk broke an invariant.
    #[error("node {node}: cannot install the recovered tail: {source}")]
    Install {
        /// The node.
        node: NodeId,
        /// The replica's refusal.
        #[source]
        source: ReplicaError,
    },
    /// The node is up but its restart is not committed yet (its suspension
    /// was refused: W - 1 other followers are suspended); it takes nothing.
    #[error("node {node} is restarting: its suspension is not committed yet")]
    Restarting {
        /// The node.
        node: NodeId,
    },
}
