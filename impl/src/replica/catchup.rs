//! Learner catch-up from a checkpoint bound to a log boundary, then the log
//! tail (note 2, "How a target replica rejects gaps and late snapshots").
//!
//! The strategy is serial: replay starts only once the checkpoint is fully
//! installed, and a second or late checkpoint is refused once it is, so an
//! old checkpoint can never overwrite replayed state (x never regresses, a
//! deleted y never comes back) and deletes need no lasting tombstones.
//! Positions within one task and source log identity are immutable: a
//! position from another task or another source log is refused, never
//! taken as already processed.
//!
//! This is note 2's `Target` over a key-value map, standalone: the replica's
//! own log carries the checkpoint semantics the cluster uses (a checkpoint
//! base bound to an epoch tag, install refused by a copy holding its entry,
//! no append cutting into it: `retention.rs`).

use crate::entry::Op;
use crate::ids::{Epoch, Position, StorageId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A catch-up task id, chosen by the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaskId(pub u64);

/// The identity of the source log: which storage instance, under which epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LogIdentity {
    /// The source storage instance.
    pub storage: StorageId,
    /// The epoch of the history it serves.
    pub epoch: Epoch,
}

/// A consistent checkpoint of the queue state at log position `boundary`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The task the checkpoint belongs to.
    pub task: TaskId,
    /// The log the checkpoint was cut from.
    pub source: LogIdentity,
    /// The position the state covers.
    pub boundary: Position,
    /// `checksum(boundary, data)` as computed by the source.
    pub checksum: u64,
    /// The state: message key to body.
    pub data: BTreeMap<u64, u64>,
}

/// A refused checkpoint or replay; the catch-up state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatchUpError {
    /// A checkpoint is already installed for this task; overwriting would
    /// lose replayed increments.
    #[error("checkpoint already installed at {position}; cannot overwrite")]
    CheckpointAlreadyInstalled {
        /// The position the target has reached.
        position: Position,
    },
    /// Replay before the checkpoint is fully installed.
    #[error("install the checkpoint first")]
    NoCheckpoint,
    /// The replayed position skips one.
    #[error("log gap: expected {expected}, got {got}")]
    LogGap {
        /// The next position.
        expected: Position,
        /// The position offered.
        got: Position,
    },
    /// The record at the position is missing from the source log (a gap
    /// left by `replay_accepts_gap`): there is nothing to apply, and
    /// skipping it would be a gap.
    #[error("the record at {pos} is missing from the source log")]
    MissingRecord {
        /// The position offered.
        pos: Position,
    },
    /// Input from another catch-up task.
    #[error("task {got:?} is not this task {expected:?}")]
    WrongTask {
        /// This task.
        expected: TaskId,
        /// The task named by the input.
        got: TaskId,
    },
    /// Input from another source log.
    #[error("source log {got:?} is not this task's {expected:?}")]
    WrongSource {
        /// This task's source.
        expected: LogIdentity,
        /// The source named by the input.
        got: LogIdentity,
    },
    /// The checkpoint's data does not match its checksum.
    #[error("checksum mismatch: expected {expected:#x}, computed {computed:#x}")]
    ChecksumMismatch {
        /// The checksum shipped with the checkpoint.
        expected: u64,
        /// The checksum of the data received.
        computed: u64,
    },
}

/// FNV-1a over the boundary and the sorted state: what source and target
/// both compute.
pub fn checksum(boundary: Position, data: &BTreeMap<u64, u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(boundary);
    for (k, v) in data {
        eat(*k);
        eat(*v);
    }
    h
}

/// The target side of one catch-up task (note 2's `Target`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatchUp {
    task: TaskId,
    source: LogIdentity,
    position: Option<Position>,
    data: BTreeMap<u64, u64>,
}

impl CatchUp {
    /// A task that has received nothing yet.
    pub fn new(task: TaskId, source: LogIdentity) -> Self {
        CatchUp {
            task,
            source,
            position: None,
            data: BTreeMap::new(),
        }
    }

    /// The position applied so far (`None` before the checkpoint).
    pub fn position(&self) -> Option<Position> {
        self.position
    }

    /// The applied state.
    pub fn data(&self) -> &BTreeMap<u64, u64> {
        &self.data
    }

    fn check(&self, task: TaskId, source: LogIdentity) -> Result<(), CatchUpError> {
        if task != self.task {
            return Err(CatchUpError::WrongTask {
                expected: self.task,
                got: task,
            });
        }
        if source != self.source {
            return Err(CatchUpError::WrongSource {
                expected: self.source,
                got: source,
            });
        }
        Ok(())
    }

    /// Install the checkpoint; only once per task, before any replay.
    pub fn install_checkpoint(&mut self, cp: &Checkpoint) -> Result<(), CatchUpError> {
        self.check(cp.task, cp.source)?;
        if let Some(position) = self.position {
            return Err(CatchUpError::CheckpointAlreadyInstalled { position });
        }
        let computed = checksum(cp.boundary, &cp.data);
        if computed != cp.checksum {
            return Err(CatchUpError::ChecksumMismatch {
                expected: cp.checksum,
                computed,
            });
        }
        self.data = cp.data.clone();
        self.position = Some(cp.boundary);
        tracing::debug!(
            task = cp.task.0,
            boundary = cp.boundary,
            "checkpoint installed"
        );
        Ok(())
    }

    /// Replay the log record at `pos`. `Ok(false)` for a position already
    /// applied under this task and source log (idempotent), `Ok(true)` when
    /// applied.
    pub fn replay(
        &mut self,
        task: TaskId,
        source: LogIdentity,
        pos: Position,
        op: Op,
    ) -> Result<bool, CatchUpError> {
        self.check(task, source)?;
        let at = self.position.ok_or(CatchUpError::NoCheckpoint)?;
        if pos <= at {
            return Ok(false);
        }
        if pos != at + 1 {
            return Err(CatchUpError::LogGap {
                expected: at + 1,
                got: pos,
            });
        }
        if op == Op::Missing {
            return Err(CatchUpError::MissingRecord { pos });
        }
        // Data and position change together: one step, nothing in between.
        match op {
            Op::Put { key, value } => {
                self.data.insert(key, value);
            }
            Op::Delete { key } => {
                self.data.remove(&key);
            }
            Op::Missing => unreachable!("refused above"),
        }
        self.position = Some(pos);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeId;

    const X: u64 = 1;
    const Y: u64 = 2;
    const Z: u64 = 3;

    fn task() -> (TaskId, LogIdentity) {
        (
            TaskId(7),
            LogIdentity {
                storage: StorageId::first(NodeId(1)),
                epoch: Epoch(1),
            },
        )
    }

    fn checkpoint_at_10() -> Checkpoint {
        let (t, s) = task();
        let data: BTreeMap<u64, u64> = [(X, 1), (Y, 9)].into();
        Checkpoint {
            task: t,
            source: s,
            boundary: 10,
            checksum: checksum(10, &data),
            data,
        }
    }

    /// Note 2's `Target` example, line by line.
    #[test]
    fn note2_target_rejects_gaps_and_late_snapshots() {
        let (t, s) = task();
        let mut target = CatchUp::new(t, s);
        target.install_checkpoint(&checkpoint_at_10()).unwrap();
        assert_eq!(
            target.replay(t, s, 11, Op::Put { key: X, value: 2 }),
            Ok(true)
        );
        assert_eq!(
            target.replay(t, s, 11, Op::Put { key: X, value: 2 }),
            Ok(false)
        );
        assert_eq!(
            target.replay(t, s, 13, Op::Put { key: Z, value: 3 }),
            Err(CatchUpError::LogGap {
                expected: 12,
                got: 13
            })
        );
        assert_eq!(target.position(), Some(11));
        assert!(!target.data().contains_key(&Z));
        assert_eq!(target.replay(t, s, 12, Op::Delete { key: Y }), Ok(true));
        assert_eq!(target.data(), &BTreeMap::from([(X, 2)]));
        assert_eq!(
            target.install_checkpoint(&checkpoint_at_10()),
            Err(CatchUpError::CheckpointAlreadyInstalled { position: 12 })
        );
        assert_eq!(target.data(), &BTreeMap::from([(X, 2)]));
        assert_eq!(target.position(), Some(12));
    }

    #[test]
    fn replay_before_checkpoint_is_refused() {
        let (t, s) = task();
        let mut target = CatchUp::new(t, s);
        assert_eq!(
            target.replay(t, s, 1, Op::Delete { key: X }),
            Err(CatchUpError::NoCheckpoint)
        );
    }

    #[test]
    fn checkpoint_with_bad_checksum_is_refused() {
        let (t, s) = task();
        let mut target = CatchUp::new(t, s);
        let mut cp = checkpoint_at_10();
        cp.data.insert(Z, 5);
        assert!(matches!(
            target.install_checkpoint(&cp),
            Err(CatchUpError::ChecksumMismatch { .. })
        ));
        assert_eq!(target.position(), None);
    }

    #[test]
    fn position_from_another_task_or_source_is_not_taken_as_processed() {
        let (t, s) = task();
        let mut target = CatchUp::new(t, s);
        target.install_checkpoint(&checkpoint_at_10()).unwrap();
        let other_source = LogIdentity {
            epoch: Epoch(2),
            ..s
        };
        assert!(matches!(
            target.replay(TaskId(8), s, 11, Op::Delete { key: X }),
            Err(CatchUpError::WrongTask { .. })
        ));
        assert!(matches!(
            target.replay(t, other_source, 5, Op::Delete { key: X }),
            Err(CatchUpError::WrongSource { .. })
        ));
        assert_eq!(target.data().get(&X), Some(&1));
    }
}
