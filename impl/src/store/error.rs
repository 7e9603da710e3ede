//! Errors of the coordination store's API boundary: each names the failed
//! precondition of a guarded write.

use crate::ids::{Position, StorageId, Version};
use crate::store::record::{HandoffPhase, MovePhase};

/// A guarded write was refused; the record is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The writer read an older (or newer) version than the committed one.
    #[error("stale version: expected {expected}, found {found}")]
    StaleVersion {
        /// The version the writer read.
        expected: Version,
        /// The committed version.
        found: Version,
    },
    /// A recovery is pending, which fences moves and uncommitted handoffs.
    #[error("a recovery is pending")]
    RecoveryPending,
    /// The write needs a pending recovery and there is none.
    #[error("no recovery is pending")]
    NoRecoveryPending,
    /// Rebalancing is paused by the operator.
    #[error("rebalancing is paused")]
    Paused,
    /// Another move is in flight (at most one admission or removal at a time).
    #[error("a move of {target} is in flight")]
    MoveInFlight {
        /// The target of the move in flight.
        target: StorageId,
    },
    /// A handoff is in flight.
    #[error("a handoff to {to} is in flight")]
    HandoffInFlight {
        /// The new owner of the handoff in flight.
        to: StorageId,
    },
    /// The write needs a move in flight and there is none.
    #[error("no move is in flight")]
    NoMove,
    /// The write needs a handoff in flight and there is none.
    #[error("no handoff is in flight")]
    NoHandoff,
    /// The storage instance already holds a role in the assignment.
    #[error("{storage} is already assigned")]
    AlreadyAssigned {
        /// The storage instance.
        storage: StorageId,
    },
    /// The storage instance is not the target of the move in flight.
    #[error("{got} is not the move target {expected}")]
    NotMoveTarget {
        /// The move's target.
        expected: StorageId,
        /// The storage instance named by the write.
        got: StorageId,
    },
    /// The move is not in the phase the write needs.
    #[error("move is in phase {found:?}, the write needs {expected:?}")]
    WrongMovePhase {
        /// The phase the write needs.
        expected: MovePhase,
        /// The phase the move is in.
        found: MovePhase,
    },
    /// The storage instance has not caught up with the owner's confirmed tail.
    #[error("{storage} is durable to {durable}, needs {required}")]
    NotCaughtUp {
        /// The storage instance.
        storage: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The position it must cover.
        required: Position,
    },
    /// Step 2: the target does not cover the switch boundary B yet.
    #[error("target durable to {durable}, boundary is {boundary}")]
    TargetBehindBoundary {
        /// The target's durable prefix of the owner's history.
        durable: Position,
        /// The switch boundary B.
        boundary: Position,
    },
    /// The storage instance is not a follower.
    #[error("{storage} is not a follower")]
    NotAFollower {
        /// The storage instance.
        storage: StorageId,
    },
    /// The storage instance is not in the accepted history.
    #[error("{storage} is not in the eligible set")]
    NotEligible {
        /// The storage instance.
        storage: StorageId,
    },
    /// The storage instance lost its disk.
    #[error("{storage} is lost")]
    Lost {
        /// The storage instance.
        storage: StorageId,
    },
    /// The move named a different leaving copy when it was requested.
    #[error("the move was requested with {requested} leaving, not {got}")]
    LeavingMismatch {
        /// The leaving copy named when the move was requested.
        requested: StorageId,
        /// The leaving copy named by the write.
        got: StorageId,
    },
    /// The move is past the swap: who counts already changed.
    #[error("the move is past the swap (phase {phase:?}) and cannot be cancelled")]
    CannotCancelAfterSwap {
        /// The move's phase.
        phase: MovePhase,
    },
    /// A move before its swap, or an unadopted promotion, is aborted; a move
    /// past its swap is swapped back instead.
    #[error("the move is past the swap (phase {phase:?}): swap the leaving copy back instead")]
    CannotAbortAfterSwap {
        /// The move's phase.
        phase: MovePhase,
    },
    /// The controller aborts only for a reason: the copy is down or lost.
    #[error("{storage} is up and not lost: nothing to abort for")]
    StillAvailable {
        /// The move's target, or the handoff's new owner.
        storage: StorageId,
    },
    /// A move's target that a recovery made the owner is not taken back by
    /// the move: a failed owner is recovered first (finding 25).
    #[error("{storage} is the move's target and the owner: a failed owner is recovered first")]
    TargetIsOwner {
        /// The move's target, which owns the partition.
        storage: StorageId,
    },
    /// A promotion has no leaving copy to swap back.
    #[error("the move is a promotion: no leaving copy to swap back")]
    NoLeavingCopy,
    /// A replacement's swap must take out the copy it replaces.
    #[error("the move replaces {replaces}, the swap names {got}")]
    NotTheReplacedCopy {
        /// The copy the move replaces.
        replaces: StorageId,
        /// The leaving copy named by the write.
        got: StorageId,
    },
    /// A replacement swaps a copy out; it never raises the replication factor.
    #[error("the move replaces {replaces}: it swaps, it does not promote")]
    ReplacementDoesNotPromote {
        /// The copy the move replaces.
        replaces: StorageId,
    },
    /// The owner has nothing new to adopt.
    #[error("no swapped move awaits the owner's switch")]
    NothingToAdopt,
    /// The handoff is not in the phase the write needs.
    #[error("handoff is in phase {found:?}, the write needs {expected:?}")]
    WrongHandoffPhase {
        /// The phase the write needs.
        expected: HandoffPhase,
        /// The phase the handoff is in.
        found: HandoffPhase,
    },
    /// The handoff is committed; failure now falls back to recovery.
    #[error("the handoff is committed")]
    HandoffCommitted,
    /// A counted copy does not hold the final boundary F.
    #[error("{storage} is durable to {durable}, final boundary is {boundary}")]
    CopyBehindFinalBoundary {
        /// The counted copy.
        storage: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The final boundary F.
        boundary: Position,
    },
    /// At most W - 1 followers may be suspended at once.
    #[error("{suspended} followers are suspended, at most {max} may be")]
    TooManySuspended {
        /// Followers suspended now.
        suspended: usize,
        /// W - 1.
        max: usize,
    },
    /// The storage instance is not suspended.
    #[error("{storage} is not suspended")]
    NotSuspended {
        /// The storage instance.
        storage: StorageId,
    },
    /// The storage instance is suspended and cannot do this.
    #[error("{storage} is suspended")]
    Suspended {
        /// The storage instance.
        storage: StorageId,
    },
    /// The storage instance already sealed for this recovery.
    #[error("{storage} already sealed")]
    AlreadySealed {
        /// The storage instance.
        storage: StorageId,
    },
    /// The storage instance has not sealed for the pending recovery.
    #[error("{storage} has not sealed")]
    NotSealed {
        /// The storage instance.
        storage: StorageId,
    },
    /// The storage instance already holds the recovered tail.
    #[error("{storage} already installed the recovered tail")]
    AlreadyInstalled {
        /// The storage instance.
        storage: StorageId,
    },
    /// Fewer than E - W + 1 seals of the eligible set.
    #[error("{sealed} seals, recovery needs {required}")]
    SealQuorumNotReached {
        /// Seals of live storage instances.
        sealed: usize,
        /// E - W + 1.
        required: usize,
    },
    /// The storage instance is not in the counted set.
    #[error("{storage} is not counted")]
    NotCounted {
        /// The storage instance.
        storage: StorageId,
    },
    /// The candidate does not hold the recovered tail.
    #[error("{storage} has not installed the recovered tail")]
    NotInstalled {
        /// The storage instance.
        storage: StorageId,
    },
    /// Fewer than W copies of the new counted set hold the recovered tail.
    #[error("{receipts} receipts, activation needs {required}")]
    ReceiptQuorumNotReached {
        /// Counted copies that hold the recovered tail.
        receipts: usize,
        /// W.
        required: usize,
    },
    /// The write would change nothing (pause while paused, and the like).
    #[error("the write changes nothing: {what}")]
    NoChange {
        /// What was already so.
        what: &'static str,
    },
    /// The durable storage failed; the write did not commit.
    #[error("storage failed: {reason}")]
    Storage {
        /// What the storage reported.
        reason: String,
    },
}
