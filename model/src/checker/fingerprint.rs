//! A state's 64-bit fingerprint, and the probability that two of them
//! collided. The compact mode's set of fingerprints is in `fptable.rs`.

use crate::state::State;
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
