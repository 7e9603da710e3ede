//! Identifiers shared by every part of the crate.
//!
//! Units and qualifiers come last in names (`boundary_pos`), as everywhere in
//! this crate. Positions are 1-based; position 0 means "nothing".

use serde::{Deserialize, Serialize};
use std::fmt;

/// A broker process slot, numbered from 1 (`n1`, `n2`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub u8);

/// A producer: a client of the queue that publishes with this id and its
/// own sequence of message keys, numbered from 1 (`c1`, `c2`, ...). A
/// retried publish carries the same key, so an owner's history names what
/// each producer published.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProducerId(pub u8);

impl ProducerId {
    /// The index of this producer in a 0-based array of clients.
    pub fn index(self) -> usize {
        assert!(self.0 >= 1, "producer ids are 1-based, got c{}", self.0);
        usize::from(self.0) - 1
    }
}

impl fmt::Display for ProducerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}", self.0)
    }
}

/// One storage instance: a node together with the incarnation of its disk.
///
/// Counted sets, the eligible set and acknowledgements name storage
/// instances, not nodes: a node that comes back with a fresh disk is a new
/// replica (note 1, "history binding").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StorageId {
    /// The node that runs this storage instance.
    pub node: NodeId,
    /// The disk incarnation; bumped each time the node comes back with a fresh disk.
    pub disk: u32,
}

/// A permission generation. Epochs start at 1 and only grow.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Epoch(pub u64);

/// The version of the coordination record; every guarded write bumps it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Version(pub u64);

/// A 1-based log position; 0 stands for the empty prefix.
pub type Position = u64;

impl NodeId {
    /// The index of this node in a 0-based array of nodes.
    pub fn index(self) -> usize {
        assert!(self.0 >= 1, "node ids are 1-based, got n{}", self.0);
        usize::from(self.0) - 1
    }
}

impl StorageId {
    /// The first storage instance of `node`.
    pub fn first(node: NodeId) -> Self {
        StorageId { node, disk: 0 }
    }
}

impl Epoch {
    /// The next permission generation.
    pub fn next(self) -> Self {
        Epoch(self.0 + 1)
    }
}

impl Version {
    /// The version a successful write produces.
    pub fn next(self) -> Self {
        Version(self.0 + 1)
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

impl fmt::Display for StorageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/d{}", self.node, self.disk)
    }
}

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}", self.0)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// The write requirement W for a configured replication factor under the
/// majority policy: `rf / 2 + 1` counted copies, the owner included.
///
/// W is a function of the configured factor only, never of the copies
/// currently assigned (note 1, "learners and the confirm contract").
pub fn write_quorum(rf: u8) -> u8 {
    assert!(rf >= 1, "replication factor must be at least 1");
    rf / 2 + 1
}
