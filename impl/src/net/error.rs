//! Errors of the network's API boundary: a driver asked for something the
//! network cannot do.

use super::Msg;
use crate::ids::NodeId;

/// A refused network step; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// The message is not in flight: it was never sent, or every copy was
    /// delivered or lost already.
    #[error("not in flight: {msg}")]
    NotInFlight {
        /// The message named.
        msg: Msg,
    },
    /// The link between the two nodes already carries a window's worth of
    /// messages; the sender waits for a reply or a loss.
    #[error("the link {a} <-> {b} is full ({outstanding} outstanding)")]
    WindowFull {
        /// The sender.
        a: NodeId,
        /// The receiver.
        b: NodeId,
        /// Messages on the link.
        outstanding: usize,
    },
    /// The router holds its maximum of messages in flight.
    #[error("{max} messages in flight already")]
    Full {
        /// The bound.
        max: usize,
    },
    /// The cluster delivers atomically: it has no messages in flight.
    #[error("delivery is atomic: no messages in flight")]
    Atomic,
}
