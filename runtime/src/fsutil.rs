//! Small file-system steps shared by the file control plane and the disk log.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::Path;

/// Replace `path` with `bytes` so that a crash at any moment leaves either
/// the old file or the new one, never a mix: write a temporary file beside
/// it, fsync it, rename it over `path`, then fsync the directory so that the
/// rename itself survives the crash.
///
/// The temporary name is fixed (`<name>.tmp`): callers hold the only writer
/// of `path` (a lock or a single owner), so two replacements never share it.
pub fn atomic_replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    sync_parent_dir(path)
}

/// Fsync the directory holding `path`, making a create, rename or removal in
/// it durable.
pub fn sync_parent_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}
