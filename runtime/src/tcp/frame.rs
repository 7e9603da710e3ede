//! What travels on a node's port: a peer's serving-path message for one of
//! its partitions, or a request (a client's, an operator's or the
//! controller's), which is answered on the same connection.

use super::faults::{FaultChange, FaultState};
use super::Status;
use crate::partition::Partition;
use crate::wire::PeerMsg;
use livemove_impl::routing::Redirect;
use livemove_impl::{Epoch, NodeId, Position};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// One frame sent to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Frame {
    /// A message between nodes for one partition; never answered on its
    /// connection.
    Peer {
        /// The partition.
        partition: Partition,
        /// The message.
        msg: PeerMsg,
    },
    /// Publish message `key` on the partition (the node must serve it).
    Publish {
        /// The partition.
        partition: Partition,
        /// The message key.
        key: u64,
    },
    /// Answer once the partition's owner on this node has confirmed `pos`.
    WaitConfirmed {
        /// The partition.
        partition: Partition,
        /// The position.
        pos: Position,
    },
    /// Is the process up? Answered by the connection's reader at once,
    /// not by the node's task (a busy node is not a dead one): the
    /// controller's lease on the node.
    Ping,
    /// The node's status for one partition.
    Status {
        /// The partition.
        partition: Partition,
    },
    /// Join the partition as a planned move's learner
    /// (`Node::join_as`).
    Join {
        /// The partition.
        partition: Partition,
        /// The follower the move replaces (one that is down), if any.
        replaces: Option<NodeId>,
        /// The follower a planner chose to leave at the swap, if any (a
        /// replacement's `replaces` comes first).
        leaving: Option<NodeId>,
    },
    /// Hand the partition's ownership over to the follower on `to`
    /// (`Node::hand_off`; this node must own it).
    HandOff {
        /// The partition.
        partition: Partition,
        /// The new owner's node.
        to: NodeId,
    },
    /// The first frame a node's writer sends on a connection to a peer:
    /// who the peer messages on it come from, for the fault layer's cut
    /// links (`tcp::faults`). Never answered.
    Hello {
        /// The sending node.
        from: NodeId,
    },
    /// Change the node's network faults (or show them): answered by the
    /// connection's reader at once, like `Ping`. Refused unless the node
    /// was started to take them (`TcpNodeConfig::fault_requests`).
    Fault(FaultChange),
    /// Swap the leaving copy of the partition's swapped move back in,
    /// its target being down or lost (`Node::swap_back`; this node must
    /// own the partition): the controller's request once its lease on the
    /// target lapsed. Last of the variants, so the others keep their wire
    /// tags.
    SwapBack {
        /// The partition.
        partition: Partition,
    },
    /// Settle the oldest message the partition's owner on this node
    /// delivers (`Node::settle`): its `Delete` is appended, durable on the
    /// owner, and shipped; `WaitConfirmedAt` on its position and epoch
    /// says when the settle is done. Unrouted: a node that does not serve the partition
    /// refuses it.
    Settle {
        /// The partition.
        partition: Partition,
    },
    /// A routed request (note 2's client routing): answered by
    /// `routing::server::answer` from the node's own view
    /// (`Node::server_view`); served only when it says so, else a
    /// redirect (`MOVED` or `ASK`) or try-again. `epoch` is the one the
    /// client's route names (0 when it knows none: every serving node
    /// then answers `MOVED` to the owner it knows).
    Routed {
        /// The partition.
        partition: Partition,
        /// The epoch of the client's route.
        epoch: Epoch,
        /// Sent after an `ASK`: this request only, on this connection.
        asking: bool,
        /// What to do once served.
        op: RoutedOp,
    },
    /// Answer once the partition's owner on this node, serving at `epoch`,
    /// has confirmed `pos`; refused as soon as the node serves at no or
    /// another epoch (the entry at `pos` may then be another one). What a
    /// settle's consumer waits on: `WaitConfirmed` without the epoch.
    WaitConfirmedAt {
        /// The partition.
        partition: Partition,
        /// The position.
        pos: Position,
        /// The epoch the entry at `pos` was appended at.
        epoch: Epoch,
    },
}

/// What a routed request asks of the owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RoutedOp {
    /// Publish message `key` (`Frame::Publish`).
    Publish {
        /// The message key.
        key: u64,
    },
    /// Settle the oldest delivered message (`Frame::Settle`).
    Settle,
    /// Publish message `key` again, its first attempt's answer having
    /// never come (note 2: "does timeout retry cause duplicate effects?"):
    /// the owner answers from its history when it holds the key
    /// (`Serving::publish_retry`, nothing appended) and appends it like a
    /// publish when it lacks it; answered `Reply::Retried`. Last of the
    /// variants, so the others keep their wire tags.
    PublishRetry {
        /// The message key (the producer's sequence).
        key: u64,
    },
}

/// A node's answer to a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    /// The message is durable on the owner at this position (not yet
    /// confirmed: `WaitConfirmed` says when it is).
    Published {
        /// Its position.
        pos: Position,
    },
    /// The position waited for is confirmed.
    Confirmed,
    /// The process is up.
    Pong,
    /// A join, handoff or swap back: `true` when its first guarded write committed,
    /// `false` when the record's state or a race refused it (nothing
    /// changed).
    Started(bool),
    /// The node refused the request.
    Refused {
        /// Why, in words.
        reason: String,
    },
    /// The node's status.
    Status(Status),
    /// The network faults set on the node, after the change asked for.
    Faults(FaultState),
    /// The settle is durable on the owner at this position (not yet
    /// confirmed: `WaitConfirmed` says when it is).
    Settled {
        /// The key of the message it settles.
        key: u64,
        /// The position of its `Delete` entry.
        pos: Position,
        /// The epoch it was appended at (`WaitConfirmedAt`).
        epoch: Epoch,
    },
    /// A routed request redirected (`routing::Redirect`): `MOVED` to the
    /// owner the node knows, or `ASK` for this request only.
    Redirect {
        /// The redirect.
        redirect: Redirect,
        /// The address of the node it names, when this node knows it.
        addr: Option<SocketAddr>,
    },
    /// A routed request the node cannot serve yet along the client's
    /// route (admission closed while a handoff drains, no owner active):
    /// try the same route again.
    TryAgain,
    /// A publish retry served (`RoutedOp::PublishRetry`): the owner's
    /// entry holding the message is at `pos`, durable on the owner, not
    /// yet confirmed (`WaitConfirmedAt` at the epoch the request was
    /// served at says when it is). Last of the variants, so the others
    /// keep their wire tags.
    Retried {
        /// The position of the entry holding the message.
        pos: Position,
        /// That entry's epoch tag: older than the owner's when another
        /// owner appended it (a handoff or a recovery carried it here).
        entry_epoch: Epoch,
        /// Whether the owner's history held it already (nothing was
        /// appended) rather than appending it now.
        held: bool,
    },
}
