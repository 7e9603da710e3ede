//! A replica receives an append from the network (networked delivery).
//!
//! Unlike `handle_append`, which the atomic cluster calls with a position it
//! computed from both logs, a delivered append may be late, repeated or
//! from a stale owner, so every check is made here, at the resource that
//! accepts writes (note 2): the epoch fence and seal first, then the gap
//! (the entry before must be the sender's, entry for entry), then the write
//! itself, which is idempotent for an entry already held ("writing the same
//! version repeatedly").

use super::{Persist, Replica};
use crate::entry::Entry;
use crate::ids::{Epoch, Position};
use crate::mutant::{Mutant, Mutants};

/// What an append offers: the sender's epoch, the position, the entry
/// before it and the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// The epoch the sender serves at.
    pub epoch: Epoch,
    /// The position of `entry` (1-based).
    pub pos: Position,
    /// The sender's entry at `pos - 1`.
    pub prev: Option<Entry>,
    /// The sender's entry at `pos`.
    pub entry: Entry,
}

/// What the replica did with an offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Fenced: the sender's epoch is older than one seen, or not past the
    /// seal. The sender is told `newer`, the oldest epoch still taken.
    Refused {
        /// The epoch to tell the sender.
        newer: Epoch,
    },
    /// The epoch was taken but the entry before `pos` is missing or not the
    /// sender's, or the entry would replace one folded into this copy's
    /// checkpoint: nothing written, nothing acknowledged.
    Gap,
    /// The entry is held at `pos` now (written, or held already).
    Holds {
        /// Whether the log changed (false: the same write again).
        written: bool,
    },
}

impl Replica {
    /// Take one delivered append. Returns what happened and the `Persist`
    /// commands to make it durable before any acknowledgement is sent.
    pub fn receive(&mut self, offer: &Offer, mutants: Mutants) -> (Received, Vec<Persist>) {
        assert!(offer.pos >= 1, "invariant broken: an append at position 0");
        if self.fenced_against(offer.epoch, mutants).is_some() {
            return (
                Received::Refused {
                    newer: self.accepts_from(),
                },
                Vec::new(),
            );
        }
        // The epoch is taken even when the entry cannot be: the sender's
        // epoch is what fences an older owner off this copy.
        let mut out = self.observe_epoch(offer.epoch);
        let before = offer.pos - 1;
        let gap = before > self.len() || (before >= 1 && self.entry(before) != offer.prev.as_ref());
        if gap {
            tracing::debug!(replica = %self.id, pos = offer.pos, "deliver: log gap, not applied");
            return (Received::Gap, out);
        }
        if self.check_not_cut(offer.pos, &offer.entry).is_err() {
            tracing::debug!(replica = %self.id, pos = offer.pos, "deliver: would cut into the checkpoint");
            return (Received::Gap, out);
        }
        let written = match self.entry(offer.pos) {
            Some(e) if *e == offer.entry => {
                if mutants.on(Mutant::DuplicateAppendAppliesTwice) {
                    let pos = self.len() + 1;
                    self.log.push(offer.entry);
                    out.push(Persist::Append {
                        pos,
                        entry: offer.entry,
                    });
                    true
                } else {
                    false
                }
            }
            held => {
                if held.is_some() {
                    self.log.truncate((offer.pos - 1) as usize);
                    out.push(Persist::Truncate { from: offer.pos });
                }
                self.log.push(offer.entry);
                out.push(Persist::Append {
                    pos: offer.pos,
                    entry: offer.entry,
                });
                true
            }
        };
        tracing::debug!(replica = %self.id, pos = offer.pos, written, "deliver: append held");
        (Received::Holds { written }, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Op;
    use crate::ids::{NodeId, StorageId};

    fn e(key: u64, epoch: u64) -> Entry {
        Entry {
            epoch: Epoch(epoch),
            op: Op::Put { key, value: key },
        }
    }

    fn offer(epoch: u64, pos: Position, prev: Option<Entry>, entry: Entry) -> Offer {
        Offer {
            epoch: Epoch(epoch),
            pos,
            prev,
            entry,
        }
    }

    fn replica() -> Replica {
        Replica::new(StorageId::first(NodeId(2)))
    }

    #[test]
    fn an_append_that_skips_a_position_is_not_applied_but_its_epoch_is_taken() {
        let mut r = replica();
        let (got, _) = r.receive(&offer(2, 2, Some(e(1, 2)), e(2, 2)), Mutants::NONE);
        assert_eq!(got, Received::Gap);
        assert!(r.is_empty());
        assert_eq!(r.fence(), Epoch(2));
    }

    #[test]
    fn an_append_whose_previous_entry_differs_is_a_gap() {
        let mut r = replica();
        r.receive(&offer(1, 1, None, e(1, 1)), Mutants::NONE);
        let (got, _) = r.receive(&offer(2, 2, Some(e(7, 2)), e(2, 2)), Mutants::NONE);
        assert_eq!(got, Received::Gap);
        assert_eq!(r.entries(), &[e(1, 1)]);
    }

    #[test]
    fn the_same_append_twice_is_applied_once() {
        let mut r = replica();
        let (first, p1) = r.receive(&offer(1, 1, None, e(1, 1)), Mutants::NONE);
        let (again, p2) = r.receive(&offer(1, 1, None, e(1, 1)), Mutants::NONE);
        assert_eq!(first, Received::Holds { written: true });
        assert_eq!(again, Received::Holds { written: false });
        assert_eq!(r.entries(), &[e(1, 1)]);
        assert_eq!(p1.len(), 2, "the epoch and the entry: {p1:?}");
        assert!(p2.is_empty(), "nothing new to persist: {p2:?}");
    }

    #[test]
    fn under_the_mutant_the_same_append_is_applied_again_at_the_tail() {
        let m = Mutants::only(Mutant::DuplicateAppendAppliesTwice);
        let mut r = replica();
        r.receive(&offer(1, 1, None, e(1, 1)), m);
        r.receive(&offer(1, 1, None, e(1, 1)), m);
        assert_eq!(r.entries(), &[e(1, 1), e(1, 1)]);
    }

    #[test]
    fn a_newer_owner_truncates_a_divergent_suffix() {
        let mut r = replica();
        r.receive(&offer(1, 1, None, e(1, 1)), Mutants::NONE);
        r.receive(&offer(1, 2, Some(e(1, 1)), e(2, 1)), Mutants::NONE);
        let (got, persist) = r.receive(&offer(2, 2, Some(e(1, 1)), e(3, 2)), Mutants::NONE);
        assert_eq!(got, Received::Holds { written: true });
        assert_eq!(r.entries(), &[e(1, 1), e(3, 2)]);
        assert!(persist.contains(&Persist::Truncate { from: 2 }));
    }

    #[test]
    fn a_stale_or_sealed_epoch_is_refused_with_the_oldest_epoch_still_taken() {
        let mut r = replica();
        r.observe_epoch(Epoch(3));
        let (got, persist) = r.receive(&offer(2, 1, None, e(1, 2)), Mutants::NONE);
        assert_eq!(got, Received::Refused { newer: Epoch(3) });
        assert!(persist.is_empty() && r.is_empty());
        r.seal(Epoch(3));
        let (got, _) = r.receive(&offer(3, 1, None, e(1, 3)), Mutants::NONE);
        assert_eq!(got, Received::Refused { newer: Epoch(4) });
    }
}
