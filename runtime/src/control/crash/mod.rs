//! Crash points: a process that kills itself with SIGKILL at a chosen
//! guarded-write boundary, or inside one of its nodes' `Persist` batches
//! (`batch`), to test what a `kill -9` at that moment leaves.
//!
//! A `CrashPoint` is one process's (a node's or the controller's): every
//! partition's control plane is wrapped (`CrashPoint::wrap`) and shares
//! its count, so the K-th write is the K-th the process made across all of
//! its partitions. Only writes the store commits are counted: a refused
//! write changes nothing, and how many a process makes depends on races
//! between processes (two copies sealing at one version), so counting them
//! would make K name a different write from run to run.
//!
//! - `before:K`: right before the K-th committed write is sent. The wrapper
//!   reads the record and applies the write to it with the store's own
//!   rules (`store::write::apply`); when it would commit, the process dies
//!   without sending it. A write that would be refused is sent (it is
//!   refused: versions only grow) and not counted.
//! - `after:K`: right after the store committed the K-th write, before the
//!   caller (the node or the controller) learns the result.
//! - `persist:K[:S]`: inside the K-th `Persist` batch of more than S
//!   steps (S is 1 unless given) that the process's nodes make durable,
//!   counted across its partitions: its first S steps are applied (each
//!   durable, as the disk log applies a whole batch), the rest are not,
//!   and nothing of it has been acknowledged (`batch`). Only a node has
//!   batches; the guarded writes are named as for `count`.
//! - `count`: never dies; names every committed write.
//!
//! Every committed write is named on stderr (`crash-point <who>: write K
//! committed: <Kind> <partition>`), and the write the process dies at
//! (`crash-point <who>: SIGKILL before|after write K: <Kind> <partition>`),
//! so a test can tell where a process died; a death inside a batch names
//! the steps applied and those not (`crash-point <who>: SIGKILL inside
//! batch K after S of N steps: applied [append@5] not applied [append@6]
//! <partition>`). Nothing of this runs unless a
//! process was started with a crash point (`livemove node --crash-at`,
//! `livemove controller --crash-at`): without one no plane is wrapped.

mod batch;

pub use batch::{step_name, BatchCrash};

use super::{ControlError, ControlPlane, Registration};
use livemove_impl::store::{write::apply, Record, Write};
use livemove_impl::{Mutants, NodeId, Version};
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};

/// Where a process dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashAt {
    /// Never: name every committed write on stderr (to count them).
    Count,
    /// Right before the K-th write the store would commit is sent.
    Before(u64),
    /// Right after the store committed the K-th write, before the process
    /// learns it.
    After(u64),
    /// Inside the `batch`-th `Persist` batch of more than `steps` steps,
    /// after its first `steps` steps were applied.
    Persist {
        /// Which batch of more than `steps` steps, from 1.
        batch: u64,
        /// The steps applied before the process dies, from 1.
        steps: u64,
    },
}

/// A crash point that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CrashAtError {
    /// Not one of the forms.
    #[error("`{0}`: expected `before:K`, `after:K`, `persist:K`, `persist:K:S` or `count`")]
    Form(String),
    /// K is not a count from 1.
    #[error("`{given}`: K must be a whole number from 1 up, not `{k}`")]
    K {
        /// The whole value given.
        given: String,
        /// Its K.
        k: String,
    },
    /// S of `persist:K:S` is not a count from 1.
    #[error("`{given}`: S (the steps applied before the kill) must be a whole number from 1 up, not `{steps}`")]
    Steps {
        /// The whole value given.
        given: String,
        /// Its S.
        steps: String,
    },
}

impl FromStr for CrashAt {
    type Err = CrashAtError;

    fn from_str(s: &str) -> Result<CrashAt, CrashAtError> {
        if s == "count" {
            return Ok(CrashAt::Count);
        }
        let (when, rest) = s
            .split_once(':')
            .ok_or_else(|| CrashAtError::Form(s.to_string()))?;
        let (k, steps) = match (when, rest.split_once(':')) {
            ("persist", Some((k, steps))) => (k, Some(steps)),
            _ => (rest, None),
        };
        let count = |v: &str| v.parse::<u64>().ok().filter(|n| *n >= 1);
        let n = count(k).ok_or_else(|| CrashAtError::K {
            given: s.to_string(),
            k: k.to_string(),
        })?;
        match when {
            "before" => Ok(CrashAt::Before(n)),
            "after" => Ok(CrashAt::After(n)),
            "persist" => {
                let steps = match steps {
                    None => 1,
                    Some(v) => count(v).ok_or_else(|| CrashAtError::Steps {
                        given: s.to_string(),
                        steps: v.to_string(),
                    })?,
                };
                Ok(CrashAt::Persist { batch: n, steps })
            }
            _ => Err(CrashAtError::Form(s.to_string())),
        }
    }
}

impl std::fmt::Display for CrashAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CrashAt::Count => write!(f, "count"),
            CrashAt::Before(k) => write!(f, "before:{k}"),
            CrashAt::After(k) => write!(f, "after:{k}"),
            CrashAt::Persist { batch, steps: 1 } => write!(f, "persist:{batch}"),
            CrashAt::Persist { batch, steps } => write!(f, "persist:{batch}:{steps}"),
        }
    }
}

/// One process's crash point, shared by the control planes of all its
/// partitions (clones share the count).
#[derive(Clone, Debug)]
pub struct CrashPoint {
    at: CrashAt,
    who: String,
    committed: Arc<Mutex<u64>>,
    /// `Persist` batches of more than `persist:K:S`'s S steps made durable
    /// so far.
    batches: Arc<Mutex<u64>>,
}

impl CrashPoint {
    /// The crash point `at` of the process named `who` (`n2`,
    /// `controller`), as its stderr lines name it.
    pub fn new(at: CrashAt, who: impl Into<String>) -> CrashPoint {
        CrashPoint {
            at,
            who: who.into(),
            committed: Arc::new(Mutex::new(0)),
            batches: Arc::new(Mutex::new(0)),
        }
    }

    /// Where this point dies.
    pub fn at(&self) -> CrashAt {
        self.at
    }

    /// `inner`, the control plane of the record named `label` (the
    /// partition), counted and crashed at by this point. `mutants` are
    /// those of `inner`'s guards, for the check of `before:K`.
    pub fn wrap(
        &self,
        label: impl Into<String>,
        inner: Box<dyn ControlPlane>,
        mutants: Mutants,
    ) -> Box<dyn ControlPlane> {
        Box::new(Crashing {
            inner,
            point: self.clone(),
            label: label.into(),
            mutants,
            read_behind: false,
        })
    }

    /// Writes committed so far through the planes of this point.
    pub fn committed(&self) -> u64 {
        *self
            .committed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn die(&self, when: &str, k: u64, write: &Write, label: &str) -> ! {
        eprintln!(
            "crash-point {}: SIGKILL {when} write {k}: {} {label}",
            self.who,
            kind(write)
        );
        kill_self()
    }
}

/// Send this process SIGKILL.
fn kill_self() -> ! {
    // SIGKILL cannot be caught or blocked: no destructor, no flush, no
    // exit handler runs, as with `kill -9` from outside. Sent to the
    // calling process, it is delivered before `kill` returns.
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    std::process::abort()
}

/// A control plane counted and crashed at by a `CrashPoint`.
struct Crashing {
    inner: Box<dyn ControlPlane>,
    point: CrashPoint,
    label: String,
    mutants: Mutants,
    /// `would_commit` read the record through `inner` and kept it from
    /// the caller: `inner`'s last returned record may not be the caller's
    /// until `inner` returns one to the caller again.
    read_behind: bool,
}

impl Crashing {
    /// Whether the store would commit `write` at `expected` now.
    fn would_commit(&mut self, expected: Version, write: &Write) -> Result<bool, ControlError> {
        self.read_behind = true;
        let r = self.inner.read()?;
        Ok(r.version == expected && apply(&r, write, self.mutants).is_ok())
    }
}

impl ControlPlane for Crashing {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn create(&mut self, initial: &Record) -> Result<Record, ControlError> {
        let r = self.inner.create(initial)?;
        self.read_behind = false;
        Ok(r)
    }

    fn read(&mut self) -> Result<Record, ControlError> {
        let r = self.inner.read()?;
        self.read_behind = false;
        Ok(r)
    }

    fn write(&mut self, expected: Version, write: &Write) -> Result<Record, ControlError> {
        // Held through the write: the partitions of a process count in one
        // order.
        let count = Arc::clone(&self.point.committed);
        let mut committed = count.lock().unwrap_or_else(PoisonError::into_inner);
        let k = *committed + 1;
        if self.point.at == CrashAt::Before(k) && self.would_commit(expected, write)? {
            self.point.die("before", k, write, &self.label);
        }
        let result = self.inner.write(expected, write);
        if result.is_ok() {
            self.read_behind = false;
            *committed = k;
            eprintln!(
                "crash-point {}: write {k} committed: {} {}",
                self.point.who,
                kind(write),
                self.label
            );
            if self.point.at == CrashAt::After(k) {
                self.point.die("after", k, write, &self.label);
            }
        }
        result
    }

    fn known_unchanged(&mut self) -> bool {
        !self.read_behind && self.inner.known_unchanged()
    }

    fn register(&mut self, node: NodeId, disk: Option<u32>) -> Result<Registration, ControlError> {
        self.inner.register(node, disk)
    }
}

/// The name of a write's kind, as the trace and the protocol name it.
pub fn kind(write: &Write) -> &'static str {
    match write {
        Write::AddLearner { .. } => "AddLearner",
        Write::AdmitLearner { .. } => "AdmitLearner",
        Write::Swap { .. } => "Swap",
        Write::PromoteLearner { .. } => "PromoteLearner",
        Write::OwnerSwitch { .. } => "OwnerSwitch",
        Write::RemoveLeaving { .. } => "RemoveLeaving",
        Write::CancelMove => "CancelMove",
        Write::AbortMove { .. } => "AbortMove",
        Write::SwapBack { .. } => "SwapBack",
        Write::CloseAdmission { .. } => "CloseAdmission",
        Write::ReportFinalBoundary { .. } => "ReportFinalBoundary",
        Write::CommitHandoff { .. } => "CommitHandoff",
        Write::ActivateOwner => "ActivateOwner",
        Write::CancelHandoff => "CancelHandoff",
        Write::AbortHandoff { .. } => "AbortHandoff",
        Write::Suspend { .. } => "Suspend",
        Write::MarkLost { .. } => "MarkLost",
        Write::Rejoin { .. } => "Rejoin",
        Write::OpenRecovery => "OpenRecovery",
        Write::Seal { .. } => "Seal",
        Write::InstallRecovered { .. } => "InstallRecovered",
        Write::ActivateRecovery { .. } => "ActivateRecovery",
        Write::Pause => "Pause",
        Write::Resume => "Resume",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_points_parse_and_bad_ones_are_named() {
        assert_eq!("before:3".parse(), Ok(CrashAt::Before(3)));
        assert_eq!("after:12".parse(), Ok(CrashAt::After(12)));
        assert_eq!("count".parse(), Ok(CrashAt::Count));
        for ok in ["before:3", "after:12", "count"] {
            assert_eq!(ok.parse::<CrashAt>().unwrap().to_string(), ok);
        }
        assert_eq!(
            "before:0".parse::<CrashAt>(),
            Err(CrashAtError::K {
                given: "before:0".into(),
                k: "0".into()
            })
        );
        assert!(matches!(
            "after:x".parse::<CrashAt>(),
            Err(CrashAtError::K { .. })
        ));
        assert_eq!(
            "during:3".parse::<CrashAt>(),
            Err(CrashAtError::Form("during:3".into()))
        );
        assert_eq!(
            "3".parse::<CrashAt>().unwrap_err().to_string(),
            "`3`: expected `before:K`, `after:K`, `persist:K`, `persist:K:S` or `count`"
        );
    }

    #[test]
    fn persist_points_parse_with_s_one_unless_given_and_bad_ones_are_named() {
        assert_eq!(
            "persist:2".parse(),
            Ok(CrashAt::Persist { batch: 2, steps: 1 })
        );
        assert_eq!(
            "persist:1:3".parse(),
            Ok(CrashAt::Persist { batch: 1, steps: 3 })
        );
        for ok in ["persist:2", "persist:1:3"] {
            assert_eq!(ok.parse::<CrashAt>().unwrap().to_string(), ok);
        }
        assert_eq!(
            "persist:4:1".parse::<CrashAt>().unwrap().to_string(),
            "persist:4"
        );
        assert_eq!(
            "persist:0".parse::<CrashAt>(),
            Err(CrashAtError::K {
                given: "persist:0".into(),
                k: "0".into()
            })
        );
        assert_eq!(
            "persist:2:0".parse::<CrashAt>(),
            Err(CrashAtError::Steps {
                given: "persist:2:0".into(),
                steps: "0".into()
            })
        );
        assert_eq!(
            "persist:2:x".parse::<CrashAt>().unwrap_err().to_string(),
            "`persist:2:x`: S (the steps applied before the kill) must be a whole number from 1 up, not `x`"
        );
        assert_eq!(
            "persist::1".parse::<CrashAt>(),
            Err(CrashAtError::K {
                given: "persist::1".into(),
                k: "".into()
            })
        );
        // Only `persist` takes an S.
        assert_eq!(
            "before:2:1".parse::<CrashAt>(),
            Err(CrashAtError::K {
                given: "before:2:1".into(),
                k: "2:1".into()
            })
        );
        assert_eq!(
            "persist".parse::<CrashAt>(),
            Err(CrashAtError::Form("persist".into()))
        );
    }

    #[test]
    fn only_committed_writes_are_counted_across_the_planes_of_a_process() {
        use crate::control::FileControlPlane;
        use livemove_impl::StorageId;
        let dir = tempfile::tempdir().unwrap();
        let point = CrashPoint::new(CrashAt::Count, "n1");
        let s = |n| StorageId::first(NodeId(n));
        let mut planes: Vec<Box<dyn ControlPlane>> = (0..2)
            .map(|p| {
                let inner = FileControlPlane::open(dir.path().join(format!("p{p}.json"))).unwrap();
                point.wrap(format!("p{p}"), Box::new(inner), Mutants::NONE)
            })
            .collect();
        for plane in planes.iter_mut() {
            let r = plane
                .create(&Record::initial(s(1), [s(2), s(3)], 3))
                .unwrap();
            plane
                .write(r.version, &Write::Suspend { storage: s(2) })
                .unwrap();
            // Stale: refused, not counted.
            assert!(plane
                .write(r.version, &Write::Suspend { storage: s(3) })
                .is_err());
        }
        assert_eq!(point.committed(), 2);
    }

    /// `before:K` reads the record behind its caller to judge the K-th
    /// write: when that write is refused, the caller still holds the older
    /// record, so the wrapper must not pass on its inner plane's "unchanged"
    /// (which now speaks of the record read behind the caller).
    #[test]
    fn a_read_behind_the_caller_is_not_taken_for_the_callers_record() {
        use crate::control::FileControlPlane;
        use livemove_impl::StorageId;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p0.json");
        let s = |n| StorageId::first(NodeId(n));
        let point = CrashPoint::new(CrashAt::Before(1), "n1");
        let inner = FileControlPlane::open(&path).unwrap();
        let mut plane = point.wrap("p0", Box::new(inner), Mutants::NONE);
        let r = plane
            .create(&Record::initial(s(1), [s(2), s(3)], 3))
            .unwrap();
        assert!(plane.known_unchanged(), "forwarded: the record it created");
        let mut other = FileControlPlane::open(&path).unwrap();
        other.write(r.version, &Write::Pause).unwrap();
        assert!(!plane.known_unchanged(), "another writer's write");
        // The first write, judged by reading behind the caller: stale, so
        // it is sent, refused and not counted, and the process lives.
        let err = plane.write(r.version, &Write::Pause).unwrap_err();
        assert!(err.stale_version().is_some(), "{err}");
        assert!(
            !plane.known_unchanged(),
            "the caller still holds version {}",
            r.version
        );
        assert!(plane.read().unwrap().paused);
        assert!(plane.known_unchanged(), "read by the caller");
        assert_eq!(point.committed(), 0);
    }
}
