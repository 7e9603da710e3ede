//! The confirm path: acknowledgements in, confirmed tail out.
//!
//! A copy covers position p only if it holds the owner's entry at p (same
//! epoch tag). An acknowledgement names the position and epoch tag the copy
//! holds; replication checks the previous entry on every append, so a copy
//! that holds the owner's entry at `ack.pos` holds the owner's whole prefix
//! up to it. The owner counts only its counted set (never learners, never
//! suspended followers), needs W from the configured replication factor, and
//! confirms only entries of its own epoch: older entries become confirmed
//! by recovery or a handoff's final boundary, or implicitly below one of its
//! own.

use super::{OwnerError, Serving};
use crate::ids::{write_quorum, Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use crate::replica::{Ack, Replica};

impl Serving {
    /// Record a copy's durable progress. The latest acknowledgement wins: a
    /// copy that truncated reports less than before.
    pub fn handle_ack(&mut self, ack: Ack) {
        self.progress.insert(ack.from, ack);
    }

    /// A copy told the owner it restarted and is suspended: its earlier
    /// progress no longer counts; it reports again once re-admitted.
    pub fn handle_suspended(&mut self, s: StorageId) {
        self.progress.remove(&s);
    }

    /// How far `s` holds the owner's history, as far as the owner knows.
    pub fn covered(&self, own: &Replica, s: StorageId) -> Position {
        if s == self.me {
            return own.len();
        }
        match self.progress.get(&s) {
            Some(a) if own.epoch_at(a.pos) == Some(a.epoch) => a.pos,
            _ => 0,
        }
    }

    /// The storage instances whose acknowledgements count.
    pub fn voters(&self, mutants: Mutants) -> Vec<StorageId> {
        let mut v: Vec<StorageId> = self
            .counted
            .iter()
            .copied()
            .filter(|s| {
                // Networked: a suspension is known from a notice or a
                // marked acknowledgement, never from the record directly.
                *s == self.me
                    || (self.networked && !self.muted.contains(s))
                    || (!self.networked
                        && (mutants.on(Mutant::RejoinCountsEarly)
                            || !self.view.suspended.contains(s)))
            })
            .collect();
        if mutants.on(Mutant::LearnerCounts) {
            v.extend(self.view.learners.iter().copied());
        }
        v
    }

    /// The W in force for this confirm.
    pub fn effective_w(&self, mutants: Mutants) -> u8 {
        if mutants.on(Mutant::WFromAssignment) {
            write_quorum(self.view.assigned_copies.max(1))
        } else {
            self.w
        }
    }

    /// Advance the confirmed tail to the highest entry of the owner's epoch
    /// that W counted copies cover.
    pub fn confirm(&mut self, own: &Replica, mutants: Mutants) -> Result<Position, OwnerError> {
        assert_eq!(
            own.id(),
            self.me,
            "invariant broken: confirm over another log"
        );
        let w = usize::from(self.effective_w(mutants));
        let mut covered: Vec<Position> = self
            .voters(mutants)
            .into_iter()
            .map(|s| self.covered(own, s))
            .collect();
        covered.sort_unstable_by(|a, b| b.cmp(a));
        let candidate = covered.get(w - 1).copied().unwrap_or(0);
        // Entries of the owner's own epoch form a suffix of its log, so the
        // candidate either is one of them or nothing is confirmable.
        if candidate > self.confirmed_tail && own.epoch_at(candidate) == Some(self.epoch) {
            self.confirmed_tail = candidate;
            tracing::info!(owner = %self.me, tail = candidate, w, "confirm");
            return Ok(candidate);
        }
        Err(OwnerError::NothingToConfirm {
            confirmed_tail: self.confirmed_tail,
        })
    }
}
