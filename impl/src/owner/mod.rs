//! The serving owner: admission, publish, the confirm path and the switch
//! and final boundaries.
//!
//! A `Serving` exists only while a node believes it owns the partition at
//! one epoch; dropping it is how a node stops serving. Its counted set and W
//! come from the committed record it serves under (`activate`, `adopt`),
//! never from its own guess; it watches the record for suspensions and
//! re-admissions (`observe`).
//!
//! Inputs: `publish`, `publish_retry`, `settle` (the consumer's delete of
//! the oldest delivered message, `settle.rs`), `handle_ack`, `on_ack` and
//! `on_suspend` (messages, `inbox.rs`), `confirm`, `adopt`,
//! `close_admission`, `reopen_admission`, `report_final_boundary`, `observe`,
//! `check_request_epoch`. Outputs: `append_for` builds the replication
//! message for one peer (atomic delivery), `next_append` the wire append
//! and `progress_report` the report to the controller (networked
//! delivery, `report.rs`); `delivered` is the oldest message the owner
//! delivers. Getters never change state.

mod confirm;
pub mod error;
mod inbox;
mod report;
mod settle;

pub use error::OwnerError;
pub use inbox::{AckMsg, AckVerdict};
pub use settle::{settled_in, Settled};

use crate::entry::{Entry, Op};
use crate::ids::{Epoch, NodeId, Position, StorageId, Version};
use crate::mutant::{Mutant, Mutants};
use crate::replica::{
    Ack, Append, CheckpointBase, CheckpointOffer, Persist, Replica, ReplicaError,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What the owner last saw of the committed record, beyond its counted set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordView {
    /// The record version seen.
    pub version: Version,
    /// Learners (never counted).
    pub learners: BTreeSet<StorageId>,
    /// Suspended followers (never counted until re-admitted).
    pub suspended: BTreeSet<StorageId>,
    /// Copies currently assigned (owner, followers, learners, leaving).
    pub assigned_copies: u8,
}

/// What became of a producer's retried publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Retried {
    /// The owner's history holds it already: its position and epoch tag.
    Held {
        /// The position of the entry that holds it.
        pos: Position,
        /// That entry's epoch tag.
        epoch: Epoch,
    },
    /// The owner lacked it and appended it at its own epoch.
    Appended {
        /// The new entry's position.
        pos: Position,
        /// What makes the append durable.
        persist: Vec<Persist>,
    },
}

/// The owner's serving state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Serving {
    me: StorageId,
    epoch: Epoch,
    counted: BTreeSet<StorageId>,
    w: u8,
    admission_open: bool,
    confirmed_tail: Position,
    boundary: Option<Position>,
    final_boundary: Option<Position>,
    progress: BTreeMap<StorageId, Ack>,
    view: RecordView,
    /// Networked delivery: acknowledgements and suspension notices arrive
    /// as messages (`inbox.rs`), and the copies it counts are its counted
    /// set minus `muted`, not minus the suspensions it saw in the record.
    #[serde(default)]
    networked: bool,
    /// Networked delivery: per node, the oldest process incarnation whose
    /// acknowledgements it still takes (raised by a suspension notice).
    #[serde(default)]
    floor: BTreeMap<NodeId, u32>,
    /// Networked delivery: copies it heard are suspended; their progress
    /// paces catch-up but does not count until an admitted acknowledgement.
    #[serde(default)]
    muted: BTreeSet<StorageId>,
}

impl Serving {
    /// Start serving at `epoch` with the committed counted set and W; every
    /// entry up to `confirmed_tail` is already confirmed (by recovery's
    /// receipts or a handoff's final boundary).
    pub fn activate(
        me: StorageId,
        epoch: Epoch,
        counted: BTreeSet<StorageId>,
        w: u8,
        confirmed_tail: Position,
        view: RecordView,
    ) -> Self {
        assert!(
            counted.contains(&me),
            "invariant broken: owner {me} is not in its own counted set"
        );
        assert!(w >= 1, "invariant broken: W of 0");
        tracing::info!(owner = %me, epoch = epoch.0, w, confirmed_tail, "activate");
        Serving {
            me,
            epoch,
            counted,
            w,
            admission_open: true,
            confirmed_tail,
            boundary: None,
            final_boundary: None,
            progress: BTreeMap::new(),
            view,
            networked: false,
            floor: BTreeMap::new(),
            muted: BTreeSet::new(),
        }
    }

    /// The same serving state, taking its acknowledgements and suspension
    /// notices as messages (networked delivery).
    pub fn networked(mut self) -> Self {
        self.networked = true;
        self
    }

    /// The owner's storage instance.
    pub fn me(&self) -> StorageId {
        self.me
    }
    /// The epoch served at.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }
    /// The counted set served under (the owner included).
    pub fn counted(&self) -> &BTreeSet<StorageId> {
        &self.counted
    }
    /// The W confirms need.
    pub fn w(&self) -> u8 {
        self.w
    }
    /// Whether admission is open.
    pub fn admission_open(&self) -> bool {
        self.admission_open
    }
    /// The confirmed tail.
    pub fn confirmed_tail(&self) -> Position {
        self.confirmed_tail
    }
    /// The switch boundary B recorded at the last adoption.
    pub fn boundary(&self) -> Option<Position> {
        self.boundary
    }
    /// The final boundary F reported for a handoff.
    pub fn final_boundary(&self) -> Option<Position> {
        self.final_boundary
    }
    /// Acknowledged progress per storage instance.
    pub fn progress(&self) -> &BTreeMap<StorageId, Ack> {
        &self.progress
    }
    /// What the owner last saw of the record.
    pub fn view(&self) -> &RecordView {
        &self.view
    }
    /// Whether acknowledgements arrive as messages.
    pub fn is_networked(&self) -> bool {
        self.networked
    }
    /// Per node, the oldest incarnation whose acknowledgements count.
    pub fn floor(&self) -> &BTreeMap<NodeId, u32> {
        &self.floor
    }
    /// Copies it heard are suspended.
    pub fn muted(&self) -> &BTreeSet<StorageId> {
        &self.muted
    }

    /// Refuse requests that carry another epoch: fencing at the node that
    /// accepts writes, not only in client caches (note 2).
    pub fn check_request_epoch(&self, request: Epoch) -> Result<(), OwnerError> {
        if request != self.epoch {
            return Err(OwnerError::StaleEpoch {
                request,
                current: self.epoch,
            });
        }
        Ok(())
    }

    /// Accept one publish: write it to the owner's own log at its epoch.
    pub fn publish(
        &mut self,
        own: &mut Replica,
        op: Op,
        mutants: Mutants,
    ) -> Result<(Position, Vec<Persist>), OwnerError> {
        assert_eq!(
            own.id(),
            self.me,
            "invariant broken: owner writes another log"
        );
        if !self.admission_open {
            return Err(OwnerError::AdmissionClosed);
        }
        let entry = Entry {
            epoch: self.epoch,
            op,
        };
        let (pos, persist) = own.append_own(entry, mutants).map_err(|e| match e {
            ReplicaError::Fenced {
                sender_epoch,
                fence_epoch,
            } => OwnerError::Fenced {
                sender_epoch,
                fence_epoch,
            },
            other => panic!("invariant broken: own append failed: {other}"),
        })?;
        tracing::info!(owner = %self.me, pos, epoch = self.epoch.0, "publish");
        Ok((pos, persist))
    }

    /// Accept a producer's retry of publish `op` after a timeout (note 2:
    /// "does timeout retry cause duplicate effects?"). The message key is
    /// the producer's sequence number and every entry carries it, so the
    /// owner's history is its record of what the producer published, and
    /// whatever carried the history to this owner (replication, a
    /// recovery's install, a handoff's continuation, a checkpoint, which
    /// keeps naming the entries it folds in) carried the record with it. An
    /// owner that holds the sequence answers with its position and appends
    /// nothing; one that lacks it appends it like a new publish.
    pub fn publish_retry(
        &mut self,
        own: &mut Replica,
        op: Op,
        mutants: Mutants,
    ) -> Result<Retried, OwnerError> {
        if !self.admission_open {
            return Err(OwnerError::AdmissionClosed);
        }
        let held = match op {
            Op::Put { key, .. } => own
                .entries()
                .iter()
                .position(|e| matches!(e.op, Op::Put { key: k, .. } if k == key)),
            Op::Delete { .. } | Op::Missing => None,
        };
        if let Some(i) = held {
            if !mutants.on(Mutant::RetryWithoutProducerId) {
                let pos = i as Position + 1;
                let epoch = own.entries()[i].epoch;
                tracing::info!(owner = %self.me, pos, epoch = epoch.0, "retry answered from history");
                return Ok(Retried::Held { pos, epoch });
            }
        }
        let (pos, persist) = self.publish(own, op, mutants)?;
        Ok(Retried::Appended { pos, persist })
    }

    /// The replication message carrying the owner's entry at `pos`; an
    /// increment reclaimed below the owner's checkpoint is not shipped.
    pub fn append_for(&self, own: &Replica, pos: Position) -> Result<Append, OwnerError> {
        let entry = *own.entry(pos).ok_or(OwnerError::NothingToReplicate)?;
        reclaimed(own, pos)?;
        Ok(Append {
            sender: self.me,
            epoch: self.epoch,
            prev_pos: pos - 1,
            prev_epoch: own.epoch_at(pos - 1),
            entry,
        })
    }

    /// Retention: take a checkpoint at the confirmed tail and reclaim the
    /// increments below it (note 1: the owner truncates only below a
    /// boundary it confirmed). Under `truncate_before_confirm`, at the
    /// log's tail instead.
    pub fn truncate(
        &self,
        own: &mut Replica,
        mutants: Mutants,
    ) -> Result<(CheckpointBase, Vec<Persist>), OwnerError> {
        assert_eq!(
            own.id(),
            self.me,
            "invariant broken: owner truncates another log"
        );
        if let Some(fence_epoch) = own.fenced_against(self.epoch, mutants) {
            return Err(OwnerError::Fenced {
                sender_epoch: self.epoch,
                fence_epoch,
            });
        }
        let at = if mutants.on(Mutant::TruncateBeforeConfirm) {
            own.len()
        } else {
            self.confirmed_tail
        };
        assert!(
            at <= own.len(),
            "invariant broken: confirmed tail {at} past the owner's log"
        );
        if at <= own.base() {
            return Err(OwnerError::NothingToReclaim {
                at,
                base: own.base(),
            });
        }
        Ok(own.take_checkpoint(at))
    }

    /// The owner's checkpoint as shipped to a copy that lacks it.
    pub fn checkpoint_offer(&self, own: &Replica) -> Result<CheckpointOffer, OwnerError> {
        let base = own.checkpoint().ok_or(OwnerError::NoCheckpoint)?;
        Ok(CheckpointOffer::new(
            self.epoch,
            base,
            own.entries()[..base.pos as usize].to_vec(),
        ))
    }

    /// Adopt the committed record's counted set and W; the confirmed tail at
    /// this moment becomes the switch boundary B, which is returned.
    pub fn adopt(&mut self, counted: BTreeSet<StorageId>, w: u8) -> Position {
        assert!(
            counted.contains(&self.me),
            "invariant broken: adopted counted set lacks the owner"
        );
        self.counted = counted;
        self.w = w;
        self.boundary = Some(self.confirmed_tail);
        tracing::info!(owner = %self.me, boundary = self.confirmed_tail, w, "owner_switch");
        self.confirmed_tail
    }

    /// Close admission for a handoff. Under `handoff_without_barrier` the
    /// owner keeps admitting: the handoff runs on observations alone.
    pub fn close_admission(&mut self, mutants: Mutants) {
        if !mutants.on(Mutant::HandoffWithoutBarrier) {
            self.admission_open = false;
        }
        tracing::info!(owner = %self.me, "close_admission");
    }

    /// Reopen admission after a cancelled handoff.
    pub fn reopen_admission(&mut self) {
        self.admission_open = true;
        self.final_boundary = None;
        tracing::info!(owner = %self.me, "cancel_handoff: admission reopened");
    }

    /// Report the final boundary F once drained: every accepted entry is
    /// confirmed, and F is the last of them (note 1: "A drains work already
    /// in flight and reports its final boundary").
    pub fn report_final_boundary(&mut self, own: &Replica) -> Result<Position, OwnerError> {
        let f = own.len();
        if self.confirmed_tail != f {
            return Err(OwnerError::NotDrained {
                confirmed_tail: self.confirmed_tail,
                accepted: f,
            });
        }
        self.final_boundary = Some(f);
        tracing::info!(owner = %self.me, final_boundary = f, "report_final_boundary");
        Ok(f)
    }

    /// See the committed record's learners, suspensions and assignment size.
    pub fn observe(&mut self, view: RecordView) {
        if view.version > self.view.version {
            self.view = view;
        }
    }
}

/// Refuse shipping the increment at `pos` if it was reclaimed below the
/// owner's checkpoint.
fn reclaimed(own: &Replica, pos: Position) -> Result<(), OwnerError> {
    let base = own.base();
    if pos <= base {
        return Err(OwnerError::IncrementReclaimed { pos, base });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
