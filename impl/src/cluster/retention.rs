//! Retention: the owner checkpoints at its confirmed tail and reclaims the
//! increments below it (`truncate`); a copy that lacks the checkpoint's
//! entry catches up by installing the checkpoint (`install_checkpoint`)
//! and then replaying increments (`replicate`). Atomic delivery only for
//! now: checkpoints are not messages yet, so an owner with messages in
//! flight never reclaims an increment.

use super::{Cluster, ClusterError, Outcome};
use crate::ids::NodeId;
use crate::mutant::Mutant;

impl Cluster {
    /// `Truncate{node}`: the serving owner takes a checkpoint at its
    /// confirmed tail (bound to the epoch tag of its entry there) and
    /// reclaims the increments below it.
    pub fn truncate(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("truncate", |c| {
            c.require_atomic_retention()?;
            let mutants = c.mutants;
            let n = c.alive_mut(node)?;
            let s = n
                .serving
                .as_ref()
                .ok_or(ClusterError::NotServing { node })?;
            let (base, persist) = s.truncate(&mut n.replica, mutants)?;
            n.persist(&persist);
            Ok(Outcome::Truncated { base })
        })
    }

    /// `InstallCheckpoint{from, to}`: the serving owner `from` ships its
    /// checkpoint to a replica `to` that lacks the checkpoint's entry; the
    /// copy's log becomes the checkpoint's history and it acknowledges the
    /// checkpoint's position (withheld while it is suspended, as for
    /// appends). A copy fenced against the sender, or one that holds the
    /// checkpoint's entry already, refuses; nothing changes.
    pub fn install_checkpoint(
        &mut self,
        from: NodeId,
        to: NodeId,
    ) -> Result<Outcome, ClusterError> {
        self.atomically("install_checkpoint", |c| {
            c.require_atomic_retention()?;
            let (s, to_id) = c.shipping(from, to)?;
            let offer = s.checkpoint_offer(&c.node(from)?.replica)?;
            let mutants = c.mutants;
            let r = &mut c.nodes[to.index()];
            let (ack, persist) = r.replica.install_checkpoint(&offer, mutants)?;
            r.persist(&persist);
            c.learn_epoch(to, offer.epoch);
            let withheld =
                c.record().suspended.contains(&to_id) && !mutants.on(Mutant::RejoinCountsEarly);
            if !withheld {
                c.nodes[from.index()]
                    .serving
                    .as_mut()
                    .expect("invariant broken: the sender stopped serving during its own install")
                    .handle_ack(ack);
            }
            Ok(Outcome::CheckpointInstalled { ack })
        })
    }

    /// Retention needs atomic delivery (checkpoints are not messages yet).
    fn require_atomic_retention(&self) -> Result<(), ClusterError> {
        if self.networked() {
            return Err(ClusterError::RetentionNeedsAtomicDelivery);
        }
        Ok(())
    }
}
