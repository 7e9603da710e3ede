//! The consumer's settles and the node's answer to a routed request.
//!
//! A settle (note 2: "deletions must propagate as log events or
//! tombstones") is the implementation's `Serving::settle`: the owner
//! appends the `Delete` of the oldest message it delivered at its epoch.
//! The node treats it exactly as a publish: the entry is durable on the
//! owner's disk before anything is shipped, it is traced (`Settle`, the
//! model's and the spec's action), and it counts as done only once the
//! owner's confirmed tail covers it, under the same W.
//!
//! A routed request is answered by `routing::server::answer` from what the
//! node knows itself (`Node::server_view`): whether it serves and at which
//! epoch, the owner and epoch of the record as it last read it, and
//! whether it is the old owner of a committed handoff whose new owner has
//! not activated.

use super::env::emit;
use super::{Node, NodeError};
use crate::trace::Event;
use livemove_impl::routing::{Route, Served, ServerView};
use livemove_impl::store::HandoffPhase;
use livemove_impl::{Epoch, Position, StorageId};

/// A settle the owner accepted: durable on its disk, not yet confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled {
    /// The key of the message it settles.
    pub key: u64,
    /// The position of its `Delete` entry.
    pub pos: Position,
    /// The owner's epoch, which the entry carries.
    pub epoch: Epoch,
}

impl Node {
    /// Settle the oldest message this owner delivers (published within its
    /// confirmed tail, not settled in its log): append its `Delete` at the
    /// owner's epoch, make it durable, trace it, ship it. Refused, with
    /// nothing written, when the node does not serve, admission is closed,
    /// nothing is delivered or the owner is fenced.
    pub fn settle(&mut self, env: &mut dyn super::Env) -> Result<Settled, NodeError> {
        let node = self.id;
        let s = self
            .serving
            .as_mut()
            .ok_or(NodeError::NotServing { node })?;
        let epoch = s.epoch();
        let settled = s
            .settle(&mut self.replica, self.mutants)
            .map_err(|source| NodeError::SettleRefused { node, source })?;
        self.persist(&settled.persist)?;
        let (key, pos) = (settled.key, settled.pos);
        emit(env, || Event::Settle {
            node,
            pos,
            epoch,
            key,
        });
        self.confirm_and_ship(env);
        Ok(Settled { key, pos, epoch })
    }

    /// What this node knows when a routed request arrives: its serving
    /// state if it could append at that state's epoch, the record's owner
    /// and epoch as it last read the record, and, when it is the old owner
    /// of a committed handoff whose new owner has not activated (no
    /// recovery pending), the new owner at the record's epoch.
    pub fn server_view(&self) -> ServerView {
        let serving = self
            .serving
            .as_ref()
            .filter(|s| {
                self.replica
                    .fenced_against(s.epoch(), self.mutants)
                    .is_none()
            })
            .map(|s| Served {
                epoch: s.epoch(),
                admission_open: s.admission_open(),
            });
        let r = &self.record;
        let handoff_to = r
            .handoff
            .as_ref()
            .filter(|h| {
                h.phase == HandoffPhase::Committed && h.from.node == self.id && r.recovery.is_none()
            })
            .map(|h| Route {
                owner: h.to.node,
                epoch: r.epoch,
            });
        ServerView {
            node: self.id,
            serving,
            record_owner: Route {
                owner: r.owner.node,
                epoch: r.epoch,
            },
            handoff_to,
        }
    }

    /// The storage instance the record names owner, as this node last read
    /// it.
    pub fn record_owner(&self) -> StorageId {
        self.record.owner
    }
}
