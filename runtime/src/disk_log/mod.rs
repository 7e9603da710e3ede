//! One replica's durable log on disk: an append-only segment file of
//! checksummed records (`record`), and the fence, seal and checkpoint base
//! in a small file beside it (`epochs`), behind the implementation's `LogStorage` trait.
//!
//! Every call that returns `Ok` has reached the disk: appends are fsynced
//! before `apply` returns, a truncation (of a divergent suffix) is an
//! fsynced `ftruncate`, and the epochs are replaced atomically. Opening the
//! log scans it: a torn last record (a crash during an append) is cut away
//! and reported as `TornTail`, with the bytes dropped logged; a damaged
//! record with intact data after it is `DiskLogError::CorruptRecord`
//! naming its offset, and nothing is cut.
//!
//! A batch is applied in order, each step durable before the next, so a
//! crash inside a batch leaves a prefix of it. `LogStorage` asks for whole
//! batches; the prefix is safe for the batches the replica emits, because
//! nothing in a batch is acknowledged until `apply` returns: a raised fence
//! without the append after it is what `observe_epoch` alone writes, a
//! truncation of a divergent suffix without the appends after it drops
//! only entries that recovery drops anyway, and an install without its
//! final seal is an install that did not happen (the store counts an
//! install only once the replica reports it).
//!
//! A damaged last record cannot be told apart from a torn one and is cut
//! away like it; every earlier record is protected by the records after it.

mod epochs;
mod error;
mod record;

pub use epochs::Epochs;
pub use error::DiskLogError;
pub use record::{HEADER_BYTES, PAYLOAD_BYTES_MAX};

use crate::fsutil::ledger::{self, SyncPoint};
use livemove_impl::replica::{CheckpointBase, DurableLog, LogStorage, Persist};
use livemove_impl::Position;
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// The segment file's name in the log's directory.
pub const SEGMENT_FILE: &str = "log.seg";
/// The epochs file's name in the log's directory.
pub const EPOCHS_FILE: &str = "epochs.json";

/// A torn last record found and cut away when the log was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// Where the torn record started (the segment's length afterwards).
    pub offset: u64,
    /// How many bytes were cut away.
    pub bytes_dropped: u64,
}

/// What opening the log recovered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The durable state.
    pub state: DurableLog,
    /// The torn tail that was cut away, if there was one.
    pub torn_tail: Option<TornTail>,
}

/// The bytes of the record of `entry` at `pos`, as an append writes them:
/// a simulator writes a prefix of them to stand for an append a crash cut
/// short.
pub fn encode_record(pos: Position, entry: livemove_impl::Entry) -> Vec<u8> {
    let mut out = Vec::new();
    record::encode(pos, entry, &mut out);
    out
}

/// The torn last record of the segment in `dir`, read without cutting it
/// away (the simulator counts the torn records a power loss leaves): its
/// offset and length, or `None` when the segment ends on a whole record or
/// does not exist.
pub fn find_torn_tail(dir: &Path) -> Result<Option<TornTail>, DiskLogError> {
    let path = dir.join(SEGMENT_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&path, "read", e)),
    };
    Ok(match record::scan(&bytes).1 {
        Some(record::Damage::TornTail { offset }) => Some(TornTail {
            offset,
            bytes_dropped: bytes.len() as u64 - offset,
        }),
        _ => None,
    })
}

/// What the log in `dir` holds, read without changing it: a torn last
/// record is left where it is and not counted (the simulator compares a
/// node's disk after a power loss with what the node held).
pub fn read_durable(dir: &Path) -> Result<DurableLog, DiskLogError> {
    let path = dir.join(SEGMENT_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err(&path, "read", e)),
    };
    let (scan, damage) = record::scan(&bytes);
    if let Some(record::Damage::Corrupt { offset, reason }) = damage {
        return Err(DiskLogError::CorruptRecord {
            path,
            offset,
            reason,
        });
    }
    let epochs = epochs::load(&dir.join(EPOCHS_FILE))?;
    Ok(DurableLog {
        entries: scan.entries,
        fence: epochs.fence,
        sealed: epochs.sealed,
        checkpoint: epochs.checkpoint,
    })
}

/// One replica's log in a directory of its own.
#[derive(Debug)]
pub struct DiskLog {
    dir: PathBuf,
    segment: File,
    /// Byte offset of each entry's record; position `p` is at index `p - 1`.
    offsets: Vec<u64>,
    /// Where the last record ends.
    end: u64,
    /// Set when a write failed part-way: memory and disk may disagree
    /// until the log is opened again.
    failed: bool,
}

impl DiskLog {
    /// Open (or create) the log in `dir`, recovering from a torn tail.
    pub fn open(dir: impl Into<PathBuf>) -> Result<(DiskLog, Recovered), DiskLogError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, "create directory", e))?;
        let path = dir.join(SEGMENT_FILE);
        let segment = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| io_err(&path, "open", e))?;
        ledger::opened(&path);
        // A segment just created must not vanish with its directory entry.
        crate::fsutil::sync_parent_dir(&path).map_err(|e| io_err(&path, "sync directory", e))?;
        let mut log = DiskLog {
            dir,
            segment,
            offsets: Vec::new(),
            end: 0,
            failed: false,
        };
        let recovered = log.recover()?;
        Ok((log, recovered))
    }

    /// The segment file.
    pub fn segment_path(&self) -> PathBuf {
        self.dir.join(SEGMENT_FILE)
    }

    /// The epochs file.
    pub fn epochs_path(&self) -> PathBuf {
        self.dir.join(EPOCHS_FILE)
    }

    /// How many entries the log holds.
    pub fn len(&self) -> Position {
        self.offsets.len() as Position
    }

    /// Whether the log holds no entry.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Read the whole state back from the disk, cutting a torn tail away.
    fn recover(&mut self) -> Result<Recovered, DiskLogError> {
        let path = self.segment_path();
        let bytes = std::fs::read(&path).map_err(|e| io_err(&path, "read", e))?;
        let (scan, damage) = record::scan(&bytes);
        let torn_tail = match damage {
            None => None,
            Some(record::Damage::Corrupt { offset, reason }) => {
                return Err(DiskLogError::CorruptRecord {
                    path,
                    offset,
                    reason,
                })
            }
            Some(record::Damage::TornTail { offset }) => {
                let bytes_dropped = bytes.len() as u64 - offset;
                self.segment
                    .set_len(offset)
                    .and_then(|()| {
                        ledger::sync_file(&self.segment, &path, SyncPoint::Truncate, false)
                    })
                    .map_err(|e| io_err(&path, "cut torn tail", e))?;
                tracing::warn!(
                    path = %path.display(), offset, bytes_dropped,
                    "torn last record cut away"
                );
                Some(TornTail {
                    offset,
                    bytes_dropped,
                })
            }
        };
        let epochs = epochs::load(&self.epochs_path())?;
        self.offsets = scan.offsets;
        self.end = scan.end;
        self.failed = false;
        Ok(Recovered {
            state: DurableLog {
                entries: scan.entries,
                fence: epochs.fence,
                sealed: epochs.sealed,
                checkpoint: epochs.checkpoint,
            },
            torn_tail,
        })
    }

    /// Make `batch` durable, in order; see the module comment for what a
    /// crash inside it leaves.
    pub fn apply_batch(&mut self, batch: &[Persist]) -> Result<(), DiskLogError> {
        assert!(
            !self.failed,
            "invariant broken: the disk log was written after a failed write without reopening"
        );
        let result = self.apply_in_order(batch);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    fn apply_in_order(&mut self, batch: &[Persist]) -> Result<(), DiskLogError> {
        let mut pending = Vec::new();
        let mut pending_offsets = Vec::new();
        for p in batch {
            match *p {
                Persist::Append { pos, entry } => {
                    let next = self.len() + pending_offsets.len() as Position + 1;
                    assert_eq!(
                        pos, next,
                        "invariant broken: disk append at {pos}, the log's next position is {next}"
                    );
                    pending_offsets.push(self.end + pending.len() as u64);
                    record::encode(pos, entry, &mut pending);
                }
                Persist::Truncate { from } => {
                    self.flush(&mut pending, &mut pending_offsets)?;
                    self.truncate(from)?;
                }
                Persist::Fence { fence, sealed } => {
                    self.flush(&mut pending, &mut pending_offsets)?;
                    self.update_epochs(|kept| Epochs {
                        fence,
                        sealed,
                        ..kept
                    })?;
                }
                Persist::Checkpoint { pos, epoch } => {
                    self.flush(&mut pending, &mut pending_offsets)?;
                    self.update_epochs(|kept| Epochs {
                        checkpoint: Some(CheckpointBase { pos, epoch }),
                        ..kept
                    })?;
                }
            }
        }
        self.flush(&mut pending, &mut pending_offsets)
    }

    /// Replace the epochs file with `change` of what it holds, atomically,
    /// so a fence write keeps the checkpoint and a checkpoint keeps the
    /// fence.
    fn update_epochs(&self, change: impl FnOnce(Epochs) -> Epochs) -> Result<(), DiskLogError> {
        let path = self.epochs_path();
        let kept = epochs::load(&path)?;
        epochs::store(&path, change(kept))
    }

    /// Append the pending records with one write and one fsync.
    fn flush(&mut self, pending: &mut Vec<u8>, offsets: &mut Vec<u64>) -> Result<(), DiskLogError> {
        if pending.is_empty() {
            return Ok(());
        }
        let path = self.segment_path();
        self.segment
            .write_all(pending)
            .and_then(|()| ledger::sync_file(&self.segment, &path, SyncPoint::Append, true))
            .map_err(|e| io_err(&path, "append", e))?;
        self.end += pending.len() as u64;
        self.offsets.append(offsets);
        pending.clear();
        Ok(())
    }

    /// Drop every entry at `from` and beyond, durably.
    fn truncate(&mut self, from: Position) -> Result<(), DiskLogError> {
        assert!(from >= 1, "invariant broken: truncate from position 0");
        let Some(&offset) = self.offsets.get((from - 1) as usize) else {
            return Ok(());
        };
        let path = self.segment_path();
        self.segment
            .set_len(offset)
            .and_then(|()| ledger::sync_file(&self.segment, &path, SyncPoint::Truncate, false))
            .map_err(|e| io_err(&path, "truncate", e))?;
        self.offsets.truncate((from - 1) as usize);
        self.end = offset;
        Ok(())
    }
}

impl LogStorage for DiskLog {
    /// Reads the disk again (as a restart would); a typed `DiskLogError`
    /// travels inside the `io::Error` (`get_ref().downcast_ref()`).
    fn load(&mut self) -> io::Result<DurableLog> {
        self.recover().map(|r| r.state).map_err(io::Error::other)
    }

    fn apply(&mut self, batch: &[Persist]) -> io::Result<()> {
        self.apply_batch(batch).map_err(io::Error::other)
    }
}

fn io_err(path: &Path, action: &'static str, source: io::Error) -> DiskLogError {
    DiskLogError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}
