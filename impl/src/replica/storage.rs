//! Durable storage of a replica's log, fence and seal.
//!
//! The replica core emits `Persist` commands; a `LogStorage` applies a batch
//! atomically: the file form appends one JSON line per batch and fsyncs it,
//! and loading replays the batches, ignoring a torn last line. So no state
//! like "position reached 12, but the delete at 12 not yet saved" survives a
//! crash (note 2). A seal lives here, on the disk: a lost disk
//! loses its seal with it, and so does a checkpoint base.

use super::CheckpointBase;
use crate::entry::Entry;
use crate::ids::{Epoch, Position};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write as _};
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
}

impl FileLogStorage {
    /// Storage at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileLogStorage { path: path.into() }
    }
}

impl LogStorage for FileLogStorage {
    fn load(&mut self) -> io::Result<DurableLog> {
        let mut state = DurableLog::default();
        let f = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(state),
            Err(e) => return Err(e),
        };
        for line in BufReader::new(f).lines() {
            let line = line?;
            if line.is_empty() {
                continue;
            }
            // Every batch starts on a fresh line and is fsynced before it is
            // acknowledged, so a line that does not parse is a batch torn by
            // a crash: it never happened, and later batches were written
            // against the state without it.
            match serde_json::from_str::<Vec<Persist>>(&line) {
                Ok(batch) => batch.iter().for_each(|p| state.apply(p)),
                Err(e) => tracing::warn!(error = %e, "ignoring a torn batch"),
            }
        }
        Ok(state)
    }

    fn apply(&mut self, batch: &[Persist]) -> io::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        // The leading newline ends a line torn by an earlier crash, so that
        // only that batch is lost.
        let mut buf = String::from("\n");
        buf.push_str(&serde_json::to_string(batch).map_err(io::Error::other)?);
        buf.push('\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        f.write_all(buf.as_bytes())?;
        f.sync_data()
    }
}
