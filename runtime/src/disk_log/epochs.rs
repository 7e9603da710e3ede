//! The fence (highest epoch seen), the seal and the checkpoint base, in a
//! small JSON file beside the segment, replaced atomically on every change.

use super::DiskLogError;
use crate::fsutil;
use livemove_impl::replica::CheckpointBase;
use livemove_impl::Epoch;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// The replica's epochs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Epochs {
    /// The highest epoch seen.
    pub fence: Epoch,
    /// The epoch sealed at.
    pub sealed: Option<Epoch>,
    /// The checkpoint base, if any (retention).
    #[serde(default)]
    pub checkpoint: Option<CheckpointBase>,
}

/// The epochs at `path`; the defaults if the file was never written.
pub fn load(path: &Path) -> Result<Epochs, DiskLogError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| DiskLogError::CorruptEpochs {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Epochs::default()),
        Err(source) => Err(DiskLogError::Io {
            path: path.to_path_buf(),
            action: "read epochs",
            source,
        }),
    }
}

/// Replace the epochs at `path` durably.
pub fn store(path: &Path, epochs: Epochs) -> Result<(), DiskLogError> {
    let mut bytes = serde_json::to_vec(&epochs).expect("invariant broken: epochs always serialize");
    bytes.push(b'\n');
    fsutil::atomic_replace(path, &bytes).map_err(|source| DiskLogError::Io {
        path: path.to_path_buf(),
        action: "replace epochs",
        source,
    })
}
