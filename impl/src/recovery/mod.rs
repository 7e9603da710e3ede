//! Recovery driver logic that is not a guarded write: choosing the recovered
//! tail from the sealed copies.
//!
//! The guards (E - W + 1 seals, W receipts of the counted set, activation at
//! epoch + 1) live in `store::write`; the seal count uses the W the owner
//! may still be confirming on (`store::write::seal_quorum`).

use crate::entry::Entry;
use crate::ids::StorageId;
use crate::store::RecoveredTail;

/// The most up-to-date sealed log: highest last epoch tag, then longest,
/// then the lowest storage id (ties hold the same history: one owner per
/// epoch writes one entry per position).
///
/// Every confirmed entry is on W counted copies and the sealed set has E -
/// W + 1 members of the eligible set, so some sealed copy holds it; the
/// copy with the newest last epoch holds every entry the newest owner
/// confirmed, and below that its history is the confirmed one.
pub fn choose_tail<'a>(
    logs: impl IntoIterator<Item = (StorageId, &'a [Entry])>,
) -> Option<RecoveredTail> {
    let mut best: Option<(StorageId, &'a [Entry])> = None;
    for (s, log) in logs {
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
        let t = choose_tail([
            (StorageId::first(NodeId(1)), a.as_slice()),
            (StorageId::first(NodeId(2)), b.as_slice()),
        ])
        .unwrap();
        assert_eq!(t.source, StorageId::first(NodeId(2)));
        assert_eq!(t.entries, b);
    }

    #[test]
    fn longer_log_wins_within_an_epoch() {
        let a = log(&[1, 1]);
        let b = log(&[1, 1, 1]);
        let t = choose_tail([
            (StorageId::first(NodeId(1)), a.as_slice()),
            (StorageId::first(NodeId(2)), b.as_slice()),
        ])
        .unwrap();
        assert_eq!(t.entries.len(), 3);
    }

    #[test]
    fn no_sealed_copy_no_tail() {
        assert_eq!(choose_tail(std::iter::empty()), None);
    }
}
