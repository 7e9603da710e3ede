//! Serving actions: publish, replicate, confirm.

use super::{Cluster, ClusterError, Outcome};
use crate::entry::{common_prefix, Op};
use crate::ids::NodeId;
use crate::replica::ReplicaError;

impl Cluster {
    /// `Publish`: the node, serving with admission open and not fenced,
    /// appends a new entry of its epoch to its own log.
    pub fn publish(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("publish", |c| {
            let key = c.next_key();
            let mutants = c.mutants;
            let n = c.alive_mut(node)?;
            let s = n
                .serving
                .as_mut()
                .ok_or(ClusterError::NotServing { node })?;
            let epoch = s.epoch();
            let (pos, persist) = s.publish(&mut n.replica, Op::Put { key, value: key }, mutants)?;
            n.persist(&persist);
            Ok(Outcome::Published { pos, epoch })
        })
    }

    /// `Replicate{to}`: the serving node `from` ships the first entry `to`
    /// lacks (the first position where their logs differ).
    ///
    /// The position is computed from both logs here; a runtime finds it by
    /// the usual probing on `PrevMismatch`, which the in-memory cluster folds
    /// into one step. A receiver fenced against the sender refuses, and the
    /// sender stops serving (`Outcome::Refused`).
    pub fn replicate(&mut self, from: NodeId, to: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("replicate", |c| {
            if from == to {
                return Err(ClusterError::SameNode { node: from });
            }
            c.alive(to)?;
            let sender = c.alive(from)?;
            let s = sender
                .serving
                .as_ref()
                .ok_or(ClusterError::NotServing { node: from })?;
            let to_id = c.storage_of(to)?;
            if !s.counted().contains(&to_id) && !c.record().is_assigned(to_id) {
                return Err(ClusterError::NotAssigned { node: to });
            }
            let receiver = c.node(to)?;
            let pos = common_prefix(sender.replica.entries(), receiver.replica.entries()) + 1;
            let msg = s.append_for(&sender.replica, pos)?;
            let mutants = c.mutants;
            let r = &mut c.nodes[to.index()];
            match r.replica.handle_append(&msg, mutants) {
                Ok((ack, persist)) => {
                    r.persist(&persist);
                    c.learn_epoch(to, msg.epoch);
                    let s = c.nodes[from.index()]
                        .serving
                        .as_mut()
                        .expect("checked above");
                    s.handle_ack(ack);
                    Ok(Outcome::Replicated { ack })
                }
                Err(ReplicaError::Fenced { fence_epoch, .. }) => {
                    tracing::info!(by = %to, fence = fence_epoch.0, "replicate refused: sender fenced");
                    let sender = &mut c.nodes[from.index()];
                    sender.serving = None;
                    let persist = sender.replica.observe_epoch(fence_epoch);
                    sender.persist(&persist);
                    Ok(Outcome::Refused {
                        by: to,
                        fence_epoch,
                    })
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    /// `Confirm`: the serving node advances its confirmed tail to the
    /// highest entry of its epoch held by W of its counted copies.
    pub fn confirm(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("confirm", |c| {
            let mutants = c.mutants;
            let n = c.alive_mut(node)?;
            let s = n
                .serving
                .as_mut()
                .ok_or(ClusterError::NotServing { node })?;
            let tail = s.confirm(&n.replica, mutants)?;
            Ok(Outcome::Confirmed { tail })
        })
    }
}
