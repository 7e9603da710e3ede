//! Serving actions: publish, replicate, confirm.

use super::{Cluster, ClusterError, Outcome};
use crate::entry::{common_prefix, Op};
use crate::ids::{Epoch, NodeId};
use crate::mutant::Mutant;
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
    ///
    /// With networked delivery it only sends (`network.rs`).
    pub fn replicate(&mut self, from: NodeId, to: NodeId) -> Result<Outcome, ClusterError> {
        if self.networked() {
            return self.atomically("replicate", |c| c.send_append(from, to));
        }
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
            let r = c.record();
            let replica_of_record = r.owner != to_id && r.is_assigned(to_id);
            if !s.counted().contains(&to_id) && !replica_of_record {
                return Err(ClusterError::NotAssigned { node: to });
            }
            let receiver = c.node(to)?;
            let mutants = c.mutants;
            // A fenced receiver refuses whatever the sender offers, even
            // when it lacks nothing: the refusal is what tells a stale
            // sender that its epoch is over.
            if let Some(fence_epoch) = receiver.replica.fenced_against(s.epoch(), mutants) {
                return Ok(c.refused(from, to, fence_epoch));
            }
            let pos = common_prefix(sender.replica.entries(), receiver.replica.entries()) + 1;
            let msg = s.append_for(&sender.replica, pos)?;
            let r = &mut c.nodes[to.index()];
            match r.replica.handle_append(&msg, mutants) {
                Ok((ack, persist)) => {
                    r.persist(&persist);
                    c.learn_epoch(to, msg.epoch);
                    // A returning follower catches up while suspended but
                    // reports no progress until it is re-admitted: the
                    // suspension reaches it at its restart, even when the
                    // owner is cut off from the record (a zombie).
                    let withheld = c.record().suspended.contains(&to_id)
                        && !mutants.on(Mutant::RejoinCountsEarly);
                    let s = c.nodes[from.index()]
                        .serving
                        .as_mut()
                        .expect("checked above");
                    if !withheld {
                        s.handle_ack(ack);
                    }
                    Ok(Outcome::Replicated { ack })
                }
                Err(ReplicaError::Fenced { fence_epoch, .. }) => {
                    Ok(c.refused(from, to, fence_epoch))
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    /// `to` refused `from`'s append: the sender learns the oldest epoch the
    /// receiver still accepts (past its seal, at least its fence) and stops
    /// serving.
    fn refused(&mut self, from: NodeId, to: NodeId, fence_epoch: Epoch) -> Outcome {
        tracing::info!(by = %to, fence = fence_epoch.0, "replicate refused: sender fenced");
        let newer = self.nodes[to.index()].replica.accepts_from();
        let sender = &mut self.nodes[from.index()];
        sender.serving = None;
        let persist = sender.replica.observe_epoch(newer);
        sender.persist(&persist);
        Outcome::Refused {
            by: to,
            fence_epoch,
        }
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
