//! The client side: a topology cache and one request's redirect loop.

use super::{PartitionId, Redirect, Route};
use crate::ids::{Epoch, NodeId};
use crate::mutant::{Mutant, Mutants};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Redirects one request may follow by default; two nodes pointing at each
/// other cannot loop past it.
pub const HOPS_MAX_DEFAULT: u8 = 5;

/// The client's long-term routes, per partition, keyed by epoch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyCache {
    routes: BTreeMap<PartitionId, Route>,
}

impl TopologyCache {
    /// The cached route.
    pub fn get(&self, p: PartitionId) -> Option<Route> {
        self.routes.get(&p).copied()
    }

    /// Learn a route; taken only if newer in epoch than the cached one.
    /// Returns whether the cache changed.
    pub fn learn(&mut self, p: PartitionId, route: Route) -> bool {
        match self.routes.get(&p) {
            Some(cur) if cur.epoch >= route.epoch => false,
            _ => {
                self.routes.insert(p, route);
                true
            }
        }
    }

    /// Overwrite the route whatever its epoch (only `ask_updates_route`
    /// does this: an ASK taken for an ownership change).
    fn overwrite(&mut self, p: PartitionId, route: Route) {
        self.routes.insert(p, route);
    }
}

/// Where to send the next try of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The node to send to.
    pub node: NodeId,
    /// The epoch the request carries.
    pub epoch: Epoch,
    /// Whether to send ASKING first on the same connection.
    pub asking: bool,
}

/// What the client does after a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Next {
    /// The request was served.
    Done,
    /// Try again as described.
    Retry(Attempt),
}

/// Why a request gave up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoutingError {
    /// No cached route for the partition.
    #[error("no route for partition {partition:?}")]
    NoRoute {
        /// The partition.
        partition: PartitionId,
    },
    /// The request followed `hops` redirects, the limit.
    #[error("redirect limit reached after {hops} hops")]
    HopLimit {
        /// Redirects followed.
        hops: u8,
    },
    /// The total deadline passed.
    #[error("deadline {deadline_ms} ms passed at {now_ms} ms")]
    DeadlineExceeded {
        /// The time of the reply.
        now_ms: u64,
        /// The request's deadline.
        deadline_ms: u64,
    },
}

/// One request's redirect loop.
///
/// Every answer but `Ok` costs one hop; a request that has followed
/// `hops_max` of them gives up at the next one. A `Moved` is news about
/// ownership and is learned (forward in epoch only) whether or not the
/// request goes on; an `Ask` sends this request once, with ASKING, and
/// never touches the cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestDriver {
    partition: PartitionId,
    deadline_ms: u64,
    hops: u8,
    hops_max: u8,
    #[serde(default)]
    mutants: Mutants,
}

/// What a server answered, as the client sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientReply {
    /// Served.
    Ok,
    /// Redirected.
    Redirect(Redirect),
    /// The node is behind or the owner not active yet: retry the same route.
    TryAgain,
}

impl RequestDriver {
    /// Start a request at `now_ms` that must finish by `now_ms + timeout_ms`.
    pub fn start(
        cache: &TopologyCache,
        partition: PartitionId,
        now_ms: u64,
        timeout_ms: u64,
        hops_max: u8,
    ) -> Result<(Self, Attempt), RoutingError> {
        let route = cache
            .get(partition)
            .ok_or(RoutingError::NoRoute { partition })?;
        let d = RequestDriver {
            partition,
            deadline_ms: now_ms.saturating_add(timeout_ms),
            hops: 0,
            hops_max,
            mutants: Mutants::NONE,
        };
        Ok((d, plain(route)))
    }

    /// The same driver with `mutants` switched on (`ask_updates_route`,
    /// `no_hop_limit`).
    pub fn with_mutants(mut self, mutants: Mutants) -> Self {
        self.mutants = mutants;
        self
    }

    /// Answers other than `Ok` followed so far (redirects and try-again).
    pub fn hops(&self) -> u8 {
        self.hops
    }

    /// The most answers other than `Ok` this request follows.
    pub fn hops_max(&self) -> u8 {
        self.hops_max
    }

    /// The partition the request is for.
    pub fn partition(&self) -> PartitionId {
        self.partition
    }

    /// Handle the reply to the last attempt, received at `now_ms`.
    pub fn on_reply(
        &mut self,
        cache: &mut TopologyCache,
        reply: ClientReply,
        now_ms: u64,
    ) -> Result<Next, RoutingError> {
        if reply == ClientReply::Ok {
            return Ok(Next::Done);
        }
        if let ClientReply::Redirect(Redirect::Moved(route)) = reply {
            // News about ownership, whether or not this request goes on.
            cache.learn(self.partition, route);
        }
        if now_ms >= self.deadline_ms {
            return Err(RoutingError::DeadlineExceeded {
                now_ms,
                deadline_ms: self.deadline_ms,
            });
        }
        if self.hops >= self.hops_max && !self.mutants.on(Mutant::NoHopLimit) {
            return Err(RoutingError::HopLimit { hops: self.hops });
        }
        self.hops = self.hops.saturating_add(1);
        let attempt = match reply {
            ClientReply::Ok => unreachable!("handled above"),
            ClientReply::Redirect(Redirect::Ask { node, epoch }) => {
                if self.mutants.on(Mutant::AskUpdatesRoute) {
                    // The wrong idea: an ASK taken for an ownership change.
                    cache.overwrite(self.partition, Route { owner: node, epoch });
                }
                Attempt {
                    node,
                    epoch,
                    asking: true,
                }
            }
            // After a MOVED the cache holds its route, or a newer one.
            ClientReply::Redirect(Redirect::Moved(_)) | ClientReply::TryAgain => {
                plain(cache.get(self.partition).ok_or(RoutingError::NoRoute {
                    partition: self.partition,
                })?)
            }
        };
        Ok(Next::Retry(attempt))
    }
}

fn plain(route: Route) -> Attempt {
    Attempt {
        node: route.owner,
        epoch: route.epoch,
        asking: false,
    }
}
