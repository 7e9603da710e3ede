//! Errors of the owner's API boundary.

use crate::ids::{Epoch, NodeId, Position};

/// The owner refused an input; its state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OwnerError {
    /// Admission is closed (handoff in progress): state-changing work waits.
    #[error("admission is closed")]
    AdmissionClosed,
    /// The owner's own storage is fenced at a newer or sealed epoch.
    #[error("fenced: serving at {sender_epoch:?}, fence at {fence_epoch:?}")]
    Fenced {
        /// The epoch the owner serves at.
        sender_epoch: Epoch,
        /// The epoch its storage is fenced at.
        fence_epoch: Epoch,
    },
    /// No entry of the owner's epoch beyond the confirmed tail is on W counted copies.
    #[error("nothing new to confirm beyond {confirmed_tail}")]
    NothingToConfirm {
        /// The confirmed tail.
        confirmed_tail: Position,
    },
    /// A request carries an epoch other than the one the owner serves at.
    #[error("stale epoch: request at {request:?}, serving at {current:?}")]
    StaleEpoch {
        /// The epoch the request carries.
        request: Epoch,
        /// The epoch the owner serves at.
        current: Epoch,
    },
    /// Accepted work is not all confirmed yet: the owner has not drained.
    #[error("not drained: confirmed to {confirmed_tail}, accepted to {accepted}")]
    NotDrained {
        /// The confirmed tail.
        confirmed_tail: Position,
        /// The last accepted position.
        accepted: Position,
    },
    /// The peer already holds everything the owner could send.
    #[error("nothing to replicate")]
    NothingToReplicate,
    /// No copy on the node that the record waits on has caught up with the
    /// confirmed tail, or the controller already holds its progress.
    #[error("nothing to report on {node}: no caught-up copy there the controller knows otherwise")]
    NothingToReport {
        /// The node named.
        node: NodeId,
    },
    /// The increment the copy needs next was reclaimed below the owner's
    /// checkpoint: the copy catches up from the checkpoint first.
    #[error(
        "the increment at {pos} was reclaimed (checkpoint at {base}): install the checkpoint first"
    )]
    IncrementReclaimed {
        /// The position the copy needs.
        pos: Position,
        /// The owner's checkpoint position.
        base: Position,
    },
    /// Retention: the owner's confirmed tail is not past its checkpoint,
    /// so there is nothing to reclaim.
    #[error("nothing to reclaim: checkpoint at {base}, truncation point {at}")]
    NothingToReclaim {
        /// Where the checkpoint would be taken.
        at: Position,
        /// The current checkpoint position.
        base: Position,
    },
    /// The owner has no checkpoint to ship.
    #[error("the owner has no checkpoint")]
    NoCheckpoint,
    /// No delivered message to settle: every publish within the confirmed
    /// tail is settled in the owner's log (or nothing is confirmed).
    #[error("no delivered message to settle (confirmed tail {confirmed_tail})")]
    NothingDelivered {
        /// The owner's confirmed tail.
        confirmed_tail: Position,
    },
}
