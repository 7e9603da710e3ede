//! The implementation's messages as they travel: the serving path's between
//! nodes, and an owner's progress report to the controller.
//!
//! The implementation's `Msg` is an internally tagged serde enum (`"kind"`,
//! so that traces and JSON read well), and internally tagged enums need a
//! self-describing format to decode: postcard cannot decode them. `PeerMsg`
//! is the same four messages with the same fields, externally tagged (a
//! variant index on the wire); the conversions are total both ways.

use livemove_impl::{Entry, Epoch, Msg, NodeId, Position, StorageId};
use serde::{Deserialize, Serialize};

/// One message in its wire form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PeerMsg {
    /// `Msg::Append`.
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
    /// `Msg::Ack`.
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
    /// `Msg::Refuse`.
    Refuse {
        /// The refused sender's node.
        to: NodeId,
        /// The newer epoch.
        epoch: Epoch,
    },
    /// `Msg::Suspend`.
    Suspend {
        /// The record owner's node.
        to: NodeId,
        /// The suspended storage instance.
        from: StorageId,
        /// Its new incarnation.
        inc: u32,
    },
    /// `Msg::Progress`, an owner's report to the controller.
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

impl From<Msg> for PeerMsg {
    fn from(m: Msg) -> Self {
        match m {
            Msg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            } => PeerMsg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            },
            Msg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            } => PeerMsg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            },
            Msg::Refuse { to, epoch } => PeerMsg::Refuse { to, epoch },
            Msg::Suspend { to, from, inc } => PeerMsg::Suspend { to, from, inc },
            Msg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            } => PeerMsg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            },
        }
    }
}

impl From<PeerMsg> for Msg {
    fn from(m: PeerMsg) -> Self {
        match m {
            PeerMsg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            } => Msg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            },
            PeerMsg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            } => Msg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            },
            PeerMsg::Refuse { to, epoch } => Msg::Refuse { to, epoch },
            PeerMsg::Suspend { to, from, inc } => Msg::Suspend { to, from, inc },
            PeerMsg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            } => Msg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            },
        }
    }
}
