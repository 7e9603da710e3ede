//! The controller's own decisions under faults: which copy to replace, the
//! planned moves it may still start, and its aborts (a move or a handoff
//! whose target is down or lost), as opposed to the operator's cancels.
//!
//! The plan is controller state, not record state. Note 1, Aborts: "a
//! pending recovery for the partition cancels any move in progress ... A
//! move retries after the recovery activates." A planned move cancelled for
//! a reason (a recovery, a lost target) is therefore given back to the plan
//! and started again later; an operator's cancel withdraws it; a
//! replacement needs no plan (the copy it replaces is still counted, down or
//! lost, so the controller starts another). Retrying is the controller's
//! bookkeeping, which is why `no_retry_after_cancel` lives here and not in
//! the store: the store only sees the next `AddLearner`.

use super::{Cluster, ClusterError, Outcome};
use crate::ids::StorageId;
use crate::mutant::Mutant;
use crate::store::{StoreError, Write};

impl Cluster {
    /// Whether storage instance `s` is down or lost: its node's process is
    /// down, or its disk is no longer the node's.
    pub(super) fn gone(&self, s: StorageId) -> bool {
        self.holder(s).is_none_or(|n| !n.alive)
    }

    /// The counted follower the controller replaces next: the lowest
    /// follower instance that is down or lost (none under `no_replacement`).
    pub(super) fn to_replace(&self) -> Option<StorageId> {
        if self.mutants.on(Mutant::NoReplacement) {
            return None;
        }
        self.record()
            .followers
            .iter()
            .copied()
            .find(|f| self.gone(*f))
    }

    /// Use up one planned move, if the controller plans them.
    pub(super) fn take_planned_move(&mut self) -> Result<(), ClusterError> {
        match &mut self.planned {
            None => Ok(()),
            Some(0) => Err(ClusterError::NoPlannedMove),
            Some(p) => {
                *p -= 1;
                Ok(())
            }
        }
    }

    /// A planned move was cancelled for a reason: it goes back to the plan.
    pub(super) fn give_back_planned_move(&mut self) {
        if self.mutants.on(Mutant::NoRetryAfterCancel) {
            return;
        }
        if let Some(p) = &mut self.planned {
            *p += 1;
        }
    }

    /// `AbortMove`: the controller drops a move whose target is down or lost,
    /// before the swap (note 1, Aborts: "if T fails before step 1, drop the
    /// learner"), or withdraws a promotion the owner has not adopted. A
    /// planned move goes back to the plan.
    pub fn abort_move(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("abort_move", |c| {
            let m = c.record().move_task.clone().ok_or(StoreError::NoMove)?;
            let r = c.write(Write::AbortMove {
                target_down: c.gone(m.target),
            })?;
            if m.replaces.is_none() {
                c.give_back_planned_move();
            }
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `SwapBack`: after the swap, with the target down or lost, the leaving
    /// copy (note 1, Aborts: "R is still in the eligible set and still holds
    /// its data"), up and covering the owner's confirmed tail, counts again
    /// and the target becomes the leaving copy. The owner adopts the set
    /// again (`owner_switch`, a new B) and `remove_leaving` ends the move.
    pub fn swap_back(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("swap_back", |c| {
            let r = c.record().clone();
            let m = r.move_task.ok_or(StoreError::NoMove)?;
            c.sees_owner()?;
            let back = r.leaving.ok_or(StoreError::NoLeavingCopy)?;
            c.reporting(back)?;
            let (durable, owner_confirmed) = c.sees(back)?;
            let r = c.write(Write::SwapBack {
                target_down: c.gone(m.target),
                durable,
                owner_confirmed,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `AbortHandoff`: before the commit, the new owner is down or lost
    /// (note 1: "a failure before the next write cancels the handoff and A
    /// reopens admission").
    pub fn abort_handoff(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("abort_handoff", |c| {
            let h = c.record().handoff.clone().ok_or(StoreError::NoHandoff)?;
            let r = c.write(Write::AbortHandoff {
                to_down: c.gone(h.to),
            })?;
            if let Ok(s) = c.owner_serving_mut() {
                s.reopen_admission();
            }
            Ok(Outcome::Recorded { version: r.version })
        })
    }
}
