//! Store tests: guarded writes, and the store crashed and reloaded at every
//! guarded-write boundary (note 1, implementation order 2).

use super::resume::{next_step, NextStep};
use super::*;
use crate::ids::{Epoch, NodeId, StorageId};
use crate::mutant::Mutants;
use std::path::PathBuf;

fn s(i: u8) -> StorageId {
    StorageId::first(NodeId(i))
}

fn initial() -> Record {
    Record::initial(s(1), [s(2), s(3)], 3)
}

fn mem() -> CoordinationStore<MemRecordStorage> {
    CoordinationStore::open(MemRecordStorage::default(), initial(), Mutants::NONE).unwrap()
}

#[test]
fn stale_version_is_refused_and_changes_nothing() {
    let mut st = mem();
    let v = st.record().version;
    st.write(v, Write::Pause).unwrap();
    let before = st.record().clone();
    assert_eq!(
        st.write(v, Write::Resume),
        Err(StoreError::StaleVersion {
            expected: v,
            found: v.next()
        })
    );
    assert_eq!(st.record(), &before);
}

#[test]
fn failed_persist_does_not_commit() {
    let mut st = mem();
    let before = st.record().clone();
    st.storage_mut().fail_next_persist();
    assert!(matches!(
        st.write_current(Write::Pause),
        Err(StoreError::Storage { .. })
    ));
    assert_eq!(st.record(), &before);
    st.write_current(Write::Pause).unwrap();
}

#[test]
fn every_write_bumps_the_version_by_one() {
    let mut st = mem();
    st.write_current(Write::Pause).unwrap();
    st.write_current(Write::Resume).unwrap();
    assert_eq!(st.record().version, crate::ids::Version(3));
}

#[test]
fn add_learner_needs_no_recovery_no_move_and_an_unassigned_target() {
    let mut st = mem();
    assert_eq!(
        st.write_current(Write::AddLearner {
            target: s(2),
            leaving: None,
            replaces: None,
        }),
        Err(StoreError::AlreadyAssigned { storage: s(2) })
    );
    st.write_current(Write::AddLearner {
        target: s(4),
        leaving: Some(s(3)),
        replaces: None,
    })
    .unwrap();
    assert!(matches!(
        st.write_current(Write::AddLearner {
            target: s(5),
            leaving: None,
            replaces: None,
        }),
        Err(StoreError::MoveInFlight { .. })
    ));
    st.write_current(Write::CancelMove).unwrap();
    st.write_current(Write::OpenRecovery).unwrap();
    assert_eq!(
        st.write_current(Write::AddLearner {
            target: s(4),
            leaving: None,
            replaces: None,
        }),
        Err(StoreError::RecoveryPending)
    );
}

#[test]
fn swap_must_name_the_requested_leaving_copy() {
    let mut st = mem();
    st.write_current(Write::AddLearner {
        target: s(4),
        leaving: Some(s(3)),
        replaces: None,
    })
    .unwrap();
    st.write_current(Write::AdmitLearner {
        target: s(4),
        durable: 0,
        owner_confirmed: 0,
    })
    .unwrap();
    assert_eq!(
        st.write_current(Write::Swap {
            target: s(4),
            leaving: s(2),
            durable: 0,
            owner_confirmed: 0,
        }),
        Err(StoreError::LeavingMismatch {
            requested: s(3),
            got: s(2)
        })
    );
}

#[test]
fn open_recovery_seals_e_minus_w_plus_one_with_the_w_the_owner_confirms_on() {
    let mut r = initial();
    r.eligible.insert(s(4));
    r.followers.insert(s(4));
    r.rf = 4; // raised, not adopted yet
    assert_eq!(write::seal_quorum(&r, Mutants::NONE), 3);
    assert_eq!(
        write::seal_quorum(&r, Mutants::only(crate::mutant::Mutant::SealWithNewW)),
        2
    );
}

/// With messages in flight a seal gives its history as evidence: the record
/// keeps the best one (newest last epoch, then longest) until the first
/// install fixes the tail, and evidence given after that changes nothing.
#[test]
fn seal_evidence_keeps_the_best_history_until_the_tail_is_fixed() {
    use crate::entry::{Entry, Op};
    let e = |epoch: u64, key: u64| Entry {
        epoch: Epoch(epoch),
        op: Op::Put { key, value: key },
    };
    let mut st = mem();
    st.write_current(Write::OpenRecovery).unwrap();
    let seal = |storage, h: Vec<Entry>| Write::Seal {
        storage,
        evidence: Some(h),
    };
    // Longer, but of an older epoch: the newer epoch wins.
    st.write_current(seal(s(2), vec![e(1, 1), e(1, 2)]))
        .unwrap();
    let rec = st.record().recovery.clone().unwrap();
    assert_eq!(rec.evidence.as_ref().unwrap().entries.len(), 2);
    st.write_current(seal(s(3), vec![e(2, 1)])).unwrap();
    let best = st.record().recovery.clone().unwrap().evidence.unwrap();
    assert_eq!((best.source, best.entries.clone()), (s(3), vec![e(2, 1)]));
    // The first install fixes the tail from the evidence.
    st.write_current(Write::InstallRecovered {
        storage: s(3),
        tail: best.clone(),
    })
    .unwrap();
    // Evidence after that is recorded as a seal but changes no choice.
    st.write_current(seal(s(1), vec![e(2, 1), e(2, 2)]))
        .unwrap();
    let rec = st.record().recovery.clone().unwrap();
    assert_eq!(rec.evidence.unwrap(), best);
    assert!(rec.sealed.contains(&s(1)));
}

/// The writes of note 1's move story, the handoff and a recovery, in order.
fn script() -> Vec<Write> {
    let tail = write::tail_of(s(2), &[]);
    vec![
        Write::AddLearner {
            target: s(4),
            leaving: None,
            replaces: None,
        },
        Write::AdmitLearner {
            target: s(4),
            durable: 500,
            owner_confirmed: 480,
        },
        Write::Swap {
            target: s(4),
            leaving: s(3),
            durable: 500,
            owner_confirmed: 490,
        },
        Write::OwnerSwitch {
            boundary: 500,
            target_durable: 490,
        },
        Write::RemoveLeaving {
            target_durable: 500,
        },
        Write::CloseAdmission { to: s(4) },
        Write::ReportFinalBoundary { boundary: 520 },
        Write::CommitHandoff {
            durable: [(s(2), 520), (s(4), 520)].into(),
        },
        Write::ActivateOwner,
        Write::OpenRecovery,
        Write::Seal {
            storage: s(2),
            evidence: None,
        },
        Write::Seal {
            storage: s(1),
            evidence: None,
        },
        Write::InstallRecovered {
            storage: s(2),
            tail: tail.clone(),
        },
        Write::InstallRecovered {
            storage: s(1),
            tail,
        },
        Write::ActivateRecovery { candidate: s(2) },
    ]
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("livemove-store-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("record.jsonl");
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn the_script_runs_in_memory() {
    let mut st = mem();
    for w in script() {
        st.write_current(w.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", w.action()));
    }
    let r = st.record();
    assert_eq!(r.owner, s(2));
    assert_eq!(r.epoch, Epoch(3));
    assert_eq!(next_step(r), NextStep::Idle);
}

/// Crash after every guarded write: reload from disk, check the record and
/// the resumed next step, then go on from the reloaded store.
#[test]
fn store_crashed_and_reloaded_at_every_guarded_write_boundary() {
    let path = temp_path("every-write");
    let mut expected = mem();
    let mut st =
        CoordinationStore::open(FileRecordStorage::new(&path), initial(), Mutants::NONE).unwrap();
    for w in script() {
        expected.write_current(w.clone()).unwrap();
        st.write_current(w.clone()).unwrap();
        drop(st); // crash: only the file survives
        st = CoordinationStore::open(FileRecordStorage::new(&path), initial(), Mutants::NONE)
            .unwrap();
        assert_eq!(st.record(), expected.record(), "after {}", w.action());
        assert_eq!(next_step(st.record()), next_step(expected.record()));
    }
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

/// A crash in the middle of a write (a torn line) loses only that write; the
/// in-flight move resumes from its last committed phase.
#[test]
fn torn_write_is_not_committed_and_the_move_resumes_from_its_phase() {
    use std::io::Write as _;
    let path = temp_path("torn");
    let mut st =
        CoordinationStore::open(FileRecordStorage::new(&path), initial(), Mutants::NONE).unwrap();
    let script = script();
    for w in &script[..3] {
        st.write_current(w.clone()).unwrap();
    }
    let committed = st.record().clone();
    let mut raw = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    raw.write_all(b"\n{\"version\":5,\"epoch\":").unwrap();
    drop(st);
    let mut st =
        CoordinationStore::open(FileRecordStorage::new(&path), initial(), Mutants::NONE).unwrap();
    assert_eq!(st.record(), &committed);
    assert_eq!(next_step(st.record()), NextStep::OwnerSwitch);
    st.write_current(script[3].clone()).unwrap();
    assert_eq!(
        next_step(st.record()),
        NextStep::RemoveLeaving { boundary: 500 }
    );
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn file_storage_compacts_and_still_reloads() {
    let path = temp_path("compact");
    let mut st =
        CoordinationStore::open(FileRecordStorage::new(&path), initial(), Mutants::NONE).unwrap();
    for i in 0..(storage::RECORDS_PER_FILE_MAX + 10) {
        let w = if i % 2 == 0 {
            Write::Pause
        } else {
            Write::Resume
        };
        st.write_current(w).unwrap();
    }
    let last = st.record().clone();
    let lines = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .count();
    assert!(lines < storage::RECORDS_PER_FILE_MAX);
    let st =
        CoordinationStore::open(FileRecordStorage::new(&path), initial(), Mutants::NONE).unwrap();
    assert_eq!(st.record(), &last);
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}
