//! The server side: how a node answers a routed request.
//!
//! A node answers from what it knows itself: whether it serves (and at
//! which epoch, with admission open or closed), the owner and epoch the
//! committed record names, and whether it is the old owner of a handoff
//! that is committed but whose new owner has not activated yet. The
//! cluster builds that view (`Cluster::server_view`); `answer` is the rule.

use super::{Redirect, Route};
use crate::ids::{Epoch, NodeId};
use crate::routing::client::{Attempt, ClientReply};
use serde::{Deserialize, Serialize};

/// A node's serving state, as far as routing is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Served {
    /// The epoch it serves at.
    pub epoch: Epoch,
    /// Whether it takes new work.
    pub admission_open: bool,
}

/// What a node knows when a request arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerView {
    /// This node.
    pub node: NodeId,
    /// Its serving state, if it serves: up, with a serving state, and not
    /// fenced at that state's epoch.
    pub serving: Option<Served>,
    /// The owner and epoch the committed record names.
    pub record_owner: Route,
    /// This node is the old owner of a committed handoff whose new owner
    /// has not activated (no recovery pending): the new owner at the
    /// record's epoch, the one-shot place to send requests in that window.
    pub handoff_to: Option<Route>,
}

/// A node's answer.
pub type Reply = ClientReply;

/// Answer one request.
///
/// - A node serving at a newer epoch than the request's refuses it with a
///   `Moved` to itself at its epoch (the stale-epoch refusal: fencing at
///   the node that accepts writes, not only in client caches); one serving
///   at an older epoch than the request's is stale itself and answers
///   `TryAgain`.
/// - At the request's epoch with admission open, the request is served.
/// - The old owner of a committed handoff whose new owner is not active
///   answers `Ask` (this request only) for the new owner at the new epoch,
///   whether its serving state survives or not.
/// - A node that does not take the request (it does not serve, or serves
///   with admission closed) and sees the record name another owner at an
///   epoch newer than the request's answers `Moved` to that owner.
/// - Anything else (admission closed while a handoff drains, or no owner
///   active yet) is `TryAgain` along the client's stable route.
pub fn answer(view: &ServerView, req: &Attempt) -> Reply {
    if let Some(s) = view.serving {
        if req.epoch < s.epoch {
            return ClientReply::Redirect(Redirect::Moved(Route {
                owner: view.node,
                epoch: s.epoch,
            }));
        }
        if req.epoch > s.epoch {
            return ClientReply::TryAgain;
        }
        if s.admission_open {
            return ClientReply::Ok;
        }
    }
    if let Some(to) = view.handoff_to {
        return ClientReply::Redirect(Redirect::Ask {
            node: to.owner,
            epoch: to.epoch,
        });
    }
    let owner = view.record_owner;
    if owner.owner != view.node && owner.epoch > req.epoch {
        return ClientReply::Redirect(Redirect::Moved(owner));
    }
    ClientReply::TryAgain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(owner: u8, epoch: u64) -> Route {
        Route {
            owner: NodeId(owner),
            epoch: Epoch(epoch),
        }
    }

    fn req(node: u8, epoch: u64) -> Attempt {
        Attempt {
            node: NodeId(node),
            epoch: Epoch(epoch),
            asking: false,
        }
    }

    fn served(epoch: u64, open: bool) -> Option<Served> {
        Some(Served {
            epoch: Epoch(epoch),
            admission_open: open,
        })
    }

    #[test]
    fn an_open_owner_at_the_requests_epoch_serves_it() {
        let v = ServerView {
            node: NodeId(1),
            serving: served(1, true),
            record_owner: route(1, 1),
            handoff_to: None,
        };
        assert_eq!(answer(&v, &req(1, 1)), ClientReply::Ok);
        // A newer request at a stale owner is not served.
        assert_eq!(answer(&v, &req(1, 2)), ClientReply::TryAgain);
    }

    #[test]
    fn a_draining_owner_asks_to_try_again_then_asks_after_the_commit() {
        let mut v = ServerView {
            node: NodeId(1),
            serving: served(1, false),
            record_owner: route(1, 1),
            handoff_to: None,
        };
        assert_eq!(answer(&v, &req(1, 1)), ClientReply::TryAgain);
        v.record_owner = route(2, 2);
        v.handoff_to = Some(route(2, 2));
        assert_eq!(
            answer(&v, &req(1, 1)),
            ClientReply::Redirect(Redirect::Ask {
                node: NodeId(2),
                epoch: Epoch(2)
            })
        );
        // Activated: the handoff is over, the record names the new owner.
        v.handoff_to = None;
        assert_eq!(
            answer(&v, &req(1, 1)),
            ClientReply::Redirect(Redirect::Moved(route(2, 2)))
        );
    }

    #[test]
    fn a_committed_owner_that_is_not_active_asks_to_try_again() {
        let v = ServerView {
            node: NodeId(2),
            serving: None,
            record_owner: route(2, 2),
            handoff_to: None,
        };
        let mut asked = req(2, 2);
        asked.asking = true;
        assert_eq!(answer(&v, &asked), ClientReply::TryAgain);
    }

    #[test]
    fn a_node_that_does_not_serve_moves_only_to_a_newer_owner() {
        let v = ServerView {
            node: NodeId(3),
            serving: None,
            record_owner: route(2, 2),
            handoff_to: None,
        };
        assert_eq!(
            answer(&v, &req(3, 1)),
            ClientReply::Redirect(Redirect::Moved(route(2, 2)))
        );
        assert_eq!(answer(&v, &req(3, 2)), ClientReply::TryAgain);
    }
}
