//! The compact visited set: a 64-bit fingerprint and a parent index per
//! state, and a table of state indices keyed by fingerprint.
//!
//! Bytes per state: 8 (fingerprint) + 4 (parent) + 5 per table bucket (a
//! 4-byte index and hashbrown's control byte), with between 8/7 and 16/7
//! buckets per state depending on where the table is in its doubling: 17.7
//! to 23.4 bytes in all. The table is dropped before the acyclicity check,
//! which needs 4 bytes per state of in-degrees instead.

use crate::state::State;
use hashbrown::HashTable;
use std::hash::{Hash, Hasher};

/// A `Hasher` around XXH3-64: `State` hashes as one write of its packed
/// bytes, so this is one call of a well-mixed 64-bit hash (FxHash, good
/// enough for a hash table, is too weak for fingerprints that must not
/// collide).
struct Xxh3(u64);

impl Hasher for Xxh3 {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) fn fingerprint(s: &State) -> u64 {
    let mut h = Xxh3(0);
    s.hash(&mut h);
    h.finish()
}

/// The estimated probability that a fingerprint collision hid a state, for
/// `n` distinct fingerprints of 64 bits: the birthday bound n(n-1)/2^65.
/// A state is hidden when its fingerprint equals that of an earlier,
/// different state; the k-th new state meets k earlier fingerprints, each
/// equal with probability 2^-64, and the sum over k < n is n(n-1)/2 * 2^-64.
/// (TLC prints the same quantity as its "optimistic" estimate when states
/// are discovered once each; it also prints a pessimistic bound from the
/// number of generated states.)
pub fn collision_probability(n: usize) -> f64 {
    let n = n as f64;
    n * (n - 1.0).max(0.0) / 2f64.powi(65)
}

pub(super) struct FpSet {
    pub fps: Vec<u64>,
    pub parents: Vec<u32>,
    table: HashTable<u32>,
}

impl FpSet {
    pub fn new() -> FpSet {
        FpSet {
            fps: Vec::new(),
            parents: Vec::new(),
            table: HashTable::new(),
        }
    }
    pub fn len(&self) -> usize {
        self.fps.len()
    }
    /// The index of fingerprint `fp`, inserting it with `parent` if new.
    pub fn insert(&mut self, fp: u64, parent: u32) -> (u32, bool) {
        let fps = &self.fps;
        if let Some(&i) = self.table.find(fp, |&i| fps[i as usize] == fp) {
            return (i, false);
        }
        let i = u32::try_from(self.fps.len())
            .ok()
            .filter(|&i| i != super::ROOT)
            .expect("2^32 - 1 states: the u32 state index is exhausted");
        self.fps.push(fp);
        self.parents.push(parent);
        let fps = &self.fps;
        self.table.insert_unique(fp, i, |&j| fps[j as usize]);
        (i, true)
    }
    /// Free the table; fingerprints and parent links stay for path rebuilds.
    pub fn drop_table(&mut self) {
        self.table = HashTable::new();
    }
    /// Bytes in use (a vector's unused capacity is never touched, so it is
    /// not resident).
    pub fn bytes(&self) -> usize {
        self.fps.len() * 8 + self.parents.len() * 4 + self.table.allocation_size()
    }
}
