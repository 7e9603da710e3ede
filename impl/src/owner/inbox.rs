//! The owner under networked delivery: its outbox (`next_append`, the
//! append it sends a copy) and its inbox (acknowledgements and suspension
//! notices, which arrive as messages, possibly late or twice).
//!
//! An acknowledgement is taken only while the owner still serves at the
//! epoch the append was sent at, only from a process incarnation no older
//! than the last suspension the owner heard of for that node, and only if
//! the owner holds the acknowledged entry at that position (history, not
//! length). One marked suspended mutes the copy, unless an admitted one of
//! the same incarnation already reached the owner; an admitted one unmutes
//! it. Progress only grows: a late acknowledgement of an earlier position
//! does not undo a later one.
//!
//! The owner orders what it hears of a node by (incarnation, admitted)
//! (finding 32). A copy is suspended only when it restarts, so within one
//! incarnation its suspension comes before its admission; a suspension
//! notice or a suspended acknowledgement that arrives after an admitted
//! acknowledgement of the same incarnation is old news and is ignored. The
//! floor, the newest incarnation heard of, is raised by every
//! acknowledgement taken as well as by every notice.

use super::OwnerError;
use super::Serving;
use crate::entry::Entry;
use crate::ids::{Epoch, NodeId, Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use crate::net::Msg;
use crate::replica::{Ack, Replica};

/// What the owner did with a delivered acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckVerdict {
    /// Taken: progress and the muted set updated.
    Taken,
    /// Sent for an append of another epoch than the one served.
    OtherEpoch,
    /// From an incarnation older than the node's floor: sent before a
    /// restart the owner has heard of.
    Stale,
    /// The owner does not hold that entry at that position.
    NotHeld,
    /// Marked suspended, but an admitted acknowledgement of the same
    /// incarnation already reached the owner (finding 32).
    Overtaken,
}

/// What the owner did with a delivered suspension notice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuspendVerdict {
    /// Taken: the copy's progress forgotten, the copy muted, the floor
    /// raised.
    Taken,
    /// The owner already heard of a newer incarnation of the node.
    Stale,
    /// An admitted acknowledgement of the same incarnation already reached
    /// the owner (finding 32).
    Overtaken,
}

/// A delivered acknowledgement's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckMsg {
    /// The epoch of the append it answers.
    pub epoch: Epoch,
    /// The acknowledging instance.
    pub from: StorageId,
    /// Its process incarnation.
    pub inc: u32,
    /// The position held.
    pub pos: Position,
    /// The entry held there.
    pub entry: Entry,
    /// Whether the instance is not suspended.
    pub admitted: bool,
}

impl Serving {
    /// The append for copy `to`: the entry after the last position `to`
    /// acknowledged to this owner, with the entry before it, so the copy
    /// can refuse a gap. The owner knows nothing else of the copy: not
    /// whether it is up, nor what its log holds. `from` is the owner's node.
    pub fn next_append(
        &self,
        own: &Replica,
        from: NodeId,
        to: StorageId,
    ) -> Result<Msg, OwnerError> {
        assert_eq!(
            own.id(),
            self.me,
            "invariant broken: an append from another log"
        );
        let pos = self.covered(own, to) + 1;
        let entry = *own.entry(pos).ok_or(OwnerError::NothingToReplicate)?;
        super::reclaimed(own, pos)?;
        Ok(Msg::Append {
            from,
            to,
            epoch: self.epoch,
            pos,
            prev: own.entry(pos - 1).copied(),
            entry,
        })
    }

    /// Take a delivered acknowledgement.
    pub fn on_ack(&mut self, own: &Replica, a: &AckMsg, mutants: Mutants) -> AckVerdict {
        assert!(
            self.networked,
            "invariant broken: an acknowledgement message reached an owner with atomic delivery"
        );
        if a.epoch != self.epoch {
            return AckVerdict::OtherEpoch;
        }
        let floor = self.floor.get(&a.from.node).copied().unwrap_or(0);
        if a.inc < floor && !mutants.on(Mutant::StaleAckCounts) {
            tracing::debug!(owner = %self.me, from = %a.from, inc = a.inc, floor, "stale ack ignored");
            return AckVerdict::Stale;
        }
        if !a.admitted && self.overtaken(a.from, a.inc, mutants) {
            tracing::debug!(owner = %self.me, from = %a.from, inc = a.inc, "suspended ack overtaken by an admitted one");
            return AckVerdict::Overtaken;
        }
        let held = if mutants.on(Mutant::CoversByLength) {
            own.len() >= a.pos
        } else {
            own.entry(a.pos) == Some(&a.entry)
        };
        if !held {
            return AckVerdict::NotHeld;
        }
        if !mutants.on(Mutant::SuspensionOutOfOrder) {
            let f = self.floor.entry(a.from.node).or_insert(0);
            *f = (*f).max(a.inc);
        }
        if a.admitted {
            self.muted.remove(&a.from);
        } else {
            self.muted.insert(a.from);
        }
        let known = self.progress.get(&a.from).map_or(0, |p| p.pos);
        if a.pos > known {
            self.progress.insert(
                a.from,
                Ack {
                    from: a.from,
                    pos: a.pos,
                    epoch: a.entry.epoch,
                },
            );
        }
        AckVerdict::Taken
    }

    /// Take a suspension notice: instance `from` restarted as incarnation
    /// `inc`. Its progress is forgotten, it is muted, and no
    /// acknowledgement from an earlier incarnation of its node counts. A
    /// notice of an incarnation older than the floor, or of one the owner
    /// already heard admitted, is ignored (`suspension_out_of_order` takes
    /// any).
    pub fn on_suspend(&mut self, from: StorageId, inc: u32, mutants: Mutants) -> SuspendVerdict {
        assert!(
            self.networked,
            "invariant broken: a suspension notice reached an owner with atomic delivery"
        );
        let floor = self.floor.get(&from.node).copied().unwrap_or(0);
        if inc < floor && !mutants.on(Mutant::SuspensionOutOfOrder) {
            tracing::debug!(owner = %self.me, %from, inc, floor, "stale suspension notice ignored");
            return SuspendVerdict::Stale;
        }
        if self.overtaken(from, inc, mutants) {
            tracing::debug!(owner = %self.me, %from, inc, "suspension notice overtaken by an admitted ack");
            return SuspendVerdict::Overtaken;
        }
        self.progress.remove(&from);
        self.muted.insert(from);
        let f = self.floor.entry(from.node).or_insert(0);
        *f = (*f).max(inc);
        tracing::info!(owner = %self.me, %from, inc, "suspension notice");
        SuspendVerdict::Taken
    }

    /// Whether the owner already heard instance `from` acknowledge as
    /// admitted at incarnation `inc`: the floor is that incarnation and the
    /// copy is not muted (incarnation 0 never restarted and is never
    /// suspended). A suspension of that incarnation is then older news
    /// (finding 32).
    fn overtaken(&self, from: StorageId, inc: u32, mutants: Mutants) -> bool {
        !mutants.on(Mutant::SuspensionOutOfOrder)
            && inc >= 1
            && self.floor.get(&from.node).copied().unwrap_or(0) == inc
            && !self.muted.contains(&from)
    }
}
