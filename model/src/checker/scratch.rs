//! Scratch files for what the checker spills to disk (frontier segments,
//! the edge stream).

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A new file in the temporary directory, named after `kind`, the process
/// and a counter, and unlinked at once: its space is freed when the handle
/// is dropped or the process ends, however it ends.
pub(crate) fn unlinked(kind: &str) -> io::Result<File> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "livemove-{kind}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let f = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(f)
}
