//! The disk log against the implementation's in-memory `MemLogStorage`:
//! the same batches give the same durable state, across reopens, torn
//! writes, truncations and damage.

use livemove_impl::replica::{DurableLog, LogStorage, MemLogStorage, Persist};
use livemove_impl::{Entry, Epoch, Op, Position};
use livemove_runtime::disk_log::{DiskLog, DiskLogError, TornTail, EPOCHS_FILE, SEGMENT_FILE};
use std::fs::OpenOptions;
use std::path::Path;

fn entry(epoch: u64, key: u64) -> Entry {
    Entry {
        epoch: Epoch(epoch),
        op: Op::Put {
            key,
            value: key * 10,
        },
    }
}

fn appends(from: Position, entries: &[Entry]) -> Vec<Persist> {
    entries
        .iter()
        .enumerate()
        .map(|(i, &entry)| Persist::Append {
            pos: from + i as Position,
            entry,
        })
        .collect()
}

/// A disk log and the in-memory reference, written alike.
struct Both {
    disk: DiskLog,
    mem: MemLogStorage,
}

impl Both {
    fn open(dir: &Path) -> Both {
        Both {
            disk: DiskLog::open(dir).unwrap().0,
            mem: MemLogStorage::default(),
        }
    }

    /// Apply `batch` to both; return the reference state.
    fn apply(&mut self, batch: &[Persist]) -> DurableLog {
        self.disk.apply(batch).unwrap();
        self.mem.apply(batch).unwrap();
        self.mem.load().unwrap()
    }
}

/// Apply `batches` to a fresh disk log in `dir` and to the in-memory
/// reference; return the reference state.
fn write_both(dir: &Path, batches: &[Vec<Persist>]) -> DurableLog {
    let mut both = Both::open(dir);
    batches
        .iter()
        .map(|b| both.apply(b))
        .last()
        .unwrap_or_default()
}

fn segment_len(dir: &Path) -> u64 {
    std::fs::metadata(dir.join(SEGMENT_FILE)).unwrap().len()
}

fn cut(dir: &Path, len: u64) {
    OpenOptions::new()
        .write(true)
        .open(dir.join(SEGMENT_FILE))
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn batches_survive_a_reopen_exactly_as_the_in_memory_log_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut batches = vec![vec![Persist::Fence {
        fence: Epoch(1),
        sealed: None,
    }]];
    batches.push(appends(1, &[entry(1, 1), entry(1, 2)]));
    batches.push(appends(3, &[entry(1, 3)]));
    let mut last = appends(4, &[entry(2, 4)]);
    last.insert(
        0,
        Persist::Fence {
            fence: Epoch(2),
            sealed: Some(Epoch(1)),
        },
    );
    batches.push(last);
    let expected = write_both(dir.path(), &batches);
    assert_eq!(expected.entries.len(), 4);
    let (mut disk, recovered) = DiskLog::open(dir.path()).unwrap();
    assert_eq!(recovered.state, expected);
    assert_eq!(recovered.torn_tail, None);
    assert_eq!(disk.len(), 4);
    assert_eq!(disk.load().unwrap(), expected);
}

#[test]
fn a_fresh_directory_opens_as_an_empty_log() {
    let dir = tempfile::tempdir().unwrap();
    let (disk, recovered) = DiskLog::open(dir.path().join("replica")).unwrap();
    assert!(disk.is_empty());
    assert_eq!(recovered.state, DurableLog::default());
}

#[test]
fn a_write_torn_at_any_byte_of_the_last_record_reopens_to_the_records_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut both = Both::open(dir.path());
    let two = both.apply(&appends(1, &[entry(1, 1), entry(1, 2)]));
    let before = segment_len(dir.path());
    let three = both.apply(&appends(3, &[entry(1, 3)]));
    drop(both);
    let full = segment_len(dir.path());
    let pristine = std::fs::read(dir.path().join(SEGMENT_FILE)).unwrap();
    let mut cuts = 0;
    for len in before..=full {
        std::fs::write(dir.path().join(SEGMENT_FILE), &pristine).unwrap();
        cut(dir.path(), len);
        let (mut disk, recovered) = DiskLog::open(dir.path()).unwrap();
        let (state, torn) = if len == full {
            (&three, None)
        } else if len == before {
            (&two, None)
        } else {
            let torn = TornTail {
                offset: before,
                bytes_dropped: len - before,
            };
            (&two, Some(torn))
        };
        assert_eq!(recovered.state.entries, state.entries, "cut at {len}");
        assert_eq!(recovered.torn_tail, torn, "cut at {len}");
        // The torn bytes are gone from the disk, and the log goes on.
        let kept = if len == full { full } else { before };
        assert_eq!(segment_len(dir.path()), kept, "cut at {len}");
        let next = disk.len() + 1;
        disk.apply(&appends(next, &[entry(2, 9)])).unwrap();
        let (_, again) = DiskLog::open(dir.path()).unwrap();
        assert_eq!(
            again.state.entries.last(),
            Some(&entry(2, 9)),
            "cut at {len}"
        );
        assert_eq!(again.torn_tail, None, "cut at {len}");
        cuts += 1;
    }
    // One cut per byte of the last record, plus the cut at its end.
    assert_eq!(cuts, full - before + 1);
    assert_eq!(full - before, 12 + 5);
}

#[test]
fn zeros_after_the_last_record_are_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_both(dir.path(), &[appends(1, &[entry(1, 1)])]);
    let end = segment_len(dir.path());
    cut(dir.path(), end + 300);
    let (_, recovered) = DiskLog::open(dir.path()).unwrap();
    assert_eq!(recovered.state, expected);
    assert_eq!(
        recovered.torn_tail,
        Some(TornTail {
            offset: end,
            bytes_dropped: 300
        })
    );
}

#[test]
fn a_flipped_byte_in_a_middle_record_is_a_corrupt_error_naming_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut both = Both::open(dir.path());
    both.apply(&appends(1, &[entry(1, 1)]));
    let start = segment_len(dir.path());
    both.apply(&appends(2, &[entry(1, 2)]));
    let end = segment_len(dir.path());
    both.apply(&appends(3, &[entry(1, 3)]));
    drop(both);
    let pristine = std::fs::read(dir.path().join(SEGMENT_FILE)).unwrap();
    // Every byte of the middle record: header, checksums and payload.
    assert_eq!(end - start, 12 + 5);
    for at in start..end {
        let mut bytes = pristine.clone();
        bytes[at as usize] ^= 0x01;
        std::fs::write(dir.path().join(SEGMENT_FILE), &bytes).unwrap();
        match DiskLog::open(dir.path()) {
            Err(DiskLogError::CorruptRecord { offset, path, .. }) => {
                assert_eq!(offset, start, "flip at {at}");
                assert_eq!(path, dir.path().join(SEGMENT_FILE));
            }
            other => panic!("flip at {at}: expected a corrupt record, got {other:?}"),
        }
        // Nothing was cut: the damage is left for an operator to see.
        assert_eq!(std::fs::read(dir.path().join(SEGMENT_FILE)).unwrap(), bytes);
    }
}

#[test]
fn a_truncated_suffix_stays_truncated_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let old: Vec<Entry> = (1..=5).map(|k| entry(1, k)).collect();
    let mut rewrite = vec![Persist::Truncate { from: 3 }];
    rewrite.extend(appends(3, &[entry(2, 30), entry(2, 40)]));
    let expected = write_both(dir.path(), &[appends(1, &old), rewrite]);
    assert_eq!(
        expected.entries,
        vec![entry(1, 1), entry(1, 2), entry(2, 30), entry(2, 40)]
    );
    let (mut disk, recovered) = DiskLog::open(dir.path()).unwrap();
    assert_eq!(recovered.state, expected);
    // Truncating to nothing, and beyond the end (a no-op), also hold.
    disk.apply(&[Persist::Truncate { from: 9 }]).unwrap();
    assert_eq!(DiskLog::open(dir.path()).unwrap().1.state, expected);
    disk.apply(&[Persist::Truncate { from: 1 }]).unwrap();
    assert_eq!(segment_len(dir.path()), 0);
    assert!(DiskLog::open(dir.path())
        .unwrap()
        .1
        .state
        .entries
        .is_empty());
}

#[test]
fn the_fence_and_seal_survive_a_reopen_and_a_damaged_epochs_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let fence = Persist::Fence {
        fence: Epoch(3),
        sealed: Some(Epoch(2)),
    };
    let expected = write_both(dir.path(), &[vec![fence]]);
    let recovered = DiskLog::open(dir.path()).unwrap().1;
    assert_eq!(
        (recovered.state.fence, recovered.state.sealed),
        (Epoch(3), Some(Epoch(2)))
    );
    assert_eq!(recovered.state, expected);
    std::fs::write(dir.path().join(EPOCHS_FILE), b"{\"fence\": 3,").unwrap();
    let err = DiskLog::open(dir.path()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, DiskLogError::CorruptEpochs { .. }), "{msg}");
    assert!(
        msg.contains(EPOCHS_FILE) && msg.contains("line 1 column"),
        "{msg}"
    );
}

#[test]
fn a_checkpoint_base_survives_a_reopen_and_a_later_fence() {
    // The batch `Replica::install_checkpoint` emits (the log, then the
    // base), and a fence after it, which keeps the base.
    let dir = tempfile::tempdir().unwrap();
    let mut install = appends(1, &[entry(1, 1), entry(1, 2)]);
    install.push(Persist::Checkpoint {
        pos: 2,
        epoch: Epoch(1),
    });
    let fence = Persist::Fence {
        fence: Epoch(2),
        sealed: None,
    };
    let expected = write_both(dir.path(), &[install, vec![fence]]);
    let recovered = DiskLog::open(dir.path()).unwrap().1.state;
    assert_eq!(recovered, expected);
    assert_eq!(recovered.checkpoint.map(|b| b.pos), Some(2));
}

#[test]
fn a_replica_install_batch_matches_the_in_memory_log() {
    // The batch `Replica::install` emits: truncate the divergent suffix,
    // append the recovered rest, seal.
    let dir = tempfile::tempdir().unwrap();
    let mut install = vec![Persist::Truncate { from: 2 }];
    install.extend(appends(2, &[entry(2, 7), entry(2, 8), entry(3, 9)]));
    install.push(Persist::Fence {
        fence: Epoch(3),
        sealed: Some(Epoch(3)),
    });
    let expected = write_both(
        dir.path(),
        &[
            appends(1, &[entry(1, 1), entry(1, 2), entry(1, 3)]),
            install,
        ],
    );
    assert_eq!(DiskLog::open(dir.path()).unwrap().1.state, expected);
}

#[test]
fn a_batch_cut_after_any_of_its_steps_reopens_cleanly_to_exactly_those_steps() {
    // What a process killed inside a batch leaves (`--crash-at
    // persist:K:S`): each step is durable before the next, so the disk
    // holds the first S steps whole and nothing of the rest; it opens
    // without a torn tail or an error, as the in-memory log after S steps.
    let base = appends(1, &[entry(1, 1), entry(1, 2), entry(1, 3)]);
    let mut install = vec![Persist::Truncate { from: 2 }];
    install.extend(appends(2, &[entry(2, 7), entry(2, 8)]));
    install.push(Persist::Fence {
        fence: Epoch(3),
        sealed: Some(Epoch(2)),
    });
    let group_commit = appends(4, &[entry(1, 4), entry(1, 5), entry(1, 6)]);
    let mut cuts = 0;
    for batch in [&install, &group_commit] {
        for steps in 0..=batch.len() {
            let dir = tempfile::tempdir().unwrap();
            let expected = write_both(dir.path(), &[base.clone(), batch[..steps].to_vec()]);
            let (_, recovered) = DiskLog::open(dir.path()).unwrap();
            assert_eq!(recovered.state, expected, "{steps} of {batch:?}");
            assert_eq!(recovered.torn_tail, None, "{steps} of {batch:?}");
            cuts += 1;
        }
    }
    assert_eq!(cuts, 5 + 4);
}

#[test]
fn a_damaged_last_record_is_cut_away_like_a_torn_one() {
    // A crash can leave the last record's bytes half-written, which looks
    // exactly like damage to it: the two are treated alike (module doc).
    let dir = tempfile::tempdir().unwrap();
    let mut both = Both::open(dir.path());
    let one = both.apply(&appends(1, &[entry(1, 1)]));
    let start = segment_len(dir.path());
    both.apply(&appends(2, &[entry(1, 2)]));
    drop(both);
    let mut bytes = std::fs::read(dir.path().join(SEGMENT_FILE)).unwrap();
    *bytes.last_mut().unwrap() ^= 0x01;
    let len = bytes.len() as u64;
    std::fs::write(dir.path().join(SEGMENT_FILE), &bytes).unwrap();
    let (_, recovered) = DiskLog::open(dir.path()).unwrap();
    assert_eq!(recovered.state, one);
    assert_eq!(
        recovered.torn_tail,
        Some(TornTail {
            offset: start,
            bytes_dropped: len - start
        })
    );
}

/// One step of a random walk over the disk log.
#[derive(Clone, Debug)]
enum Step {
    /// Append this many entries in one batch.
    Append(u8),
    /// Truncate from a position picked from this number.
    Truncate(u8),
    /// Raise the fence, sealing or not.
    Fence(bool),
    /// Close and reopen.
    Reopen,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (1u8..5).prop_map(Step::Append),
        2 => any::<u8>().prop_map(Step::Truncate),
        1 => any::<bool>().prop_map(Step::Fence),
        1 => Just(Step::Reopen),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// Any sequence of appends, truncations, fences and reopens leaves the
    /// disk log equal to the in-memory log given the same batches.
    #[test]
    fn a_random_walk_matches_the_in_memory_log(steps in proptest::collection::vec(step(), 1..24)) {
        let dir = tempfile::tempdir().unwrap();
        let mut both = Both::open(dir.path());
        let mut epoch = 1u64;
        for s in steps {
            let state = both.mem.load().unwrap();
            let len = state.entries.len() as Position;
            let batch = match s {
                Step::Append(n) => appends(
                    len + 1,
                    &(0..u64::from(n)).map(|k| entry(epoch, len + k)).collect::<Vec<_>>(),
                ),
                Step::Truncate(pick) => vec![Persist::Truncate { from: 1 + u64::from(pick) % (len + 2) }],
                Step::Fence(seal) => {
                    epoch += 1;
                    vec![Persist::Fence { fence: Epoch(epoch), sealed: seal.then_some(Epoch(epoch - 1)) }]
                }
                Step::Reopen => {
                    let (disk, recovered) = DiskLog::open(dir.path()).unwrap();
                    proptest::prop_assert_eq!(&recovered.state, &state);
                    proptest::prop_assert_eq!(recovered.torn_tail, None);
                    both.disk = disk;
                    continue;
                }
            };
            both.apply(&batch);
        }
        let expected = both.mem.load().unwrap();
        proptest::prop_assert_eq!(DiskLog::open(dir.path()).unwrap().1.state, expected);
    }
}
