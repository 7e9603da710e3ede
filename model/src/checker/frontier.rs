//! The breadth-first queue of whole states, kept in memory up to a budget
//! and on disk past it.
//!
//! Order is first in, first out across three parts: `head` (oldest, in
//! memory), chunks handed to the spool (on disk, or in the spool's memory
//! when a write failed), then `tail` (newest, in memory, handed to the
//! spool a chunk at a time). Once anything is spooled, new states go to
//! the tail so that they stay behind it. Every part is held in chunks of
//! [`CHUNK`] states, so a batch of that many is taken out by moving a
//! chunk, not by copying its states.
//!
//! The spool is a thread of its own: it packs each chunk it is handed and
//! writes it to segment files of [`SEGMENT_CHUNKS`] chunks (each deleted
//! once read), and reads the next chunk back and unpacks it ahead of being
//! asked for. So the search's merging thread only moves chunks of whole
//! states in and out; packing, unpacking and file I/O overlap with it. A
//! chunk that cannot be written stays in the spool's memory (in `late`,
//! after the disk), so a full disk costs memory, never states.

use super::codec::{pack, unpack};
use crate::state::State;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// States per chunk written or read at once.
const CHUNK: usize = 8192;
/// Chunks per segment file (about 160 MB of whole states, packed into a
/// tenth or so of that).
const SEGMENT_CHUNKS: usize = 120;
/// Chunks the spool reads back and unpacks before they are asked for.
const READ_AHEAD: usize = 2;
/// Chunks handed to the spool and not yet taken up by it, at most: past
/// that the merging thread waits, so a slow disk bounds memory.
const QUEUED: usize = 4;

pub(super) struct Frontier {
    /// The oldest states, in memory: chunks of at most [`CHUNK`], the
    /// first one read from `front_at` on.
    head: VecDeque<Vec<State>>,
    front_at: usize,
    tail: Vec<State>,
    spool: Option<Spool>,
    /// Emptied chunks, to fill again (their pages are already resident).
    spare: Vec<Vec<State>>,
    /// Bytes the whole search may use; None: the frontier stays in memory.
    budget: Option<usize>,
    len: usize,
    /// States handed to the spool and not yet back.
    spooled: usize,
    pub max_in_memory: usize,
}

/// The merging thread's end of the spool thread.
struct Spool {
    to: Option<SyncSender<Cmd>>,
    back: Receiver<Vec<State>>,
    /// Bytes of segment files not yet read, now and at most.
    disk: Arc<DiskBytes>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct DiskBytes {
    now: AtomicUsize,
    max: AtomicUsize,
}

enum Cmd {
    /// Keep this chunk, behind every chunk kept before it.
    Keep(Vec<State>),
    /// Send back the oldest chunk kept.
    Next,
}

impl Frontier {
    pub fn new(budget: Option<usize>) -> Frontier {
        Frontier {
            head: VecDeque::new(),
            front_at: 0,
            tail: Vec::new(),
            spool: None,
            spare: Vec::new(),
            budget,
            len: 0,
            spooled: 0,
            max_in_memory: 0,
        }
    }

    fn chunk(&mut self) -> Vec<State> {
        self.spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(CHUNK))
    }

    fn recycle(&mut self, mut chunk: Vec<State>) {
        // Two spares cover a batch in flight and the chunk being filled.
        if chunk.capacity() >= CHUNK && self.spare.len() < 2 {
            chunk.clear();
            self.spare.push(chunk);
        }
    }

    /// Add `s`; `other_bytes` is what the rest of the search holds now.
    pub fn push(&mut self, s: State, other_bytes: usize) {
        self.len += 1;
        let behind_spool = self.spooled > 0 || !self.tail.is_empty();
        let last_full = self.head.back().is_none_or(|c| c.len() == CHUNK);
        // A new chunk is what would be added to what is resident.
        let chunks = self.head.len() + usize::from(last_full);
        let fits = self
            .budget
            .is_none_or(|b| chunks * CHUNK * size_of::<State>() + other_bytes <= b);
        if !behind_spool && (fits || self.len <= CHUNK) {
            if last_full {
                let c = self.chunk();
                self.head.push_back(c);
            }
            self.head
                .back_mut()
                .expect("a chunk with room was just ensured")
                .push(s);
        } else {
            if self.tail.capacity() == 0 {
                self.tail = self.chunk();
            }
            self.tail.push(s);
            if self.tail.len() == CHUNK {
                let chunk = std::mem::take(&mut self.tail);
                self.spooled += chunk.len();
                self.spool_mut().keep(chunk);
            }
        }
        let in_memory = self.len - self.spooled;
        self.max_in_memory = self.max_in_memory.max(in_memory);
    }

    fn spool_mut(&mut self) -> &mut Spool {
        self.spool.get_or_insert_with(Spool::start)
    }

    /// The most bytes of segment files not yet read, at any time.
    pub fn max_disk_bytes(&self) -> usize {
        self.spool
            .as_ref()
            .map_or(0, |s| s.disk.max.load(Ordering::Relaxed))
    }

    /// Move the oldest states, up to `max` of them in `out`, to `out`, in
    /// order. A whole chunk into an empty `out` is moved, not copied.
    pub fn pop_into(&mut self, out: &mut Vec<State>, max: usize) {
        while out.len() < max {
            if self.head.is_empty() {
                self.refill();
                if self.head.is_empty() {
                    return;
                }
            }
            let front = self.head.front_mut().expect("the head was just refilled");
            let left = front.len() - self.front_at;
            if out.is_empty() && self.front_at == 0 && left <= max {
                let chunk = self.head.pop_front().expect("the front chunk is there");
                let old = std::mem::replace(out, chunk);
                self.recycle(old);
                self.len -= left;
                continue;
            }
            let k = (max - out.len()).min(left);
            out.extend_from_slice(&front[self.front_at..self.front_at + k]);
            self.front_at += k;
            self.len -= k;
            if self.front_at == front.len() {
                let done = self.head.pop_front().expect("the front chunk is there");
                self.front_at = 0;
                self.recycle(done);
            }
        }
    }

    /// Refill the empty head from what comes next: the spool, then the
    /// tail.
    fn refill(&mut self) {
        if self.spooled > 0 {
            let chunk = self.spool_mut().next();
            self.spooled -= chunk.len();
            self.head.push_back(chunk);
        } else if !self.tail.is_empty() {
            let chunk = std::mem::take(&mut self.tail);
            self.head.push_back(chunk);
        }
    }
}

impl Spool {
    fn start() -> Spool {
        let (to, commands) = mpsc::sync_channel(QUEUED);
        let (give, back) = mpsc::channel();
        let disk = Arc::new(DiskBytes::default());
        let counted = Arc::clone(&disk);
        let thread = std::thread::Builder::new()
            .name("frontier-spool".into())
            .spawn(move || SpoolThread::new(counted).run(commands, give))
            .unwrap_or_else(|e| panic!("starting the frontier's spool thread failed: {e}"));
        Spool {
            to: Some(to),
            back,
            disk,
            thread: Some(thread),
        }
    }

    fn send(&self, cmd: Cmd) {
        let sent = self.to.as_ref().map(|to| to.send(cmd).is_ok());
        if sent != Some(true) {
            self.died();
        }
    }

    fn keep(&mut self, chunk: Vec<State>) {
        self.send(Cmd::Keep(chunk));
    }

    fn next(&mut self) -> Vec<State> {
        self.send(Cmd::Next);
        self.back.recv().unwrap_or_else(|_| self.died())
    }

    /// The spool thread is gone: it panicked (its message is on stderr).
    fn died(&self) -> ! {
        panic!("invariant broken: the frontier's spool thread ended while it held states")
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            // A panic there was printed where it happened; the search has
            // its answer by now or is unwinding already.
            let _ = t.join();
        }
    }
}

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

/// What the spool thread holds: segment files, then chunks that could not
/// be written, and chunks read back ahead of being asked for (the oldest).
struct SpoolThread {
    ahead: VecDeque<Vec<State>>,
    segments: VecDeque<Segment>,
    late: VecDeque<Vec<State>>,
    disk: Arc<DiskBytes>,
    buf: Vec<u8>,
}

impl SpoolThread {
    fn new(disk: Arc<DiskBytes>) -> SpoolThread {
        SpoolThread {
            ahead: VecDeque::new(),
            segments: VecDeque::new(),
            late: VecDeque::new(),
            disk,
            buf: Vec::new(),
        }
    }

    fn run(mut self, commands: Receiver<Cmd>, give: mpsc::Sender<Vec<State>>) {
        loop {
            // Read ahead while nothing is asked; wait only when there is
            // nothing to read ahead.
            let can_read = self.ahead.len() < READ_AHEAD && !self.segments.is_empty();
            let cmd = if can_read {
                match commands.try_recv() {
                    Ok(cmd) => Some(cmd),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => return,
                }
            } else {
                match commands.recv() {
                    Ok(cmd) => Some(cmd),
                    Err(_) => return,
                }
            };
            match cmd {
                None => {
                    let chunk = self.read_next();
                    self.ahead.push_back(chunk);
                }
                Some(Cmd::Keep(chunk)) => self.keep(chunk),
                Some(Cmd::Next) => {
                    let chunk = match self.ahead.pop_front() {
                        Some(c) => c,
                        None if !self.segments.is_empty() => self.read_next(),
                        None => self.late.pop_front().unwrap_or_else(|| {
                            panic!("invariant broken: the frontier asked its spool for a chunk it never kept")
                        }),
                    };
                    if give.send(chunk).is_err() {
                        return;
                    }
                }
            }
        }
    }

    fn keep(&mut self, chunk: Vec<State>) {
        // After one failed write, everything stays in memory, to keep the
        // order.
        if self.late.is_empty() && self.write(&chunk).is_ok() {
            let now = self.disk.now.load(Ordering::Relaxed);
            self.disk.max.fetch_max(now, Ordering::Relaxed);
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
        self.disk.now.fetch_add(self.buf.len(), Ordering::Relaxed);
        Ok(())
    }

    /// The oldest chunk on disk, read back and unpacked.
    fn read_next(&mut self) -> Vec<State> {
        self.read().unwrap_or_else(|e| {
            panic!("reading back a frontier chunk this search wrote failed: {e}")
        })
    }

    fn read(&mut self) -> io::Result<Vec<State>> {
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
        self.disk.now.fetch_sub(size, Ordering::Relaxed);
        let mut chunk = Vec::with_capacity(CHUNK);
        unpack(&self.buf, |s| chunk.push(s));
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state that names its number.
    fn numbered(i: usize) -> State {
        let mut s = State::default();
        s.budget.published = i as u8;
        s.budget.crashes = (i >> 8) as u8;
        s.budget.drops = (i >> 16) as u8;
        s
    }

    fn number(s: &State) -> usize {
        usize::from(s.budget.published)
            | usize::from(s.budget.crashes) << 8
            | usize::from(s.budget.drops) << 16
    }

    /// Pushes and pops interleaved as a search makes them, batches of
    /// `max`, against a plain queue: the same states in the same order,
    /// whether the frontier stays in memory or goes to the spool.
    fn first_in_first_out(budget: Option<usize>, max: usize) -> (usize, usize) {
        let mut f = Frontier::new(budget);
        let mut want = VecDeque::new();
        let mut pushed = 0;
        let mut batch = Vec::new();
        let mut popped = 0;
        // Grows by half a chunk and more a round, then drains.
        for round in 0..40 {
            let add = if round < 25 {
                max + CHUNK / 2 + round * 97
            } else {
                0
            };
            for _ in 0..add {
                f.push(numbered(pushed), 0);
                want.push_back(pushed);
                pushed += 1;
            }
            batch.clear();
            f.pop_into(&mut batch, max);
            for s in &batch {
                assert_eq!(Some(number(s)), want.pop_front(), "round {round}");
                popped += 1;
            }
        }
        loop {
            batch.clear();
            f.pop_into(&mut batch, max);
            if batch.is_empty() {
                break;
            }
            for s in &batch {
                assert_eq!(Some(number(s)), want.pop_front());
                popped += 1;
            }
        }
        assert!(want.is_empty(), "{} states never came out", want.len());
        assert_eq!(popped, pushed);
        (f.max_in_memory, f.max_disk_bytes())
    }

    #[test]
    fn states_come_out_in_the_order_they_went_in() {
        for max in [1, 1000, CHUNK / 2, CHUNK, 3 * CHUNK] {
            let (in_memory, disk) = first_in_first_out(None, max);
            assert_eq!(disk, 0, "no budget, no spool");
            assert!(in_memory > 2 * CHUNK, "max {max}: {in_memory}");
            let (in_memory, disk) = first_in_first_out(Some(0), max);
            assert!(
                disk > 0,
                "max {max}: a budget of nothing sends states to disk"
            );
            assert!(
                in_memory <= 3 * CHUNK,
                "max {max}: {in_memory} states in memory past a budget of nothing"
            );
        }
    }
}
