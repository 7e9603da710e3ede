//! Recovery driver logic that is not a guarded write: choosing the recovered
//! tail from the sealed copies.
//!
//! The guards (E - W + 1 seals, W receipts of the counted set, activation at
//! epoch + 1) live in `store::write`; the seal count uses the W the owner
//! may still be confirming on (`store::write::seal_quorum`).

use crate::entry::Entry;
use crate::ids::StorageId;
use crate::mutant::{Mutant, Mutants};
use crate::store::{RecoveredTail, TailMark};

/// The most up-to-date sealed log among those that hold the tail the last
/// recovery confirmed (`recovered`): highest last epoch tag, then longest,
/// then the lowest storage id (ties hold the same history: one owner per
/// epoch writes one entry per position). `None` when no log qualifies.
///
/// Every confirmed entry is on W counted copies and the sealed set has E -
/// W + 1 members of the eligible set, so some sealed copy holds it, and
/// with it the last recovered tail, which every confirmed history extends.
/// Among the copies that hold that tail, the one with the newest last
/// epoch holds every entry the newest owner confirmed. A copy that lacks
/// it can carry a newer tag (an entry of an owner a recovery replaced,
/// left out of the tail that recovery confirmed, whose entries keep their
/// older tags): it is no candidate (finding 34). Under
/// `recovery_trusts_last_tag` every log is.
pub fn choose_tail<'a>(
    logs: impl IntoIterator<Item = (StorageId, &'a [Entry])>,
    recovered: Option<TailMark>,
    mutants: Mutants,
) -> Option<RecoveredTail> {
    let mut best: Option<(StorageId, &'a [Entry])> = None;
    let any = mutants.on(Mutant::RecoveryTrustsLastTag);
    for (s, log) in logs {
        if !any && !TailMark::held_by(recovered, log) {
            continue;
        }
        let key = |l: &[Entry]| (l.last().map(|e| e.epoch), l.len());
        let better = match best {
            None => true,
            Some((bs, bl)) => key(log) > key(bl) || (key(log) == key(bl) && s < bs),
        };
        if better {
            best = Some((s, log));
        }
    }
    best.map(|(source, entries)| RecoveredTail {
        source,
        entries: entries.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Op;
    use crate::ids::{Epoch, NodeId};

    fn log(epochs: &[u64]) -> Vec<Entry> {
        epochs
            .iter()
            .map(|e| Entry {
                epoch: Epoch(*e),
                op: Op::Delete { key: *e },
            })
            .collect()
    }

    #[test]
    fn newest_last_epoch_wins_over_length() {
        let a = log(&[1, 1, 1, 1]);
        let b = log(&[1, 2]);
        let t = choose_tail(
            [
                (StorageId::first(NodeId(1)), a.as_slice()),
                (StorageId::first(NodeId(2)), b.as_slice()),
            ],
            None,
            Mutants::NONE,
        )
        .unwrap();
        assert_eq!(t.source, StorageId::first(NodeId(2)));
        assert_eq!(t.entries, b);
    }

    #[test]
    fn longer_log_wins_within_an_epoch() {
        let a = log(&[1, 1]);
        let b = log(&[1, 1, 1]);
        let t = choose_tail(
            [
                (StorageId::first(NodeId(1)), a.as_slice()),
                (StorageId::first(NodeId(2)), b.as_slice()),
            ],
            None,
            Mutants::NONE,
        )
        .unwrap();
        assert_eq!(t.entries.len(), 3);
    }

    #[test]
    fn no_sealed_copy_no_tail() {
        assert_eq!(choose_tail(std::iter::empty(), None, Mutants::NONE), None);
    }

    /// Finding 34: the last recovery confirmed [1@e1]; a copy holding an
    /// entry of the owner that recovery replaced ([2@e2], never confirmed)
    /// has the newer tag but lacks that tail, so it is no candidate. Under
    /// the mutant it wins and the confirmed entry is lost.
    #[test]
    fn a_newer_tag_without_the_last_recovered_tail_is_no_candidate() {
        let confirmed = log(&[1]);
        let stale = vec![Entry {
            epoch: Epoch(2),
            op: Op::Delete { key: 9 },
        }];
        let mark = TailMark::of(&confirmed);
        let logs = [
            (StorageId::first(NodeId(1)), confirmed.as_slice()),
            (StorageId::first(NodeId(2)), stale.as_slice()),
        ];
        let t = choose_tail(logs, mark, Mutants::NONE).unwrap();
        assert_eq!(t.entries, confirmed);
        let m = Mutants::only(Mutant::RecoveryTrustsLastTag);
        assert_eq!(choose_tail(logs, mark, m).unwrap().entries, stale);
        // A log that extends the tail with a newer entry is a candidate.
        let newer = [confirmed.clone(), log(&[3])].concat();
        let t = choose_tail(
            [
                (StorageId::first(NodeId(1)), confirmed.as_slice()),
                (StorageId::first(NodeId(3)), newer.as_slice()),
            ],
            mark,
            Mutants::NONE,
        )
        .unwrap();
        assert_eq!(t.entries, newer);
    }
}
