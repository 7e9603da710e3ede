//! Replica handler tests: exact acknowledgements, refusals and persist commands.

use super::*;
use crate::entry::Op;
use crate::ids::NodeId;

fn id(n: u8) -> StorageId {
    StorageId::first(NodeId(n))
}

fn e(epoch: u64, key: u64) -> Entry {
    Entry {
        epoch: Epoch(epoch),
        op: Op::Put { key, value: key },
    }
}

fn append(epoch: u64, prev_pos: Position, prev_epoch: Option<u64>, entry: Entry) -> Append {
    Append {
        sender: id(1),
        epoch: Epoch(epoch),
        prev_pos,
        prev_epoch: prev_epoch.map(Epoch),
        entry,
    }
}

#[test]
fn append_acknowledges_position_and_epoch_and_persists_it() {
    let mut r = Replica::new(id(2));
    let (ack, persist) = r
        .handle_append(&append(1, 0, None, e(1, 1)), Mutants::NONE)
        .unwrap();
    assert_eq!(
        ack,
        Ack {
            from: id(2),
            pos: 1,
            epoch: Epoch(1)
        }
    );
    assert_eq!(
        persist,
        vec![
            Persist::Fence {
                fence: Epoch(1),
                sealed: None
            },
            Persist::Append {
                pos: 1,
                entry: e(1, 1)
            }
        ]
    );
}

#[test]
fn duplicate_append_is_idempotent() {
    let mut r = Replica::new(id(2));
    let m = append(1, 0, None, e(1, 1));
    r.handle_append(&m, Mutants::NONE).unwrap();
    let (ack, persist) = r.handle_append(&m, Mutants::NONE).unwrap();
    assert_eq!(ack.pos, 1);
    assert!(persist.is_empty());
    assert_eq!(r.len(), 1);
}

#[test]
fn gap_is_refused() {
    let mut r = Replica::new(id(2));
    let before = r.clone();
    assert_eq!(
        r.handle_append(&append(1, 2, Some(1), e(1, 3)), Mutants::NONE),
        Err(ReplicaError::LogGap {
            expected: 1,
            got: 3
        })
    );
    assert_eq!(r, before);
}

#[test]
fn previous_entry_mismatch_is_refused() {
    let mut r = Replica::new(id(2));
    r.handle_append(&append(1, 0, None, e(1, 1)), Mutants::NONE)
        .unwrap();
    assert_eq!(
        r.handle_append(&append(2, 1, Some(2), e(2, 2)), Mutants::NONE),
        Err(ReplicaError::PrevMismatch {
            pos: 1,
            expected: Some(Epoch(2)),
            found: Some(Epoch(1))
        })
    );
}

#[test]
fn divergent_suffix_is_truncated_by_a_newer_sender() {
    let mut r = Replica::new(id(2));
    r.handle_append(&append(1, 0, None, e(1, 1)), Mutants::NONE)
        .unwrap();
    r.handle_append(&append(1, 1, Some(1), e(1, 2)), Mutants::NONE)
        .unwrap();
    r.handle_append(&append(1, 2, Some(1), e(1, 3)), Mutants::NONE)
        .unwrap();
    let (ack, persist) = r
        .handle_append(&append(2, 1, Some(1), e(2, 9)), Mutants::NONE)
        .unwrap();
    assert_eq!((ack.pos, ack.epoch), (2, Epoch(2)));
    assert_eq!(r.entries(), &[e(1, 1), e(2, 9)]);
    assert_eq!(
        persist,
        vec![
            Persist::Fence {
                fence: Epoch(2),
                sealed: None
            },
            Persist::Truncate { from: 2 },
            Persist::Append {
                pos: 2,
                entry: e(2, 9)
            }
        ]
    );
}

#[test]
fn sealed_replica_refuses_appends_of_the_sealed_epoch_or_older() {
    let mut r = Replica::new(id(2));
    r.seal(Epoch(3));
    for epoch in [1, 3] {
        assert_eq!(
            r.handle_append(&append(epoch, 0, None, e(1, 1)), Mutants::NONE),
            Err(ReplicaError::Fenced {
                sender_epoch: Epoch(epoch),
                fence_epoch: Epoch(3)
            })
        );
    }
    assert!(r
        .handle_append(&append(4, 0, None, e(1, 1)), Mutants::NONE)
        .is_ok());
}

#[test]
fn replica_that_saw_a_newer_epoch_refuses_an_older_sender() {
    let mut r = Replica::new(id(2));
    r.handle_append(&append(5, 0, None, e(5, 1)), Mutants::NONE)
        .unwrap();
    assert_eq!(
        r.handle_append(&append(4, 1, Some(5), e(4, 2)), Mutants::NONE),
        Err(ReplicaError::Fenced {
            sender_epoch: Epoch(4),
            fence_epoch: Epoch(5)
        })
    );
}

#[test]
fn entry_newer_than_its_sender_is_refused() {
    let mut r = Replica::new(id(2));
    assert!(matches!(
        r.handle_append(&append(1, 0, None, e(2, 1)), Mutants::NONE),
        Err(ReplicaError::EntryFromFuture { .. })
    ));
}

#[test]
fn install_keeps_the_common_prefix_and_seals() {
    let mut r = Replica::new(id(2));
    r.handle_append(&append(1, 0, None, e(1, 1)), Mutants::NONE)
        .unwrap();
    r.handle_append(&append(1, 1, Some(1), e(1, 2)), Mutants::NONE)
        .unwrap();
    let persist = r.install(&[e(1, 1), e(1, 7), e(1, 8)], Epoch(1));
    assert_eq!(r.entries(), &[e(1, 1), e(1, 7), e(1, 8)]);
    assert_eq!(r.sealed(), Some(Epoch(1)));
    assert_eq!(persist[0], Persist::Truncate { from: 2 });
}

#[test]
fn persisted_commands_rebuild_the_replica() {
    let mut r = Replica::new(id(2));
    let mut disk = MemLogStorage::default();
    let mut apply = |p: Vec<Persist>| disk.apply(&p).unwrap();
    apply(
        r.handle_append(&append(1, 0, None, e(1, 1)), Mutants::NONE)
            .unwrap()
            .1,
    );
    apply(
        r.handle_append(&append(1, 1, Some(1), e(1, 2)), Mutants::NONE)
            .unwrap()
            .1,
    );
    apply(r.seal(Epoch(1)));
    apply(r.install(&[e(1, 1)], Epoch(1)));
    let restored = Replica::restore(id(2), disk.load().unwrap());
    assert_eq!(restored, r);
}

#[test]
fn file_storage_survives_a_torn_last_batch() {
    let dir = std::env::temp_dir().join(format!("livemove-replica-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("log.jsonl");
    let _ = std::fs::remove_file(&path);
    let mut f = FileLogStorage::new(&path);
    let mut r = Replica::new(id(2));
    f.apply(
        &r.handle_append(&append(1, 0, None, e(1, 1)), Mutants::NONE)
            .unwrap()
            .1,
    )
    .unwrap();
    let good = r.durable();
    // A crash in the middle of writing the next batch.
    use std::io::Write as _;
    let mut raw = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    raw.write_all(b"\n[{\"Append\":{\"pos\":2,").unwrap();
    assert_eq!(FileLogStorage::new(&path).load().unwrap(), good);
    // The next batch after the torn one is kept.
    f.apply(
        &r.handle_append(&append(1, 1, Some(1), e(1, 2)), Mutants::NONE)
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(FileLogStorage::new(&path).load().unwrap(), r.durable());
    std::fs::remove_dir_all(&dir).unwrap();
}
