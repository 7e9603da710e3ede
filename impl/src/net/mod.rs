//! Messages on the serving path and the set of messages in flight.
//!
//! In networked delivery (`cluster::Delivery::Networked`) the owner's
//! replication, the replica's reply, a refusal, a restarted follower's
//! suspension notice and the owner's progress report to the controller are
//! messages: a sender puts one in flight, and some
//! later delivery hands it to the process it is addressed to, which decides
//! from the message and its own state alone. A message may arrive late,
//! twice, or never, and may cross a crash, a restart, a disk loss, a seal or
//! an epoch change.
//!
//! The field names are the shared wire vocabulary (the model and the TLA+
//! spec use the same ones); the runtime frames a [`Msg`] with serde.

mod error;
mod flight;

pub use error::NetError;
pub use flight::InFlight;

use crate::entry::Entry;
use crate::ids::{Epoch, NodeId, Position, StorageId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Messages outstanding on one link between an owner and a replica (an
/// append, or the reply to it) before the owner sends again: a resend comes
/// only after one is lost. Premature resends are the network's duplicates.
pub const LINK_WINDOW: usize = 1;

/// Upper bound on messages in flight at once in the in-memory router: the
/// window bounds sends per link, replies and notices are one per delivery
/// or restart, so only a driver that duplicates without delivering reaches
/// it, and it is refused there.
pub const IN_FLIGHT_MAX: usize = 64;

const _: () = assert!(LINK_WINDOW >= 1, "a window of 0 would forbid every append");
const _: () = assert!(
    IN_FLIGHT_MAX >= 4 * LINK_WINDOW,
    "room for one window per link of a small cluster"
);

/// One message on the serving path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Msg {
    /// Owner node `from`, serving at `epoch`, ships its entry at `pos` to
    /// the replica instance `to`; `prev` is its entry at `pos - 1` (none at
    /// 1), so the replica refuses a gap (note 2: "log gap detected; cannot
    /// skip").
    Append {
        /// The sending owner's node.
        from: NodeId,
        /// The storage instance the append is for.
        to: StorageId,
        /// The epoch the sender serves at.
        epoch: Epoch,
        /// The position of `entry`.
        pos: Position,
        /// The sender's entry at `pos - 1`.
        prev: Option<Entry>,
        /// The sender's entry at `pos`.
        entry: Entry,
    },
    /// Replica instance `from`, in process incarnation `inc`, tells owner
    /// node `to`, serving at `epoch`, that it durably holds `entry` at
    /// `pos`. `admitted` is false while the instance is a restarted follower
    /// awaiting re-admission: its progress paces catch-up but does not count.
    Ack {
        /// The owner's node.
        to: NodeId,
        /// The epoch of the append this answers.
        epoch: Epoch,
        /// The acknowledging storage instance.
        from: StorageId,
        /// The acknowledging process's incarnation.
        inc: u32,
        /// The position held.
        pos: Position,
        /// The entry held there.
        entry: Entry,
        /// Whether the instance is not suspended.
        admitted: bool,
    },
    /// A replica refused an append from node `to` and tells it the oldest
    /// epoch it still takes appends from.
    Refuse {
        /// The refused sender's node.
        to: NodeId,
        /// The newer epoch.
        epoch: Epoch,
    },
    /// A follower instance `from` that restarted on its disk (now process
    /// incarnation `inc`) tells the node the record names as owner that it
    /// is suspended.
    Suspend {
        /// The record owner's node.
        to: NodeId,
        /// The suspended storage instance.
        from: StorageId,
        /// Its new incarnation.
        inc: u32,
    },
    /// Owner instance `from`, serving at `epoch`, tells the controller that
    /// copy `of` holds its history through `pos` (the copy acknowledged
    /// the entry there and the owner holds the same entry, epoch tag and
    /// all, at that position) and that its confirmed tail is `confirmed`.
    /// This is all the controller knows of a copy's progress.
    Progress {
        /// The reporting owner's storage instance.
        from: StorageId,
        /// The epoch it serves at.
        epoch: Epoch,
        /// The copy reported on.
        of: StorageId,
        /// The position through which `of` holds the owner's history.
        pos: Position,
        /// The owner's confirmed tail.
        confirmed: Position,
    },
}

/// Where a message goes: a node's process, or the controller (which is no
/// node: its record is the replicated coordination store, always reachable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// The process on a node.
    Node(NodeId),
    /// The controller.
    Controller,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Node(n) => write!(f, "{n}"),
            Endpoint::Controller => f.write_str("controller"),
        }
    }
}

impl Msg {
    /// The message kind, as logs print it.
    pub fn kind(&self) -> &'static str {
        match self {
            Msg::Append { .. } => "append",
            Msg::Ack { .. } => "ack",
            Msg::Refuse { .. } => "refuse",
            Msg::Suspend { .. } => "suspend",
            Msg::Progress { .. } => "progress",
        }
    }

    /// Where the message is addressed.
    pub fn dest(&self) -> Endpoint {
        match *self {
            Msg::Append { to, .. } => Endpoint::Node(to.node),
            Msg::Ack { to, .. } | Msg::Refuse { to, .. } | Msg::Suspend { to, .. } => {
                Endpoint::Node(to)
            }
            Msg::Progress { .. } => Endpoint::Controller,
        }
    }

    /// The node that sent it, where the message says (a refusal does not
    /// name the replica that refused).
    pub fn source(&self) -> Option<NodeId> {
        match *self {
            Msg::Append { from, .. } => Some(from),
            Msg::Ack { from, .. } | Msg::Suspend { from, .. } | Msg::Progress { from, .. } => {
                Some(from.node)
            }
            Msg::Refuse { .. } => None,
        }
    }

    /// Whether the message travels the link between `a` and `b` (either
    /// way). A refusal answers an append from its destination over whichever
    /// link that append came: it is counted on every link that touches its
    /// destination, so the window never lets a stale owner send past it.
    /// A report to the controller is on no link between nodes.
    pub fn on_link(&self, a: NodeId, b: NodeId) -> bool {
        let Endpoint::Node(d) = self.dest() else {
            return false;
        };
        match self.source() {
            Some(s) => (s == a && d == b) || (s == b && d == a),
            None => d == a || d == b,
        }
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = |x: &Entry| format!("{:?}@{}", x.op, x.epoch);
        match self {
            Msg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            } => write!(
                f,
                "append {from} -> {to} {epoch} @{pos} {} (prev {})",
                e(entry),
                prev.as_ref().map_or("-".into(), e)
            ),
            Msg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            } => write!(
                f,
                "ack {from}#{inc} -> {to} {epoch} @{pos} {}{}",
                e(entry),
                if *admitted { "" } else { " (suspended)" }
            ),
            Msg::Refuse { to, epoch } => write!(f, "refuse -> {to} {epoch}"),
            Msg::Suspend { to, from, inc } => write!(f, "suspend {from}#{inc} -> {to}"),
            Msg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            } => write!(
                f,
                "progress {from} -> controller {epoch} {of}@{pos} confirmed {confirmed}"
            ),
        }
    }
}

#[cfg(test)]
mod tests;
