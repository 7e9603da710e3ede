//! Owner kills and the controller's failure detector.
//!
//! The detector is the controller's lease on the owner's process: in the
//! simulator the lease holds while the process is up. When the record's
//! owner has been down for `LEASE_MS`, the detector opens a recovery
//! (`node::recovery::open_recovery`, one guarded write); an owner whose
//! process comes back sooner finds it no longer serves and opens it
//! itself. The nodes run the rest (`node/recovery.rs`). With
//! `SimConfig::suspicions` the lease of a live owner lapses too (a cut
//! between it and the detector; its own reads and writes of the record
//! still go through): the recovery is opened against a zombie, which
//! serves until the seals fence it.

use super::{Sim, LEASE_MS};
use crate::control::FileControlPlane;
use crate::node::recovery::open_recovery;
use crate::node::NodeError;
use livemove_impl::store::Record;

impl Sim<'_> {
    /// Kill the record's owner while it serves at the record's epoch and
    /// no handoff, move or recovery is pending; some kills are inside an
    /// append, as a follower's may be.
    pub(super) fn crash_owner(&mut self) -> Result<(), NodeError> {
        if let Some(i) = self.quiet_serving_owner()? {
            self.owner_kills += 1;
            self.kill(i);
        }
        Ok(())
    }

    /// The record's owner, if it serves at the record's epoch with no
    /// handoff, move or recovery pending (when an owner fault may strike).
    pub(super) fn quiet_serving_owner(&self) -> Result<Option<usize>, NodeError> {
        let record = self.read_record()?;
        if record.handoff.is_some() || record.move_task.is_some() || record.recovery.is_some() {
            return Ok(None);
        }
        let i = record.owner.node.index();
        let serves = self.nodes[i].as_ref().is_some_and(|n| {
            !n.is_restarting() && n.serving().is_some_and(|s| s.epoch() == record.epoch)
        });
        Ok(serves.then_some(i))
    }

    /// The controller's failure detector opens a recovery against the
    /// owner of `record` (a failing control plane is reported against
    /// that owner). Whether the write committed.
    fn detector_opens(&mut self, record: &Record) -> Result<bool, NodeError> {
        let owner = record.owner.node;
        let failed = |source| NodeError::Control {
            node: owner,
            source,
        };
        let mut cp = FileControlPlane::open(&self.store).map_err(failed)?;
        cp.set_mutants(self.cfg.mutants);
        open_recovery(&mut cp, record, &mut self.world).map_err(failed)
    }

    /// The owner's lease lapses while its process is up and serves at the
    /// record's epoch (no handoff, move or recovery pending): the detector
    /// opens a recovery against a live owner. The zombie goes on serving
    /// until it reads the recovery on its tick and seals, or a sealed copy
    /// refuses it; what it accepts meanwhile is never confirmed.
    pub(super) fn suspect_owner(&mut self) -> Result<(), NodeError> {
        if self.quiet_serving_owner()?.is_none() {
            return Ok(());
        }
        let record = self.read_record()?;
        if self.detector_opens(&record)? {
            self.suspicions += 1;
        }
        Ok(())
    }

    /// The controller's failure detector, after every step: open a
    /// recovery once the record's owner has been down for a lease.
    pub(super) fn detect_owner_down(&mut self) -> Result<(), NodeError> {
        if self.nodes.iter().all(Option::is_some) {
            self.owner_down_since = None;
            return Ok(());
        }
        let record = self.read_record()?;
        let owner = record.owner.node;
        if record.recovery.is_some() || self.nodes[owner.index()].is_some() {
            self.owner_down_since = None;
            return Ok(());
        }
        let now = self.world.now_ms;
        let since = match self.owner_down_since {
            Some((n, t)) if n == owner => t,
            _ => {
                self.owner_down_since = Some((owner, now));
                now
            }
        };
        if now - since < LEASE_MS {
            return Ok(());
        }
        self.detector_opens(&record)?;
        self.owner_down_since = None;
        Ok(())
    }

    /// Recovered and quiet: no recovery, handoff or move pending, and the
    /// record's owner serves at the record's epoch with everything it
    /// holds confirmed (what a dead owner accepted and never confirmed may
    /// be gone: nothing was promised for it).
    pub(super) fn recovered(&self) -> bool {
        let Ok(r) = self.read_record() else {
            return false;
        };
        if r.recovery.is_some()
            || r.handoff.is_some()
            || r.move_task.is_some()
            || self.names_lost(&r)
        {
            return false;
        }
        self.nodes[r.owner.node.index()].as_ref().is_some_and(|n| {
            n.serving()
                .is_some_and(|s| s.epoch() == r.epoch && s.confirmed_tail() == n.replica().len())
        }) && self.owner_confirmed() >= self.confirmed.keys().next_back().copied().unwrap_or(0)
    }
}
