//! Recovery: open, seal, install the recovered tail, activate.

use super::consumer::tell_settled;
use super::{view_of, Cluster, ClusterError, Outcome};
use crate::controller::Known;
use crate::ids::{NodeId, Position, StorageId};
use crate::mutant::Mutant;
use crate::owner::Serving;
use crate::recovery::choose_tail;
use crate::replica::Ack;
use crate::store::{MovePhase, RecoveredTail, StoreError, Write};

impl Cluster {
    /// `OpenRecovery`: the owner crashed or is suspected while alive (a
    /// zombie, which keeps running until fenced). Cancels a move before its
    /// swap and a handoff before its commit, and pauses rebalancing. A
    /// planned move cancelled here goes back to the controller's plan (note
    /// 1, Aborts: "a move retries after the recovery activates").
    pub fn open_recovery(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("open_recovery", |c| {
            let cancels_planned = c.record().move_task.as_ref().is_some_and(|m| {
                matches!(m.phase, MovePhase::Learner | MovePhase::Admitted) && m.replaces.is_none()
            }) && !c.mutants.on(Mutant::RecoveryKeepsMove);
            let r = c.write(Write::OpenRecovery)?;
            if cancels_planned {
                c.give_back_planned_move();
            }
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `Seal{node}`: a member of the eligible set seals at the recovery's
    /// epoch; from now on it refuses appends of that epoch or older, and it
    /// never serves at that epoch.
    pub fn seal(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("seal", |c| {
            c.alive(node)?;
            let s = c.storage_of(node)?;
            // With messages in flight the sealed history goes with the seal
            // as evidence, so that inspection reads no copy's log.
            let evidence = c
                .networked()
                .then(|| c.node(node).map(|n| n.replica.entries().to_vec()))
                .transpose()?;
            let r = c.write(Write::Seal {
                storage: s,
                evidence,
            })?;
            let epoch = r.recovery.as_ref().expect("pending").epoch;
            let n = c.node_mut(node)?;
            let persist = n.replica.seal(epoch);
            n.persist(&persist);
            if n.serving.as_ref().is_some_and(|sv| sv.epoch() <= epoch) {
                n.serving = None;
            }
            Ok(Outcome::Sealed { storage: s, epoch })
        })
    }

    /// `InstallRecovered{node}`: a counted copy installs the recovered tail
    /// (chosen from the sealed copies at the first install), truncating any
    /// divergent unconfirmed suffix. Refused when the tail does not hold the
    /// copy's checkpoint entry (`ReplicaError::RecoveredTailContradictsCheckpoint`).
    pub fn install_recovered(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("install_recovered", |c| {
            c.alive(node)?;
            let s = c.storage_of(node)?;
            let rec = c
                .record()
                .recovery
                .clone()
                .ok_or(StoreError::NoRecoveryPending)?;
            let chosen = if c.networked() {
                rec.tail.clone().or_else(|| rec.evidence.clone())
            } else {
                rec.tail.clone()
            };
            let tail = match chosen {
                Some(t) => t,
                None if c.networked() => RecoveredTail {
                    source: s,
                    entries: Vec::new(),
                },
                None => c.inspect(&rec.sealed).unwrap_or(RecoveredTail {
                    source: s,
                    entries: Vec::new(),
                }),
            };
            let r = c.write(Write::InstallRecovered {
                storage: s,
                tail: tail.clone(),
            })?;
            let epoch = r.recovery.as_ref().expect("pending").epoch;
            let n = c.node_mut(node)?;
            let persist = n.replica.install(&tail.entries, epoch)?;
            n.persist(&persist);
            if n.serving.as_ref().is_some_and(|sv| sv.epoch() <= epoch) {
                n.serving = None;
            }
            Ok(Outcome::Installed {
                storage: s,
                tail: tail.entries.len() as Position,
            })
        })
    }

    /// `ActivateRecovery{candidate}`: with E - W + 1 seals and W receipts
    /// from the counted set, the candidate owns at epoch + 1; the recovered
    /// tail is its confirmed tail (the consumer is told of every settle in
    /// it).
    pub fn activate_recovery(&mut self, candidate: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("activate_recovery", |c| {
            c.alive(candidate)?;
            let s = c.storage_of(candidate)?;
            let rec = c
                .record()
                .recovery
                .clone()
                .ok_or(StoreError::NoRecoveryPending)?;
            let r = c.write(Write::ActivateRecovery { candidate: s })?;
            let tail = rec.tail.expect("an installed recovery has a tail");
            let tail_pos = tail.entries.len() as Position;
            c.learn_epoch(candidate, r.epoch);
            let mut serving = c.serve(Serving::activate(
                s,
                r.epoch,
                r.counted(),
                r.confirm_w,
                tail_pos,
                view_of(&r),
            ));
            let last = tail.entries.last().map(|e| e.epoch).unwrap_or_default();
            // The quorum receipts are the new owner's first
            // acknowledgements, a suspended installer re-admitted by the
            // activation included; a copy still suspended reports only once
            // it rejoins.
            for other in rec
                .installed
                .iter()
                .filter(|o| **o != s && !r.suspended.contains(*o))
            {
                serving.handle_ack(Ack {
                    from: *other,
                    pos: tail_pos,
                    epoch: last,
                });
            }
            c.nodes[candidate.index()].serving = Some(serving);
            // The recovered tail is confirmed: so is every settle in it.
            tell_settled(&mut c.settled, &tail.entries, tail_pos);
            if c.networked() && !c.mutants.on(Mutant::ActivationForgetsReceipts) {
                // The receipts are the controller's first knowledge at the
                // new epoch (finding 24).
                let installed: Vec<StorageId> = rec
                    .installed
                    .iter()
                    .copied()
                    .filter(|x| !r.lost.contains(x))
                    .collect();
                c.known = Known::from_receipts(r.epoch, tail_pos, installed);
            }
            Ok(Outcome::Activated {
                owner: candidate,
                epoch: r.epoch,
            })
        })
    }

    /// Inspect the sealed copies that still exist and choose the tail.
    fn inspect(&self, sealed: &std::collections::BTreeSet<StorageId>) -> Option<RecoveredTail> {
        let logs = sealed
            .iter()
            .filter_map(|s| self.holder(*s).map(|n| (*s, n.replica.entries())));
        choose_tail(logs, self.record().recovered, self.mutants)
    }
}
