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

mod error;
mod etcd;
mod file;

pub use error::ControlError;
pub use etcd::{EtcdConfig, EtcdControlPlane};
pub use file::FileControlPlane;

use livemove_impl::store::{Record, Write};
use livemove_impl::Version;

/// A store of one coordination record with guarded writes.
///
/// Call order: `create` once per record (every later call returns the
/// record already there), then any number of `read` and `write`. Each
/// instance is one writer; several instances, in one process or several,
/// may share a record, and the backend decides which of two writes at the
/// same version commits.
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
}
