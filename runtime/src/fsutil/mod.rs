//! Small file-system steps shared by the file control plane and the disk
//! log, and the durability ledger the simulator's power losses read
//! (`ledger`).

pub mod ledger;

use ledger::SyncPoint;
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
        ledger::opened(&tmp);
        f.write_all(bytes)?;
        ledger::sync_file(&f, &tmp, SyncPoint::ReplaceFile, false)?;
    }
    fs::rename(&tmp, path)?;
    ledger::renamed(&tmp, path);
    sync_dir_of(path, SyncPoint::ReplaceDir)
}

/// Fsync the directory holding `path`, making a create, rename or removal in
/// it durable.
pub fn sync_parent_dir(path: &Path) -> io::Result<()> {
    sync_dir_of(path, SyncPoint::CreateDir)
}

fn sync_dir_of(path: &Path, point: SyncPoint) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    ledger::sync_dir(dir, point)
}
