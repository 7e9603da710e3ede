//! The compact mode's visited set: 64-bit fingerprints and nothing else,
//! in an ordered open-addressed table (Amble and Knuth's), split into
//! shards by the fingerprint's top bits.
//!
//! Why this shape. A slot is the fingerprint itself, 8 bytes: no state
//! index, no control byte. The table stays between 8/9 and 8/10 full, so a
//! state costs 8.9 to 10 bytes. Within a shard the slots hold their
//! fingerprints in increasing order (each at or after its home slot, the
//! home slot growing with the fingerprint), which buys three things: a
//! lookup that misses stops at the first larger fingerprint, so a table 90%
//! full stays fast; growing a shard is one ordered pass; and the shards read
//! in turn are every fingerprint sorted, which [`Indices`] turns back into
//! state indices for the acyclicity check without sorting anything. Shards
//! grow one at a time, so growing never holds a second copy of the table.

/// Shards: 2^5, chosen by a fingerprint's top 5 bits. Few enough that a
/// large table's shards are each past the allocator's largest threshold
/// for mapping memory of its own (32 MiB), so a shard freed after growing
/// goes back to the system at once instead of lingering in the heap.
const SHARD_BITS: u32 = 5;
/// A shard grows when more than 9 of 10 home slots are taken...
const LOAD: (usize, usize) = (9, 10);
/// ...to 9/8 of its home slots: a state costs at most 10 bytes of table
/// and at least 8.9, and each fingerprint moves about eight times in all.
const GROWTH: (usize, usize) = (9, 8);
const MIN_HOMES: usize = 16;

use std::collections::HashMap;

/// The home slot of `fp` among `homes`: its bits below the shard's, scaled
/// to the shard (monotone in the fingerprint, which keeps the order).
fn home(fp: u64, homes: usize) -> usize {
    (((fp << SHARD_BITS) as u128 * homes as u128) >> 64) as usize
}

/// Empty slots for `homes` home slots, with room for runs past the last.
fn empty_slots(homes: usize) -> Vec<u64> {
    let mut slots = Vec::with_capacity(homes + homes / 64 + 8);
    super::scratch::huge_pages(&slots);
    slots.resize(homes, 0);
    slots
}

struct Shard {
    /// Fingerprints in increasing order, 0 for an empty slot; a run of
    /// full slots may reach past the last home slot, so `slots` grows.
    slots: Vec<u64>,
    homes: usize,
    len: usize,
}

impl Shard {
    fn new(homes: usize) -> Shard {
        Shard {
            slots: empty_slots(homes),
            homes,
            len: 0,
        }
    }

    /// Where `fp` is (Ok) or where it belongs (Err).
    fn find(&self, fp: u64) -> Result<usize, usize> {
        let mut i = home(fp, self.homes);
        while let Some(&s) = self.slots.get(i) {
            if s == fp {
                return Ok(i);
            }
            if s == 0 || s > fp {
                return Err(i);
            }
            i += 1;
        }
        Err(i)
    }

    /// Put `fp` at `i`, shifting the run from `i` on one slot right.
    fn insert_at(&mut self, i: usize, fp: u64) {
        let empty = match self.slots[i.min(self.slots.len())..]
            .iter()
            .position(|&s| s == 0)
        {
            Some(k) => i + k,
            None => {
                self.slots.push(0);
                self.slots.len() - 1
            }
        };
        self.slots.copy_within(i..empty, i + 1);
        self.slots[i] = fp;
        self.len += 1;
    }

    fn grow(&mut self) {
        let homes = (self.homes * GROWTH.0 / GROWTH.1).max(self.homes + 1);
        let mut slots = empty_slots(homes);
        let mut next = 0;
        for &fp in self.slots.iter().filter(|&&s| s != 0) {
            let at = home(fp, homes).max(next);
            if at < slots.len() {
                slots[at] = fp;
            } else {
                slots.push(fp);
            }
            next = at + 1;
        }
        self.slots = slots;
        self.homes = homes;
    }

    fn insert(&mut self, fp: u64) -> bool {
        if (self.len + 1) * LOAD.1 > self.homes * LOAD.0 {
            self.grow();
        }
        match self.find(fp) {
            Ok(_) => false,
            Err(i) => {
                self.insert_at(i, fp);
                true
            }
        }
    }
}

pub(super) struct FpTable {
    shards: Vec<Shard>,
    /// Fingerprint 0 marks an empty slot, so it is kept apart.
    zero: bool,
    len: usize,
}

impl FpTable {
    pub fn new() -> FpTable {
        FpTable {
            shards: (0..1 << SHARD_BITS)
                .map(|_| Shard::new(MIN_HOMES))
                .collect(),
            zero: false,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Add `fp`; whether it was new.
    pub fn insert(&mut self, fp: u64) -> bool {
        let fresh = if fp == 0 {
            !std::mem::replace(&mut self.zero, true)
        } else {
            self.shards[(fp >> (64 - SHARD_BITS)) as usize].insert(fp)
        };
        self.len += fresh as usize;
        fresh
    }

    /// Ask the CPU to load the cache line of `fp`'s home slot: the merge
    /// calls this a few successors ahead of `insert`, so the table's
    /// random accesses overlap instead of stalling one after another. Only
    /// a hint: it changes no state, and on other targets it does nothing.
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let shard = &self.shards[(fp >> (64 - SHARD_BITS)) as usize];
            if let Some(slot) = shard.slots.get(home(fp, shard.homes)) {
                // SAFETY: a prefetch only hints at an address, here one
                // inside a live slice; it never faults and writes nothing.
                unsafe {
                    std::arch::x86_64::_mm_prefetch(
                        (slot as *const u64).cast::<i8>(),
                        std::arch::x86_64::_MM_HINT_T0,
                    );
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fp;
    }

    /// Bytes held (every slot is touched once a shard is a few percent
    /// full, so all of it is resident).
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.slots.capacity() * 8).sum()
    }

    /// The fingerprints' indices: `indices` calls back with each state's
    /// fingerprint in index order, once on each of `workers` threads (each
    /// numbers its share of the buckets). The table is freed a shard at a
    /// time as the sorted array grows.
    pub fn into_indices<E: Send>(
        self,
        workers: usize,
        indices: impl Fn(&mut dyn FnMut(u64)) -> Result<(), E> + Sync,
    ) -> Result<Indices, E> {
        let mut sorted = Vec::with_capacity(self.len);
        super::scratch::huge_pages(&sorted);
        if self.zero {
            sorted.push(0);
        }
        for shard in self.shards {
            sorted.extend(shard.slots.iter().filter(|&&s| s != 0));
        }
        assert_eq!(
            sorted.len(),
            self.len,
            "invariant broken: the fingerprint table lost count of its entries"
        );
        Indices::new(sorted, workers, indices)
    }
}

/// Every visited fingerprint with its state's index, in 8 bytes per state:
/// what turns the adjacency's fingerprints back into indices after the
/// search, when the table is gone and the check needs dense numbers.
///
/// The fingerprints are sorted and cut into buckets by their top `bits`
/// bits; an entry holds the next 32 bits (its key within the bucket) and
/// the index. Two fingerprints of one bucket may share a key (about once in
/// a search of 10^8 states): those few go to `shared`, whole.
pub(super) struct Indices {
    entries: Vec<u64>,
    /// Where each bucket starts in `entries`.
    starts: Vec<u32>,
    bits: u32,
    shared: HashMap<u64, u32>,
}

/// An index not yet known.
const UNKNOWN: u32 = u32::MAX;

impl Indices {
    /// From every fingerprint, sorted; `indices` then calls back with each
    /// state's fingerprint in index order, once on each of `workers`
    /// threads.
    fn new<E: Send>(
        mut sorted: Vec<u64>,
        workers: usize,
        indices: impl Fn(&mut dyn FnMut(u64)) -> Result<(), E> + Sync,
    ) -> Result<Indices, E> {
        // About 64 fingerprints per bucket: a lookup searches one short run.
        let bits = (usize::BITS - (sorted.len() / 64).leading_zeros()).clamp(1, 24);
        let bucket = |fp: u64| fp >> (64 - bits);
        let key = |fp: u64| (fp << bits) >> 32 << 32;
        let mut starts = Vec::with_capacity((1 << bits) + 1);
        let mut at = 0;
        for b in 0..=(1u64 << bits) {
            while at < sorted.len() && bucket(sorted[at]) < b {
                at += 1;
            }
            starts.push(at as u32);
        }
        let mut shared = HashMap::new();
        for w in sorted.windows(2) {
            if bucket(w[0]) == bucket(w[1]) && key(w[0]) == key(w[1]) {
                shared.insert(w[0], UNKNOWN);
                shared.insert(w[1], UNKNOWN);
            }
        }
        for e in &mut sorted {
            *e = key(*e) | u64::from(UNKNOWN);
        }
        let mut numbering = Indices {
            entries: sorted,
            starts,
            bits,
            shared,
        };
        numbering.number(workers, indices)?;
        Ok(numbering)
    }

    /// Set every entry's index: each of `workers` threads reads every
    /// fingerprint in index order (`indices`) and sets those of its share
    /// of the buckets, a contiguous part of `entries`, so no two threads
    /// write one place; keys shared in a bucket are set after.
    fn number<E: Send>(
        &mut self,
        workers: usize,
        indices: impl Fn(&mut dyn FnMut(u64)) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let buckets = 1usize << self.bits;
        let parts = workers.clamp(1, buckets);
        let (bits, starts, shared) = (self.bits, &self.starts[..], &self.shared);
        let total = self.entries.len();
        let mut rest = &mut self.entries[..];
        let mut mine = Vec::with_capacity(parts);
        let mut offset = 0;
        for p in 0..parts {
            let (first, end) = (p * buckets / parts, (p + 1) * buckets / parts);
            let upto = starts[end] as usize;
            let (entries, after) = std::mem::take(&mut rest).split_at_mut(upto - offset);
            mine.push(Part {
                entries,
                offset,
                first,
                end,
            });
            rest = after;
            offset = upto;
        }
        let indices = &indices;
        let results: Vec<Result<Numbered, E>> = std::thread::scope(|scope| {
            let threads: Vec<_> = mine
                .into_iter()
                .map(|mut part| {
                    scope.spawn(move || {
                        let mut next = 0u32;
                        let mut hits = Vec::new();
                        let mut ahead = Ahead::new();
                        let set = |part: &mut Part, fp: u64, i: u32| {
                            let k = find_in(&part.view(starts, bits), fp) - part.offset;
                            part.entries[k] = part.entries[k] >> 32 << 32 | u64::from(i);
                        };
                        indices(&mut |fp| {
                            let i = next;
                            next += 1;
                            let b = (fp >> (64 - bits)) as usize;
                            if b < part.first || b >= part.end {
                                return;
                            }
                            if shared.contains_key(&fp) {
                                hits.push((fp, i));
                                return;
                            }
                            let due = ahead.push(&part.view(starts, bits), Some(fp), i);
                            if let Some((Some(fp), i)) = due {
                                set(&mut part, fp, i);
                            }
                        })?;
                        while let Some((Some(fp), i)) = ahead.pop() {
                            set(&mut part, fp, i);
                        }
                        Ok((next, hits))
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        panic!("invariant broken: a thread numbering the visited states panicked")
                    })
                })
                .collect()
        });
        for r in results {
            let (next, hits) = r?;
            assert_eq!(
                next as usize, total,
                "invariant broken: {next} records for {total} fingerprints"
            );
            for (fp, i) in hits {
                *self
                    .shared
                    .get_mut(&fp)
                    .expect("a shared key's fingerprint is in `shared`") = i;
            }
        }
        Ok(())
    }

    /// Where the entry of `fp` (not a shared one) is (see [`find_in`]).
    fn find(&self, fp: u64) -> usize {
        find_in(&self.view(), fp)
    }

    /// All of the entries, for lookups.
    pub fn view(&self) -> View<'_> {
        View {
            entries: &self.entries,
            offset: 0,
            starts: &self.starts,
            bits: self.bits,
        }
    }

    pub fn bytes(&self) -> usize {
        self.entries.capacity() * 8 + self.starts.capacity() * 4 + self.shared.capacity() * 16
    }

    /// The index of the state with fingerprint `fp`, which must have been
    /// visited: only 32 bits of it past the bucket are compared, so an
    /// unvisited one may pass for a visited neighbour.
    pub fn index(&self, fp: u64) -> u32 {
        let i = match self.shared.get(&fp) {
            Some(&i) => i,
            None => self.entries[self.find(fp)] as u32,
        };
        assert!(
            i != UNKNOWN,
            "invariant broken: fingerprint {fp:#x} has no record"
        );
        i
    }
}

/// Entries `offset..` of a numbering (all of them, or one thread's part),
/// with what a lookup needs.
pub(super) struct View<'a> {
    entries: &'a [u64],
    offset: usize,
    starts: &'a [u32],
    bits: u32,
}

/// What a thread numbering its part saw: how many fingerprints in all,
/// and those of its part whose key is shared, with their indices.
type Numbered = (u32, Vec<(u64, u32)>);

/// One thread's part of the entries while they are numbered: those of
/// buckets `first..end`, from `offset` on.
struct Part<'a> {
    entries: &'a mut [u64],
    offset: usize,
    first: usize,
    end: usize,
}

impl Part<'_> {
    fn view<'v>(&'v self, starts: &'v [u32], bits: u32) -> View<'v> {
        View {
            entries: self.entries,
            offset: self.offset,
            starts,
            bits,
        }
    }
}

impl View<'_> {
    /// The bounds of `fp`'s bucket, in the whole numbering.
    fn bucket(&self, fp: u64) -> (usize, usize) {
        let b = (fp >> (64 - self.bits)) as usize;
        (self.starts[b] as usize, self.starts[b + 1] as usize)
    }

    /// Where in its bucket of `n` entries `fp`'s key is most likely: the
    /// keys are uniform, so its rank is about its share of the key range.
    fn guess(&self, fp: u64, n: usize) -> usize {
        let key = (fp << self.bits) >> 32;
        ((key * n as u64) >> 32) as usize
    }

    /// Ask the CPU to load the cache line of `fp`'s bucket bounds.
    fn prefetch_bucket(&self, fp: u64) {
        prefetch(&self.starts[(fp >> (64 - self.bits)) as usize]);
    }

    /// Ask the CPU to load the cache line where `fp`'s entry likely is
    /// (its bucket bounds should be in cache by now).
    fn prefetch_entry(&self, fp: u64) {
        let (lo, hi) = self.bucket(fp);
        if lo < hi {
            prefetch(&self.entries[lo + self.guess(fp, hi - lo) - self.offset]);
        }
    }
}

/// Where the entry of `fp` (not a shared one) is, in the whole numbering:
/// from the guessed position, a step or two along the sorted keys (its key
/// is unique in its bucket: keys shared in a bucket are in `shared`).
fn find_in(v: &View, fp: u64) -> usize {
    let (lo, hi) = v.bucket(fp);
    let key = (fp << v.bits) >> 32;
    let run = &v.entries[lo - v.offset..hi - v.offset];
    let missing =
        || -> ! { panic!("invariant broken: fingerprint {fp:#x} is not in the visited set") };
    if run.is_empty() {
        missing();
    }
    let mut k = v.guess(fp, run.len());
    while k + 1 < run.len() && run[k] >> 32 < key {
        k += 1;
    }
    while k > 0 && run[k] >> 32 > key {
        k -= 1;
    }
    if run[k] >> 32 != key {
        missing();
    }
    lo + k
}

/// Ask the CPU to load the cache line of `x`. Only a hint: it changes no
/// state, and on other targets it does nothing.
#[inline]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints at an address, here a live reference;
    // it never faults and writes nothing.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            (x as *const T).cast::<i8>(),
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Lookups in [`Indices`] in flight, each with what its caller keeps with
/// it (`T`), handed back in the order they came in: a fingerprint's bucket
/// bounds are prefetched when it comes in, its entry's likely cache line
/// [`AHEAD`] lookups later, and it is handed back [`AHEAD`] lookups after
/// that, so the random accesses of many lookups overlap. `None` passes
/// through in order without a lookup.
pub(super) struct Ahead<T> {
    /// The last `2 * AHEAD` lookups taken in, a ring: the one at `at` is
    /// the oldest, `len` of them are held.
    ring: [(Option<u64>, T); 2 * AHEAD],
    at: usize,
    len: usize,
}

/// Lookups between the prefetches of one fingerprint and its lookup.
const AHEAD: usize = 12;

impl<T: Copy + Default> Ahead<T> {
    pub fn new() -> Ahead<T> {
        Ahead {
            ring: [(None, T::default()); 2 * AHEAD],
            at: 0,
            len: 0,
        }
    }

    /// Take in `fp` with `t`; what is due for its lookup now, if anything.
    #[inline]
    pub fn push(&mut self, ix: &View, fp: Option<u64>, t: T) -> Option<(Option<u64>, T)> {
        if let Some(fp) = fp {
            ix.prefetch_bucket(fp);
        }
        const N: usize = 2 * AHEAD;
        // The lookup taken in `AHEAD` ago: its bucket bounds should be in
        // cache by now.
        if self.len >= AHEAD {
            if let (Some(fp), _) = self.ring[(self.at + self.len - AHEAD) % N] {
                ix.prefetch_entry(fp);
            }
        }
        if self.len == N {
            let due = self.ring[self.at];
            self.ring[self.at] = (fp, t);
            self.at = (self.at + 1) % N;
            Some(due)
        } else {
            self.ring[(self.at + self.len) % N] = (fp, t);
            self.len += 1;
            None
        }
    }

    /// What is left, oldest first, once nothing more comes in.
    pub fn pop(&mut self) -> Option<(Option<u64>, T)> {
        if self.len == 0 {
            return None;
        }
        let due = self.ring[self.at];
        self.at = (self.at + 1) % (2 * AHEAD);
        self.len -= 1;
        Some(due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// The table's indices, numbering `order` from 0 on `workers` threads.
    fn numbered(t: FpTable, order: &[u64], workers: usize) -> Indices {
        t.into_indices(workers, |f| {
            order.iter().for_each(|&fp| f(fp));
            Ok::<_, ()>(())
        })
        .expect("no error to report")
    }

    #[test]
    fn the_table_holds_what_a_hash_set_holds() {
        // Numbered by one thread and by several, each its share of the
        // buckets.
        for workers in [1, 2, 3] {
            let mut rnd = xorshift(7);
            let mut t = FpTable::new();
            let mut want = HashSet::new();
            for k in 0..200_000u64 {
                // Many repeats, some clustered values and the empty marker.
                let fp = match k % 5 {
                    0 => rnd() % 1000,
                    1 => u64::MAX - rnd() % 1000,
                    _ => rnd(),
                };
                assert_eq!(t.insert(fp), want.insert(fp), "insert {fp:#x}");
            }
            assert_eq!(t.len(), want.len());
            let per_state = t.bytes() as f64 / t.len() as f64;
            assert!(per_state < 11.0, "{per_state:.2} bytes per fingerprint");
            // Indices in an order of their own (as insertion order would be).
            let mut order: Vec<u64> = want.into_iter().collect();
            order.sort_unstable_by_key(|fp| fp.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let numbering = numbered(t, &order, workers);
            for (i, &fp) in order.iter().enumerate() {
                assert_eq!(numbering.index(fp), i as u32, "{workers} workers");
            }
        }
    }

    #[test]
    fn a_grown_shard_stays_in_order_with_each_fingerprint_at_or_after_its_home() {
        // Clustered fingerprints make long runs, some past the last home
        // slot; every growth must place them all, in order.
        let mut rnd = xorshift(11);
        let mut t = FpTable::new();
        let mut want = HashSet::new();
        for k in 0..100_000u64 {
            let fp = match k % 3 {
                0 => (rnd() % 5000) | 1 << 63,
                1 => u64::MAX - rnd() % 5000,
                _ => rnd() | 1,
            };
            t.insert(fp);
            want.insert(fp);
            if k.is_power_of_two() || k == 99_999 {
                let mut held = 0;
                for shard in &t.shards {
                    let full: Vec<(usize, u64)> = shard
                        .slots
                        .iter()
                        .copied()
                        .enumerate()
                        .filter(|&(_, s)| s != 0)
                        .collect();
                    assert!(full.windows(2).all(|w| w[0].1 < w[1].1), "order after {k}");
                    assert!(
                        full.iter().all(|&(i, fp)| i >= home(fp, shard.homes)),
                        "a fingerprint before its home slot after {k}"
                    );
                    held += full.len();
                }
                assert_eq!(held, want.len(), "fingerprints held after {k}");
            }
        }
        assert!(want.iter().all(|&fp| !t.insert(fp)), "a fingerprint lost");
    }

    #[test]
    fn fingerprints_that_share_a_key_keep_their_own_indices() {
        // One bucket (top bit 0 with few fingerprints), the same 32 bits
        // after it, different low bits.
        let fps = [
            0x0123_4567_8000_0001u64,
            0x0123_4567_8000_0002,
            0x0123_4568_0000_0000,
            7,
        ];
        for workers in [1, 2] {
            let mut t = FpTable::new();
            for fp in fps {
                assert!(t.insert(fp));
            }
            let numbering = numbered(t, &fps, workers);
            assert_eq!(numbering.shared.len(), 2, "the pair that shares a key");
            for (i, &fp) in fps.iter().enumerate() {
                assert_eq!(numbering.index(fp), i as u32, "{workers} workers");
            }
        }
    }

    #[test]
    #[should_panic(expected = "1 records for 2 fingerprints")]
    fn a_fingerprint_without_a_record_is_a_broken_invariant() {
        let mut t = FpTable::new();
        t.insert(5);
        t.insert(6);
        numbered(t, &[5], 2);
    }
}
