//! One node of the in-memory cluster: liveness, its disk and what it runs.

use crate::ids::NodeId;
use crate::owner::Serving;
use crate::replica::{LogStorage, MemLogStorage, Persist, Replica};
use serde::{Serialize, Serializer};

/// A node: process liveness, the disk incarnation, the replica on that disk
/// and, while it believes it owns the partition, its serving state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub(crate) id: NodeId,
    pub(crate) alive: bool,
    /// Process incarnation: how often the node restarted. Acknowledgements
    /// carry it, so an owner can tell one sent before a restart.
    pub(crate) inc: u32,
    /// Networked delivery: what this process knows of its own suspension.
    /// It wrote the suspension itself when it came back on its disk as a
    /// follower; it learns of its re-admission only when it reads the
    /// record (`notice_rejoin`), so this may lag the record. Its
    /// acknowledgements are marked from it. A crash forgets it.
    pub(crate) suspended: bool,
    pub(crate) disk: u32,
    pub(crate) replica: Replica,
    pub(crate) serving: Option<Serving>,
    /// What survives a crash: the replica's persisted commands.
    pub(crate) durable: MemLogStorage,
    /// When the record stopped naming this node's storage while it still
    /// held data (a retained copy, `retained.rs`); `None` otherwise.
    pub(crate) retained_since_ms: Option<u64>,
}

impl Node {
    pub(crate) fn new(id: NodeId, replica: Replica) -> Self {
        let mut durable = MemLogStorage::default();
        durable
            .apply(&[Persist::Fence {
                fence: replica.fence(),
                sealed: replica.sealed(),
            }])
            .expect("in-memory storage cannot fail");
        Node {
            id,
            alive: true,
            inc: 0,
            suspended: false,
            disk: replica.id().disk,
            replica,
            serving: None,
            durable,
            retained_since_ms: None,
        }
    }

    /// The node id.
    pub fn id(&self) -> NodeId {
        self.id
    }
    /// Whether the process is up.
    pub fn alive(&self) -> bool {
        self.alive
    }
    /// The process incarnation (0 before the first restart).
    pub fn inc(&self) -> u32 {
        self.inc
    }
    /// Whether the process knows itself suspended (networked delivery;
    /// always false with atomic delivery).
    pub fn suspended(&self) -> bool {
        self.suspended
    }
    /// The disk incarnation (0 for the first disk).
    pub fn disk(&self) -> u32 {
        self.disk
    }
    /// The replica on the current disk.
    pub fn replica(&self) -> &Replica {
        &self.replica
    }
    /// The serving state, if the node believes it owns the partition.
    pub fn serving(&self) -> Option<&Serving> {
        self.serving.as_ref()
    }

    /// Make a batch of replica changes durable on this node's disk.
    pub(crate) fn persist(&mut self, batch: &[Persist]) {
        self.durable
            .apply(batch)
            .expect("in-memory storage cannot fail");
    }

    /// Reload the replica from the disk after a restart on the same disk.
    pub(crate) fn reload(&mut self) {
        let durable = self.durable.load().expect("in-memory storage cannot fail");
        let restored = Replica::restore(self.replica.id(), durable);
        assert_eq!(
            restored, self.replica,
            "invariant broken: the replica's persisted commands do not rebuild its state"
        );
        self.replica = restored;
    }
}

/// The inspectable state of one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeState {
    /// The node id.
    pub id: NodeId,
    /// Whether the process is up.
    pub alive: bool,
    /// The process incarnation.
    pub inc: u32,
    /// Whether the process knows itself suspended (networked delivery).
    pub suspended: bool,
    /// The disk incarnation.
    pub disk: u32,
    /// The replica: storage instance, log with epoch tags, fence and seal.
    pub replica: Replica,
    /// The serving state.
    pub serving: Option<Serving>,
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        NodeState::from(self).serialize(s)
    }
}

impl From<&Node> for NodeState {
    fn from(n: &Node) -> Self {
        NodeState {
            id: n.id,
            alive: n.alive,
            inc: n.inc,
            suspended: n.suspended,
            disk: n.disk,
            replica: n.replica.clone(),
            serving: n.serving.clone(),
        }
    }
}
