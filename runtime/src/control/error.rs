//! Errors of the control plane's API boundary.

use livemove_impl::store::StoreError;
use livemove_impl::{NodeId, Version};

/// Why a control-plane call did not return a committed record.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The guarded write was refused by the store's rules (a stale version,
    /// or a failed precondition); the record is unchanged.
    #[error("{location}: write refused: {source}")]
    Refused {
        /// Where the record lives.
        location: String,
        /// The rule that refused it.
        #[source]
        source: StoreError,
    },
    /// No record exists yet: `create` was never called for it.
    #[error("{location}: no coordination record exists yet (create it first)")]
    NotCreated {
        /// Where the record was looked for.
        location: String,
    },
    /// What is stored is not a coordination record.
    #[error("{location}: stored record is corrupt: {reason}")]
    Corrupt {
        /// Where the bad bytes are.
        location: String,
        /// What is wrong with them (the parser's message, with line and column).
        reason: String,
    },
    /// A file operation failed.
    #[error("{location}: {action} failed: {source}")]
    Io {
        /// The file involved.
        location: String,
        /// What was being done (`open`, `lock`, `replace`, ...).
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A node's data directory holds a storage instance the control plane
    /// does not have registered for it: the node came back on a disk it
    /// had already replaced (or that belongs to another deployment). The
    /// instance's data may be older than what its successor acknowledged,
    /// so the node does not start on it.
    #[error("{location}: node {node}'s data directory holds disk {disk}, but {}", match registered { Some(r) => format!("disk {r} is registered"), None => "the node never registered".to_string() })]
    StaleDisk {
        /// Where the registrations live.
        location: String,
        /// The node.
        node: NodeId,
        /// The instance its directory holds.
        disk: u32,
        /// The instance registered, if the node ever registered.
        registered: Option<u32>,
    },
    /// etcd could not be reached or answered with something unexpected.
    #[error("etcd at {endpoint}: {reason}")]
    Etcd {
        /// The etcd endpoint.
        endpoint: String,
        /// What went wrong.
        reason: String,
    },
}

impl ControlError {
    /// For a refusal because the writer read an older version: the version
    /// it named and the one committed.
    pub fn stale_version(&self) -> Option<(Version, Version)> {
        match self {
            ControlError::Refused {
                source: StoreError::StaleVersion { expected, found },
                ..
            } => Some((*expected, *found)),
            _ => None,
        }
    }
}
