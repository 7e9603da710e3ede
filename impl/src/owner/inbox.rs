//! The owner under networked delivery: its outbox (`next_append`, the
//! append it sends a copy) and its inbox (acknowledgements and suspension
//! notices, which arrive as messages, possibly late or twice).
//!
//! An acknowledgement is taken only while the owner still serves at the
//! epoch the append was sent at, only from a process incarnation no older
//! than the last suspension the owner heard of for that node, and only if
//! the owner holds the acknowledged entry at that position (history, not
//! length). One marked suspended mutes the copy; an admitted one unmutes
//! it. Progress only grows: a late acknowledgement of an earlier position
//! does not undo a later one.

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
        let held = if mutants.on(Mutant::CoversByLength) {
            own.len() >= a.pos
        } else {
            own.entry(a.pos) == Some(&a.entry)
        };
        if !held {
            return AckVerdict::NotHeld;
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
    /// acknowledgement from an earlier incarnation of its node counts.
    pub fn on_suspend(&mut self, from: StorageId, inc: u32) {
        assert!(
            self.networked,
            "invariant broken: a suspension notice reached an owner with atomic delivery"
        );
        self.progress.remove(&from);
        self.muted.insert(from);
        let f = self.floor.entry(from.node).or_insert(0);
        *f = (*f).max(inc);
        tracing::info!(owner = %self.me, %from, inc, "suspension notice");
    }

    /// Read the record's suspensions (`suspended`, the instances it still
    /// suspends) and unmute every copy this owner muted that the record no
    /// longer suspends (finding 35). `None` when there is none (nothing to
    /// read); otherwise the copies it unmuted, in order: all of them, or
    /// none under `owner_ignores_readmission`. The controller re-admits a
    /// copy only once the owner reported it caught up, and the positions it
    /// acknowledged while muted are its current incarnation's (the floor
    /// keeps older ones out), so they count from now. Without this the
    /// owner hears of a re-admission only from the copy's next admitted
    /// acknowledgement, and a copy that holds the owner's whole log is sent
    /// nothing to acknowledge (finding 32).
    pub fn readmit(
        &mut self,
        suspended: &std::collections::BTreeSet<StorageId>,
        mutants: Mutants,
    ) -> Option<Vec<StorageId>> {
        assert!(
            self.networked,
            "invariant broken: an owner with atomic delivery mutes nothing to read back"
        );
        let back: Vec<StorageId> = self.muted.difference(suspended).copied().collect();
        if back.is_empty() {
            return None;
        }
        if mutants.on(Mutant::OwnerIgnoresReadmission) {
            return Some(Vec::new());
        }
        for s in &back {
            self.muted.remove(s);
        }
        tracing::info!(owner = %self.me, copies = ?back, "re-admissions read from the record");
        Some(back)
    }
}
