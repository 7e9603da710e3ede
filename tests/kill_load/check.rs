//! The check at the end of a run, from the disks, every process stopped:
//! every publish whose confirm the client got is on the final owner and on
//! W counted copies at its position, so is every settle's `Delete`, and no
//! copy holds a message, or a message's settle, twice.

use livemove_impl::store::Record;
use livemove_impl::{Entry, Op, Position, StorageId};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::partition::Partition;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A publish or a settle whose confirm the client got: the entry `op` at
/// `pos` of `partition`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Confirmed {
    pub partition: Partition,
    pub pos: Position,
    pub op: Op,
}

/// Read every node's log of every partition back (`<data>/n<N>/p<P>`) and
/// check `confirmed` against the final records; panics naming the first
/// entry missing or held twice. Returns how many confirmed entries it
/// found on the final owner and W counted copies (all of them).
pub fn disks(
    root: &Path,
    nodes: &[u8],
    records: &BTreeMap<Partition, Record>,
    confirmed: &[Confirmed],
) -> usize {
    let mut logs: BTreeMap<(Partition, u8), Vec<Entry>> = BTreeMap::new();
    for &p in records.keys() {
        for &n in nodes {
            let dir = p.data_dir(&root.join(format!("n{n}")));
            if !dir.exists() {
                continue;
            }
            let (_, recovered) = DiskLog::open(&dir)
                .unwrap_or_else(|e| panic!("n{n}'s log of {p} does not open: {e}"));
            no_twice(n, p, &recovered.state.entries);
            logs.insert((p, n), recovered.state.entries);
        }
    }
    for c in confirmed {
        let r = &records[&c.partition];
        let at = |s: &StorageId| {
            logs.get(&(c.partition, s.node.0))
                .and_then(|l| l.get(c.pos as usize - 1))
                .copied()
        };
        let entry = at(&r.owner);
        assert!(
            entry.is_some_and(|e| e.op == c.op),
            "confirmed {:?} at {} of {} is not on the final owner {}: {entry:?}",
            c.op,
            c.pos,
            c.partition,
            r.owner
        );
        let holders: Vec<StorageId> = r.counted().into_iter().filter(|s| at(s) == entry).collect();
        assert!(
            holders.len() >= usize::from(r.confirm_w),
            "confirmed {:?} at {} of {} is on {holders:?}, fewer than W = {}",
            c.op,
            c.pos,
            c.partition,
            r.confirm_w
        );
    }
    confirmed.len()
}

/// No message published twice, and none settled twice, on one copy.
fn no_twice(n: u8, p: Partition, entries: &[Entry]) {
    let mut puts = BTreeSet::new();
    let mut deletes = BTreeSet::new();
    for (i, e) in entries.iter().enumerate() {
        let fresh = match e.op {
            Op::Put { key, .. } => puts.insert(key),
            Op::Delete { key } => deletes.insert(key),
            Op::Missing => panic!("n{n} holds a missing entry at {} of {p}", i + 1),
        };
        assert!(
            fresh,
            "n{n} holds {:?} twice in {p} (again at {})",
            e.op,
            i + 1
        );
    }
}
