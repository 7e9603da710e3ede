//! Property: random checkpoint / replay / duplicate / gap / foreign-history
//! sequences on a replica never regress x nor resurrect y (note 2's target
//! replica, on the replica's own path: `install_checkpoint` then
//! `handle_append`).

use arbitrary::{Arbitrary, Unstructured};
use livemove_impl::replica::{
    fold, Append, CheckpointBase, CheckpointOffer, Replica, ReplicaError,
};
use livemove_impl::{Entry, Epoch, Mutants, NodeId, Op, Position, StorageId};
use proptest::prelude::*;

const X: u64 = 1;
const Y: u64 = 2;
const SOURCE_LEN: u64 = 24;
const DELETE_Y_AT: u64 = 12;

#[derive(Debug, Arbitrary)]
enum Step {
    /// Install the checkpoint cut at this boundary (1 + b mod SOURCE_LEN).
    Checkpoint(u8),
    /// Replay the source record at this position (1 + p mod SOURCE_LEN + 2).
    Replay(u8),
    /// Replay near the copy's tail: a duplicate, the next record or a gap.
    ReplayNear(u8),
    /// An append from another history: the entry before it carries an
    /// epoch tag this source never wrote.
    ForeignReplay(u8),
}

fn id(n: u8) -> StorageId {
    StorageId::first(NodeId(n))
}

/// The source log: y := 9 at 1, then x := p at every position, except y
/// is deleted (settled) at 12.
fn entry_at(p: Position) -> Entry {
    let op = match p {
        1 => Op::Put { key: Y, value: 9 },
        DELETE_Y_AT => Op::Delete { key: Y },
        _ => Op::Put { key: X, value: p },
    };
    Entry {
        epoch: Epoch(1),
        op,
    }
}

fn source(upto: Position) -> Vec<Entry> {
    (1..=upto).map(entry_at).collect()
}

fn checkpoint(b: Position) -> CheckpointOffer {
    CheckpointOffer::new(
        Epoch(1),
        CheckpointBase {
            pos: b,
            epoch: Epoch(1),
        },
        source(b),
    )
}

fn replay(r: &mut Replica, p: Position, prev_epoch: Option<Epoch>) -> Result<bool, ReplicaError> {
    let msg = Append {
        sender: id(1),
        epoch: Epoch(1),
        prev_pos: p - 1,
        prev_epoch,
        entry: entry_at(p),
    };
    let (_, persist) = r.handle_append(&msg, Mutants::NONE)?;
    Ok(!persist.is_empty())
}

fn tag_before(p: Position) -> Option<Epoch> {
    (p > 1).then_some(Epoch(1))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn replay_never_regresses_x_nor_resurrects_y(chunks in proptest::collection::vec(any::<[u8; 8]>(), 0..96)) {
        let steps: Vec<Step> = chunks.iter().filter_map(|c| Step::arbitrary(&mut Unstructured::new(c)).ok()).collect();
        let mut r = Replica::new(id(2));
        let mut last_x = None;
        let mut y_deleted = false;
        for step in steps {
            let before = r.clone();
            let result = match step {
                Step::Checkpoint(b) => {
                    let b = 1 + u64::from(b) % SOURCE_LEN;
                    r.install_checkpoint(&checkpoint(b), Mutants::NONE).map(|_| true)
                }
                Step::Replay(p) => {
                    let p = 1 + u64::from(p) % (SOURCE_LEN + 2);
                    replay(&mut r, p, tag_before(p))
                }
                Step::ReplayNear(d) => {
                    let p = (r.len() + u64::from(d % 4)).max(1);
                    replay(&mut r, p, tag_before(p))
                }
                Step::ForeignReplay(p) => {
                    let p = 2 + u64::from(p) % SOURCE_LEN;
                    replay(&mut r, p, Some(Epoch(3)))
                }
            };
            if !matches!(result, Ok(true)) {
                prop_assert_eq!(&r, &before, "a refused or duplicate step changed state: {:?}", result);
            }
            if let Err(ReplicaError::LogGap { expected, got }) = result {
                prop_assert!(got > expected);
            }
            // The copy holds a prefix of the source, and its state is the
            // source's state at its tail.
            prop_assert_eq!(r.entries(), &source(r.len())[..]);
            prop_assert_eq!(r.state(), fold(&source(r.len())));
            if !r.is_empty() {
                let x = r.state().get(&X).copied();
                prop_assert!(x >= last_x, "x regressed from {:?} to {:?}", last_x, x);
                last_x = x;
                if y_deleted {
                    prop_assert!(!r.state().contains_key(&Y), "y resurrected");
                }
                y_deleted = r.len() >= DELETE_Y_AT;
            }
        }
    }
}
