//! Durable storage of a replica's log, fence and seal.
//!
//! The replica core emits `Persist` commands; a `LogStorage` applies a batch
//! atomically: the file form appends one JSON line per batch and fsyncs it,
//! and loading replays the batches, ignoring a torn last line (cut off
//! before the next append) and refusing a damaged earlier one (`DamagedLine`). So no state
//! like "position reached 12, but the delete at 12 not yet saved" survives a
//! crash (note 2). A seal lives here, on the disk: a lost disk
//! loses its seal with it, and so does a checkpoint base.

use super::CheckpointBase;
use crate::entry::Entry;
use crate::ids::{Epoch, Position};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::{self, Write as _};
use std::path::PathBuf;

/// One durable change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Persist {
    /// Write `entry` at `pos` (always the next position).
    Append {
        /// The position.
        pos: Position,
        /// The entry.
        entry: Entry,
    },
    /// Drop every entry at `from` and beyond.
    Truncate {
        /// The first position dropped.
        from: Position,
    },
    /// Record the fence and the seal.
    Fence {
        /// The highest epoch seen.
        fence: Epoch,
        /// The epoch sealed at.
        sealed: Option<Epoch>,
    },
    /// Record the checkpoint base: positions up to `pos` are folded into
    /// a checkpoint bound to the entry tagged `epoch` there.
    Checkpoint {
        /// The checkpoint's position.
        pos: Position,
        /// The epoch tag of the entry at `pos`.
        epoch: Epoch,
    },
}

/// A replica's durable state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DurableLog {
    /// The log, position 1 first.
    pub entries: Vec<Entry>,
    /// The highest epoch seen.
    pub fence: Epoch,
    /// The epoch sealed at.
    pub sealed: Option<Epoch>,
    /// The checkpoint base, if any.
    #[serde(default)]
    pub checkpoint: Option<CheckpointBase>,
}

impl DurableLog {
    /// Apply one command.
    pub fn apply(&mut self, p: &Persist) {
        match *p {
            Persist::Append { pos, entry } => {
                assert_eq!(
                    pos,
                    self.entries.len() as Position + 1,
                    "invariant broken: durable append out of order"
                );
                self.entries.push(entry);
            }
            Persist::Truncate { from } => {
                assert!(from >= 1, "invariant broken: truncate from position 0");
                self.entries.truncate((from - 1) as usize);
            }
            Persist::Fence { fence, sealed } => {
                self.fence = fence;
                self.sealed = sealed;
            }
            Persist::Checkpoint { pos, epoch } => {
                assert!(pos >= 1, "invariant broken: checkpoint at position 0");
                assert_eq!(
                    self.entries.get((pos - 1) as usize).map(|e| e.epoch),
                    Some(epoch),
                    "invariant broken: durable checkpoint at {pos} not bound to the entry there"
                );
                self.checkpoint = Some(CheckpointBase { pos, epoch });
            }
        }
    }
}

/// Where a replica's state lives between restarts.
pub trait LogStorage {
    /// The durable state as of the last completed batch.
    fn load(&mut self) -> io::Result<DurableLog>;
    /// Make a batch durable.
    fn apply(&mut self, batch: &[Persist]) -> io::Result<()>;
}

/// In-memory storage for tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemLogStorage {
    state: DurableLog,
}

impl LogStorage for MemLogStorage {
    fn load(&mut self) -> io::Result<DurableLog> {
        Ok(self.state.clone())
    }

    fn apply(&mut self, batch: &[Persist]) -> io::Result<()> {
        batch.iter().for_each(|p| self.state.apply(p));
        Ok(())
    }
}

/// Append-only command file, fsynced per batch.
#[derive(Debug)]
pub struct FileLogStorage {
    path: PathBuf,
    /// Whether the file is known to end at a committed batch (checked once
    /// per open: every append this storage writes ends with its newline).
    tail_clean: bool,
}

impl FileLogStorage {
    /// Storage at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileLogStorage {
            path: path.into(),
            tail_clean: false,
        }
    }
}

/// A line of the log file that is complete (a later line follows it, or it
/// ends with its newline) but is not a batch: the file is damaged, and
/// loading refuses rather than drop the batch silently. Loading returns it
/// inside an `io::Error` of kind `InvalidData`
/// (`err.get_ref().and_then(|e| e.downcast_ref::<DamagedLine>())`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("damaged batch at line {line} (byte offset {offset}): {reason}")]
pub struct DamagedLine {
    /// The 1-based line number in the file.
    pub line: usize,
    /// The byte offset of the line's first byte.
    pub offset: u64,
    /// Why it does not parse.
    pub reason: String,
}

/// The byte length of the file's committed part: up to and including its
/// last newline. A batch is committed when its newline is written, so
/// whatever follows the last newline is a batch torn by a crash.
fn committed_len(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

impl LogStorage for FileLogStorage {
    fn load(&mut self) -> io::Result<DurableLog> {
        let mut state = DurableLog::default();
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(state),
            Err(e) => return Err(e),
        };
        let committed = &bytes[..committed_len(&bytes)];
        self.tail_clean = committed.len() == bytes.len();
        if committed.len() < bytes.len() {
            // A batch is written with its newline last and fsynced before it
            // is acknowledged: a tail without its newline never committed.
            tracing::warn!(offset = committed.len(), "ignoring a batch torn by a crash");
        }
        let mut offset = 0u64;
        for (i, raw) in committed.split(|&b| b == b'\n').enumerate() {
            let here = offset;
            offset += raw.len() as u64 + 1;
            if raw.is_empty() {
                continue;
            }
            let batch = std::str::from_utf8(raw)
                .map_err(|e| e.to_string())
                .and_then(|l| serde_json::from_str::<Vec<Persist>>(l).map_err(|e| e.to_string()))
                .map_err(|reason| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        DamagedLine {
                            line: i + 1,
                            offset: here,
                            reason,
                        },
                    )
                })?;
            batch.iter().for_each(|p| state.apply(p));
        }
        Ok(state)
    }

    fn apply(&mut self, batch: &[Persist]) -> io::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut f = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.path)?;
        // Recovery: cut a batch torn by an earlier crash off the file before
        // appending, so a torn line never sits before a committed one and a
        // line that does not parse before the last is damage, not a crash.
        if !self.tail_clean && f.metadata()?.len() > 0 {
            let bytes = std::fs::read(&self.path)?;
            let keep = committed_len(&bytes);
            if keep < bytes.len() {
                tracing::warn!(offset = keep, "cutting a batch torn by a crash");
                f.set_len(keep as u64)?;
                f.sync_data()?;
            }
        }
        // A write that fails half way leaves a torn tail: check again then.
        self.tail_clean = false;
        // The leading newline keeps the format of files written before the
        // recovery step (an empty line is skipped).
        let mut buf = String::from("\n");
        buf.push_str(&serde_json::to_string(batch).map_err(io::Error::other)?);
        buf.push('\n');
        f.write_all(buf.as_bytes())?;
        f.sync_data()?;
        self.tail_clean = true;
        Ok(())
    }
}
