//! The server side: how a node answers a routed request.

use super::{Redirect, Route};
use crate::ids::{Epoch, NodeId};
use crate::routing::client::{Attempt, ClientReply};
use serde::{Deserialize, Serialize};

/// What a node knows when a request arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerView {
    /// This node.
    pub node: NodeId,
    /// The epoch it serves at, if it serves (admission open or not).
    pub serving: Option<Epoch>,
    /// The newest published owner it knows of.
    pub known_owner: Route,
    /// A committed handoff whose new owner is not published yet: the one-shot
    /// place to send requests in the window.
    pub handoff_to: Option<Route>,
}

/// A node's answer.
pub type Reply = ClientReply;

/// Answer one request. Stale epochs are refused here, at the node that
/// accepts writes, with a `Moved` that carries the current route.
pub fn answer(view: &ServerView, req: &Attempt) -> Reply {
    if let Some(e) = view.serving {
        if req.epoch == e {
            return ClientReply::Ok;
        }
        if req.epoch < e {
            return ClientReply::Redirect(Redirect::Moved(Route {
                owner: view.node,
                epoch: e,
            }));
        }
        // The client knows a newer epoch than this node: this node is stale.
        return ClientReply::TryAgain;
    }
    if let Some(to) = view.handoff_to {
        if to.owner != view.node {
            return ClientReply::Redirect(Redirect::Ask {
                node: to.owner,
                epoch: to.epoch,
            });
        }
        // The new owner is committed but not serving yet.
        return ClientReply::TryAgain;
    }
    if view.known_owner.owner != view.node && view.known_owner.epoch >= req.epoch {
        return ClientReply::Redirect(Redirect::Moved(view.known_owner));
    }
    ClientReply::TryAgain
}
