//! Preconditions shared by several guarded writes.

use crate::ids::{Position, StorageId};
use crate::store::error::StoreError;
use crate::store::record::{Handoff, HandoffPhase, Move, MovePhase, Record};
use std::collections::BTreeSet;

pub(super) fn live_count(set: &BTreeSet<StorageId>, lost: &BTreeSet<StorageId>) -> usize {
    set.iter().filter(|s| !lost.contains(s)).count()
}

pub(super) fn no_recovery(r: &Record) -> Result<(), StoreError> {
    if r.recovery.is_some() {
        return Err(StoreError::RecoveryPending);
    }
    Ok(())
}

pub(super) fn idle(r: &Record) -> Result<(), StoreError> {
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

pub(super) fn caught_up(
    storage: StorageId,
    durable: Position,
    required: Position,
) -> Result<(), StoreError> {
    if durable < required {
        return Err(StoreError::NotCaughtUp {
            storage,
            durable,
            required,
        });
    }
    Ok(())
}

pub(super) fn current_move(r: &Record, target: StorageId) -> Result<&Move, StoreError> {
    let m = r.move_task.as_ref().ok_or(StoreError::NoMove)?;
    if m.target != target {
        return Err(StoreError::NotMoveTarget {
            expected: m.target,
            got: target,
        });
    }
    Ok(m)
}

pub(super) fn move_in(
    r: &Record,
    target: StorageId,
    phase: MovePhase,
) -> Result<&Move, StoreError> {
    let m = current_move(r, target)?;
    if m.phase != phase {
        return Err(StoreError::WrongMovePhase {
            expected: phase,
            found: m.phase,
        });
    }
    Ok(m)
}

pub(super) fn m_mut(r: &mut Record) -> &mut Move {
    r.move_task.as_mut().expect("checked: a move is in flight")
}

pub(super) fn handoff_mut(r: &mut Record) -> &mut Handoff {
    r.handoff.as_mut().expect("checked: a handoff is in flight")
}

pub(super) fn handoff_in(r: &mut Record, phase: HandoffPhase) -> Result<&mut Handoff, StoreError> {
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
pub(super) fn drop_learner(r: &mut Record, target: StorageId) {
    r.learners.remove(&target);
    r.eligible.remove(&target);
    r.move_task = None;
}
