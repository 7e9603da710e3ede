//! `persist:K[:S]`: a node process that dies inside one of its `Persist`
//! batches, after the batch's first S steps are durable and before the
//! rest, as a `kill -9` can land between two steps of the disk log's
//! `apply_batch` (each step is durable before the next: the module comment
//! of `disk_log`). Nothing of the batch is acknowledged then: the node
//! sends nothing that depends on a batch before the batch returns.
//!
//! Only batches of more than S steps count: with S applied there is a
//! step left not to apply. The count is the process's, shared by the
//! nodes of all its partitions like the guarded writes' count.

use super::{kill_self, CrashAt, CrashPoint};
use livemove_impl::replica::Persist;
use std::sync::PoisonError;

/// A crash point's hold on the `Persist` batches of one partition's node.
#[derive(Clone, Debug)]
pub struct BatchCrash {
    point: CrashPoint,
    label: String,
}

impl CrashPoint {
    /// This point's hold on the batches of the node of the partition named
    /// `label`, as its stderr line names it.
    pub fn batches(&self, label: impl Into<String>) -> BatchCrash {
        BatchCrash {
            point: self.clone(),
            label: label.into(),
        }
    }
}

impl BatchCrash {
    /// Make `batch` durable with `apply`; when it is the batch the point
    /// dies inside, apply only its first S steps with `apply` and kill the
    /// process (a disk error on those steps is returned instead, as it
    /// would be without the point).
    pub fn apply<E>(
        &self,
        batch: &[Persist],
        apply: impl FnOnce(&[Persist]) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some((k, steps)) = self.cut(batch.len()) else {
            return apply(batch);
        };
        let (applied, rest) = batch.split_at(steps);
        apply(applied)?;
        let names = |ps: &[Persist]| ps.iter().map(step_name).collect::<Vec<_>>().join(", ");
        eprintln!(
            "crash-point {}: SIGKILL inside batch {k} after {steps} of {} steps: applied [{}] not applied [{}] {}",
            self.point.who,
            batch.len(),
            names(applied),
            names(rest),
            self.label
        );
        kill_self()
    }

    /// Count a batch of `len` steps: `Some((K, S))` when it is the K-th of
    /// more than S steps that the point dies inside after S of them.
    pub fn cut(&self, len: usize) -> Option<(u64, usize)> {
        let CrashAt::Persist { batch, steps } = self.point.at else {
            return None;
        };
        let steps = usize::try_from(steps).unwrap_or(usize::MAX);
        if len <= steps {
            return None;
        }
        let mut counted = self
            .point
            .batches
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *counted += 1;
        (*counted == batch).then_some((batch, steps))
    }
}

/// One step's name on a crash point's stderr line: `append@5`,
/// `truncate@5`, `fence=2` (`fence=2,sealed=1` with a seal),
/// `checkpoint@4/e1`.
pub fn step_name(p: &Persist) -> String {
    match *p {
        Persist::Append { pos, .. } => format!("append@{pos}"),
        Persist::Truncate { from } => format!("truncate@{from}"),
        Persist::Fence {
            fence,
            sealed: None,
        } => format!("fence={}", fence.0),
        Persist::Fence {
            fence,
            sealed: Some(s),
        } => format!("fence={},sealed={}", fence.0, s.0),
        Persist::Checkpoint { pos, epoch } => format!("checkpoint@{pos}/e{}", epoch.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use livemove_impl::{Entry, Epoch, Op};

    #[test]
    fn only_batches_of_more_than_s_steps_count_and_the_kth_is_cut_after_s() {
        let point = CrashPoint::new(CrashAt::Persist { batch: 2, steps: 2 }, "n1");
        let (p0, p1) = (point.batches("p0"), point.batches("p1"));
        // One and two steps: not past S = 2, not counted.
        assert_eq!(p0.cut(1), None);
        assert_eq!(p1.cut(2), None);
        // The first of more than 2 (on p0), then the second (on p1: the
        // count is the process's).
        assert_eq!(p0.cut(3), None);
        assert_eq!(p1.cut(5), Some((2, 2)));
        // Only the K-th.
        assert_eq!(p0.cut(4), None);
        // Other points never cut a batch.
        for at in [CrashAt::Count, CrashAt::Before(1), CrashAt::After(1)] {
            assert_eq!(CrashPoint::new(at, "n1").batches("p0").cut(9), None);
        }
    }

    #[test]
    fn a_batch_that_is_not_the_kth_is_applied_whole() {
        let point = CrashPoint::new(CrashAt::Persist { batch: 2, steps: 1 }, "n1");
        let batch = [
            Persist::Truncate { from: 3 },
            Persist::Append {
                pos: 3,
                entry: Entry {
                    epoch: Epoch(2),
                    op: Op::Put { key: 7, value: 7 },
                },
            },
        ];
        let mut got = Vec::new();
        let done: Result<(), ()> = point.batches("p0").apply(&batch, |b| {
            got.extend_from_slice(b);
            Ok(())
        });
        assert_eq!(done, Ok(()));
        assert_eq!(got, batch);
        assert_eq!(
            batch.iter().map(step_name).collect::<Vec<_>>(),
            ["truncate@3", "append@3"]
        );
        let fence = Persist::Fence {
            fence: Epoch(2),
            sealed: Some(Epoch(1)),
        };
        assert_eq!(step_name(&fence), "fence=2,sealed=1");
    }
}
