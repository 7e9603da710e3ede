//! What a successful cluster action did.

use crate::ids::{Epoch, NodeId, Position, StorageId, Version};
use crate::net::Msg;
use crate::replica::{Ack, CheckpointBase};
use crate::routing::{Attempt, ClientReply, Route};
use serde::Serialize;

/// The result of one accepted action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// The owner wrote a new entry.
    Published {
        /// Its position.
        pos: Position,
        /// Its epoch tag.
        epoch: Epoch,
    },
    /// The receiver took the entry and acknowledged it.
    Replicated {
        /// The acknowledgement the sender recorded.
        ack: Ack,
    },
    /// The receiver is fenced against the sender: it refused, told the
    /// sender its fence epoch, and the sender stopped serving.
    Refused {
        /// The refusing node.
        by: NodeId,
        /// The epoch it is fenced at.
        fence_epoch: Epoch,
    },
    /// A producer's retry of a publish the owner's history already holds:
    /// it answers with that entry's position and appends nothing.
    Deduplicated {
        /// The position of the entry that holds the publish.
        pos: Position,
        /// That entry's epoch tag (older than the owner's after an owner
        /// change: a recovery or a handoff carried it over).
        epoch: Epoch,
    },
    /// The owner appended the consumer's settle (a `Delete`) of the oldest
    /// message it delivered.
    Settled {
        /// The message key settled.
        key: u64,
        /// The position of the `Delete` entry.
        pos: Position,
        /// Its epoch tag.
        epoch: Epoch,
    },
    /// The owner advanced its confirmed tail.
    Confirmed {
        /// The new confirmed tail.
        tail: Position,
    },
    /// A guarded write committed and nothing else changed.
    Recorded {
        /// The record's new version.
        version: Version,
    },
    /// The owner adopted the new counted set and recorded its boundary.
    Switched {
        /// The switch boundary B.
        boundary: Position,
        /// The record's new version.
        version: Version,
    },
    /// The owner drained and reported its final boundary.
    FinalBoundary {
        /// F.
        boundary: Position,
    },
    /// A new owner was committed at a new epoch.
    Committed {
        /// The new epoch.
        epoch: Epoch,
    },
    /// A node started serving.
    Activated {
        /// The new owner.
        owner: NodeId,
        /// The epoch it serves at.
        epoch: Epoch,
    },
    /// The node crashed.
    Crashed,
    /// The node restarted.
    Restarted {
        /// The storage instance it runs on now.
        storage: StorageId,
        /// Whether the record suspended it.
        suspended: bool,
    },
    /// Networked delivery: a copy that knew itself suspended read the
    /// record and found it is not; its acknowledgements are marked
    /// admitted from now on.
    RejoinNoticed {
        /// The node's current storage instance.
        storage: StorageId,
    },
    /// Networked delivery: the record's owner read the record and unmuted
    /// the copies it had muted that the record no longer suspends
    /// (finding 35).
    ReadmissionNoticed {
        /// The owner's storage instance.
        owner: StorageId,
        /// The copies it unmuted, in order.
        copies: Vec<StorageId>,
    },
    /// The node sealed.
    Sealed {
        /// The sealed storage instance.
        storage: StorageId,
        /// The sealed epoch.
        epoch: Epoch,
    },
    /// Networked delivery: the owner put an append in flight.
    Sent {
        /// The append.
        msg: Msg,
    },
    /// Networked delivery: one copy of a message reached its destination,
    /// which handled it and put its reply, if any, in flight.
    Delivered {
        /// The message delivered.
        msg: Msg,
        /// The reply sent.
        reply: Option<Msg>,
    },
    /// Networked delivery: one copy of a message was lost.
    Dropped {
        /// The message.
        msg: Msg,
    },
    /// Networked delivery: one more copy of a message is in flight.
    Duplicated {
        /// The message.
        msg: Msg,
    },
    /// The owner took a checkpoint and reclaimed the increments below it.
    Truncated {
        /// Where the checkpoint is bound.
        base: CheckpointBase,
    },
    /// The copy installed the owner's checkpoint and acknowledged it.
    CheckpointInstalled {
        /// The acknowledgement the sender recorded (or would have, for a
        /// suspended copy).
        ack: Ack,
    },
    /// The node discarded a retained copy after its grace period and took
    /// a fresh, empty storage instance.
    Discarded {
        /// The retained instance, deleted.
        storage: StorageId,
        /// The node's new instance.
        fresh: StorageId,
    },
    /// The node installed the recovered tail.
    Installed {
        /// The storage instance.
        storage: StorageId,
        /// The recovered tail's last position.
        tail: Position,
    },
    /// The client sent a request (a new message or a retry) along its
    /// cached route.
    ClientSent {
        /// The message key (the producer sequence; keys are the cluster's
        /// own, so a key also names its producer).
        key: u64,
        /// Where it went, with its epoch.
        to: Attempt,
    },
    /// The node the client's request was at accepted it.
    ClientAccepted {
        /// The accepting node.
        node: NodeId,
        /// The message key.
        key: u64,
        /// The position of the entry that holds it.
        pos: Position,
        /// That entry's epoch tag.
        epoch: Epoch,
        /// Whether it was appended (false: found in the node's history).
        appended: bool,
    },
    /// The node answered the client's request with a redirect or a
    /// try-again; the request goes on as `next`.
    ClientRedirected {
        /// The answer.
        reply: ClientReply,
        /// The next attempt.
        next: Attempt,
    },
    /// The client's request gave up at the hop limit; its message waits
    /// for a retry.
    ClientGaveUp {
        /// The message key.
        key: u64,
        /// Answers it followed.
        hops: u8,
    },
    /// The accepting node acknowledged the message to the client.
    ClientAcked {
        /// The message key.
        key: u64,
        /// The acknowledging node.
        node: NodeId,
        /// The message's position, at or below its confirmed tail.
        pos: Position,
    },
    /// The client's deadline passed: it dropped the request and refreshed
    /// its cache from the record.
    ClientTimedOut {
        /// The message key of the dropped request.
        key: u64,
        /// The cached route after the refresh.
        route: Route,
    },
}
