//! Client routing (note 2, after Redis Cluster's MOVED and ASK).
//!
//! `Moved` changes the long-term route and only ever forward in epoch (it
//! is learned even by a request that gives up on it); `Ask` is a one-shot
//! redirect for one request that never touches the cache. Every answer but
//! a success costs a hop: a request follows at most `hops_max` of them and
//! gives up at the next, or at its total deadline; time is an input
//! (`now_ms`). Stale epochs are refused at the node that accepts writes
//! (`server::answer`, the same rule as `owner::Serving::check_request_epoch`),
//! not only by clients.
//!
//! The in-memory cluster runs one client of the queue on these pieces
//! (`Cluster::with_client`, `cluster/client.rs`): the server's view is
//! built from the committed record and the node's serving state
//! (`Cluster::server_view`).

mod client;
pub mod server;

pub use client::{
    Attempt, ClientReply, Next, RequestDriver, RoutingError, TopologyCache, HOPS_MAX_DEFAULT,
};
pub use server::{answer, Reply, Served, ServerView};

use crate::ids::{Epoch, NodeId};
use serde::{Deserialize, Serialize};

/// A partition of the keyspace (a queue partition).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PartitionId(pub u32);

/// Where a partition is served, as of an epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The owner node.
    pub owner: NodeId,
    /// The epoch it owns at.
    pub epoch: Epoch,
}

/// Redirects a node can answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Redirect {
    /// Ownership changed: update the cache (forward in epoch only) and retry there.
    Moved(Route),
    /// Retry this one request at `node`, with the ASKING flag and `epoch`;
    /// the cache stays as it is.
    Ask {
        /// Where to send this request.
        node: NodeId,
        /// The epoch to send it with.
        epoch: Epoch,
    },
}
