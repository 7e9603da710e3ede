//! Errors of the controller's knowledge: a guarded write it may not make
//! on what it was told.

use crate::ids::Epoch;

/// A guarded write the controller refuses for lack of a report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControllerError {
    /// No progress report at the record's epoch: the controller knows
    /// nothing it may act on.
    #[error(
        "no progress report at the record's epoch {record_epoch} (last report at {known_epoch:?})"
    )]
    NoReport {
        /// The record's epoch.
        record_epoch: Epoch,
        /// The epoch of the report taken last, if any.
        known_epoch: Option<Epoch>,
    },
}
