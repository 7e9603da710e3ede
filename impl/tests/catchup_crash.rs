//! A catch-up's position and data are durable together (note 2: "Each
//! application publishes both data and position; actual storage must
//! maintain this atomic relationship using transactions or recovery
//! protocols ... a persistent implementation must ensure no state like
//! 'position reached 12, but delete not yet saved' remains").
//!
//! A catch-up sequence (install a checkpoint, replay increments including a
//! `Delete`, take a checkpoint, replay more) runs against `FileLogStorage`;
//! the file is cut at every byte offset of every batch's line, reloaded,
//! and the replica reopened from it finishes the catch-up.

use livemove_impl::entry::{Entry, Op};
use livemove_impl::ids::{Epoch, NodeId, Position, StorageId};
use livemove_impl::mutant::Mutants;
use livemove_impl::replica::{
    Append, CheckpointBase, CheckpointOffer, DamagedLine, DurableLog, FileLogStorage, LogStorage,
    Persist, Replica,
};
use std::path::{Path, PathBuf};

fn id(n: u8) -> StorageId {
    StorageId::first(NodeId(n))
}

fn put(key: u64) -> Entry {
    Entry {
        epoch: Epoch(1),
        op: Op::Put {
            key,
            value: key * 10,
        },
    }
}

fn delete(key: u64) -> Entry {
    Entry {
        epoch: Epoch(1),
        op: Op::Delete { key },
    }
}

/// One step of the catch-up; each yields exactly one `Persist` batch.
#[derive(Clone, Copy, Debug)]
enum Step {
    Install,
    Replay(Position, Entry),
    TakeCheckpoint(Position),
}

fn steps() -> Vec<Step> {
    vec![
        Step::Install,
        Step::Replay(4, put(4)),
        Step::Replay(5, delete(2)),
        Step::Replay(6, put(6)),
        Step::TakeCheckpoint(5),
        Step::Replay(7, delete(1)),
        Step::Replay(8, put(8)),
    ]
}

fn run(r: &mut Replica, step: Step) -> Vec<Persist> {
    match step {
        Step::Install => {
            let history = vec![put(1), put(2), put(3)];
            let offer = CheckpointOffer::new(
                Epoch(1),
                CheckpointBase {
                    pos: 3,
                    epoch: Epoch(1),
                },
                history,
            );
            r.install_checkpoint(&offer, Mutants::NONE).unwrap().1
        }
        Step::Replay(pos, entry) => {
            let msg = Append {
                sender: id(1),
                epoch: Epoch(1),
                prev_pos: pos - 1,
                prev_epoch: Some(Epoch(1)),
                entry,
            };
            r.handle_append(&msg, Mutants::NONE).unwrap().1
        }
        Step::TakeCheckpoint(at) => r.take_checkpoint(at).1,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "livemove-catchup-crash-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The uncrashed run: the durable state before each step and at the end,
/// and the file's length after each batch.
fn uncrashed(path: &Path) -> (Vec<DurableLog>, Vec<u64>) {
    let mut disk = FileLogStorage::new(path);
    let mut r = Replica::new(id(2));
    let mut states = vec![r.durable()];
    let mut ends = vec![0];
    for step in steps() {
        let batch = run(&mut r, step);
        assert!(!batch.is_empty(), "{step:?} changes the durable state");
        disk.apply(&batch).unwrap();
        assert_eq!(disk.load().unwrap(), r.durable(), "after {step:?}");
        states.push(r.durable());
        ends.push(std::fs::metadata(path).unwrap().len());
    }
    (states, ends)
}

/// Cut the storage file at every byte within each batch's line and after
/// every batch: the reload is exactly the state before that batch (the cut
/// is inside its line) or after it (the line is complete), never a mix, and
/// a replica reopened from it finishes the catch-up to the uncrashed state.
#[test]
fn a_crash_anywhere_in_a_batch_leaves_the_state_before_or_after_it() {
    let dir = scratch("cuts");
    let full = dir.join("full.jsonl");
    let (states, ends) = uncrashed(&full);
    let bytes = std::fs::read(&full).unwrap();
    let last = states.last().unwrap().clone();
    assert_eq!(last.checkpoint.map(|b| b.pos), Some(5));
    assert!(last.entries.contains(&delete(2)) && last.entries.contains(&delete(1)));
    let all = steps();
    let cut_path = dir.join("cut.jsonl");
    for k in 0..all.len() {
        for cut in ends[k]..=ends[k + 1] {
            std::fs::write(&cut_path, &bytes[..cut as usize]).unwrap();
            let mut disk = FileLogStorage::new(&cut_path);
            let loaded = disk.load().unwrap();
            let done = if loaded == states[k + 1] && cut == ends[k + 1] {
                k + 1
            } else {
                assert_eq!(
                    loaded, states[k],
                    "a cut at byte {cut} within batch {k} ({:?}) is the state before it",
                    all[k]
                );
                k
            };
            // Reopen and continue the catch-up from what survived.
            let mut r = Replica::restore(id(2), loaded);
            for &step in &all[done..] {
                disk.apply(&run(&mut r, step)).unwrap();
            }
            assert_eq!(r.durable(), last, "cut at {cut}: replica continues");
            assert_eq!(disk.load().unwrap(), last, "cut at {cut}: disk continues");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A replayed `Delete` and the position it moves to are one batch: no
/// reload shows the log past the delete's position without the delete.
#[test]
fn a_replayed_delete_and_its_position_are_one_batch() {
    let mut r = Replica::new(id(2));
    run(&mut r, Step::Install);
    run(&mut r, Step::Replay(4, put(4)));
    let batch = run(&mut r, Step::Replay(5, delete(2)));
    assert_eq!(
        batch,
        vec![Persist::Append {
            pos: 5,
            entry: delete(2)
        }]
    );
}

/// A checkpoint install's entries and its base go out as one batch, the
/// base last, so the base is never durable without the entry it names.
#[test]
fn a_checkpoint_install_is_one_batch_with_its_base_last() {
    let mut r = Replica::new(id(2));
    let batch = run(&mut r, Step::Install);
    // The fence at the sender's epoch, the three entries, then the base.
    assert!(matches!(batch[0], Persist::Fence { .. }));
    assert_eq!(
        batch
            .iter()
            .filter(|p| matches!(p, Persist::Append { .. }))
            .count(),
        3
    );
    assert_eq!(
        batch.last(),
        Some(&Persist::Checkpoint {
            pos: 3,
            epoch: Epoch(1)
        })
    );
}

/// A complete line that is not the last and does not parse is damage, not
/// a crash: loading refuses with `DamagedLine` naming its line and offset
/// instead of dropping the batch.
#[test]
fn a_damaged_earlier_line_is_a_typed_error_naming_its_line_and_offset() {
    let dir = scratch("damaged");
    let path = dir.join("log.jsonl");
    let (_, ends) = uncrashed(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    // The second batch's line: after the leading newline of its write.
    let offset = ends[1] + 1;
    let line = bytes[..offset as usize]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    bytes[offset as usize + 3] = b'#';
    std::fs::write(&path, &bytes).unwrap();
    let err = FileLogStorage::new(&path).load().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    let damaged = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<DamagedLine>())
        .expect("a DamagedLine");
    assert_eq!((damaged.line, damaged.offset), (line, offset));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A torn tail is cut off before the next append, so the batch written
/// after a crash is kept and the torn one never reappears as damage.
#[test]
fn a_torn_tail_is_cut_before_the_next_batch() {
    let dir = scratch("torn");
    let path = dir.join("log.jsonl");
    let mut disk = FileLogStorage::new(&path);
    let mut r = Replica::new(id(2));
    disk.apply(&run(&mut r, Step::Install)).unwrap();
    let before = r.durable();
    let torn = run(&mut r.clone(), Step::Replay(4, put(4)));
    let line = serde_json::to_string(&torn).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(&line.as_bytes()[..line.len() / 2]);
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(disk.load().unwrap(), before);
    let mut r = Replica::restore(id(2), before);
    disk.apply(&run(&mut r, Step::Replay(4, put(4)))).unwrap();
    disk.apply(&run(&mut r, Step::Replay(5, delete(2))))
        .unwrap();
    assert_eq!(FileLogStorage::new(&path).load().unwrap(), r.durable());
    std::fs::remove_dir_all(&dir).unwrap();
}
