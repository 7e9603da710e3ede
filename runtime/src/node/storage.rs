//! Which storage instance a data directory holds: the file `disk`, written
//! once, when the control plane registers an empty directory as a new
//! instance (`ControlPlane::register`).
//!
//! The number is the instance's disk incarnation. A node back on an empty
//! directory (its disk lost) gets the next one, so every copy the record
//! names is a disk, never just a node (note 1), and a directory left from
//! an instance the node has since replaced is refused at start.

use std::io;
use std::path::Path;

/// The file's name in the data directory.
pub const DISK_FILE: &str = "disk";

/// The instance `dir` holds: `None` when the file does not exist.
pub fn read(dir: &Path) -> io::Result<Option<u32>> {
    match std::fs::read_to_string(dir.join(DISK_FILE)) {
        Ok(s) => s.trim().parse().map(Some).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("`{}` is not a disk number: {e}", s.trim()),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Record that `dir` holds instance `disk`; durable on return.
pub fn write(dir: &Path, disk: u32) -> io::Result<()> {
    crate::fsutil::atomic_replace(&dir.join(DISK_FILE), disk.to_string().as_bytes())
}
