//! What a run must show at the end of its healing phase, read from the
//! disks after every process stopped: each confirmed entry on the owner and
//! on W counted copies, no message twice on any copy, and every accepted
//! publish confirmed.

use livemove_impl::replica::DurableLog;
use livemove_impl::store::Record;
use livemove_impl::{Entry, Op, Position, StorageId};
use std::collections::{BTreeMap, BTreeSet};

/// Why a seed failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimFailure {
    /// A confirmed entry is held by fewer than W counted copies.
    #[error(
        "confirmed entry at {pos} ({entry:?}) is on {holders:?}, fewer than W = {w} counted copies"
    )]
    LostConfirmed {
        /// The position.
        pos: Position,
        /// The entry the owner confirmed there.
        entry: Entry,
        /// The counted copies that hold it.
        holders: Vec<StorageId>,
        /// W.
        w: u8,
    },
    /// Two owners confirmed different entries at one position.
    #[error("two owners confirmed position {pos}: {first:?}, then {second:?}")]
    ForkedConfirm {
        /// The position.
        pos: Position,
        /// The entry confirmed there first.
        first: Entry,
        /// The other.
        second: Entry,
    },
    /// A copy holds one message at two positions.
    #[error("{copy} holds message {key} at positions {positions:?}")]
    Duplicate {
        /// The copy.
        copy: StorageId,
        /// The message key.
        key: u64,
        /// Where.
        positions: Vec<Position>,
    },
    /// The healing phase ended with accepted publishes not confirmed.
    #[error(
        "after {steps} healing steps the owner confirmed {confirmed} of {published} published"
    )]
    NotHealed {
        /// Healing steps taken.
        steps: u64,
        /// The owner's confirmed tail.
        confirmed: Position,
        /// Messages published.
        published: u64,
    },
    /// A restart did not cut away the torn record a kill left.
    #[error("{written} kills left a torn record, {cut} restarts cut one away")]
    TornTailKept {
        /// Torn records written.
        written: u64,
        /// Torn records cut at a restart.
        cut: u64,
    },
    /// A power loss took from a node's disk what the node held as durable
    /// (and may have acknowledged): the node's promise is broken at the
    /// disk, whatever the protocol makes of it afterwards. Reported only
    /// when the run passes every other check, so those stay visible.
    #[error("a power loss took from {node}'s disk what it held as durable: {what}")]
    DurableLost {
        /// The node whose power was lost.
        node: livemove_impl::NodeId,
        /// The first difference between what it held and its disk.
        what: String,
    },
    /// A node stopped on an error of its disk or control plane.
    #[error("node stopped: {reason}")]
    NodeFailed {
        /// The error.
        reason: String,
    },
}

/// Check the durable state against the confirms the owner reported.
pub fn check_durable(
    confirmed: &BTreeMap<Position, Entry>,
    record: &Record,
    disks: &BTreeMap<StorageId, DurableLog>,
) -> Result<(), SimFailure> {
    for (copy, d) in disks {
        let mut seen: BTreeMap<u64, Vec<Position>> = BTreeMap::new();
        for (i, e) in d.entries.iter().enumerate() {
            if let Op::Put { key, .. } = e.op {
                seen.entry(key).or_default().push(i as Position + 1);
            }
        }
        if let Some((key, positions)) = seen.into_iter().find(|(_, p)| p.len() > 1) {
            return Err(SimFailure::Duplicate {
                copy: *copy,
                key,
                positions,
            });
        }
    }
    let counted: BTreeSet<StorageId> = record.counted();
    for (&pos, &entry) in confirmed {
        let holders: Vec<StorageId> = counted
            .iter()
            .copied()
            .filter(|s| {
                disks.get(s).and_then(|d| d.entries.get((pos - 1) as usize)) == Some(&entry)
            })
            .collect();
        let on_owner = holders.contains(&record.owner);
        if !on_owner || holders.len() < usize::from(record.confirm_w) {
            return Err(SimFailure::LostConfirmed {
                pos,
                entry,
                holders,
                w: record.confirm_w,
            });
        }
    }
    Ok(())
}

/// The first difference between what a node held as durable and what its
/// disk holds after a power loss, if any: a position, the fence, the seal
/// or the checkpoint base.
pub fn durable_difference(held: &DurableLog, on_disk: &DurableLog) -> Option<String> {
    let len = held.entries.len().max(on_disk.entries.len());
    for i in 0..len {
        let (h, d) = (held.entries.get(i), on_disk.entries.get(i));
        if h != d {
            let show = |e: Option<&Entry>| e.map_or("nothing".to_string(), |e| format!("{e:?}"));
            return Some(format!(
                "position {}: held {}, on disk {}",
                i + 1,
                show(h),
                show(d)
            ));
        }
    }
    if held.fence != on_disk.fence {
        return Some(format!(
            "fence: held {:?}, on disk {:?}",
            held.fence, on_disk.fence
        ));
    }
    if held.sealed != on_disk.sealed {
        return Some(format!(
            "seal: held {:?}, on disk {:?}",
            held.sealed, on_disk.sealed
        ));
    }
    if held.checkpoint != on_disk.checkpoint {
        return Some(format!(
            "checkpoint: held {:?}, on disk {:?}",
            held.checkpoint, on_disk.checkpoint
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use livemove_impl::{Epoch, NodeId};

    fn s(n: u8) -> StorageId {
        StorageId::first(NodeId(n))
    }

    fn put(key: u64) -> Entry {
        Entry {
            epoch: Epoch(1),
            op: Op::Put { key, value: key },
        }
    }

    fn disks(logs: &[(u8, &[Entry])]) -> BTreeMap<StorageId, DurableLog> {
        logs.iter()
            .map(|(n, e)| {
                (
                    s(*n),
                    DurableLog {
                        entries: e.to_vec(),
                        ..Default::default()
                    },
                )
            })
            .collect()
    }

    fn record() -> Record {
        Record::initial(s(1), [s(2), s(3)], 3)
    }

    #[test]
    fn a_confirmed_entry_on_the_owner_and_one_follower_passes() {
        let confirmed = BTreeMap::from([(1, put(1))]);
        let d = disks(&[(1, &[put(1)]), (2, &[put(1)]), (3, &[])]);
        assert_eq!(check_durable(&confirmed, &record(), &d), Ok(()));
    }

    #[test]
    fn a_confirmed_entry_on_the_owner_alone_is_lost() {
        let confirmed = BTreeMap::from([(1, put(1))]);
        let d = disks(&[(1, &[put(1)]), (2, &[put(9)]), (3, &[])]);
        assert_eq!(
            check_durable(&confirmed, &record(), &d),
            Err(SimFailure::LostConfirmed {
                pos: 1,
                entry: put(1),
                holders: vec![s(1)],
                w: 2
            })
        );
    }

    #[test]
    fn a_confirmed_entry_missing_from_the_owner_is_lost_even_on_two_followers() {
        let confirmed = BTreeMap::from([(1, put(1))]);
        let d = disks(&[(1, &[]), (2, &[put(1)]), (3, &[put(1)])]);
        assert!(matches!(
            check_durable(&confirmed, &record(), &d),
            Err(SimFailure::LostConfirmed { .. })
        ));
    }

    #[test]
    fn a_message_held_twice_by_a_copy_is_a_duplicate() {
        let d = disks(&[(1, &[put(1)]), (3, &[put(1), put(1)])]);
        assert_eq!(
            check_durable(&BTreeMap::new(), &record(), &d),
            Err(SimFailure::Duplicate {
                copy: s(3),
                key: 1,
                positions: vec![1, 2]
            })
        );
    }

    #[test]
    fn a_disk_that_lost_a_held_entry_or_seal_is_named_at_the_first_difference() {
        let held = DurableLog {
            entries: vec![put(1), put(2)],
            sealed: Some(Epoch(1)),
            ..Default::default()
        };
        assert_eq!(durable_difference(&held, &held), None);
        let short = DurableLog {
            entries: vec![put(1)],
            ..held.clone()
        };
        let what = durable_difference(&held, &short).unwrap();
        assert!(what.starts_with("position 2: held Entry"), "{what}");
        assert!(what.ends_with("on disk nothing"), "{what}");
        let unsealed = DurableLog {
            sealed: None,
            ..held.clone()
        };
        assert_eq!(
            durable_difference(&held, &unsealed).as_deref(),
            Some("seal: held Some(Epoch(1)), on disk None")
        );
    }
}
