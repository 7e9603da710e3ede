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
//! back sequentially (so it costs page cache, not resident memory). The
//! file is written by a thread of its own, a chunk at a time, so the
//! search's merging thread only hands chunks over (and takes back emptied
//! ones to fill again). If the file cannot be created or a write fails,
//! what was written stays and the rest stays in memory: slower to fit,
//! never wrong.

use super::fptable::{Ahead, Indices};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

const CHUNK_WORDS: usize = 1 << 20;
/// 32 MiB of adjacency stays in memory before the stream moves to disk.
const IN_MEMORY_WORDS: usize = 8 * CHUNK_WORDS;

pub(super) struct EdgeStream {
    chunk_words: usize,
    in_memory_words: usize,
    /// Full chunks written before any spill.
    head: Vec<Vec<u32>>,
    /// The thread writing the file, while the stream is written.
    writer: Option<Writer>,
    /// What it wrote, once the stream is read.
    written: Option<Written>,
    tail: Vec<u32>,
}

/// Chunks handed to the writer and not yet written, at most: past that
/// the stream's owner waits, so a slow disk bounds memory.
const QUEUED: usize = 2;

/// The stream's end of its writing thread.
struct Writer {
    to: Option<SyncSender<Vec<u32>>>,
    /// Emptied chunks, to fill again.
    emptied: Receiver<Vec<u32>>,
    thread: Option<JoinHandle<Written>>,
    /// Chunks handed over.
    sent: usize,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    /// Chunks the thread is done with (written or kept).
    done: AtomicUsize,
    /// Bytes of the file written whole.
    file_bytes: AtomicUsize,
    /// Chunks kept in memory after the file failed.
    late: AtomicUsize,
}

/// The file part of a stream: bytes `..file_bytes` of `file`, then
/// `late`, the chunks that could not be written.
#[derive(Default)]
struct Written {
    file: Option<File>,
    file_bytes: u64,
    late: Vec<Vec<u32>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            // A stream dropped unread: its file goes with the thread. A
            // panic there was printed where it happened.
            let _ = t.join();
        }
    }
}

impl Writer {
    fn start() -> Writer {
        let (to, chunks) = mpsc::sync_channel::<Vec<u32>>(QUEUED);
        let (give, emptied) = mpsc::channel();
        let counts = Arc::new(Counts::default());
        let c = Arc::clone(&counts);
        let thread = std::thread::Builder::new()
            .name("edge-writer".into())
            .spawn(move || {
                let mut out = Written::default();
                let mut file = super::scratch::unlinked("edges").ok();
                let mut bytes: Vec<u8> = Vec::new();
                for mut chunk in chunks {
                    if let (Some(f), true) = (file.as_mut(), out.late.is_empty()) {
                        bytes.clear();
                        bytes.extend(chunk.iter().flat_map(|w| w.to_le_bytes()));
                        if f.write_all(&bytes).is_ok() {
                            out.file_bytes += bytes.len() as u64;
                            c.file_bytes
                                .store(out.file_bytes as usize, Ordering::Relaxed);
                            chunk.clear();
                            // The stream may be gone already (it ends by
                            // closing the channel): nothing to give back to.
                            let _ = give.send(chunk);
                            c.done.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        // A partial write leaves garbage past `file_bytes`,
                        // which the reader never reads; this chunk and
                        // every one after it stay in memory.
                    }
                    out.late.push(chunk);
                    c.late.fetch_add(1, Ordering::Relaxed);
                    c.done.fetch_add(1, Ordering::Relaxed);
                }
                out.file = file.filter(|_| out.file_bytes > 0);
                out
            })
            .unwrap_or_else(|e| panic!("starting the adjacency's writer thread failed: {e}"));
        Writer {
            to: Some(to),
            emptied,
            thread: Some(thread),
            sent: 0,
            counts,
        }
    }

    fn send(&mut self, chunk: Vec<u32>) {
        let to = self
            .to
            .as_ref()
            .expect("the writer takes chunks until it is finished");
        if to.send(chunk).is_err() {
            self.finish();
            unreachable!("the writer thread ended early without a panic");
        }
        self.sent += 1;
    }

    /// Close the channel and wait for the thread: what it wrote. Called
    /// once, by `settle` (or on the way to a panic).
    fn finish(&mut self) -> Written {
        self.to = None;
        let thread = self.thread.take().expect("the writer is finished once");
        thread.join().unwrap_or_else(|_| {
            panic!(
                "invariant broken: the adjacency's writer thread panicked (its message is above)"
            )
        })
    }
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
            writer: None,
            written: None,
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
        let spilling = self.writer.is_some() || self.written.is_some();
        if !spilling && (self.head.len() + 1) * self.chunk_words <= self.in_memory_words {
            let chunk = std::mem::replace(&mut self.tail, Vec::with_capacity(self.chunk_words));
            self.head.push(chunk);
            return;
        }
        if let Some(w) = self.written.as_mut() {
            // Pushed after the stream was read: kept in memory.
            let chunk = std::mem::replace(&mut self.tail, Vec::with_capacity(self.chunk_words));
            w.late.push(chunk);
            return;
        }
        let writer = self.writer.get_or_insert_with(Writer::start);
        let fresh = writer
            .emptied
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.chunk_words));
        let chunk = std::mem::replace(&mut self.tail, fresh);
        writer.send(chunk);
    }

    /// Wait for the writer: from now on the stream is read.
    fn settle(&mut self) -> &mut Written {
        if let Some(mut w) = self.writer.take() {
            self.written = Some(w.finish());
        }
        self.written.get_or_insert_with(Written::default)
    }

    /// Whether part of the stream is in a file.
    #[cfg(test)]
    pub fn on_disk(&mut self) -> bool {
        self.settle().file_bytes > 0
    }

    /// Bytes held in memory and on disk.
    pub fn bytes(&self) -> (usize, usize) {
        let (in_flight, late, file) = match (&self.writer, &self.written) {
            (Some(w), _) => {
                let done = w.counts.done.load(Ordering::Relaxed);
                (
                    w.sent - done.min(w.sent),
                    w.counts.late.load(Ordering::Relaxed),
                    w.counts.file_bytes.load(Ordering::Relaxed),
                )
            }
            (None, Some(w)) => (0, w.late.len(), w.file_bytes as usize),
            (None, None) => (0, 0, 0),
        };
        let mem = (self.head.len() + in_flight + late + 1) * self.chunk_words * 4;
        (mem, file)
    }

    /// Call `f` on every word, in the order pushed.
    pub fn for_each(&mut self, mut f: impl FnMut(u32)) -> io::Result<()> {
        for c in &self.head {
            c.iter().for_each(|&w| f(w));
        }
        let written = self.settle();
        if let Some(file) = written.file.as_mut() {
            file.seek(SeekFrom::Start(0))?;
            read_ahead(file.take(written.file_bytes), &mut f)?;
        }
        for c in &written.late {
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
    let view = numbering.view();
    let take = |due: Option<(Option<u64>, u32)>, found: &mut [u32]| {
        if let Some((Some(fp), at)) = due {
            found[at as usize] = numbering.index(fp);
        }
    };
    for (at, &(_, fp)) in lookups.iter().enumerate() {
        let due = ahead.push(&view, Some(fp), at as u32);
        take(due, found);
    }
    while let Some(due) = ahead.pop() {
        take(Some(due), found);
    }
}

/// Bytes of the file read at once.
const READ_BYTES: usize = 1 << 20;

/// Call `f` on every word of `r`, read and decoded a block ahead by a
/// thread of its own, so that reading the file and what `f` does overlap
/// (the passes over the adjacency after the search run on one core
/// otherwise).
fn read_ahead(mut r: impl Read + Send, f: &mut impl FnMut(u32)) -> io::Result<()> {
    let (give, blocks) = mpsc::sync_channel::<io::Result<Vec<u32>>>(2);
    let (back, emptied) = mpsc::channel::<Vec<u32>>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut buf = vec![0u8; READ_BYTES];
            loop {
                let block = read_words(&mut r, &mut buf).map(|n| {
                    let mut words = emptied.try_recv().unwrap_or_default();
                    words.clear();
                    words.extend(
                        buf[..n]
                            .chunks_exact(4)
                            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])),
                    );
                    words
                });
                let last = !matches!(&block, Ok(words) if !words.is_empty());
                // Sending fails only once the reading side stopped (on an
                // error of its own): nothing more to read for.
                if give.send(block).is_err() || last {
                    return;
                }
            }
        });
        for block in blocks {
            let words = block?;
            if words.is_empty() {
                break;
            }
            words.iter().for_each(|&w| f(w));
            // The reader may be done already: then it needs no buffer.
            let _ = back.send(words);
        }
        Ok(())
    })
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
