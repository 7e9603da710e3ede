//! Guards of the recovery writes: open, seal, install, activate.

use super::guards::*;
use super::seal_quorum;
use super::Write;
use crate::ids::{Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use crate::recovery::choose_tail;
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
                evidence: None,
            });
        }
        Write::Seal { storage, evidence } => {
            let lost = r.lost.contains(storage);
            let eligible = r.eligible.contains(storage);
            let recovered = r.recovered;
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
            // The best history given so far; once the first install fixed
            // the tail, later evidence changes nothing.
            if let (Some(h), None) = (evidence, &rec.tail) {
                let current = rec.evidence.take();
                rec.evidence = choose_tail(
                    current
                        .iter()
                        .map(|t| (t.source, t.entries.as_slice()))
                        .chain([(*storage, h.as_slice())]),
                    recovered,
                    mutants,
                );
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
        // The seals were counted when the first install fixed the tail. A
        // seal lost with its disk afterwards does not undo the fence it
        // gave: the fresh instance is in no counted set and in no
        // assignment, so no owner replicates to it.
        Write::ActivateRecovery { candidate } => {
            let rec = r.recovery.clone().ok_or(StoreError::NoRecoveryPending)?;
            if !rec.installed.contains(candidate) || r.lost.contains(candidate) {
                return Err(StoreError::NotInstalled {
                    storage: *candidate,
                });
            }
            // A suspended follower that installed the recovered tail has had
            // its history checked exactly as re-admission would check it
            // (its log is the tail the new owner starts from): activation
            // re-admits it, so it counts as a receipt and may be the
            // candidate (finding 10). A lost copy is no longer suspended.
            let readmitted = readmitted_at_activation(r, &rec, mutants);
            let suspended: BTreeSet<StorageId> =
                r.suspended.difference(&readmitted).copied().collect();
            if !r.counted().contains(candidate) {
                return Err(StoreError::NotCounted {
                    storage: *candidate,
                });
            }
            if suspended.contains(candidate) {
                return Err(StoreError::Suspended {
                    storage: *candidate,
                });
            }
            let receipts = receipts(r, &rec, &suspended);
            let required = usize::from(r.configured_w());
            if receipts < required {
                return Err(StoreError::ReceiptQuorumNotReached { receipts, required });
            }
            r.suspended = suspended;
            let tail_pos = rec.tail.as_ref().map_or(0, |t| t.entries.len() as Position);
            r.recovered = rec.tail.as_ref().and_then(|t| TailMark::of(&t.entries));
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

/// Quorum receipts: counted copies (owner and followers) that installed the
/// recovered tail and still hold it (not lost), less those still
/// `suspended` once activation has re-admitted the suspended installers.
pub(crate) fn receipts(
    r: &Record,
    rec: &PendingRecovery,
    suspended: &BTreeSet<StorageId>,
) -> usize {
    let counted = r.counted();
    rec.installed
        .iter()
        .filter(|s| counted.contains(s) && !suspended.contains(s) && !r.lost.contains(s))
        .count()
}

/// The suspended followers activation would re-admit now: those that
/// installed the recovered tail and hold it.
pub(crate) fn readmitted_at_activation(
    r: &Record,
    rec: &PendingRecovery,
    mutants: Mutants,
) -> BTreeSet<StorageId> {
    if mutants.on(Mutant::ReceiptsSkipSuspended) {
        return BTreeSet::new();
    }
    r.suspended
        .intersection(&rec.installed)
        .filter(|s| !r.lost.contains(s))
        .copied()
        .collect()
}
