//! The embedded control plane: the record as one JSON file.
//!
//! A guarded write takes an exclusive `flock` on a lock file beside the
//! record (released by the kernel if the process dies, so a `kill -9`
//! leaves no stale lock), reads the committed record, compares versions,
//! applies the write and replaces the file atomically (`fsutil`). Readers
//! take no lock: the rename makes every read see one whole record.
//! Registrations (`ControlPlane::register`) live in `<record>.nodes.json`
//! beside it, a JSON object from node name to registration, written the
//! same way under the same lock.
//!
//! `known_unchanged`: the plane keeps open the file it last returned a
//! record from (read through that descriptor, or opened under the lock
//! right after its own write), and compares what the path names now
//! with it: device, inode, length, modification and change times. Every
//! write replaces the file by a rename, so a change is a different inode
//! at the path; and while the old file is held open its inode number
//! cannot be handed to another file, so the new one can never pass for
//! it, however coarse the file system's timestamps. The times and the
//! length catch an edit in place by hand (a writer outside this module),
//! as far as the timestamps' granularity allows. This holds on a local
//! file system; on a network one (NFS) the attributes of the path can be
//! cached and a change seen late, which the node's periodic re-read
//! bounds.

use super::{ControlError, ControlPlane, Registration};
use crate::fsutil;
use fd_lock::RwLock;
use livemove_impl::store::{self, Record, StoreError, Write};
use livemove_impl::{Mutants, NodeId, Version};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The coordination record in a file, guarded by a lock file.
#[derive(Debug)]
pub struct FileControlPlane {
    path: PathBuf,
    lock: RwLock<File>,
    mutants: Mutants,
    /// The file the record this plane last returned came from.
    held: Option<Held>,
}

/// A record file held open (its inode number stays its own while it is),
/// and its stamp when the record was read from it or written to it.
#[derive(Debug)]
struct Held {
    _file: File,
    stamp: Stamp,
}

/// What `known_unchanged` compares: the identity of a file and the
/// attributes an in-place change would move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

impl FileControlPlane {
    /// The record at `path` (created by `create`), locked through
    /// `<path>.lock`. The parent directory must exist.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ControlError> {
        let path = path.into();
        let mut lock_name = path.file_name().unwrap_or_default().to_os_string();
        lock_name.push(".lock");
        let lock_path = path.with_file_name(lock_name);
        let lock_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_error(&lock_path, "open lock file", e))?;
        Ok(FileControlPlane {
            path,
            lock: RwLock::new(lock_file),
            mutants: Mutants::default(),
            held: None,
        })
    }

    /// Switch mutants on (they relax the store's guards, for the bug zoo).
    pub fn set_mutants(&mut self, mutants: Mutants) {
        self.mutants = mutants;
    }

    /// The record file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The registrations file beside the record.
    pub fn registrations_path(&self) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".nodes.json");
        self.path.with_file_name(name)
    }
}

impl ControlPlane for FileControlPlane {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn create(&mut self, initial: &Record) -> Result<Record, ControlError> {
        let _guard = self
            .lock
            .write()
            .map_err(|e| io_error(&self.path, "lock", e))?;
        if let Some((existing, held)) = load(&self.path)? {
            self.held = Some(held);
            return Ok(existing);
        }
        self.held = None;
        persist(&self.path, initial)?;
        self.held = Some(hold_own(&self.path)?);
        tracing::info!(path = %self.path.display(), version = %initial.version, "record created");
        Ok(initial.clone())
    }

    fn read(&mut self) -> Result<Record, ControlError> {
        let (record, held) = load(&self.path)?.ok_or_else(|| ControlError::NotCreated {
            location: self.location(),
        })?;
        self.held = Some(held);
        Ok(record)
    }

    fn write(&mut self, expected: Version, write: &Write) -> Result<Record, ControlError> {
        let location = self.location();
        let mutants = self.mutants;
        let _guard = self
            .lock
            .write()
            .map_err(|e| io_error(&self.path, "lock", e))?;
        // Read under the lock for the check, not returned: `held` stays
        // the file of the record the caller holds.
        let (current, _) = load(&self.path)?.ok_or_else(|| ControlError::NotCreated {
            location: location.clone(),
        })?;
        if current.version != expected {
            return Err(ControlError::Refused {
                location,
                source: StoreError::StaleVersion {
                    expected,
                    found: current.version,
                },
            });
        }
        let next = store::write::apply(&current, write, mutants)
            .map_err(|source| ControlError::Refused { location, source })?;
        // From here the file may be the new one whatever happens next.
        self.held = None;
        persist(&self.path, &next)?;
        self.held = Some(hold_own(&self.path)?);
        tracing::debug!(action = write.action(), version = %next.version, "committed");
        Ok(next)
    }

    fn known_unchanged(&mut self) -> bool {
        let Some(held) = &self.held else {
            return false;
        };
        // An error (the file gone, say) is the next read's to report.
        fs::metadata(&self.path).is_ok_and(|m| Stamp::of(&m) == held.stamp)
    }

    fn register(&mut self, node: NodeId, disk: Option<u32>) -> Result<Registration, ControlError> {
        let path = self.registrations_path();
        let _guard = self
            .lock
            .write()
            .map_err(|e| io_error(&self.path, "lock", e))?;
        register_in(&path, node, disk)
    }
}

/// Register node `node` in the registrations file `path` (the caller holds
/// the lock).
fn register_in(path: &Path, node: NodeId, disk: Option<u32>) -> Result<Registration, ControlError> {
    let mut all: BTreeMap<String, Registration> = match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| ControlError::Corrupt {
            location: path.display().to_string(),
            reason: e.to_string(),
        })?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeMap::new(),
        Err(e) => return Err(io_error(path, "read", e)),
    };
    let name = node.to_string();
    let next = Registration::next(all.get(&name).copied(), disk).map_err(|registered| {
        ControlError::StaleDisk {
            location: path.display().to_string(),
            node,
            disk: disk.unwrap_or_default(),
            registered,
        }
    })?;
    all.insert(name, next);
    let mut bytes = serde_json::to_vec_pretty(&all)
        .expect("invariant broken: registrations always serialize to JSON");
    bytes.push(b'\n');
    fsutil::atomic_replace(path, &bytes).map_err(|e| io_error(path, "replace", e))?;
    Ok(next)
}

/// The committed record, `None` if the file does not exist, and the file
/// it was read from, open, with its stamp: the bytes and the stamp are of
/// one inode whatever renames happen meanwhile.
fn load(path: &Path) -> Result<Option<(Record, Held)>, ControlError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, "open", e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "read", e))?;
    let stamp = Stamp::of(&file.metadata().map_err(|e| io_error(path, "stat", e))?);
    let record = serde_json::from_slice(&bytes).map_err(|e| ControlError::Corrupt {
        location: path.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(Some((record, Held { _file: file, stamp })))
}

/// The record file this plane just wrote, held: called under the lock,
/// so no other writer can have replaced it since.
fn hold_own(path: &Path) -> Result<Held, ControlError> {
    let file = File::open(path).map_err(|e| io_error(path, "open", e))?;
    let stamp = Stamp::of(&file.metadata().map_err(|e| io_error(path, "stat", e))?);
    Ok(Held { _file: file, stamp })
}

fn persist(path: &Path, record: &Record) -> Result<(), ControlError> {
    let mut bytes = serde_json::to_vec_pretty(record)
        .expect("invariant broken: a record always serializes to JSON");
    bytes.push(b'\n');
    fsutil::atomic_replace(path, &bytes).map_err(|e| io_error(path, "replace", e))
}

fn io_error(path: &Path, action: &'static str, source: io::Error) -> ControlError {
    ControlError::Io {
        location: path.display().to_string(),
        action,
        source,
    }
}
