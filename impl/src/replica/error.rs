//! Errors of the replica's API boundary.

use crate::ids::{Epoch, Position};

/// An append or install the replica refused; its state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaError {
    /// The sender's epoch is older than one this replica has seen or sealed
    /// at: fencing where writes are accepted.
    #[error("fenced: sender epoch {sender_epoch:?}, fence epoch {fence_epoch:?}")]
    Fenced {
        /// The epoch the sender serves at.
        sender_epoch: Epoch,
        /// The epoch this replica is fenced at.
        fence_epoch: Epoch,
    },
    /// The append does not follow the replica's log.
    #[error("log gap: expected position {expected}, got {got}")]
    LogGap {
        /// The next position the replica can take.
        expected: Position,
        /// The position offered.
        got: Position,
    },
    /// The entry before the offered one differs from the sender's.
    #[error("previous entry at {pos} differs: sender has {expected:?}, replica has {found:?}")]
    PrevMismatch {
        /// The previous position.
        pos: Position,
        /// The epoch tag the sender holds there.
        expected: Option<Epoch>,
        /// The epoch tag this replica holds there.
        found: Option<Epoch>,
    },
    /// An entry tagged with an epoch newer than its sender's.
    #[error("entry of epoch {entry_epoch:?} from a sender at {sender_epoch:?}")]
    EntryFromFuture {
        /// The entry's tag.
        entry_epoch: Epoch,
        /// The sender's epoch.
        sender_epoch: Epoch,
    },
    /// The copy already holds the entry the checkpoint is bound to: an
    /// older checkpoint cannot overwrite what it applied since (note 2).
    #[error("checkpoint at {pos} (epoch {epoch:?}) not needed: the copy holds that entry (log length {len})")]
    CheckpointNotNeeded {
        /// The checkpoint's position.
        pos: Position,
        /// The epoch tag of the checkpoint's entry.
        epoch: Epoch,
        /// The copy's log length.
        len: Position,
    },
    /// A checkpoint whose state does not match the checksum its sender
    /// computed: nothing is installed.
    #[error("checkpoint at {pos}: checksum {expected:#x} shipped, {computed:#x} computed")]
    ChecksumMismatch {
        /// The checkpoint's base position.
        pos: Position,
        /// The checksum shipped with the checkpoint.
        expected: u64,
        /// The checksum of the state received.
        computed: u64,
    },
    /// The append would replace an entry folded into this copy's
    /// checkpoint: folded state has no suffix to drop.
    #[error("an append at {pos} would cut into the checkpoint at {base}")]
    WouldCutCheckpoint {
        /// The position offered.
        pos: Position,
        /// The checkpoint's position.
        base: Position,
    },
    /// The recovered tail does not hold this copy's checkpoint entry: a
    /// checkpoint cannot be rolled back.
    #[error(
        "the recovered tail has {found:?} at {pos}, the checkpoint is bound to epoch {epoch:?}"
    )]
    RecoveredTailContradictsCheckpoint {
        /// The checkpoint's position.
        pos: Position,
        /// The epoch tag of the checkpoint's entry.
        epoch: Epoch,
        /// The recovered tail's epoch tag there, if it is that long.
        found: Option<Epoch>,
    },
}
