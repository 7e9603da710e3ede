//! Many partitions on one node: a partition's number, and where each
//! partition's coordination record lives.
//!
//! The implementation's machines know one partition; a node hosts one
//! `node::Node` per partition, each on its own data directory
//! (`<data>/p<N>`) and its own record, and every frame between nodes names
//! the partition it is for. Partitions share nothing but the node's
//! process, its sockets and its timer.

use crate::control::{ControlError, ControlPlane, EtcdConfig, EtcdControlPlane, FileControlPlane};
use livemove_impl::Mutants;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A partition's number.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Partition(pub u32);

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "p{}", self.0)
    }
}

impl Partition {
    /// The partition's data directory under a node's data directory.
    pub fn data_dir(self, node_data: &Path) -> PathBuf {
        node_data.join(self.to_string())
    }
}

/// Where the records of every partition live: one file per partition in a
/// directory (`<dir>/p<N>.json`, the embedded default), or one etcd key per
/// partition (`<prefix>/p<N>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Records {
    /// The file control plane: a directory of record files.
    Files {
        /// The directory.
        dir: PathBuf,
    },
    /// etcd: one key per partition under a prefix.
    Etcd {
        /// The client URL, such as `http://127.0.0.1:2379`.
        endpoint: String,
        /// The key prefix, such as `livemove`.
        prefix: String,
    },
}

impl Records {
    /// The control plane of partition `p`'s record. For files, the
    /// directory is created if it does not exist.
    pub fn open(&self, p: Partition) -> Result<Box<dyn ControlPlane>, ControlError> {
        self.open_with(p, Mutants::NONE)
    }

    /// `open`, with mutants switched on in the store's guards (the bug zoo).
    pub fn open_with(
        &self,
        p: Partition,
        mutants: Mutants,
    ) -> Result<Box<dyn ControlPlane>, ControlError> {
        match self {
            Records::Files { dir } => {
                std::fs::create_dir_all(dir).map_err(|source| ControlError::Io {
                    location: dir.display().to_string(),
                    action: "create the records directory",
                    source,
                })?;
                let mut plane = FileControlPlane::open(dir.join(format!("{p}.json")))?;
                plane.set_mutants(mutants);
                Ok(Box::new(plane))
            }
            Records::Etcd { endpoint, prefix } => {
                let mut plane = EtcdControlPlane::new(EtcdConfig {
                    endpoint: endpoint.clone(),
                    key: format!("{}/{p}", prefix.trim_end_matches('/')),
                });
                plane.set_mutants(mutants);
                Ok(Box::new(plane))
            }
        }
    }

    /// The name of the backend, `file` or `etcd`.
    pub fn backend(&self) -> &'static str {
        match self {
            Records::Files { .. } => "file",
            Records::Etcd { .. } => "etcd",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_is_named_and_has_its_own_directory() {
        assert_eq!(Partition(7).to_string(), "p7");
        assert_eq!(
            Partition(7).data_dir(Path::new("/d/n1")),
            PathBuf::from("/d/n1/p7")
        );
    }

    #[test]
    fn each_partition_has_its_own_record_file() {
        let dir = tempfile::tempdir().unwrap();
        let records = Records::Files {
            dir: dir.path().join("records"),
        };
        let a = records.open(Partition(0)).unwrap();
        let b = records.open(Partition(1)).unwrap();
        assert!(
            a.location().ends_with("records/p0.json"),
            "{}",
            a.location()
        );
        assert!(
            b.location().ends_with("records/p1.json"),
            "{}",
            b.location()
        );
        let e = Records::Etcd {
            endpoint: "http://127.0.0.1:1".into(),
            prefix: "lm/".into(),
        };
        assert!(e.open(Partition(3)).unwrap().location().ends_with("lm/p3"));
    }
}
