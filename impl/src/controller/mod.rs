//! The controller's knowledge of progress: what the owner reported to it.
//!
//! With messages in flight the controller never reads a copy's log. Its
//! guarded writes that wait on a copy (admission, swap, swap back,
//! promotion, removal, rejoin, a handoff's commit) read only the last
//! progress report it took. It takes a report only from the owner the
//! record names, at the record's epoch, and a report from another epoch
//! replaces nothing: knowledge from an earlier epoch is forgotten at the
//! first report of the current one and never read. A report from an older
//! epoch is answered with the record's epoch, which stops a stale owner
//! that still serves (note 2: "when requests carry an old version, the
//! server should reject").
//!
//! Inputs: `on_report`. Reads: `fresh`, `pos`, `reported`, `confirmed`,
//! `epoch`. Controller memory, not part of the replicated record.

mod error;

pub use error::ControllerError;

use crate::ids::{Epoch, NodeId, Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One progress report's fields (the wire message `net::Msg::Progress`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// The reporting owner's storage instance.
    pub from: StorageId,
    /// The epoch it serves at.
    pub epoch: Epoch,
    /// The copy reported on.
    pub of: StorageId,
    /// The position through which `of` holds the owner's history.
    pub pos: Position,
    /// The owner's confirmed tail.
    pub confirmed: Position,
}

/// What the controller did with a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportVerdict {
    /// From the record's owner at the record's epoch: taken.
    Taken,
    /// From an older epoch: the sender's node is told the record's epoch.
    Refuse {
        /// The reporter's node.
        to: NodeId,
        /// The record's epoch.
        epoch: Epoch,
    },
    /// From another owner at the record's epoch or a later one (a record
    /// the controller has not read yet): nothing to do.
    Ignored,
}

/// The progress the controller last heard of.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    /// The epoch of the report taken last (`None`: nothing reported).
    epoch: Option<Epoch>,
    /// The owner's confirmed tail, as reported.
    confirmed: Position,
    /// Per storage instance, the position through which it holds the
    /// owner's history, as reported (a list of pairs on the wire: JSON
    /// keys are strings).
    #[serde(with = "pairs")]
    acks: BTreeMap<StorageId, Position>,
}

/// A map as a list of `(key, value)` pairs.
mod pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        m: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter())
    }

    pub fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}

impl Known {
    /// The epoch of the report taken last.
    pub fn epoch(&self) -> Option<Epoch> {
        self.epoch
    }
    /// The owner's confirmed tail, as reported last.
    pub fn confirmed(&self) -> Position {
        self.confirmed
    }
    /// Every instance's reported position.
    pub fn acks(&self) -> &BTreeMap<StorageId, Position> {
        &self.acks
    }
    /// The position reported for instance `x` exactly (0: none).
    pub fn reported(&self, x: StorageId) -> Position {
        self.acks.get(&x).copied().unwrap_or(0)
    }

    /// What the controller knows once a recovery activated at `epoch`: the
    /// receipts in the record say each of `installed` holds the recovered
    /// tail (`confirmed`), the new owner included. Without this a move's
    /// target that became the owner would never be reported on, and the
    /// removal would wait forever (finding 24).
    pub fn from_receipts(
        epoch: Epoch,
        confirmed: Position,
        installed: impl IntoIterator<Item = StorageId>,
    ) -> Known {
        Known {
            epoch: Some(epoch),
            confirmed,
            acks: installed.into_iter().map(|x| (x, confirmed)).collect(),
        }
    }

    /// Take a delivered report, given the record's owner and epoch.
    pub fn on_report(
        &mut self,
        owner: StorageId,
        epoch: Epoch,
        r: &Report,
        mutants: Mutants,
    ) -> ReportVerdict {
        if r.epoch == epoch && r.from == owner {
            // A new epoch's first report replaces what an earlier owner
            // said: its copies, positions and tail are another history.
            if self.epoch != Some(epoch) && !mutants.on(Mutant::StaleProgressAdmits) {
                *self = Known::default();
            }
            self.epoch = Some(epoch);
            self.confirmed = r.confirmed;
            self.acks.insert(r.of, r.pos);
            tracing::debug!(of = %r.of, pos = r.pos, confirmed = r.confirmed, "progress taken");
            ReportVerdict::Taken
        } else if r.epoch < epoch {
            ReportVerdict::Refuse {
                to: r.from.node,
                epoch,
            }
        } else {
            ReportVerdict::Ignored
        }
    }

    /// This knowledge, if a guarded write at `record_epoch` may act on it:
    /// it comes from a report at that epoch. Under `stale_progress_admits`
    /// any report will do.
    pub fn fresh(&self, record_epoch: Epoch, mutants: Mutants) -> Result<&Known, ControllerError> {
        let ok = self.epoch == Some(record_epoch)
            || (mutants.on(Mutant::StaleProgressAdmits) && self.epoch.is_some());
        if !ok {
            return Err(ControllerError::NoReport {
                record_epoch,
                known_epoch: self.epoch,
            });
        }
        Ok(self)
    }

    /// The position through which instance `x` holds the owner's history,
    /// as reported. Under `stale_progress_admits` progress is kept per
    /// node: a report on an instance whose disk is gone speaks for the
    /// node's next one.
    pub fn pos(&self, x: StorageId, mutants: Mutants) -> Position {
        if mutants.on(Mutant::StaleProgressAdmits) {
            self.acks
                .iter()
                .filter(|(s, _)| s.node == x.node)
                .map(|(_, p)| *p)
                .max()
                .unwrap_or(0)
        } else {
            self.reported(x)
        }
    }
}

#[cfg(test)]
mod tests;
