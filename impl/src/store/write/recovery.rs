//! Guards of the recovery writes: open, seal, install, activate.

use super::guards::*;
use super::seal_quorum;
use super::Write;
use crate::ids::Position;
use crate::mutant::{Mutant, Mutants};
use crate::store::error::StoreError;
use crate::store::record::*;
use std::collections::BTreeSet;

/// Check and apply one write of this group to `r`.
pub(super) fn apply(r: &mut Record, write: &Write, mutants: Mutants) -> Result<(), StoreError> {
    let moves_fenced = !mutants.on(Mutant::RecoveryKeepsMove);
    match write {
        Write::OpenRecovery => {
            if r.recovery.is_some() {
                return Err(StoreError::RecoveryPending);
            }
            if moves_fenced {
                if let Some(m) = r.move_task.clone() {
                    if matches!(m.phase, MovePhase::Learner | MovePhase::Admitted) {
                        drop_learner(r, m.target);
                    }
                }
            }
            if r.handoff
                .as_ref()
                .is_some_and(|h| h.phase != HandoffPhase::Committed)
            {
                r.handoff = None;
            }
            let seal_quorum = seal_quorum(r, mutants);
            r.recovery = Some(PendingRecovery {
                epoch: r.epoch,
                seal_quorum,
                sealed: BTreeSet::new(),
                installed: BTreeSet::new(),
                tail: None,
            });
        }
        Write::Seal { storage } => {
            let lost = r.lost.contains(storage);
            let eligible = r.eligible.contains(storage);
            let rec = r.recovery.as_mut().ok_or(StoreError::NoRecoveryPending)?;
            if !eligible {
                return Err(StoreError::NotEligible { storage: *storage });
            }
            if lost {
                return Err(StoreError::Lost { storage: *storage });
            }
            if !rec.sealed.insert(*storage) {
                return Err(StoreError::AlreadySealed { storage: *storage });
            }
        }
        Write::InstallRecovered { storage, tail } => {
            let rec = r.recovery.as_ref().ok_or(StoreError::NoRecoveryPending)?;
            let sealed = live_count(&rec.sealed, &r.lost);
            if sealed < usize::from(rec.seal_quorum) || sealed == 0 {
                return Err(StoreError::SealQuorumNotReached {
                    sealed,
                    required: usize::from(rec.seal_quorum).max(1),
                });
            }
            // The copies that sealed install the tail: each holds a history
            // inspection has read, and its seal fences the old owner.
            if !rec.sealed.contains(storage) {
                return Err(StoreError::NotSealed { storage: *storage });
            }
            if r.lost.contains(storage) {
                return Err(StoreError::Lost { storage: *storage });
            }
            let rec = r.recovery.as_mut().expect("checked above");
            if rec.installed.contains(storage) {
                return Err(StoreError::AlreadyInstalled { storage: *storage });
            }
            if let Some(fixed) = &rec.tail {
                assert_eq!(
                    fixed, tail,
                    "invariant broken: the recovered tail changed after the first install"
                );
            }
            rec.tail = Some(tail.clone());
            rec.installed.insert(*storage);
        }
        Write::ActivateRecovery { candidate } => {
            let rec = r.recovery.clone().ok_or(StoreError::NoRecoveryPending)?;
            let sealed = live_count(&rec.sealed, &r.lost);
            if sealed < usize::from(rec.seal_quorum) {
                return Err(StoreError::SealQuorumNotReached {
                    sealed,
                    required: usize::from(rec.seal_quorum),
                });
            }
            if !rec.installed.contains(candidate) || r.lost.contains(candidate) {
                return Err(StoreError::NotInstalled {
                    storage: *candidate,
                });
            }
            if !r.counted().contains(candidate) {
                return Err(StoreError::NotCounted {
                    storage: *candidate,
                });
            }
            if r.suspended.contains(candidate) {
                return Err(StoreError::Suspended {
                    storage: *candidate,
                });
            }
            let counted = r.counted();
            let receipts = rec
                .installed
                .iter()
                .filter(|s| counted.contains(s) && !r.suspended.contains(s) && !r.lost.contains(s))
                .count();
            let required = usize::from(r.configured_w());
            if receipts < required {
                return Err(StoreError::ReceiptQuorumNotReached { receipts, required });
            }
            let tail_pos = rec.tail.as_ref().map_or(0, |t| t.entries.len() as Position);
            let old_owner = r.owner;
            r.followers.insert(old_owner);
            r.followers.remove(candidate);
            r.owner = *candidate;
            r.epoch = r.epoch.next();
            r.confirm_w = r.configured_w();
            r.recovery = None;
            r.handoff = None;
            // A move past its swap survives the recovery: the new owner
            // serves the record's counted set from the start. If the old
            // owner had not adopted it, the recovered tail (held by W copies
            // of that set) is its boundary; an adopted switch keeps its B.
            if let Some(m) = r.move_task.as_mut() {
                match (m.phase, m.promotion) {
                    (MovePhase::Swapped | MovePhase::Switched, true) => r.move_task = None,
                    (MovePhase::Swapped, false) => {
                        m.phase = MovePhase::Switched;
                        m.boundary = Some(tail_pos);
                    }
                    _ => {}
                }
            }
        }
        other => unreachable!("recovery guards got {}", other.action()),
    }
    Ok(())
}
