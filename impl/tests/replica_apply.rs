//! Property: random checkpoint / replay / duplicate / gap / delete sequences
//! never regress x nor resurrect y (note 2's target replica).

use arbitrary::{Arbitrary, Unstructured};
use livemove_impl::replica::catchup::checksum;
use livemove_impl::replica::{CatchUp, CatchUpError, Checkpoint, LogIdentity, TaskId};
use livemove_impl::{Epoch, NodeId, Op, StorageId};
use proptest::prelude::*;
use std::collections::BTreeMap;

const X: u64 = 1;
const Y: u64 = 2;
const SOURCE_LEN: u64 = 24;
const DELETE_Y_AT: u64 = 12;

#[derive(Debug, Arbitrary)]
enum Step {
    /// Install the checkpoint cut at this boundary (mod SOURCE_LEN).
    Checkpoint(u8),
    /// Replay the source record at this position (mod SOURCE_LEN + 3).
    Replay(u8),
    /// Replay near the target's position: a duplicate, the next record or a gap.
    ReplayNear(u8),
    /// Replay a record from another task.
    ForeignReplay(u8),
}

fn source() -> LogIdentity {
    LogIdentity {
        storage: StorageId::first(NodeId(1)),
        epoch: Epoch(1),
    }
}

/// The source log: x := p at every position, except y is deleted at 12.
fn op_at(p: u64) -> Op {
    if p == DELETE_Y_AT {
        Op::Delete { key: Y }
    } else {
        Op::Put { key: X, value: p }
    }
}

fn state_at(p: u64) -> BTreeMap<u64, u64> {
    let mut s = BTreeMap::from([(X, 0), (Y, 9)]);
    for q in 1..=p {
        match op_at(q) {
            Op::Put { key, value } => {
                s.insert(key, value);
            }
            Op::Delete { key } => {
                s.remove(&key);
            }
            Op::Missing => unreachable!("op_at writes no missing record"),
        }
    }
    s
}

fn checkpoint(b: u64) -> Checkpoint {
    let data = state_at(b);
    Checkpoint {
        task: TaskId(1),
        source: source(),
        boundary: b,
        checksum: checksum(b, &data),
        data,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn replay_never_regresses_x_nor_resurrects_y(chunks in proptest::collection::vec(any::<[u8; 8]>(), 0..96)) {
        let steps: Vec<Step> = chunks.iter().filter_map(|c| Step::arbitrary(&mut Unstructured::new(c)).ok()).collect();
        let mut t = CatchUp::new(TaskId(1), source());
        let mut last_x = None;
        let mut y_deleted = false;
        for step in steps {
            let before = t.clone();
            let result = match step {
                Step::Checkpoint(b) => t.install_checkpoint(&checkpoint(u64::from(b) % SOURCE_LEN)).map(|_| true),
                Step::Replay(p) => {
                    let p = u64::from(p) % (SOURCE_LEN + 3);
                    t.replay(TaskId(1), source(), p, op_at(p))
                }
                Step::ReplayNear(d) => {
                    let p = t.position().unwrap_or(0) + u64::from(d % 4);
                    t.replay(TaskId(1), source(), p, op_at(p))
                }
                Step::ForeignReplay(p) => t.replay(TaskId(2), source(), u64::from(p), Op::Put { key: X, value: 0 }),
            };
            if result.is_err() || result == Ok(false) {
                prop_assert_eq!(&t, &before, "a refused or duplicate step changed state");
            }
            if let Err(CatchUpError::LogGap { expected, got }) = result {
                prop_assert!(got > expected);
            }
            if let Some(pos) = t.position() {
                // The applied state is exactly the source state at its position.
                prop_assert_eq!(t.data(), &state_at(pos));
                let x = t.data().get(&X).copied();
                prop_assert!(x >= last_x, "x regressed from {:?} to {:?}", last_x, x);
                last_x = x;
                if y_deleted {
                    prop_assert!(!t.data().contains_key(&Y), "y resurrected");
                }
                y_deleted = !t.data().contains_key(&Y);
            }
        }
    }
}
