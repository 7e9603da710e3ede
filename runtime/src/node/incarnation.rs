//! The process incarnation, kept in the data directory.
//!
//! Every acknowledgement carries it, and an owner drops acknowledgements
//! older than a suspension notice's incarnation, so a number must never be
//! used by two processes: it is raised and made durable before the node
//! sends anything.

use std::io;
use std::path::Path;

/// The file's name in the data directory.
pub const INCARNATION_FILE: &str = "incarnation";

/// Raise the incarnation in `dir`: `None` on a first start (no file), else
/// the previous number plus one. The new value is durable on return.
pub fn bump(dir: &Path) -> io::Result<Option<u32>> {
    let path = dir.join(INCARNATION_FILE);
    let next = match std::fs::read_to_string(&path) {
        Ok(s) => {
            let prev: u32 = s.trim().parse().map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("`{}` is not an incarnation number: {e}", s.trim()),
                )
            })?;
            Some(prev.checked_add(1).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, "incarnation overflow")
            })?)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    crate::fsutil::atomic_replace(&path, next.unwrap_or(0).to_string().as_bytes())?;
    Ok(next)
}
