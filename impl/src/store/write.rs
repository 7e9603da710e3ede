//! Guarded writes: each checks the notes' preconditions against the record
//! (and the facts the writer observed) and produces the next record.
//!
//! Facts that live outside the record, such as how far a copy is durable,
//! are inputs: the writer observes them and names them in the write, the
//! store checks them. `durable` always means the length of the copy's prefix
//! that equals the owner's history (a copy with a divergent suffix of the
//! same length does not cover it).

use crate::entry::Entry;
use crate::ids::{Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use crate::store::error::StoreError;
use crate::store::record::{
    Handoff, HandoffPhase, Move, MovePhase, PendingRecovery, Record, RecoveredTail,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One guarded write, named after the shared action it implements.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Write {
    /// Step 0: add `target` to the learners and start a move.
    AddLearner {
        /// The joining storage instance.
        target: StorageId,
        /// The follower the operator wants to leave, if already chosen.
        leaving: Option<StorageId>,
    },
    /// Admit the caught-up learner into the accepted history.
    AdmitLearner {
        /// The learner.
        target: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// Step 1: `target` counts instead of `leaving`.
    Swap {
        /// The admitted learner.
        target: StorageId,
        /// The follower that leaves.
        leaving: StorageId,
    },
    /// Replication-factor increase: the admitted learner becomes a follower, nothing leaves.
    PromoteLearner {
        /// The admitted learner.
        target: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// The owner adopted the record's counted set; `boundary` is its confirmed tail (B).
    OwnerSwitch {
        /// The owner's confirmed tail when it adopted the new set.
        boundary: Position,
        /// The move target's durable prefix of the owner's history.
        target_durable: Position,
    },
    /// Step 2: remove the leaving copy from the assignment and the eligible set.
    RemoveLeaving {
        /// The target's durable prefix of the owner's history.
        target_durable: Position,
    },
    /// Cancel a move before its swap.
    CancelMove,
    /// Handoff: the owner closed admission for a handoff to `to`.
    CloseAdmission {
        /// The follower that becomes owner.
        to: StorageId,
    },
    /// Handoff: the owner drained and reports its final boundary F.
    ReportFinalBoundary {
        /// F.
        boundary: Position,
    },
    /// Handoff: commit the new owner at epoch + 1 (the continuation certificate).
    CommitHandoff {
        /// Each counted copy's durable prefix of the owner's history.
        durable: BTreeMap<StorageId, Position>,
    },
    /// Handoff: the new owner activated and serves.
    ActivateOwner,
    /// Handoff: cancel before the commit; the owner reopens admission.
    CancelHandoff,
    /// A follower restarted on its own disk: suspend it.
    Suspend {
        /// The restarted follower.
        storage: StorageId,
    },
    /// A node came back with a fresh disk: its old storage instance is gone.
    MarkLost {
        /// The storage instance whose disk is gone.
        storage: StorageId,
    },
    /// A suspended follower caught up and is re-admitted without a fence.
    Rejoin {
        /// The suspended follower.
        storage: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// Open a recovery: the owner crashed or is suspected.
    OpenRecovery,
    /// A member of the eligible set sealed at the recovery's epoch.
    Seal {
        /// The sealed storage instance.
        storage: StorageId,
    },
    /// A counted copy installed the recovered tail.
    InstallRecovered {
        /// The storage instance that holds the tail now.
        storage: StorageId,
        /// The tail inspection chose; fixed by the first install.
        tail: RecoveredTail,
    },
    /// Activate the recovery: `candidate` owns at epoch + 1.
    ActivateRecovery {
        /// The new owner.
        candidate: StorageId,
    },
    /// Operator: pause rebalancing.
    Pause,
    /// Operator: resume rebalancing.
    Resume,
}

impl Write {
    /// The shared action name of the write.
    pub fn action(&self) -> &'static str {
        match self {
            Write::AddLearner { .. } => "add_learner",
            Write::AdmitLearner { .. } => "admit_learner",
            Write::Swap { .. } => "swap",
            Write::PromoteLearner { .. } => "promote_learner",
            Write::OwnerSwitch { .. } => "owner_switch",
            Write::RemoveLeaving { .. } => "remove_leaving",
            Write::CancelMove => "cancel_move",
            Write::CloseAdmission { .. } => "close_admission",
            Write::ReportFinalBoundary { .. } => "report_final_boundary",
            Write::CommitHandoff { .. } => "commit_handoff",
            Write::ActivateOwner => "activate_owner",
            Write::CancelHandoff => "cancel_handoff",
            Write::Suspend { .. } => "restart",
            Write::MarkLost { .. } => "restart",
            Write::Rejoin { .. } => "rejoin",
            Write::OpenRecovery => "open_recovery",
            Write::Seal { .. } => "seal",
            Write::InstallRecovered { .. } => "install_recovered",
            Write::ActivateRecovery { .. } => "activate_recovery",
            Write::Pause => "pause",
            Write::Resume => "resume",
        }
    }
}

/// The seal quorum E - W + 1 for a record, where W is the W the owner may
/// still be confirming on (`confirm_w`), not the one a pending
/// replication-factor increase will bring.
pub fn seal_quorum(record: &Record, mutants: Mutants) -> u8 {
    let e = record.eligible.len() as u8;
    let w = if mutants.on(Mutant::SealWithNewW) {
        record.configured_w()
    } else {
        record.confirm_w
    };
    let quorum = e.saturating_sub(w) + 1;
    if mutants.on(Mutant::SmallSealQuorum) {
        quorum.saturating_sub(1)
    } else {
        quorum
    }
}

/// Apply `write` to `record` (the version check is the store's): the next
/// record, or the first failed precondition.
pub fn apply(record: &Record, write: &Write, mutants: Mutants) -> Result<Record, StoreError> {
    let mut r = record.clone();
    let moves_fenced = !mutants.on(Mutant::RecoveryKeepsMove);
    match write {
        Write::AddLearner { target, leaving } => {
            if moves_fenced {
                no_recovery(&r)?;
            }
            if r.paused {
                return Err(StoreError::Paused);
            }
            idle(&r)?;
            if r.is_assigned(*target) || r.eligible.contains(target) {
                return Err(StoreError::AlreadyAssigned { storage: *target });
            }
            if let Some(l) = leaving {
                if !r.followers.contains(l) {
                    return Err(StoreError::NotAFollower { storage: *l });
                }
            }
            r.learners.insert(*target);
            r.move_task = Some(Move {
                target: *target,
                leaving: *leaving,
                phase: MovePhase::Learner,
                promotion: false,
                boundary: None,
            });
        }
        Write::AdmitLearner {
            target,
            durable,
            owner_confirmed,
        } => {
            if moves_fenced {
                no_recovery(&r)?;
            }
            move_in(&r, *target, MovePhase::Learner)?;
            caught_up(*target, *durable, *owner_confirmed)?;
            r.eligible.insert(*target);
            m_mut(&mut r).phase = MovePhase::Admitted;
        }
        Write::Swap { target, leaving } => {
            if moves_fenced {
                no_recovery(&r)?;
            }
            let m = current_move(&r, *target)?;
            let admitted = m.phase == MovePhase::Admitted;
            let early = m.phase == MovePhase::Learner && mutants.on(Mutant::SwapBeforeAdmission);
            if !admitted && !early {
                return Err(StoreError::WrongMovePhase {
                    expected: MovePhase::Admitted,
                    found: m.phase,
                });
            }
            if let Some(requested) = m.leaving {
                if requested != *leaving {
                    return Err(StoreError::LeavingMismatch {
                        requested,
                        got: *leaving,
                    });
                }
            }
            if !r.followers.contains(leaving) {
                return Err(StoreError::NotAFollower { storage: *leaving });
            }
            r.learners.remove(target);
            r.followers.insert(*target);
            r.followers.remove(leaving);
            r.suspended.remove(leaving);
            r.leaving = Some(*leaving);
            let m = m_mut(&mut r);
            m.leaving = Some(*leaving);
            m.phase = MovePhase::Swapped;
        }
        Write::PromoteLearner {
            target,
            durable,
            owner_confirmed,
        } => {
            if moves_fenced {
                no_recovery(&r)?;
            }
            move_in(&r, *target, MovePhase::Admitted)?;
            if !mutants.on(Mutant::PromoteWithoutCatchup) {
                caught_up(*target, *durable, *owner_confirmed)?;
            }
            r.learners.remove(target);
            r.followers.insert(*target);
            r.rf += 1;
            let m = m_mut(&mut r);
            m.promotion = true;
            m.phase = MovePhase::Swapped;
        }
        Write::OwnerSwitch {
            boundary,
            target_durable,
        } => {
            if moves_fenced {
                no_recovery(&r)?;
            }
            let m = r.move_task.as_ref().ok_or(StoreError::NothingToAdopt)?;
            if m.phase != MovePhase::Swapped {
                return Err(StoreError::NothingToAdopt);
            }
            // A promotion raises W at this step: the new copy must already
            // hold everything confirmed on the old W (DESIGN: W grows only
            // once the new copy covers the owner's confirmed tail).
            if m.promotion && !mutants.on(Mutant::PromoteWithoutCatchup) {
                caught_up(m.target, *target_durable, *boundary)?;
            }
            r.confirm_w = r.configured_w();
            if m.promotion {
                r.move_task = None;
            } else {
                let m = m_mut(&mut r);
                m.phase = MovePhase::Switched;
                m.boundary = Some(*boundary);
            }
        }
        Write::RemoveLeaving { target_durable } => {
            if moves_fenced {
                no_recovery(&r)?;
            }
            let m = r.move_task.clone().ok_or(StoreError::NoMove)?;
            if m.phase != MovePhase::Switched {
                return Err(StoreError::WrongMovePhase {
                    expected: MovePhase::Switched,
                    found: m.phase,
                });
            }
            let boundary = m.boundary.expect("a switched move records its boundary");
            if *target_durable < boundary && !mutants.on(Mutant::RemoveBeforeBoundary) {
                return Err(StoreError::TargetBehindBoundary {
                    durable: *target_durable,
                    boundary,
                });
            }
            let leaving = m
                .leaving
                .expect("a switched follower move names its leaving copy");
            r.leaving = None;
            r.eligible.remove(&leaving);
            r.move_task = None;
        }
        Write::CancelMove => {
            let m = r.move_task.clone().ok_or(StoreError::NoMove)?;
            match m.phase {
                MovePhase::Learner | MovePhase::Admitted => drop_learner(&mut r, m.target),
                phase => return Err(StoreError::CannotCancelAfterSwap { phase }),
            }
        }
        Write::CloseAdmission { to } => {
            no_recovery(&r)?;
            if r.paused {
                return Err(StoreError::Paused);
            }
            idle(&r)?;
            if !r.followers.contains(to) {
                return Err(StoreError::NotAFollower { storage: *to });
            }
            if r.suspended.contains(to) {
                return Err(StoreError::Suspended { storage: *to });
            }
            r.handoff = Some(Handoff {
                to: *to,
                from: r.owner,
                phase: HandoffPhase::Closed,
                final_boundary: None,
            });
        }
        Write::ReportFinalBoundary { boundary } => {
            no_recovery(&r)?;
            let h = handoff_in(&mut r, HandoffPhase::Closed)?;
            h.final_boundary = Some(*boundary);
            h.phase = HandoffPhase::Reported;
        }
        Write::CommitHandoff { durable } => {
            no_recovery(&r)?;
            let h = handoff_in(&mut r, HandoffPhase::Reported)?.clone();
            let boundary = h
                .final_boundary
                .expect("a reported handoff has a final boundary");
            if r.suspended.contains(&h.to) {
                return Err(StoreError::Suspended { storage: h.to });
            }
            // The barrier: every counted copy (and so the new owner) holds F.
            let mut must_hold: BTreeSet<StorageId> = r.followers.clone();
            must_hold.retain(|s| !r.suspended.contains(s));
            must_hold.insert(h.to);
            if let Some((storage, durable)) =
                crate::handoff::first_behind(durable, must_hold, boundary)
            {
                return Err(StoreError::CopyBehindFinalBoundary {
                    storage,
                    durable,
                    boundary,
                });
            }
            r.followers.remove(&h.to);
            r.followers.insert(r.owner);
            r.owner = h.to;
            r.epoch = r.epoch.next();
            r.confirm_w = r.configured_w();
            handoff_mut(&mut r).phase = HandoffPhase::Committed;
        }
        Write::ActivateOwner => {
            // A recovery opened after the commit fences the new owner too.
            no_recovery(&r)?;
            handoff_in(&mut r, HandoffPhase::Committed)?;
            r.handoff = None;
        }
        Write::CancelHandoff => {
            let h = r.handoff.as_ref().ok_or(StoreError::NoHandoff)?;
            if h.phase == HandoffPhase::Committed {
                return Err(StoreError::HandoffCommitted);
            }
            r.handoff = None;
        }
        Write::Suspend { storage } => {
            if !r.followers.contains(storage) {
                return Err(StoreError::NotAFollower { storage: *storage });
            }
            if r.suspended.contains(storage) {
                return Err(StoreError::Suspended { storage: *storage });
            }
            let max = usize::from(r.confirm_w) - 1;
            if r.suspended.len() >= max {
                return Err(StoreError::TooManySuspended {
                    suspended: r.suspended.len(),
                    max,
                });
            }
            r.suspended.insert(*storage);
        }
        Write::MarkLost { storage } => {
            if r.lost.contains(storage) {
                return Err(StoreError::Lost { storage: *storage });
            }
            r.lost.insert(*storage);
            r.suspended.remove(storage);
        }
        Write::Rejoin {
            storage,
            durable,
            owner_confirmed,
        } => {
            no_recovery(&r)?;
            if !r.suspended.contains(storage) {
                return Err(StoreError::NotSuspended { storage: *storage });
            }
            caught_up(*storage, *durable, *owner_confirmed)?;
            r.suspended.remove(storage);
        }
        Write::OpenRecovery => {
            if r.recovery.is_some() {
                return Err(StoreError::RecoveryPending);
            }
            if moves_fenced {
                if let Some(m) = r.move_task.clone() {
                    if matches!(m.phase, MovePhase::Learner | MovePhase::Admitted) {
                        drop_learner(&mut r, m.target);
                    }
                }
            }
            if r.handoff
                .as_ref()
                .is_some_and(|h| h.phase != HandoffPhase::Committed)
            {
                r.handoff = None;
            }
            let seal_quorum = seal_quorum(&r, mutants);
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
            if !r.counted().contains(storage) {
                return Err(StoreError::NotCounted { storage: *storage });
            }
            if r.lost.contains(storage) {
                return Err(StoreError::Lost { storage: *storage });
            }
            // A suspended follower that installs the recovered tail holds
            // everything recovery keeps: the install re-admits it, so that
            // a restarted follower cannot hold a recovery up.
            r.suspended.remove(storage);
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
            // serves the record's counted set from the start, and the
            // recovered tail (held by W copies of that set) is its boundary.
            if let Some(m) = r.move_task.as_mut() {
                match (m.phase, m.promotion) {
                    (MovePhase::Swapped | MovePhase::Switched, true) => r.move_task = None,
                    (MovePhase::Swapped | MovePhase::Switched, false) => {
                        m.phase = MovePhase::Switched;
                        m.boundary = Some(tail_pos);
                    }
                    _ => {}
                }
            }
        }
        Write::Pause => {
            if r.paused {
                return Err(StoreError::NoChange {
                    what: "already paused",
                });
            }
            r.paused = true;
        }
        Write::Resume => {
            if !r.paused {
                return Err(StoreError::NoChange { what: "not paused" });
            }
            r.paused = false;
        }
    }
    r.version = record.version.next();
    check_record(&r);
    Ok(r)
}

/// Structural invariants every committed record satisfies; a failure is a
/// programming mistake in a guard above.
pub fn check_record(r: &Record) {
    assert!(
        !r.followers.contains(&r.owner),
        "invariant broken: owner {} is also a follower",
        r.owner
    );
    for l in &r.learners {
        assert!(
            !r.followers.contains(l) && *l != r.owner,
            "invariant broken: learner {l} also counts"
        );
    }
    for s in &r.suspended {
        assert!(
            r.followers.contains(s),
            "invariant broken: suspended {s} is not a follower"
        );
    }
    if let Some(l) = r.leaving {
        assert!(
            !r.followers.contains(&l),
            "invariant broken: leaving {l} still counts"
        );
    }
}

fn live_count(set: &BTreeSet<StorageId>, lost: &BTreeSet<StorageId>) -> usize {
    set.iter().filter(|s| !lost.contains(s)).count()
}

fn no_recovery(r: &Record) -> Result<(), StoreError> {
    if r.recovery.is_some() {
        return Err(StoreError::RecoveryPending);
    }
    Ok(())
}

fn idle(r: &Record) -> Result<(), StoreError> {
    if let Some(m) = &r.move_task {
        return Err(StoreError::MoveInFlight { target: m.target });
    }
    if let Some(h) = &r.handoff {
        return Err(StoreError::HandoffInFlight { to: h.to });
    }
    if r.leaving.is_some() {
        panic!("invariant broken: a leaving copy without a move");
    }
    Ok(())
}

fn caught_up(storage: StorageId, durable: Position, required: Position) -> Result<(), StoreError> {
    if durable < required {
        return Err(StoreError::NotCaughtUp {
            storage,
            durable,
            required,
        });
    }
    Ok(())
}

fn current_move(r: &Record, target: StorageId) -> Result<&Move, StoreError> {
    let m = r.move_task.as_ref().ok_or(StoreError::NoMove)?;
    if m.target != target {
        return Err(StoreError::NotMoveTarget {
            expected: m.target,
            got: target,
        });
    }
    Ok(m)
}

fn move_in(r: &Record, target: StorageId, phase: MovePhase) -> Result<&Move, StoreError> {
    let m = current_move(r, target)?;
    if m.phase != phase {
        return Err(StoreError::WrongMovePhase {
            expected: phase,
            found: m.phase,
        });
    }
    Ok(m)
}

fn m_mut(r: &mut Record) -> &mut Move {
    r.move_task.as_mut().expect("checked: a move is in flight")
}

fn handoff_mut(r: &mut Record) -> &mut Handoff {
    r.handoff.as_mut().expect("checked: a handoff is in flight")
}

fn handoff_in(r: &mut Record, phase: HandoffPhase) -> Result<&mut Handoff, StoreError> {
    let h = r.handoff.as_mut().ok_or(StoreError::NoHandoff)?;
    if h.phase != phase {
        return Err(StoreError::WrongHandoffPhase {
            expected: phase,
            found: h.phase,
        });
    }
    Ok(h)
}

/// Drop a move's learner: it never counted, so nothing about the confirm
/// contract changes (note 1, aborts).
fn drop_learner(r: &mut Record, target: StorageId) {
    r.learners.remove(&target);
    r.eligible.remove(&target);
    r.move_task = None;
}

/// Shorthand used by tests and the operator: the recovered tail of `entries`.
pub fn tail_of(source: StorageId, entries: &[Entry]) -> RecoveredTail {
    RecoveredTail {
        source,
        entries: entries.to_vec(),
    }
}
