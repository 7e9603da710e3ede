//! Serving actions: publish, retry a publish, replicate, confirm (the
//! consumer's settle is in `consumer.rs`).

use super::consumer::tell_settled;
use super::{Cluster, ClusterError, Outcome};
use crate::entry::{common_prefix, Op};
use crate::ids::{Epoch, NodeId, Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use crate::owner::{OwnerError, Retried, Serving};
use crate::replica::{Append, Replica, ReplicaError};

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

    /// `RetryPublish`: the producer, timed out on its newest publish, sends
    /// it again (same key: the producer's sequence number) to `node`, which
    /// serves with admission open. An owner whose history holds it answers
    /// `Deduplicated` with its position; one that lacks it appends it.
    pub fn retry_publish(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("retry_publish", |c| {
            let key = c.last_key().ok_or(ClusterError::NothingToRetry)?;
            let mutants = c.mutants;
            let n = c.alive_mut(node)?;
            let s = n
                .serving
                .as_mut()
                .ok_or(ClusterError::NotServing { node })?;
            let epoch = s.epoch();
            match s.publish_retry(&mut n.replica, Op::Put { key, value: key }, mutants)? {
                Retried::Held { pos, epoch } => Ok(Outcome::Deduplicated { pos, epoch }),
                Retried::Appended { pos, persist } => {
                    n.persist(&persist);
                    Ok(Outcome::Published { pos, epoch })
                }
            }
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
            let (s, to_id) = c.shipping(from, to)?;
            let sender = c.node(from)?;
            let receiver = c.node(to)?;
            let mutants = c.mutants;
            // A fenced receiver refuses whatever the sender offers, even
            // when it lacks nothing: the refusal is what tells a stale
            // sender that its epoch is over.
            if let Some(fence_epoch) = receiver.replica.fenced_against(s.epoch(), mutants) {
                return Ok(c.refused(from, to, fence_epoch));
            }
            let (msg, agreed) = first_append(s, &sender.replica, &receiver.replica, mutants)?;
            let r = &mut c.nodes[to.index()];
            let taken = if agreed < msg.prev_pos {
                // Only under `replay_accepts_gap`: past reclaimed increments.
                r.replica.replay_past_gap(agreed, &msg, mutants)
            } else {
                r.replica.handle_append(&msg, mutants)
            };
            match taken {
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

    /// The receiver of `from`'s appends or checkpoint: a distinct node,
    /// up, whose current instance is in the sender's counted set or
    /// assigned by the record as a replica (not as its owner). Returns the
    /// sender's serving state and the receiver's storage instance.
    pub(super) fn shipping(
        &self,
        from: NodeId,
        to: NodeId,
    ) -> Result<(&Serving, StorageId), ClusterError> {
        if from == to {
            return Err(ClusterError::SameNode { node: from });
        }
        self.alive(to)?;
        let sender = self.alive(from)?;
        let s = sender
            .serving
            .as_ref()
            .ok_or(ClusterError::NotServing { node: from })?;
        let to_id = self.storage_of(to)?;
        let r = self.record();
        let replica_of_record = r.owner != to_id && r.is_assigned(to_id);
        if !s.counted().contains(&to_id) && !replica_of_record {
            return Err(ClusterError::NotAssigned { node: to });
        }
        Ok((s, to_id))
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
    /// highest entry of its epoch held by W of its counted copies; the
    /// consumer is told of every settle within it.
    pub fn confirm(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("confirm", |c| {
            let mutants = c.mutants;
            let n = c.alive_mut(node)?;
            let s = n
                .serving
                .as_mut()
                .ok_or(ClusterError::NotServing { node })?;
            let tail = s.confirm(&n.replica, mutants)?;
            tell_settled(
                &mut c.settled,
                c.nodes[node.index()].replica.entries(),
                tail,
            );
            Ok(Outcome::Confirmed { tail })
        })
    }
}

/// The append `s` (on `own`) ships to `peer`: its entry at the first
/// position where the two logs differ, which must lie above the owner's
/// checkpoint (`OwnerError::IncrementReclaimed` otherwise: the copy
/// installs the checkpoint first). Returned with the position through
/// which the two logs agree, which is the append's previous position
/// except under `replay_accepts_gap`.
///
/// Under `checkpoint_without_epoch_tag` the owner's checkpoint keeps its
/// position only: a copy at least that long is taken to agree through it
/// (and then as far as the entries past it agree), and the append right
/// after it carries no tag for the entry before.
///
/// Under `replay_accepts_gap` a copy that lacks reclaimed increments is
/// sent the first increment the owner keeps past the gap that the copy
/// does not hold already (its entries above the checkpoint are compared;
/// `OwnerError::NothingToReplicate` if it holds all the owner kept).
fn first_append(
    s: &Serving,
    own: &Replica,
    peer: &Replica,
    mutants: Mutants,
) -> Result<(Append, Position), OwnerError> {
    let base = own.base();
    let mut agreed = common_prefix(own.entries(), peer.entries());
    let untagged = mutants.on(Mutant::CheckpointWithoutEpochTag);
    if untagged && agreed < base && peer.len() >= base {
        let (ours, theirs) = (own.entries(), peer.entries());
        agreed = base;
        while (agreed as usize) < ours.len().min(theirs.len())
            && ours[agreed as usize] == theirs[agreed as usize]
        {
            agreed += 1;
        }
    }
    if agreed < base && mutants.on(Mutant::ReplayAcceptsGap) {
        // The wrong idea: the increments the copy needs are gone, so it
        // replays the next one the owner kept and skips the rest, taken to
        // agree as far as its entries above the checkpoint match.
        let mut at = base;
        while at < own.len() && peer.entry(at + 1) == own.entry(at + 1) {
            at += 1;
        }
        return Ok((s.append_for(own, at + 1)?, agreed));
    }
    let mut msg = s.append_for(own, agreed + 1)?;
    if untagged && base > 0 && msg.prev_pos == base {
        msg.prev_epoch = None;
    }
    Ok((msg, agreed))
}
