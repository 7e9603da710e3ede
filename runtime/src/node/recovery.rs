//! Recovery (note 1, "Recovery") run by the nodes: each guarded write is
//! the store's, made by the node that holds the facts its guard needs.
//!
//! - `OpenRecovery`: the record's owner whose process came back finds it
//!   no longer serves (its serving state was volatile) and opens the
//!   recovery itself; when that process stays down, the controller's
//!   failure detector opens it ([`open_recovery`], which the simulator
//!   runs when the owner's lease runs out).
//! - `Seal`: every eligible copy that is up seals at the recovery's epoch,
//!   durably first, then its guarded write carrying its log as evidence
//!   (with messages in flight inspection reads no copy's log).
//! - `InstallRecovered`: once the record holds the seal quorum (E - W + 1),
//!   a copy that sealed installs the recovered tail (the record's, or the
//!   best evidence so far when none is fixed yet), durably first, then its
//!   receipt. With the quorum sealed every confirmed entry is in that
//!   evidence, so installing it cuts only unconfirmed entries, even if the
//!   receipt then loses a race and the next tick installs a longer one.
//! - `ActivateRecovery`: a copy that installed asks to own at the next
//!   epoch; the store's guard wants W receipts of the counted set. The
//!   first to commit serves from the tail, with the other receipts as its
//!   first acknowledgements; the rest are refused and stay followers.
//!
//! A suspended follower takes part too: its seal and its receipt are what
//! a recovery needs when the owner that would re-admit it is gone, and
//! the activation re-admits it (note 1: a suspended follower keeps its
//! eligible slot).

use super::env::{emit, Env};
use super::{view_of, Node, NodeError};
use crate::control::{ControlError, ControlPlane};
use crate::trace::Event;
use livemove_impl::owner::Serving;
use livemove_impl::replica::Ack;
use livemove_impl::store::{Record, RecoveredTail, Write};
use livemove_impl::{Epoch, Position, StorageId};
use std::collections::BTreeSet;

/// The controller's failure detector: open a recovery against the
/// record's owner, whose process is down. `Ok(true)` when the write
/// committed; `Ok(false)` when the store refused it (a recovery is already
/// pending, or the record changed since `record` was read).
pub fn open_recovery(
    control: &mut dyn ControlPlane,
    record: &Record,
    env: &mut dyn Env,
) -> Result<bool, ControlError> {
    match control.write(record.version, &Write::OpenRecovery) {
        Ok(_) => {
            let node = record.owner.node;
            emit(env, || Event::OpenRecovery { node });
            Ok(true)
        }
        Err(ControlError::Refused { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

impl Node {
    /// A node that does not serve, on its tick: if the record still names
    /// it the owner at the record's epoch, with nothing that would make it
    /// serve (no committed handoff to it, no recovery pending), its
    /// process came back after a crash and the partition has no owner:
    /// it opens the recovery.
    pub(super) fn open_if_owner_restarted(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        let r = &self.record;
        let handoff_to_me = r.handoff.as_ref().is_some_and(|h| h.to == self.me);
        if r.owner != self.me || r.recovery.is_some() || handoff_to_me || self.serving.is_some() {
            return Ok(());
        }
        if self.guarded(&Write::OpenRecovery)? {
            let node = self.id;
            emit(env, || Event::OpenRecovery { node });
        }
        Ok(())
    }

    /// This node's part of a pending recovery, on its tick: seal, install
    /// the recovered tail, activate; at most one write a tick.
    pub(super) fn drive_recovery(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        self.record = self.read_record()?;
        let Some(rec) = self.record.recovery.clone() else {
            return Ok(());
        };
        let me = self.me;
        if self.record.lost.contains(&me) {
            return Ok(());
        }
        if !rec.sealed.contains(&me) {
            if !self.record.eligible.contains(&me) {
                return Ok(());
            }
            // The seal is durable before the store counts it.
            let persist = self.replica.seal(rec.epoch);
            self.persist(&persist)?;
            self.stop_if_older(rec.epoch.next());
            let evidence = Some(self.replica.entries().to_vec());
            if self.guarded(&Write::Seal {
                storage: me,
                evidence,
            })? {
                let node = self.id;
                emit(env, || Event::Seal { node });
            }
            return Ok(());
        }
        if !rec.installed.contains(&me) {
            let sealed = rec
                .sealed
                .iter()
                .filter(|s| !self.record.lost.contains(*s))
                .count();
            if sealed < usize::from(rec.seal_quorum).max(1) {
                return Ok(());
            }
            let Some(tail) = rec.tail.clone().or_else(|| rec.evidence.clone()) else {
                return Ok(());
            };
            let persist = self
                .replica
                .install(&tail.entries, rec.epoch)
                .map_err(|source| NodeError::Install {
                    node: self.id,
                    source,
                })?;
            self.persist(&persist)?;
            let len = tail.entries.len() as Position;
            if self.guarded(&Write::InstallRecovered { storage: me, tail })? {
                let node = self.id;
                emit(env, || Event::InstallRecovered { node, tail: len });
            }
            return Ok(());
        }
        if !self.guarded(&Write::ActivateRecovery { candidate: me })? {
            return Ok(());
        }
        self.serve_recovered(rec.installed, rec.tail, env)
    }

    /// Serve at the record's new epoch from the recovered tail: the epoch
    /// durable first, the other receipts (of copies not suspended) as the
    /// first acknowledgements.
    fn serve_recovered(
        &mut self,
        installed: BTreeSet<StorageId>,
        tail: Option<RecoveredTail>,
        env: &mut dyn Env,
    ) -> Result<(), NodeError> {
        let r = self.record.clone();
        let tail = tail.expect("invariant broken: a recovery activated without a fixed tail");
        let persist = self.replica.observe_epoch(r.epoch);
        self.persist(&persist)?;
        let tail_pos = tail.entries.len() as Position;
        let last = tail.entries.last().map_or(Epoch(0), |e| e.epoch);
        let mut s = Serving::activate(
            self.me,
            r.epoch,
            r.counted(),
            r.confirm_w,
            tail_pos,
            view_of(&r),
        )
        .networked();
        for other in installed
            .iter()
            .filter(|o| **o != self.me && !r.suspended.contains(*o) && !r.lost.contains(*o))
        {
            s.handle_ack(Ack {
                from: *other,
                pos: tail_pos,
                epoch: last,
            });
        }
        self.serving = Some(s);
        let (node, epoch) = (self.id, r.epoch);
        emit(env, || Event::ActivateRecovery { node, epoch });
        Ok(())
    }
}
