//! The controller's two decisions about copies that are gone, made from the
//! record and from what the decider knows of the processes (`Facts`), and
//! shared by the controller process (`super::Controller`) and the
//! simulator (`crate::sim`), so both make the same choice:
//!
//! - `replacement`: the record names a lost follower and nothing is
//!   pending, so the lowest follower that is lost or down is replaced (the
//!   spec's `ToReplace` and `MinSlot`; note 1, "Lost follower replaced"),
//!   by the lost instance's own node when it is free (its new instance),
//!   else by the lowest free node.
//! - `TargetWatch`: a swapped move's target has been gone (down or lost)
//!   for the lease, so the owner's node swaps the leaving copy back (note
//!   1, Aborts: "if T fails between steps 1 and 2, R is still in the
//!   eligible set and still holds its data"; finding 37).
//!
//! Neither writes anything. Each names the node to ask; that node's own
//! code makes the guarded write (`Node::join_replacing`, `Node::swap_back`)
//! and the store checks its guard, so a decision made on stale facts is
//! refused, never applied.

use livemove_impl::store::{MovePhase, Record};
use livemove_impl::{NodeId, StorageId};

/// What the decider knows of the cluster beyond the record.
pub trait Facts {
    /// Whether storage instance `s`'s disk is gone. The controller reads
    /// it from the record (`Record::lost`, written by the node that came
    /// back on an empty disk); the simulator knows it.
    fn lost(&self, s: StorageId) -> bool;
    /// Whether node `n`'s process is up: for the controller, its lease has
    /// not lapsed.
    fn up(&self, n: NodeId) -> bool;
}

/// A replacement to start: ask node `by` to join as the learner of a move
/// that replaces the follower `replaces` (`Node::join_replacing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// The node asked to join.
    pub by: NodeId,
    /// The follower replaced: the lowest that is lost or down.
    pub replaces: StorageId,
}

/// The replacement to start now, if any: the record names a lost follower,
/// no move, handoff or recovery is pending, and a node is free to take the
/// copy. Of `nodes` (in increasing order), a node is free when it is up,
/// not the owner's, and every instance of it the record names is lost (so
/// its current instance holds no copy and is not in the accepted history,
/// the spec's `AddLearner` guard).
pub fn replacement(
    r: &Record,
    nodes: impl IntoIterator<Item = NodeId>,
    facts: &impl Facts,
) -> Option<Replacement> {
    if r.move_task.is_some() || r.handoff.is_some() || r.recovery.is_some() {
        return None;
    }
    if !r.followers.iter().any(|f| facts.lost(*f)) {
        return None;
    }
    let first = r
        .followers
        .iter()
        .filter(|f| facts.lost(**f) || !facts.up(f.node))
        .min()
        .copied()?;
    let mut named = r.assigned();
    named.extend(r.eligible.iter().copied());
    let free = |n: NodeId| {
        facts.up(n) && n != r.owner.node && named.iter().all(|s| s.node != n || facts.lost(*s))
    };
    let by = if facts.lost(first) && free(first.node) {
        first.node
    } else {
        nodes.into_iter().find(|&n| free(n))?
    };
    Some(Replacement {
        by,
        replaces: first,
    })
}

/// The lease on a swapped move's target: since when it has been seen gone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TargetWatch {
    gone_since: Option<(StorageId, u64)>,
}

impl TargetWatch {
    /// The owner's node to ask for a swap back now (`Node::swap_back`), if
    /// any: the record's move is a follower move past its swap, no
    /// recovery is pending, its target is not the owner (a recovery may
    /// have made it one: finding 25), the target has been down or lost
    /// since `lease_ms` before `now_ms`, and the leaving copy is up and not
    /// lost. A target that comes back in time finishes the move itself;
    /// one that cannot would hold the move, and with it every replacement,
    /// for ever. Call it at every look at the record: the watch starts
    /// over whenever the target is seen back or the move is another.
    pub fn due(
        &mut self,
        r: &Record,
        facts: &impl Facts,
        now_ms: u64,
        lease_ms: u64,
    ) -> Option<NodeId> {
        let Some(m) = r.move_task.as_ref() else {
            self.gone_since = None;
            return None;
        };
        let swapped = matches!(m.phase, MovePhase::Swapped | MovePhase::Switched);
        let gone = facts.lost(m.target) || !facts.up(m.target.node);
        if !swapped || m.promotion || !gone || r.recovery.is_some() || m.target == r.owner {
            self.gone_since = None;
            return None;
        }
        let since = match self.gone_since {
            Some((t, since)) if t == m.target => since,
            _ => {
                self.gone_since = Some((m.target, now_ms));
                now_ms
            }
        };
        let back_ok = r
            .leaving
            .is_some_and(|b| !facts.lost(b) && facts.up(b.node));
        if now_ms < since + lease_ms || !back_ok {
            return None;
        }
        Some(r.owner.node)
    }

    /// The swap back was written: the watch starts over.
    pub fn done(&mut self) {
        self.gone_since = None;
    }
}

#[cfg(test)]
mod tests;
