//! Guards of the join and move writes (note 1, steps 0 to 2), the
//! replication-factor increase and the operator pause.

use super::guards::*;
use super::Write;
use crate::ids::Position;
use crate::mutant::{Mutant, Mutants};
use crate::store::error::StoreError;
use crate::store::record::*;

/// Check and apply one write of this group to `r`.
pub(super) fn apply(r: &mut Record, write: &Write, mutants: Mutants) -> Result<(), StoreError> {
    let moves_fenced = !mutants.on(Mutant::RecoveryKeepsMove);
    match write {
        Write::AddLearner {
            target,
            leaving,
            replaces,
        } => {
            if moves_fenced {
                no_recovery(r)?;
            }
            if r.paused {
                return Err(StoreError::Paused);
            }
            idle(r)?;
            if r.is_assigned(*target) || r.eligible.contains(target) {
                return Err(StoreError::AlreadyAssigned { storage: *target });
            }
            // A replacement (note 1, "Lost follower replaced": step 0 on the
            // replacement, then the lost copy leaves) names a counted copy.
            for l in leaving.iter().chain(replaces.iter()) {
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
                replaces: *replaces,
            });
        }
        Write::AdmitLearner {
            target,
            durable,
            owner_confirmed,
        } => {
            if moves_fenced {
                no_recovery(r)?;
            }
            move_in(r, *target, MovePhase::Learner)?;
            caught_up(*target, *durable, *owner_confirmed)?;
            r.eligible.insert(*target);
            m_mut(r).phase = MovePhase::Admitted;
        }
        Write::Swap {
            target,
            leaving,
            durable,
            owner_confirmed,
        } => {
            if moves_fenced {
                no_recovery(r)?;
            }
            let m = current_move(r, *target)?;
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
            if let Some(replaces) = m.replaces {
                if replaces != *leaving {
                    return Err(StoreError::NotTheReplacedCopy {
                        replaces,
                        got: *leaving,
                    });
                }
            }
            if !r.followers.contains(leaving) {
                return Err(StoreError::NotAFollower { storage: *leaving });
            }
            // Step 1 needs the target caught up: it covers the owner's
            // confirmed tail at the swap (note 1, step 1 preconditions).
            caught_up(*target, *durable, *owner_confirmed)?;
            r.learners.remove(target);
            r.followers.insert(*target);
            r.followers.remove(leaving);
            // A suspended copy stays suspended while it leaves: it still
            // takes a suspension slot until the removal.
            r.leaving = Some(*leaving);
            let m = m_mut(r);
            m.leaving = Some(*leaving);
            m.phase = MovePhase::Swapped;
        }
        Write::PromoteLearner {
            target,
            durable,
            owner_confirmed,
        } => {
            if moves_fenced {
                no_recovery(r)?;
            }
            let m = move_in(r, *target, MovePhase::Admitted)?;
            if let Some(replaces) = m.replaces {
                return Err(StoreError::ReplacementDoesNotPromote { replaces });
            }
            if !mutants.on(Mutant::PromoteWithoutCatchup) {
                caught_up(*target, *durable, *owner_confirmed)?;
            }
            r.learners.remove(target);
            r.followers.insert(*target);
            r.rf += 1;
            let m = m_mut(r);
            m.promotion = true;
            m.phase = MovePhase::Swapped;
        }
        Write::OwnerSwitch {
            boundary,
            target_durable,
        } => {
            if moves_fenced {
                no_recovery(r)?;
            }
            let m = r.move_task.as_ref().ok_or(StoreError::NothingToAdopt)?;
            if m.phase != MovePhase::Swapped {
                return Err(StoreError::NothingToAdopt);
            }
            // A promotion raises W at this step: the new copy must already
            // hold everything confirmed on the old W (DESIGN: W grows only
            // once the new copy covers the owner's confirmed tail).
            if m.promotion
                && !mutants.on(Mutant::PromoteWithoutCatchup)
                && !mutants.on(Mutant::AdoptWBeforeCatchup)
            {
                caught_up(m.target, *target_durable, *boundary)?;
            }
            r.confirm_w = r.configured_w();
            if m.promotion {
                r.move_task = None;
            } else {
                let m = m_mut(r);
                m.phase = MovePhase::Switched;
                m.boundary = Some(*boundary);
            }
        }
        Write::RemoveLeaving { target_durable } => {
            if moves_fenced {
                no_recovery(r)?;
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
            r.suspended.remove(&leaving);
            r.move_task = None;
        }
        Write::CancelMove => {
            let m = r.move_task.clone().ok_or(StoreError::NoMove)?;
            match m.phase {
                MovePhase::Learner | MovePhase::Admitted => drop_learner(r, m.target),
                phase => return Err(StoreError::CannotCancelAfterSwap { phase }),
            }
        }
        Write::AbortMove { target_down } => {
            target_not_owner(r, mutants)?;
            abort_move(r, *target_down)?
        }
        Write::SwapBack {
            target_down,
            durable,
            owner_confirmed,
        } => {
            let m = r.move_task.clone().ok_or(StoreError::NoMove)?;
            if mutants.on(Mutant::NoSwapBack) {
                return Err(StoreError::CannotCancelAfterSwap { phase: m.phase });
            }
            target_not_owner(r, mutants)?;
            swap_back(r, m, *target_down, *durable, *owner_confirmed)?
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
        other => unreachable!("moves guards got {}", other.action()),
    }
    Ok(())
}

/// A move's target that a recovery made the owner is not a copy the move
/// can take back: when that owner fails, recovery replaces it first, and
/// the move's way out applies to the follower it is afterwards (finding 25:
/// swapping back a failed owner-target marked the owner itself as leaving,
/// and the recovery that followed kept it counted after its removal).
fn target_not_owner(r: &Record, mutants: Mutants) -> Result<(), StoreError> {
    match &r.move_task {
        Some(m) if m.target == r.owner && !mutants.on(Mutant::SwapBackOfOwner) => {
            Err(StoreError::TargetIsOwner { storage: m.target })
        }
        _ => Ok(()),
    }
}

/// The controller's abort, for a reason: the move's target is down or lost.
/// Before the swap the learner is dropped (note 1, Aborts: "if T fails
/// before step 1, drop the learner. Nothing about the confirm contract
/// changed"). A promotion the owner has not adopted is withdrawn the same
/// way: the owner still confirms on the old counted set and W, so taking the
/// copy out again changes no confirm contract either. Always fenced by a
/// pending recovery, which cancels or freezes moves itself.
fn abort_move(r: &mut Record, target_down: bool) -> Result<(), StoreError> {
    no_recovery(r)?;
    let m = r.move_task.clone().ok_or(StoreError::NoMove)?;
    match (m.phase, m.promotion) {
        (MovePhase::Learner | MovePhase::Admitted, _) | (MovePhase::Swapped, true) => {}
        (phase, _) => return Err(StoreError::CannotAbortAfterSwap { phase }),
    }
    if !target_down && !r.lost.contains(&m.target) {
        return Err(StoreError::StillAvailable { storage: m.target });
    }
    if m.promotion {
        // Only an unadopted promotion is still a move: its switch ends it.
        r.followers.remove(&m.target);
        r.eligible.remove(&m.target);
        r.suspended.remove(&m.target);
        r.rf -= 1;
        assert_eq!(
            r.confirm_w,
            r.configured_w(),
            "invariant broken: an unadopted promotion changed the W the owner confirms on"
        );
        r.move_task = None;
    } else {
        drop_learner(r, m.target);
    }
    Ok(())
}

/// The controller's way out of a swapped move whose target is down or lost
/// (note 1, Aborts: "if T fails between steps 1 and 2, R is still in the
/// eligible set and still holds its data"): R, which kept replicating,
/// counts again and T becomes the leaving copy. R must cover the owner's
/// confirmed tail, as any swap target must (step 1); the owner's switch then
/// records a new B and step 2 removes T once R covers it.
fn swap_back(
    r: &mut Record,
    m: Move,
    target_down: bool,
    durable: Position,
    owner_confirmed: Position,
) -> Result<(), StoreError> {
    no_recovery(r)?;
    if m.promotion {
        return Err(StoreError::NoLeavingCopy);
    }
    if !matches!(m.phase, MovePhase::Swapped | MovePhase::Switched) {
        return Err(StoreError::WrongMovePhase {
            expected: MovePhase::Swapped,
            found: m.phase,
        });
    }
    if !target_down && !r.lost.contains(&m.target) {
        return Err(StoreError::StillAvailable { storage: m.target });
    }
    let back = r
        .leaving
        .expect("invariant broken: a swapped follower move without a leaving copy");
    if r.lost.contains(&back) {
        return Err(StoreError::Lost { storage: back });
    }
    caught_up(back, durable, owner_confirmed)?;
    r.followers.remove(&m.target);
    r.followers.insert(back);
    r.leaving = Some(m.target);
    r.move_task = Some(Move {
        target: back,
        leaving: Some(m.target),
        phase: MovePhase::Swapped,
        promotion: false,
        boundary: None,
        replaces: None,
    });
    Ok(())
}
