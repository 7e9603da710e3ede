//! The operator surface as an API: pause and resume rebalancing, list moves
//! with phase, bytes remaining, the copy replaced and blocking reason,
//! request or cancel a move, cancel a handoff. The operator's cancels need
//! no reason; the controller's own aborts (a target down or lost) are
//! cluster actions (`Cluster::abort_move`, `swap_back`, `abort_handoff`).

use crate::ids::{Position, StorageId};
use crate::store::{CoordinationStore, MovePhase, Record, RecordStorage, StoreError, Write};
use serde::{Deserialize, Serialize};

/// Why a move is not progressing right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Blocking {
    /// A recovery is pending; moves wait (recovery comes first).
    RecoveryPending,
    /// The target is catching up to the owner's confirmed tail.
    CatchingUp {
        /// The target's durable prefix of the owner's history.
        durable: Position,
        /// What admission needs.
        required: Position,
    },
    /// Waiting for the swap write.
    AwaitingSwap,
    /// Waiting for the owner to adopt the new counted set.
    AwaitingOwnerSwitch,
    /// Step 2 waits for the target to cover B.
    TargetBehindBoundary {
        /// The target's durable prefix.
        durable: Position,
        /// B.
        boundary: Position,
    },
}

/// One move as the operator sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveStatus {
    /// The joining copy.
    pub target: StorageId,
    /// The leaving copy, once known.
    pub leaving: Option<StorageId>,
    /// The counted copy, down or lost, this move replaces (the controller
    /// started it for that copy); `None` for a planned move.
    pub replaces: Option<StorageId>,
    /// The phase.
    pub phase: MovePhase,
    /// Bytes the target still has to copy to reach the owner's tail.
    pub bytes_remaining: u64,
    /// Why it waits, if it does.
    pub blocking: Option<Blocking>,
}

/// Facts the operator view needs beyond the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// The target's durable prefix of the owner's history.
    pub target_durable: Position,
    /// The owner's log tail.
    pub owner_tail: Position,
    /// The owner's confirmed tail.
    pub owner_confirmed: Position,
    /// Average bytes per log entry.
    pub entry_bytes: u64,
}

/// The moves in progress (one partition has at most one).
pub fn list_moves(r: &Record, p: Progress) -> Vec<MoveStatus> {
    let Some(m) = &r.move_task else {
        return Vec::new();
    };
    let blocking = if r.recovery_pending() {
        Some(Blocking::RecoveryPending)
    } else {
        match m.phase {
            MovePhase::Learner if p.target_durable < p.owner_confirmed => {
                Some(Blocking::CatchingUp {
                    durable: p.target_durable,
                    required: p.owner_confirmed,
                })
            }
            MovePhase::Learner => None,
            MovePhase::Admitted => Some(Blocking::AwaitingSwap),
            MovePhase::Swapped => Some(Blocking::AwaitingOwnerSwitch),
            MovePhase::Switched => {
                let boundary = m.boundary.unwrap_or(0);
                (p.target_durable < boundary).then_some(Blocking::TargetBehindBoundary {
                    durable: p.target_durable,
                    boundary,
                })
            }
        }
    };
    vec![MoveStatus {
        target: m.target,
        leaving: m.leaving,
        replaces: m.replaces,
        phase: m.phase,
        bytes_remaining: p.owner_tail.saturating_sub(p.target_durable) * p.entry_bytes,
        blocking,
    }]
}

/// Operator commands over a store.
pub struct Operator<'a, S> {
    store: &'a mut CoordinationStore<S>,
}

impl<'a, S: RecordStorage> Operator<'a, S> {
    /// Commands against `store`.
    pub fn new(store: &'a mut CoordinationStore<S>) -> Self {
        Operator { store }
    }

    /// Pause rebalancing: no new move or handoff starts.
    pub fn pause(&mut self) -> Result<&Record, StoreError> {
        self.store.write_current(Write::Pause)
    }

    /// Resume rebalancing.
    pub fn resume(&mut self) -> Result<&Record, StoreError> {
        self.store.write_current(Write::Resume)
    }

    /// Request a move of the copy on `leaving` to `target` (step 0 now,
    /// the swap later names the same leaving copy).
    pub fn request_move(
        &mut self,
        target: StorageId,
        leaving: StorageId,
    ) -> Result<&Record, StoreError> {
        self.store.write_current(Write::AddLearner {
            target,
            leaving: Some(leaving),
            replaces: None,
        })
    }

    /// Cancel the planned handoff in flight (before its commit). Like a
    /// move's cancel, it needs no reason; the controller's abort
    /// (`Write::AbortHandoff`) needs the new owner down or lost.
    pub fn cancel_handoff(&mut self) -> Result<&Record, StoreError> {
        self.store.write_current(Write::CancelHandoff)
    }

    /// Cancel the move in flight (before its swap). An operator's cancel
    /// needs no reason; the controller's own aborts (`Write::AbortMove`,
    /// `Write::SwapBack`) need the target down or lost.
    pub fn cancel_move(&mut self) -> Result<&Record, StoreError> {
        self.store.write_current(Write::CancelMove)
    }
}
