//! A replica: one storage instance's durable log, its fence and its seal.
//!
//! Inputs are `handle_append` (atomic delivery), `receive` (a delivered
//! append message, `receive.rs`), `append_own`, `seal`, `observe_epoch`,
//! `install`, and retention's `take_checkpoint` and `install_checkpoint`
//! (`retention.rs`); each returns the `Persist` commands that make the
//! change durable, which the runtime hands to a `LogStorage` before it
//! acknowledges anything. Getters never change state.
//!
//! Retention (note 2, "Snapshots must correspond to a log boundary"): the
//! log may carry a checkpoint base, a position bound to the epoch tag of
//! the entry there. Positions up to it are folded into the checkpoint:
//! their increments are reclaimed, so this copy ships none of them and
//! never cuts its log below the base. The log still names those entries
//! (the checkpoint's state is their effect), which is what lets a copy
//! compare histories with the checkpoint's entry.

pub mod error;
mod receive;
mod retention;
pub mod storage;

pub use error::ReplicaError;
pub use receive::{Offer, Received};
pub use retention::{checksum, fold, CheckpointBase, CheckpointOffer};
pub use storage::{DamagedLine, DurableLog, FileLogStorage, LogStorage, MemLogStorage, Persist};

use crate::entry::Entry;
use crate::ids::{Epoch, Position, StorageId};
use crate::mutant::{Mutant, Mutants};
use serde::{Deserialize, Serialize};

/// One replication message: the entry at `prev_pos + 1`, from a sender
/// serving at `epoch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Append {
    /// The sending storage instance.
    pub sender: StorageId,
    /// The epoch the sender serves at.
    pub epoch: Epoch,
    /// The position before the entry.
    pub prev_pos: Position,
    /// The sender's epoch tag at `prev_pos` (`None` when `prev_pos` is 0).
    pub prev_epoch: Option<Epoch>,
    /// The entry at `prev_pos + 1`.
    pub entry: Entry,
}

/// Durable progress: the replica holds the entry tagged `epoch` at `pos`
/// (and, by the prefix check on every append, the sender's log below it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ack {
    /// The acknowledging storage instance.
    pub from: StorageId,
    /// The position it holds.
    pub pos: Position,
    /// The epoch tag of its entry at `pos`.
    pub epoch: Epoch,
}

/// The replica state machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replica {
    id: StorageId,
    log: Vec<Entry>,
    fence: Epoch,
    sealed: Option<Epoch>,
    /// The checkpoint base (retention); `None` on a fresh disk.
    #[serde(default)]
    checkpoint: Option<CheckpointBase>,
}

impl Replica {
    /// An empty replica on a fresh storage instance.
    pub fn new(id: StorageId) -> Self {
        Replica {
            id,
            log: Vec::new(),
            fence: Epoch(0),
            sealed: None,
            checkpoint: None,
        }
    }

    /// A replica reloaded from its durable state.
    pub fn restore(id: StorageId, durable: DurableLog) -> Self {
        Replica {
            id,
            log: durable.entries,
            fence: durable.fence,
            sealed: durable.sealed,
            checkpoint: durable.checkpoint,
        }
    }

    /// The storage instance.
    pub fn id(&self) -> StorageId {
        self.id
    }

    /// The durable log, position 1 first.
    pub fn entries(&self) -> &[Entry] {
        &self.log
    }

    /// The last position held.
    pub fn len(&self) -> Position {
        self.log.len() as Position
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The entry at 1-based `pos`.
    pub fn entry(&self, pos: Position) -> Option<&Entry> {
        if pos == 0 {
            return None;
        }
        self.log.get(usize::try_from(pos - 1).ok()?)
    }

    /// The epoch tag at `pos`.
    pub fn epoch_at(&self, pos: Position) -> Option<Epoch> {
        self.entry(pos).map(|e| e.epoch)
    }

    /// The highest epoch this replica has seen.
    pub fn fence(&self) -> Epoch {
        self.fence
    }

    /// The epoch this replica sealed at, if any.
    pub fn sealed(&self) -> Option<Epoch> {
        self.sealed
    }

    /// The checkpoint base, if this disk holds a checkpoint.
    pub fn checkpoint(&self) -> Option<CheckpointBase> {
        self.checkpoint
    }

    /// The checkpoint's position (0: no checkpoint).
    pub fn base(&self) -> Position {
        self.checkpoint.map_or(0, |b| b.pos)
    }

    /// The oldest epoch this replica still takes appends from: past its
    /// seal and not below its fence. A refused sender learns it.
    pub fn accepts_from(&self) -> Epoch {
        let past_seal = self.sealed.map_or(Epoch(0), Epoch::next);
        self.fence.max(past_seal)
    }

    /// Durable progress to report: the last position and its epoch tag.
    pub fn progress(&self) -> Ack {
        Ack {
            from: self.id,
            pos: self.len(),
            epoch: self.log.last().map_or(Epoch(0), |e| e.epoch),
        }
    }

    /// The durable state, as a `LogStorage` holds it.
    pub fn durable(&self) -> DurableLog {
        DurableLog {
            entries: self.log.clone(),
            fence: self.fence,
            sealed: self.sealed,
            checkpoint: self.checkpoint,
        }
    }

    /// Whether an append from a sender at `epoch` is fenced off, and at
    /// which epoch. A replica sealed at e refuses appends of epoch e or
    /// older; a replica that has seen a newer epoch refuses older ones.
    pub fn fenced_against(&self, epoch: Epoch, mutants: Mutants) -> Option<Epoch> {
        if epoch < self.fence {
            return Some(self.fence);
        }
        match self.sealed {
            Some(s) if epoch <= s && !mutants.on(Mutant::NoSealFencing) => Some(s),
            _ => None,
        }
    }

    /// Take one replicated entry.
    ///
    /// Idempotent for a position already held with the same entry; a
    /// divergent (necessarily unconfirmed) suffix is truncated when a sender
    /// at an epoch not older than the fence overwrites it; gaps are refused,
    /// and so is an entry that would cut into the checkpoint.
    pub fn handle_append(
        &mut self,
        msg: &Append,
        mutants: Mutants,
    ) -> Result<(Ack, Vec<Persist>), ReplicaError> {
        if let Some(fence_epoch) = self.fenced_against(msg.epoch, mutants) {
            return Err(ReplicaError::Fenced {
                sender_epoch: msg.epoch,
                fence_epoch,
            });
        }
        if msg.entry.epoch > msg.epoch {
            return Err(ReplicaError::EntryFromFuture {
                entry_epoch: msg.entry.epoch,
                sender_epoch: msg.epoch,
            });
        }
        if msg.prev_pos > self.len() {
            return Err(ReplicaError::LogGap {
                expected: self.len() + 1,
                got: msg.prev_pos + 1,
            });
        }
        let found = self.epoch_at(msg.prev_pos);
        // Under `checkpoint_without_epoch_tag` a sender whose checkpoint
        // kept its position only sends no tag for the entry there, and the
        // copy takes the position for agreement.
        let untagged = mutants.on(Mutant::CheckpointWithoutEpochTag)
            && msg.prev_pos > 0
            && msg.prev_epoch.is_none();
        if found != msg.prev_epoch && !untagged {
            return Err(ReplicaError::PrevMismatch {
                pos: msg.prev_pos,
                expected: msg.prev_epoch,
                found,
            });
        }
        let pos = msg.prev_pos + 1;
        self.check_not_cut(pos, &msg.entry)?;
        let mut out = Vec::new();
        if msg.epoch > self.fence {
            self.fence = msg.epoch;
            out.push(self.fence_command());
        }
        match self.entry(pos) {
            Some(e) if *e == msg.entry => {}
            Some(_) => {
                self.log.truncate((pos - 1) as usize);
                out.push(Persist::Truncate { from: pos });
                self.log.push(msg.entry);
                out.push(Persist::Append {
                    pos,
                    entry: msg.entry,
                });
            }
            None => {
                self.log.push(msg.entry);
                out.push(Persist::Append {
                    pos,
                    entry: msg.entry,
                });
            }
        }
        tracing::debug!(replica = %self.id, pos, epoch = msg.entry.epoch.0, "replicate: appended");
        Ok((
            Ack {
                from: self.id,
                pos,
                epoch: msg.entry.epoch,
            },
            out,
        ))
    }

    /// The owner writes its own entry (publish).
    pub fn append_own(
        &mut self,
        entry: Entry,
        mutants: Mutants,
    ) -> Result<(Position, Vec<Persist>), ReplicaError> {
        if let Some(fence_epoch) = self.fenced_against(entry.epoch, mutants) {
            return Err(ReplicaError::Fenced {
                sender_epoch: entry.epoch,
                fence_epoch,
            });
        }
        self.log.push(entry);
        let pos = self.len();
        Ok((pos, vec![Persist::Append { pos, entry }]))
    }

    /// Seal at `epoch`: no append of `epoch` or older is taken afterwards.
    pub fn seal(&mut self, epoch: Epoch) -> Vec<Persist> {
        self.sealed = Some(self.sealed.map_or(epoch, |s| s.max(epoch)));
        self.fence = self.fence.max(epoch);
        tracing::info!(replica = %self.id, epoch = epoch.0, "seal");
        vec![self.fence_command()]
    }

    /// Learn of `epoch` (a newer owner's record or append).
    pub fn observe_epoch(&mut self, epoch: Epoch) -> Vec<Persist> {
        if epoch <= self.fence {
            return Vec::new();
        }
        self.fence = epoch;
        vec![self.fence_command()]
    }

    /// Continue a handoff's history at its final boundary `f`: drop every
    /// entry past `f`. The old owner drained to F and closed admission, so
    /// what this copy holds past F is a divergent tail of an older epoch,
    /// never confirmed (finding 33). Refused if F is below this copy's
    /// checkpoint (folded state has no suffix to drop).
    pub fn continue_at(&mut self, f: Position) -> Result<Vec<Persist>, ReplicaError> {
        if f < self.base() {
            return Err(ReplicaError::WouldCutCheckpoint {
                pos: f + 1,
                base: self.base(),
            });
        }
        if f >= self.len() {
            return Ok(Vec::new());
        }
        tracing::info!(replica = %self.id, from = f + 1, len = self.len(), "continue_at: stale tail dropped");
        self.log.truncate(f as usize);
        Ok(vec![Persist::Truncate { from: f + 1 }])
    }

    /// Install the recovered history: keep the common prefix, truncate a
    /// divergent unconfirmed suffix, append the rest, and seal at `epoch`.
    /// Refused if the recovered history does not extend this copy's
    /// checkpoint (a checkpoint cannot be rolled back).
    pub fn install(
        &mut self,
        recovered: &[Entry],
        epoch: Epoch,
    ) -> Result<Vec<Persist>, ReplicaError> {
        self.extends_checkpoint(recovered)?;
        let mut out = self.adopt_log(recovered);
        out.extend(self.seal(epoch));
        tracing::info!(replica = %self.id, tail = self.len(), "install_recovered");
        Ok(out)
    }

    /// Make the log `want`: keep the common prefix, truncate the rest of
    /// this log, append the rest of `want`. The callers (a recovered tail,
    /// a checkpoint install, the replay past a gap under its mutant) have
    /// already decided that the suffix cut off is not confirmed.
    fn adopt_log(&mut self, want: &[Entry]) -> Vec<Persist> {
        let keep = crate::entry::common_prefix(&self.log, want);
        let mut out = Vec::new();
        if (keep as usize) < self.log.len() {
            self.log.truncate(keep as usize);
            out.push(Persist::Truncate { from: keep + 1 });
        }
        for (i, e) in want.iter().enumerate().skip(keep as usize) {
            self.log.push(*e);
            out.push(Persist::Append {
                pos: i as Position + 1,
                entry: *e,
            });
        }
        out
    }

    fn fence_command(&self) -> Persist {
        Persist::Fence {
            fence: self.fence,
            sealed: self.sealed,
        }
    }
}

#[cfg(test)]
mod tests;
