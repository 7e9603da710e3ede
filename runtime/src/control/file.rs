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

use super::{ControlError, ControlPlane, Registration};
use crate::fsutil;
use fd_lock::RwLock;
use livemove_impl::store::{self, Record, StoreError, Write};
use livemove_impl::{Mutants, NodeId, Version};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// The coordination record in a file, guarded by a lock file.
#[derive(Debug)]
pub struct FileControlPlane {
    path: PathBuf,
    lock: RwLock<File>,
    mutants: Mutants,
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
        if let Some(existing) = load(&self.path)? {
            return Ok(existing);
        }
        persist(&self.path, initial)?;
        tracing::info!(path = %self.path.display(), version = %initial.version, "record created");
        Ok(initial.clone())
    }

    fn read(&mut self) -> Result<Record, ControlError> {
        load(&self.path)?.ok_or_else(|| ControlError::NotCreated {
            location: self.location(),
        })
    }

    fn write(&mut self, expected: Version, write: &Write) -> Result<Record, ControlError> {
        let location = self.location();
        let mutants = self.mutants;
        let _guard = self
            .lock
            .write()
            .map_err(|e| io_error(&self.path, "lock", e))?;
        let current = load(&self.path)?.ok_or_else(|| ControlError::NotCreated {
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
        persist(&self.path, &next)?;
        tracing::debug!(action = write.action(), version = %next.version, "committed");
        Ok(next)
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

/// The committed record, `None` if the file does not exist.
fn load(path: &Path) -> Result<Option<Record>, ControlError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, "read", e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| ControlError::Corrupt {
            location: path.display().to_string(),
            reason: e.to_string(),
        })
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
