//! The adjacency kept for the acyclicity check in compact mode: a stream of
//! u32 words, per expanded state in index order its out-degree and then its
//! successors. The search writes ([`EdgeStream::push_state`]) after the
//! out-degree a bit per successor, in words, set for a successor that was
//! new (its index is the next one, so nothing more is needed), then each
//! other successor as its fingerprint (two words, low first): the visited
//! set holds no indices, so a successor seen before has none to give. After
//! the search, [`EdgeStream::numbered`] rewrites the stream with indices,
//! one word each, which is what the check reads (`liveness.rs`). The first chunks stay in memory; past
//! [`IN_MEMORY_WORDS`] the stream goes to an unlinked temporary file, read
//! back sequentially (so it costs page cache, not resident memory). If the
//! file cannot be created or written, the rest stays in memory: slower to
//! fit, never wrong.

use super::fptable::{Ahead, Indices};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};

const CHUNK_WORDS: usize = 1 << 20;
/// 32 MiB of adjacency stays in memory before the stream moves to disk.
const IN_MEMORY_WORDS: usize = 8 * CHUNK_WORDS;

pub(super) struct EdgeStream {
    chunk_words: usize,
    in_memory_words: usize,
    /// Full chunks written before any spill.
    head: Vec<Vec<u32>>,
    file: Option<File>,
    /// Bytes of the file known to be written whole.
    file_bytes: u64,
    /// Full chunks that could not be written to the file (after it).
    late: Vec<Vec<u32>>,
    tail: Vec<u32>,
}

fn as_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

impl EdgeStream {
    pub fn new() -> EdgeStream {
        EdgeStream::with_limits(CHUNK_WORDS, IN_MEMORY_WORDS)
    }

    /// A stream of `chunk_words` chunks that spills past `in_memory_words`.
    pub fn with_limits(chunk_words: usize, in_memory_words: usize) -> EdgeStream {
        EdgeStream {
            chunk_words,
            in_memory_words,
            head: Vec::new(),
            file: None,
            file_bytes: 0,
            late: Vec::new(),
            tail: Vec::with_capacity(chunk_words),
        }
    }

    pub fn push(&mut self, w: u32) {
        self.tail.push(w);
        if self.tail.len() == self.chunk_words {
            self.flush_tail();
        }
    }

    /// A fingerprint, as two words, low first.
    fn push_fp(&mut self, fp: u64) {
        self.push(fp as u32);
        self.push((fp >> 32) as u32);
    }

    /// The successors of the next state: `degree` of them, successor `k`
    /// new when bit `k % 32` of `new[k / 32]` is set, and the fingerprints
    /// of the others, in order, in `seen`.
    pub fn push_state(&mut self, degree: u32, new: &[u32], seen: &[u64]) {
        debug_assert_eq!(new.len(), degree.div_ceil(32) as usize);
        debug_assert_eq!(
            new.iter().map(|w| w.count_ones() as usize).sum::<usize>() + seen.len(),
            degree as usize
        );
        self.push(degree);
        new.iter().for_each(|&w| self.push(w));
        seen.iter().for_each(|&fp| self.push_fp(fp));
    }

    /// The stream of indices for this stream of [`EdgeStream::push_state`]
    /// parts (see the top of this file); the first state's index is 0, and
    /// the first new successor's `first_new`. One thread reads the stream
    /// a block at a time, passing out-degrees and new successors' indices
    /// through and leaving a place for each other successor; `workers`
    /// threads then look those up, each a contiguous share, a few at a time
    /// so that their memory accesses overlap.
    pub fn numbered(
        &mut self,
        numbering: &Indices,
        first_new: u32,
        workers: usize,
    ) -> io::Result<EdgeStream> {
        let mut out = EdgeStream::new();
        let mut block = Block::default();
        let mut next_new = first_new;
        // Where the reader is in a state's part: successors in all, words
        // of new bits still to read, the bits, the next successor, and the
        // low word of a fingerprint read.
        let mut degree = 0u32;
        let mut bit_words = 0u32;
        let mut bits: Vec<u32> = Vec::new();
        let mut k = 0u32;
        let mut low: Option<u32> = None;
        let mut in_state = false;
        // Pass the new successors from `k` on up to the next one seen
        // before; whether the state's part is done.
        let mut pass_new = |words: &mut Vec<u32>, k: &mut u32, bits: &[u32], degree: u32| {
            while *k < degree && bits[(*k / 32) as usize] & (1 << (*k % 32)) != 0 {
                words.push(next_new);
                next_new += 1;
                *k += 1;
            }
            *k == degree
        };
        self.for_each(|w| {
            if !in_state {
                degree = w;
                block.words.push(w);
                bit_words = degree.div_ceil(32);
                bits.clear();
                k = 0;
                in_state = degree > 0;
            } else if bit_words > 0 {
                bits.push(w);
                bit_words -= 1;
                if bit_words == 0 && pass_new(&mut block.words, &mut k, &bits, degree) {
                    in_state = false;
                }
            } else if let Some(lo) = low.take() {
                let fp = u64::from(lo) | u64::from(w) << 32;
                block.seen(fp);
                k += 1;
                if pass_new(&mut block.words, &mut k, &bits, degree) {
                    in_state = false;
                }
            } else {
                low = Some(w);
            }
            if block.words.len() >= BLOCK_WORDS {
                block.resolve(numbering, workers, &mut out);
            }
        })?;
        block.resolve(numbering, workers, &mut out);
        assert!(
            !in_state && low.is_none(),
            "invariant broken: the adjacency stream ends inside a state's part"
        );
        Ok(out)
    }

    fn flush_tail(&mut self) {
        let chunk = std::mem::replace(&mut self.tail, Vec::with_capacity(self.chunk_words));
        let spilling = self.file.is_some() || !self.late.is_empty();
        if !spilling && (self.head.len() + 1) * self.chunk_words <= self.in_memory_words {
            self.head.push(chunk);
            return;
        }
        if self.file.is_none() && self.late.is_empty() {
            self.file = super::scratch::unlinked("edges").ok();
        }
        if let Some(f) = self.file.as_mut() {
            let bytes = as_bytes(&chunk);
            if f.write_all(&bytes).is_ok() {
                self.file_bytes += bytes.len() as u64;
                return;
            }
            // A partial write leaves garbage past `file_bytes`, which the
            // reader never reads; everything after stays in memory.
            self.file = None;
        }
        self.late.push(chunk);
    }

    /// Whether part of the stream is in a file.
    #[cfg(test)]
    pub fn on_disk(&self) -> bool {
        self.file_bytes > 0
    }

    /// Bytes held in memory and on disk.
    pub fn bytes(&self) -> (usize, usize) {
        let mem = (self.head.len() + self.late.len() + 1) * self.chunk_words * 4;
        (mem, self.file_bytes as usize)
    }

    /// Call `f` on every word, in the order pushed.
    pub fn for_each(&mut self, mut f: impl FnMut(u32)) -> io::Result<()> {
        for c in &self.head {
            c.iter().for_each(|&w| f(w));
        }
        if let Some(file) = self.file.as_mut() {
            file.seek(SeekFrom::Start(0))?;
            let mut r = BufReader::with_capacity(1 << 20, file.take(self.file_bytes));
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = read_words(&mut r, &mut buf)?;
                if n == 0 {
                    break;
                }
                for w in buf[..n].chunks_exact(4) {
                    f(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
                }
            }
        }
        for c in &self.late {
            c.iter().for_each(|&w| f(w));
        }
        self.tail.iter().for_each(|&w| f(w));
        Ok(())
    }
}

/// Words of the numbered stream read per block.
const BLOCK_WORDS: usize = 1 << 22;

/// Lookups below this many in a block are done on one thread.
const PARALLEL_LOOKUPS: usize = 1 << 14;

/// A block of the numbered stream: its words, with a place for each
/// successor seen before, and the fingerprints to look up for those places.
#[derive(Default)]
struct Block {
    words: Vec<u32>,
    /// (place in `words`, fingerprint).
    lookups: Vec<(u32, u64)>,
    found: Vec<u32>,
}

impl Block {
    /// A successor seen before: its index is looked up later.
    fn seen(&mut self, fp: u64) {
        self.lookups.push((self.words.len() as u32, fp));
        self.words.push(u32::MAX);
    }

    /// Look the places up on `workers` threads, then move the words to
    /// `out`.
    fn resolve(&mut self, numbering: &Indices, workers: usize, out: &mut EdgeStream) {
        self.found.clear();
        self.found.resize(self.lookups.len(), 0);
        let parts = if self.lookups.len() < PARALLEL_LOOKUPS {
            1
        } else {
            workers.max(1)
        };
        if parts == 1 {
            look_up(numbering, &self.lookups, &mut self.found);
        } else {
            let per = self.lookups.len().div_ceil(parts);
            let jobs = self.lookups.chunks(per).zip(self.found.chunks_mut(per));
            std::thread::scope(|scope| {
                for (lookups, found) in jobs {
                    scope.spawn(move || look_up(numbering, lookups, found));
                }
            });
        }
        for (&(place, _), &i) in self.lookups.iter().zip(&self.found) {
            self.words[place as usize] = i;
        }
        self.words.iter().for_each(|&w| out.push(w));
        self.words.clear();
        self.lookups.clear();
    }
}

/// The index of each fingerprint of `lookups` into `found`, a few lookups
/// ahead so that their memory accesses overlap.
fn look_up(numbering: &Indices, lookups: &[(u32, u64)], found: &mut [u32]) {
    let mut ahead: Ahead<u32> = Ahead::new();
    let take = |due: Option<(Option<u64>, u32)>, found: &mut [u32]| {
        if let Some((Some(fp), at)) = due {
            found[at as usize] = numbering.index(fp);
        }
    };
    for (at, &(_, fp)) in lookups.iter().enumerate() {
        let due = ahead.push(numbering, Some(fp), at as u32);
        take(due, found);
    }
    while let Some(due) = ahead.pop() {
        take(Some(due), found);
    }
}

/// Fill `buf` with whole words (a multiple of 4 bytes), or fewer at the end.
fn read_words(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    if n % 4 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "adjacency file ends inside a word",
        ));
    }
    Ok(n)
}
