//! Retained copies (note 1, "After removal"): a copy the record no longer
//! names keeps its data for a grace period, the way a destroyed partition
//! goes to trash first. A later move back onto that node starts from the
//! retained prefix (the learner's catch-up compares histories, finding 1's
//! rule, so only what the owner's history shares counts); once the grace
//! period is over, and only while nothing in flight could still use the
//! copy, the node may discard it.
//!
//! Time is the cluster's logical clock in milliseconds (`advance_clock`):
//! the sans-IO cluster never reads a wall clock, the runtime that drives it
//! tells it how much time passed.

use super::{Cluster, ClusterError, Outcome};
use crate::ids::{NodeId, StorageId};
use crate::replica::{Persist, Replica};
use serde::Serialize;

/// One retained copy: data on a node whose storage the record names in no
/// role and does not count as eligible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RetainedCopy {
    /// The node holding it.
    pub node: NodeId,
    /// Its storage instance.
    pub storage: StorageId,
    /// Entries in its log.
    pub len: u64,
    /// The logical time at which the record stopped naming it.
    pub since_ms: u64,
    /// Milliseconds of grace left (0: it may be discarded once nothing
    /// pending could use it).
    pub grace_left_ms: u64,
}

impl Cluster {
    /// The cluster's logical clock, in milliseconds since it started.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Let `ms` milliseconds pass on the cluster's logical clock.
    pub fn advance_clock(&mut self, ms: u64) {
        self.now_ms = self.now_ms.saturating_add(ms);
    }

    /// Whether node `i`'s current storage is a retained copy: it holds data
    /// the record neither assigns nor counts as eligible.
    pub(super) fn is_retained(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        let id = n.replica.id();
        let r = self.record();
        !r.is_assigned(id) && !r.eligible.contains(&id) && !n.replica.is_empty()
    }

    /// Start or stop each node's grace period after an accepted action: a
    /// copy becomes retained at the moment the record stops naming it, and
    /// stops being retained when a later move names it again.
    pub(super) fn note_retained(&mut self) {
        for i in 0..self.nodes.len() {
            let retained = self.is_retained(i);
            let since = &mut self.nodes[i].retained_since_ms;
            match (retained, *since) {
                (true, None) => *since = Some(self.now_ms),
                (false, Some(_)) => *since = None,
                _ => {}
            }
        }
    }

    /// Every retained copy, `n1` first.
    pub fn retained(&self) -> Vec<RetainedCopy> {
        let grace = self.config.retained_grace_ms;
        self.nodes
            .iter()
            .filter_map(|n| {
                let since = n.retained_since_ms?;
                Some(RetainedCopy {
                    node: n.id,
                    storage: n.replica.id(),
                    len: n.replica.len(),
                    since_ms: since,
                    grace_left_ms: (since.saturating_add(grace)).saturating_sub(self.now_ms),
                })
            })
            .collect()
    }

    /// Discard node `node`'s retained copy: the node deletes the data and
    /// takes a fresh, empty storage instance, as after a new disk (so the
    /// old instance's identity is never reused).
    ///
    /// Refused unless the node is up, holds a retained copy, its grace
    /// period is over, and no move, recovery or handoff is pending (any of
    /// them could still name the copy, or the data a recovery reads).
    pub fn discard_retained(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("discard_retained", |c| {
            let n = c.alive(node)?;
            let storage = n.replica.id();
            let Some(since) = n.retained_since_ms else {
                return Err(ClusterError::NotRetained { node, storage });
            };
            let until = since.saturating_add(c.config.retained_grace_ms);
            if c.now_ms < until {
                return Err(ClusterError::GraceNotOver {
                    storage,
                    left_ms: until - c.now_ms,
                });
            }
            let r = c.record();
            let pending = if r.move_task.is_some() {
                Some("a move")
            } else if r.recovery.is_some() {
                Some("a recovery")
            } else if r.handoff.is_some() {
                Some("a handoff")
            } else if n.serving.is_some() {
                Some("its own serving state")
            } else {
                None
            };
            if let Some(pending) = pending {
                return Err(ClusterError::RetainedInUse { storage, pending });
            }
            let n = c.node_mut(node)?;
            let fresh = StorageId {
                node,
                disk: n.disk + 1,
            };
            n.disk = fresh.disk;
            n.replica = Replica::new(fresh);
            n.durable = Default::default();
            let d = n.replica.durable();
            n.persist(&[Persist::Fence {
                fence: d.fence,
                sealed: d.sealed,
            }]);
            n.retained_since_ms = None;
            Ok(Outcome::Discarded { storage, fresh })
        })
    }
}
