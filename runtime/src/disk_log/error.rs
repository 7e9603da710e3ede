//! Errors of the disk log's API boundary.

use std::path::PathBuf;

/// Why the disk log could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum DiskLogError {
    /// A file operation failed.
    #[error("{}: {action} failed: {source}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// What was being done (`open`, `append`, `truncate`, ...).
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A record before the last one is damaged: acknowledged entries may be
    /// lost, so nothing is truncated and the log does not open.
    #[error("{}: corrupt record at byte {offset}: {reason}", path.display())]
    CorruptRecord {
        /// The segment file.
        path: PathBuf,
        /// Byte offset of the record's header.
        offset: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The epochs file is not a fence and seal.
    #[error("{}: corrupt epochs file: {reason}", path.display())]
    CorruptEpochs {
        /// The epochs file.
        path: PathBuf,
        /// The parser's message, with line and column.
        reason: String,
    },
}
