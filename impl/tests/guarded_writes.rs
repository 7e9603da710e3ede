//! Property: interleavings of writers with stale versions never apply.

use arbitrary::{Arbitrary, Unstructured};
use livemove_impl::store::{CoordinationStore, MemRecordStorage, Record, StoreError, Write};
use livemove_impl::{Mutants, NodeId, StorageId, Version};
use proptest::prelude::*;

#[derive(Debug, Arbitrary)]
enum Step {
    /// Writer `w` (mod 3) reads the current version.
    Read(u8),
    /// Writer `w` writes with the version it last read.
    Write(u8, u8),
}

fn s(i: u8) -> StorageId {
    StorageId::first(NodeId(i))
}

fn pool(i: u8) -> Write {
    match i % 11 {
        0 => Write::Pause,
        1 => Write::Resume,
        2 => Write::AddLearner {
            target: s(4),
            leaving: None,
            replaces: None,
        },
        3 => Write::AdmitLearner {
            target: s(4),
            durable: 1,
            owner_confirmed: 1,
        },
        4 => Write::CancelMove,
        5 => Write::CloseAdmission { to: s(2) },
        6 => Write::CancelHandoff,
        7 => Write::AbortMove { target_down: true },
        8 => Write::SwapBack {
            target_down: true,
            durable: 1,
            owner_confirmed: 1,
        },
        9 => Write::AbortHandoff { to_down: true },
        _ => Write::OpenRecovery,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn stale_versions_never_apply(chunks in proptest::collection::vec(any::<[u8; 8]>(), 0..96)) {
        let steps: Vec<Step> = chunks.iter().filter_map(|c| Step::arbitrary(&mut Unstructured::new(c)).ok()).collect();
        let initial = Record::initial(s(1), [s(2), s(3)], 3);
        let mut st = CoordinationStore::open(MemRecordStorage::default(), initial, Mutants::NONE).unwrap();
        let mut read = [Version(1); 3];
        for step in steps {
            match step {
                Step::Read(w) => read[usize::from(w % 3)] = st.record().version,
                Step::Write(w, i) => {
                    let w = usize::from(w % 3);
                    let before = st.record().clone();
                    let writes_before = st.storage().writes();
                    match st.write(read[w], pool(i)) {
                        Ok(r) => {
                            prop_assert_eq!(read[w], before.version, "a stale write applied");
                            prop_assert_eq!(r.version, before.version.next());
                            prop_assert_eq!(st.storage().writes(), writes_before + 1);
                        }
                        Err(e) => {
                            if read[w] != before.version {
                                prop_assert_eq!(e, StoreError::StaleVersion { expected: read[w], found: before.version });
                            }
                            prop_assert_eq!(st.record(), &before);
                            prop_assert_eq!(st.storage().writes(), writes_before);
                        }
                    }
                }
            }
        }
    }
}
