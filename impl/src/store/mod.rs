//! The coordination store: the controller's replicated record and its
//! guarded writes.
//!
//! Every change is one guarded write: the writer names the version it read
//! and the facts it observed; the store checks the version and the notes'
//! preconditions, persists the next record and only then exposes it. A
//! refused or failed write leaves the record unchanged.

pub mod error;
pub mod record;
pub mod resume;
pub mod storage;
pub mod write;

pub use error::StoreError;
pub use record::{
    Handoff, HandoffPhase, Move, MovePhase, PendingRecovery, Record, RecoveredTail, TailMark,
};
pub use storage::{FileRecordStorage, MemRecordStorage, RecordStorage};
pub use write::Write;

use crate::ids::Version;
use crate::mutant::Mutants;

/// The record plus the storage it is durable in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoordinationStore<S> {
    record: Record,
    storage: S,
    mutants: Mutants,
}

impl<S: RecordStorage> CoordinationStore<S> {
    /// Open the store: the persisted record if there is one, else `initial`
    /// (persisted before it is returned).
    pub fn open(mut storage: S, initial: Record, mutants: Mutants) -> Result<Self, StoreError> {
        let record = match storage.load().map_err(storage_error)? {
            Some(r) => r,
            None => {
                storage.persist(&initial).map_err(storage_error)?;
                initial
            }
        };
        write::check_record(&record);
        Ok(CoordinationStore {
            record,
            storage,
            mutants,
        })
    }

    /// Switch mutants on or off (they relax guards).
    pub fn set_mutants(&mut self, mutants: Mutants) {
        self.mutants = mutants;
    }

    /// The committed record.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// The storage (for tests that inspect or crash it).
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Mutable storage (for fault injection).
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.storage
    }

    /// Give the storage back, dropping the in-memory record (a crash).
    pub fn into_storage(self) -> S {
        self.storage
    }

    /// Apply one guarded write read at `expected`.
    pub fn write(&mut self, expected: Version, w: Write) -> Result<&Record, StoreError> {
        let span = tracing::info_span!("guarded_write", action = w.action(), expected = %expected);
        let _enter = span.enter();
        if expected != self.record.version {
            tracing::debug!(found = %self.record.version, "refused: stale version");
            return Err(StoreError::StaleVersion {
                expected,
                found: self.record.version,
            });
        }
        let next = write::apply(&self.record, &w, self.mutants).inspect_err(|e| {
            tracing::debug!(error = %e, "refused");
        })?;
        self.storage.persist(&next).map_err(storage_error)?;
        tracing::info!(version = %next.version, epoch = %next.epoch, "committed");
        self.record = next;
        Ok(&self.record)
    }

    /// Apply a write at the current version (for drivers that just read it).
    pub fn write_current(&mut self, w: Write) -> Result<&Record, StoreError> {
        self.write(self.record.version, w)
    }
}

fn storage_error(e: std::io::Error) -> StoreError {
    StoreError::Storage {
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests;
