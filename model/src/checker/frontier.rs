//! The breadth-first queue of whole states, kept in memory up to a budget
//! and on disk past it.
//!
//! Order is first in, first out across three parts: `head` (oldest, in
//! memory), chunks on disk (in segment files of [`SEGMENT_CHUNKS`] chunks,
//! each deleted once read), then `tail` (newest, in memory, written out a
//! chunk at a time). Once anything is on disk, new states go to the tail so
//! that they stay behind it. A chunk that cannot be written stays in memory
//! (in `late`, after the disk), so a full disk costs memory, never states.

use super::codec::{pack, unpack};
use crate::state::State;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// States per chunk written or read at once.
const CHUNK: usize = 8192;
/// Chunks per segment file (about 160 MB of whole states, packed into a
/// tenth or so of that).
const SEGMENT_CHUNKS: usize = 120;

struct Segment {
    file: File,
    written: usize,
    read: usize,
    /// Where the next chunk goes and where the next one to read starts.
    write_at: u64,
    read_at: u64,
    /// The packed size of each chunk written and not yet read.
    sizes: VecDeque<usize>,
}

pub(super) struct Frontier {
    head: VecDeque<State>,
    segments: VecDeque<Segment>,
    late: VecDeque<Vec<State>>,
    tail: Vec<State>,
    /// Bytes the whole search may use; None: the frontier stays in memory.
    budget: Option<usize>,
    len: usize,
    on_disk: usize,
    /// Bytes of the segment files not yet read.
    disk_bytes: usize,
    pub max_in_memory: usize,
    /// The most bytes of segment files not yet read, at any time.
    pub max_disk_bytes: usize,
    buf: Vec<u8>,
}

impl Frontier {
    pub fn new(budget: Option<usize>) -> Frontier {
        Frontier {
            head: VecDeque::new(),
            segments: VecDeque::new(),
            late: VecDeque::new(),
            tail: Vec::new(),
            budget,
            len: 0,
            on_disk: 0,
            disk_bytes: 0,
            max_in_memory: 0,
            max_disk_bytes: 0,
            buf: Vec::new(),
        }
    }

    /// Add `s`; `other_bytes` is what the rest of the search holds now.
    pub fn push(&mut self, s: State, other_bytes: usize) {
        self.len += 1;
        let behind_disk =
            !self.segments.is_empty() || !self.late.is_empty() || !self.tail.is_empty();
        // The head's capacity is what is resident (a ring buffer touches all
        // of it), and it doubles when full: count what it would be.
        let slots = if self.head.len() == self.head.capacity() {
            (2 * self.head.capacity()).max(CHUNK)
        } else {
            self.head.capacity()
        };
        let fits = self
            .budget
            .is_none_or(|b| slots * size_of::<State>() + other_bytes <= b);
        if !behind_disk && (fits || self.head.len() < CHUNK) {
            self.head.push_back(s);
        } else {
            self.tail.push(s);
            if self.tail.len() == CHUNK {
                let chunk = std::mem::take(&mut self.tail);
                self.spill(chunk);
            }
        }
        let in_memory = self.len - self.on_disk;
        self.max_in_memory = self.max_in_memory.max(in_memory);
    }

    fn spill(&mut self, chunk: Vec<State>) {
        // After one failed write, everything stays in memory, to keep the
        // order.
        if self.late.is_empty() && self.write(&chunk).is_ok() {
            self.on_disk += chunk.len();
            self.max_disk_bytes = self.max_disk_bytes.max(self.disk_bytes);
            return;
        }
        self.late.push_back(chunk);
    }

    fn write(&mut self, chunk: &[State]) -> io::Result<()> {
        let full = self
            .segments
            .back()
            .is_none_or(|g| g.written == SEGMENT_CHUNKS);
        if full {
            self.segments.push_back(Segment {
                file: super::scratch::unlinked("frontier")?,
                written: 0,
                read: 0,
                write_at: 0,
                read_at: 0,
                sizes: VecDeque::new(),
            });
        }
        self.buf.clear();
        pack(chunk, &mut self.buf);
        let g = self
            .segments
            .back_mut()
            .expect("a segment was just ensured");
        g.file.seek(SeekFrom::Start(g.write_at))?;
        g.file.write_all(&self.buf)?;
        g.write_at += self.buf.len() as u64;
        g.sizes.push_back(self.buf.len());
        g.written += 1;
        self.disk_bytes += self.buf.len();
        Ok(())
    }

    fn read(&mut self) -> io::Result<()> {
        let g = self.segments.front_mut().expect("called with a segment");
        let size = g.sizes.pop_front().expect("a chunk written and not read");
        g.file.seek(SeekFrom::Start(g.read_at))?;
        self.buf.resize(size, 0);
        g.file.read_exact(&mut self.buf)?;
        g.read_at += size as u64;
        g.read += 1;
        if g.read == g.written {
            self.segments.pop_front();
        }
        self.on_disk -= CHUNK;
        self.disk_bytes -= size;
        let head = &mut self.head;
        unpack(&self.buf, |s| head.push_back(s));
        Ok(())
    }

    /// Move the oldest states, up to `max` of them in `out`, to `out`, in
    /// order, a run of the head at a time (one copy of many states instead
    /// of a move per state).
    pub fn pop_into(&mut self, out: &mut Vec<State>, max: usize) {
        while out.len() < max {
            if self.head.is_empty() {
                self.refill();
                if self.head.is_empty() {
                    return;
                }
            }
            let k = (max - out.len()).min(self.head.len());
            let (a, b) = self.head.as_slices();
            let from_a = k.min(a.len());
            out.extend_from_slice(&a[..from_a]);
            out.extend_from_slice(&b[..k - from_a]);
            self.head.drain(..k);
            self.len -= k;
            self.give_back();
        }
    }

    /// Refill the empty head from what comes next: disk, then `late`,
    /// then the tail.
    fn refill(&mut self) {
        if !self.segments.is_empty() {
            self.read().unwrap_or_else(|e| {
                panic!("reading back a frontier chunk this search wrote failed: {e}")
            });
        } else if let Some(c) = self.late.pop_front() {
            self.head.extend(c);
        } else {
            self.head.extend(self.tail.drain(..));
        }
    }

    /// A ring buffer keeps its largest capacity, and every page of it
    /// stays resident: give back what a draining head no longer needs (at
    /// most a quarter in use, so the copies add up to a constant per state).
    fn give_back(&mut self) {
        let floor = self.head.len().max(CHUNK);
        if self.head.capacity() > 4 * floor {
            self.head.shrink_to(2 * floor);
        }
    }
}
