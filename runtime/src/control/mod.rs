//! The control plane: where the coordination record lives and how a guarded
//! write reaches it, behind one trait with two backends.
//!
//! - `FileControlPlane` (the default, nothing to install): the record as a
//!   JSON file, replaced atomically under an exclusive lock.
//! - `EtcdControlPlane`: the record as one etcd key; a guarded write is one
//!   etcd transaction comparing the key's mod revision.
//!
//! Both apply the same `store::Write` with the same `store::write::apply`
//! that the in-memory `CoordinationStore` uses: the control plane adds
//! durability and mutual exclusion, never protocol rules of its own. A
//! writer that read an older version gets `StoreError::StaleVersion`; no
//! backend retries behind the caller's back.
//!
//! Each backend also tells, cheaply, whether the record may have changed
//! since it last returned one (`ControlPlane::known_unchanged`), so a node
//! reads the record only when it did: the file store compares the file the
//! path names with the one it read from, held open; etcd watches the key
//! on a thread of its own (`etcd::watch`). Either answer is a hint that
//! only saves a read: every write stays guarded by the version, and a
//! stale record costs a refused write and a read, never a wrong decision.

mod crash;
mod error;
mod etcd;
mod file;

pub use crash::{kind as write_kind, step_name, BatchCrash, CrashAt, CrashAtError, CrashPoint};
pub use error::ControlError;
pub use etcd::{
    EtcdConfig, EtcdControlPlane, WatchError, WatchStatus, WATCH_BACKOFF_MS_MAX, WATCH_IDLE_MS,
};
pub use file::FileControlPlane;

use livemove_impl::store::{Record, Write};
use livemove_impl::{NodeId, Version};
use serde::{Deserialize, Serialize};

/// What the control plane handed a node's process when it started: the
/// storage instance its data directory holds and its process incarnation.
///
/// Both live in the control plane, not on the disk, because a disk can be
/// lost: a node back on an empty directory must become a new instance
/// (note 1: a copy is a storage instance, never just a node), and its
/// incarnation must still be above every one its earlier processes sent,
/// or an owner could take an old process's acknowledgement for the new
/// one's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The disk incarnation: 0 for the node's first disk, one more for
    /// each disk lost since.
    pub disk: u32,
    /// The process incarnation: 0 at the node's first start, one more at
    /// every start since, whatever disk it came back on.
    pub inc: u32,
}

impl Registration {
    /// The registration that follows `last` (the node's previous one, if
    /// any) for a data directory holding instance `disk` (`None`: an empty
    /// directory). `Err` with the registered disk when the directory holds
    /// another instance than the registered one.
    pub fn next(
        last: Option<Registration>,
        disk: Option<u32>,
    ) -> Result<Registration, Option<u32>> {
        match (last, disk) {
            (None, None) => Ok(Registration { disk: 0, inc: 0 }),
            (None, Some(_)) => Err(None),
            (Some(l), Some(d)) if d == l.disk => Ok(Registration {
                disk: d,
                inc: l.inc + 1,
            }),
            (Some(l), Some(_)) => Err(Some(l.disk)),
            (Some(l), None) => Ok(Registration {
                disk: l.disk + 1,
                inc: l.inc + 1,
            }),
        }
    }
}

/// A store of one coordination record with guarded writes.
///
/// Call order: `create` once per record (every later call returns the
/// record already there), then any number of `read`, `write` and
/// `known_unchanged`. Each instance is one writer; several instances, in
/// one process or several, may share a record, and the backend decides
/// which of two writes at the same version commits.
pub trait ControlPlane: Send {
    /// Where the record lives (a path or an endpoint and key), for messages.
    fn location(&self) -> String;

    /// Persist `initial` if no record exists yet; return the committed
    /// record (the existing one if there was one).
    fn create(&mut self, initial: &Record) -> Result<Record, ControlError>;

    /// The committed record.
    fn read(&mut self) -> Result<Record, ControlError>;

    /// Apply `write` to the record at version `expected`. Commits and returns
    /// the next record, or refuses with the record unchanged: a different
    /// committed version is `StoreError::StaleVersion` inside
    /// `ControlError::Refused`.
    fn write(&mut self, expected: Version, write: &Write) -> Result<Record, ControlError>;

    /// Whether the committed record is known to be the one this instance
    /// last returned (from `create`, `read` or a committed `write`; a
    /// refused write returns none), without reading it. `false` whenever
    /// the instance cannot tell: nothing returned yet, a change seen, a
    /// watch not (yet) up. The caller then reads.
    ///
    /// A `true` may be stale by the time a notification takes to arrive,
    /// as a read is stale once it returns: it may delay a caller's
    /// learning of a change, never hide one for good, and a write made on
    /// the strength of it is still guarded by the version. Never an error:
    /// what stops the instance from telling is the read's to report.
    fn known_unchanged(&mut self) -> bool;

    /// Register a start of node `node`'s process, whose data directory
    /// holds storage instance `disk` (`None`: the directory is empty, a
    /// first start or a lost disk). Commits and returns the next
    /// registration (`Registration::next`); a directory holding another
    /// instance than the registered one (a disk the node already replaced)
    /// is refused with `ControlError::StaleDisk`, and nothing changes.
    /// Registrations are kept beside the record, one per node.
    fn register(&mut self, node: NodeId, disk: Option<u32>) -> Result<Registration, ControlError>;
}
