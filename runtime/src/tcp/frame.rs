//! What travels on a node's port: a peer's serving-path message, or a
//! client's request, which is answered on the same connection.

use super::Status;
use crate::wire::PeerMsg;
use livemove_impl::Position;
use serde::{Deserialize, Serialize};

/// One frame sent to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Frame {
    /// A message between nodes; never answered on its connection.
    Peer(PeerMsg),
    /// A client asks the node to publish message `key`.
    Publish {
        /// The message key.
        key: u64,
    },
    /// A client asks for the node's status.
    Status,
}

/// A node's answer to a client's request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    /// The message is durable on the owner at this position (not yet
    /// confirmed: `Status::confirmed` says when it is).
    Published {
        /// Its position.
        pos: Position,
    },
    /// The node refused the publish.
    Refused {
        /// Why, in words.
        reason: String,
    },
    /// The node's status.
    Status(Status),
}
