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
    let persist = r.install(&[e(1, 1), e(1, 7), e(1, 8)], Epoch(1)).unwrap();
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
    apply(r.install(&[e(1, 1)], Epoch(1)).unwrap());
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
    // The restarted process opens the file again.
    let mut f = FileLogStorage::new(&path);
    assert_eq!(f.load().unwrap(), good);
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

// ---- retention and checkpoint catch-up (note 2) ----------------------------

/// A replica holding `entries`, appended by a sender at `epoch`.
fn holding(n: u8, epoch: u64, entries: &[Entry]) -> Replica {
    let mut r = Replica::new(id(n));
    for (i, x) in entries.iter().enumerate() {
        let prev = (i > 0).then(|| entries[i - 1].epoch.0);
        r.handle_append(&append(epoch, i as Position, prev, *x), Mutants::NONE)
            .unwrap();
    }
    r
}

/// The checkpoint of `history` at its last position, shipped at `epoch`.
fn offer(epoch: u64, history: &[Entry]) -> CheckpointOffer {
    let last = history.last().expect("a checkpoint holds an entry");
    CheckpointOffer::new(
        Epoch(epoch),
        CheckpointBase {
            pos: history.len() as Position,
            epoch: last.epoch,
        },
        history.to_vec(),
    )
}

/// Note 2: "could an older record in the snapshot overwrite a newer value
/// that arrived first?" Not here: a copy that holds the checkpoint's entry
/// already applied everything the checkpoint holds, and refuses it.
#[test]
fn note2_an_older_checkpoint_is_refused_by_a_copy_that_holds_its_entry() {
    let mut r = holding(2, 1, &[e(1, 1), e(1, 2), e(1, 3)]);
    let before = r.clone();
    assert_eq!(
        r.install_checkpoint(&offer(1, &[e(1, 1), e(1, 2)]), Mutants::NONE),
        Err(ReplicaError::CheckpointNotNeeded {
            pos: 2,
            epoch: Epoch(1),
            len: 3
        })
    );
    assert_eq!(r, before, "the refused checkpoint changed nothing");
}

/// Note 2: the target loads the snapshot first and then replays
/// increments; a copy whose next increment was reclaimed again takes the
/// newer checkpoint.
#[test]
fn note2_a_copy_whose_increments_were_reclaimed_takes_a_new_checkpoint() {
    let mut r = Replica::new(id(2));
    r.install_checkpoint(&offer(1, &[e(1, 1)]), Mutants::NONE)
        .unwrap();
    assert_eq!(r.base(), 1);
    let (ack, persist) = r
        .install_checkpoint(&offer(1, &[e(1, 1), e(1, 2), e(1, 3)]), Mutants::NONE)
        .unwrap();
    assert_eq!(
        ack,
        Ack {
            from: id(2),
            pos: 3,
            epoch: Epoch(1)
        }
    );
    assert_eq!(r.entries(), &[e(1, 1), e(1, 2), e(1, 3)]);
    assert_eq!(
        r.checkpoint(),
        Some(CheckpointBase {
            pos: 3,
            epoch: Epoch(1)
        })
    );
    assert_eq!(
        persist.last(),
        Some(&Persist::Checkpoint {
            pos: 3,
            epoch: Epoch(1)
        })
    );
    // Replay continues right after the checkpoint.
    r.handle_append(&append(1, 3, Some(1), e(1, 4)), Mutants::NONE)
        .unwrap();
    assert_eq!(r.len(), 4);
}

/// Note 2 ("Snapshots must correspond to a log boundary"): folded state has
/// no suffix to drop, so an append that would replace an entry at or below
/// the checkpoint is refused.
#[test]
fn note2_an_append_that_would_cut_into_the_checkpoint_is_refused() {
    let mut r = Replica::new(id(2));
    r.install_checkpoint(&offer(1, &[e(1, 1), e(1, 2)]), Mutants::NONE)
        .unwrap();
    let before = r.clone();
    assert_eq!(
        r.handle_append(&append(2, 1, Some(1), e(2, 9)), Mutants::NONE),
        Err(ReplicaError::WouldCutCheckpoint { pos: 2, base: 2 })
    );
    assert_eq!(r, before);
    // The entry it holds there is taken again (idempotent).
    assert!(r
        .handle_append(&append(1, 1, Some(1), e(1, 2)), Mutants::NONE)
        .is_ok());
}

/// Note 2: a checkpoint is bound to a position and the epoch tag there, so a
/// copy holding another entry at that position (a divergent suffix) lacks
/// it, and installing it replaces the divergent entry.
#[test]
fn note2_a_copy_with_another_entry_at_the_checkpoints_position_takes_it() {
    let mut r = holding(2, 1, &[e(1, 1), e(1, 2)]);
    let (_, persist) = r
        .install_checkpoint(&offer(2, &[e(1, 1), e(2, 3)]), Mutants::NONE)
        .unwrap();
    assert_eq!(r.entries(), &[e(1, 1), e(2, 3)]);
    assert_eq!(r.fence(), Epoch(2));
    assert!(persist.contains(&Persist::Truncate { from: 2 }));
}

#[test]
fn a_copy_fenced_against_the_sender_refuses_its_checkpoint() {
    let mut r = Replica::new(id(2));
    r.observe_epoch(Epoch(3));
    let before = r.clone();
    assert_eq!(
        r.install_checkpoint(&offer(2, &[e(1, 1)]), Mutants::NONE),
        Err(ReplicaError::Fenced {
            sender_epoch: Epoch(2),
            fence_epoch: Epoch(3)
        })
    );
    assert_eq!(r, before);
}

#[test]
fn a_recovered_tail_that_contradicts_the_checkpoint_is_refused() {
    let mut r = Replica::new(id(2));
    r.install_checkpoint(&offer(1, &[e(1, 1), e(1, 2)]), Mutants::NONE)
        .unwrap();
    let before = r.clone();
    assert_eq!(
        r.install(&[e(1, 1)], Epoch(1)),
        Err(ReplicaError::RecoveredTailContradictsCheckpoint {
            pos: 2,
            epoch: Epoch(1),
            found: None
        })
    );
    assert_eq!(r, before);
    assert!(r.install(&[e(1, 1), e(1, 2), e(1, 3)], Epoch(1)).is_ok());
    assert_eq!(r.base(), 2, "install keeps the checkpoint");
}

#[test]
fn the_checkpoint_base_survives_a_restart_and_a_torn_batch() {
    let mut r = Replica::new(id(2));
    let (_, batch) = r
        .install_checkpoint(&offer(1, &[e(1, 1), e(1, 2)]), Mutants::NONE)
        .unwrap();
    let mut disk = MemLogStorage::default();
    disk.apply(&batch).unwrap();
    assert_eq!(Replica::restore(id(2), disk.load().unwrap()), r);

    let dir = std::env::temp_dir().join(format!("livemove-checkpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("log.jsonl");
    let _ = std::fs::remove_file(&path);
    FileLogStorage::new(&path).apply(&batch).unwrap();
    // A crash in the middle of the next batch: it never happened.
    use std::io::Write as _;
    let mut raw = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    raw.write_all(b"\n[{\"Checkpoint\":{\"pos\":").unwrap();
    assert_eq!(
        Replica::restore(id(2), FileLogStorage::new(&path).load().unwrap()),
        r
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn under_checkpoint_overwrites_newer_an_older_checkpoint_overwrites_applied_state() {
    let m = Mutants::only(Mutant::CheckpointOverwritesNewer);
    let mut r = holding(2, 1, &[e(1, 1), e(1, 2), e(1, 3)]);
    r.install_checkpoint(&offer(1, &[e(1, 1), e(1, 2)]), m)
        .unwrap();
    assert_eq!(r.entries(), &[e(1, 1), e(1, 2)], "entry 3 is gone");
}

#[test]
fn under_checkpoint_without_epoch_tag_a_copy_as_long_as_the_checkpoint_takes_itself_for_caught_up()
{
    let m = Mutants::only(Mutant::CheckpointWithoutEpochTag);
    let mut r = holding(2, 1, &[e(1, 1), e(1, 2)]);
    assert!(matches!(
        r.install_checkpoint(&offer(2, &[e(1, 1), e(2, 3)]), m),
        Err(ReplicaError::CheckpointNotNeeded { .. })
    ));
    // The append after the checkpoint carries no tag to compare, so the
    // divergent entry at 2 stays under the owner's entry at 3.
    let untagged = Append {
        prev_epoch: None,
        ..append(2, 2, None, e(2, 4))
    };
    r.handle_append(&untagged, m).unwrap();
    assert_eq!(r.entries(), &[e(1, 1), e(1, 2), e(2, 4)]);
    assert!(matches!(
        r.handle_append(&untagged, Mutants::NONE),
        Err(ReplicaError::PrevMismatch { .. })
    ));
}

/// Note 2's `replay(13, ...)` at position 11: the correct replica refuses
/// an increment past its log (`gap_is_refused`); under
/// `replay_accepts_gap` it leaves the positions it never received missing
/// and takes the increment.
#[test]
fn under_replay_accepts_gap_a_copy_takes_an_increment_past_missing_positions() {
    let m = Mutants::only(Mutant::ReplayAcceptsGap);
    let mut r = holding(2, 1, &[e(1, 1)]);
    let msg = append(2, 3, Some(2), e(2, 4));
    assert_eq!(
        r.clone().handle_append(&msg, Mutants::NONE),
        Err(ReplicaError::LogGap {
            expected: 2,
            got: 4
        })
    );
    let (ack, persist) = r.replay_past_gap(1, &msg, m).unwrap();
    assert_eq!(
        ack,
        Ack {
            from: id(2),
            pos: 4,
            epoch: Epoch(2)
        }
    );
    assert_eq!(
        r.entries(),
        &[e(1, 1), Entry::missing(), Entry::missing(), e(2, 4)]
    );
    assert_eq!(r.fence(), Epoch(2));
    assert_eq!(
        persist,
        vec![
            Persist::Fence {
                fence: Epoch(2),
                sealed: None
            },
            Persist::Append {
                pos: 2,
                entry: Entry::missing()
            },
            Persist::Append {
                pos: 3,
                entry: Entry::missing()
            },
            Persist::Append {
                pos: 4,
                entry: e(2, 4)
            },
        ]
    );
    // The same replay again changes nothing.
    let before = r.clone();
    let (_, persist) = r.replay_past_gap(1, &msg, m).unwrap();
    assert!(persist.is_empty(), "{persist:?}");
    assert_eq!(r, before);
}

/// Past the gap nothing is compared: a divergent entry the copy holds
/// below the increment stays, and what it held beyond it is dropped.
#[test]
fn under_replay_accepts_gap_what_the_copy_holds_below_the_increment_stays_unchecked() {
    let m = Mutants::only(Mutant::ReplayAcceptsGap);
    let mut r = holding(2, 1, &[e(1, 1), e(1, 9), e(1, 8), e(1, 7)]);
    let (ack, persist) = r
        .replay_past_gap(1, &append(2, 2, Some(2), e(2, 3)), m)
        .unwrap();
    assert_eq!(ack.pos, 3);
    assert_eq!(r.entries(), &[e(1, 1), e(1, 9), e(2, 3)]);
    assert!(persist.contains(&Persist::Truncate { from: 3 }));
}

#[test]
fn a_replay_past_a_gap_never_cuts_into_the_copys_checkpoint() {
    let m = Mutants::only(Mutant::ReplayAcceptsGap);
    let mut r = Replica::new(id(2));
    r.install_checkpoint(&offer(1, &[e(1, 1), e(1, 2)]), Mutants::NONE)
        .unwrap();
    let before = r.clone();
    assert_eq!(
        r.replay_past_gap(1, &append(1, 3, Some(1), e(1, 4)), m),
        Err(ReplicaError::WouldCutCheckpoint { pos: 2, base: 2 })
    );
    assert_eq!(r, before);
}

/// Note 2's source log for its `Target` example: y := 9 at 1, x := 1 at 2,
/// a message published and settled in turn at 3..=10 (state at 10 is
/// {x: 1, y: 9}), x := 2 at 11, y settled (deleted) at 12, z := 13 at 13.
mod note2_target {
    use super::*;
    use std::collections::BTreeMap;

    pub const X: u64 = 1;
    pub const Y: u64 = 2;
    const Z: u64 = 3;

    fn op(key: u64, value: Option<u64>) -> Entry {
        Entry {
            epoch: Epoch(1),
            op: match value {
                Some(value) => Op::Put { key, value },
                None => Op::Delete { key },
            },
        }
    }

    pub fn source() -> Vec<Entry> {
        let mut log = vec![op(Y, Some(9)), op(X, Some(1))];
        for p in 3..=10 {
            log.push(op(Z, (p % 2 == 1).then_some(p)));
        }
        log.push(op(X, Some(2)));
        log.push(op(Y, None));
        log.push(op(Z, Some(13)));
        log
    }

    pub fn replay(r: &mut Replica, pos: Position) -> Result<(Ack, Vec<Persist>), ReplicaError> {
        let log = source();
        let prev = (pos > 1).then(|| log[pos as usize - 2].epoch.0);
        r.handle_append(
            &append(1, pos - 1, prev, log[pos as usize - 1]),
            Mutants::NONE,
        )
    }

    pub fn checkpoint_at_10() -> CheckpointOffer {
        offer(1, &source()[..10])
    }

    /// Note 2's example line by line, on the replica's own path: the
    /// checkpoint at 10 is {x: 1, y: 9}; 11 puts x = 2; 11 again is a
    /// duplicate; 13 is a gap; 12 deletes y; the checkpoint at 10 arriving
    /// late is refused, and x = 2 without y stays.
    #[test]
    fn rejects_gaps_and_late_snapshots() {
        let mut r = Replica::new(id(2));
        let cp = checkpoint_at_10();
        assert_eq!(cp.state(), BTreeMap::from([(X, 1), (Y, 9)]));
        r.install_checkpoint(&cp, Mutants::NONE).unwrap();
        assert_eq!((r.len(), r.base()), (10, 10));
        assert_eq!(r.state(), BTreeMap::from([(X, 1), (Y, 9)]));

        replay(&mut r, 11).unwrap();
        assert_eq!(r.state(), BTreeMap::from([(X, 2), (Y, 9)]));
        let (ack, persist) = replay(&mut r, 11).unwrap();
        assert_eq!(
            (ack.pos, persist),
            (11, vec![]),
            "a duplicate applies nothing"
        );

        let before = r.clone();
        assert_eq!(
            replay(&mut r, 13),
            Err(ReplicaError::LogGap {
                expected: 12,
                got: 13
            })
        );
        assert_eq!(r, before, "a gap changes nothing");

        replay(&mut r, 12).unwrap();
        assert_eq!(r.state(), BTreeMap::from([(X, 2)]));

        let before = r.clone();
        assert_eq!(
            r.install_checkpoint(&checkpoint_at_10(), Mutants::NONE),
            Err(ReplicaError::CheckpointNotNeeded {
                pos: 10,
                epoch: Epoch(1),
                len: 12
            })
        );
        assert_eq!(r, before, "x does not regress, y does not come back");
    }

    /// A checkpoint whose state does not match its checksum is refused
    /// before anything changes.
    #[test]
    fn a_checkpoint_with_a_bad_checksum_is_refused() {
        let mut r = Replica::new(id(2));
        let mut cp = checkpoint_at_10();
        cp.history[1] = op(X, Some(7));
        let computed = checksum(10, &cp.state());
        assert_eq!(
            r.install_checkpoint(&cp, Mutants::NONE),
            Err(ReplicaError::ChecksumMismatch {
                pos: 10,
                expected: checkpoint_at_10().checksum,
                computed
            })
        );
        assert_eq!(r, Replica::new(id(2)));
    }

    /// A position from another source log is never taken as already
    /// applied: the epoch tag of the entry before it is compared, not the
    /// position alone.
    #[test]
    fn a_position_from_another_history_is_not_taken_as_processed() {
        let mut r = Replica::new(id(2));
        r.install_checkpoint(&checkpoint_at_10(), Mutants::NONE)
            .unwrap();
        let before = r.clone();
        let foreign = append(1, 10, Some(3), op(X, Some(0)));
        assert_eq!(
            r.handle_append(&foreign, Mutants::NONE),
            Err(ReplicaError::PrevMismatch {
                pos: 10,
                expected: Some(Epoch(3)),
                found: Some(Epoch(1))
            })
        );
        assert_eq!(r, before);
    }
}
