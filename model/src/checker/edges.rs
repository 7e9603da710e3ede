//! The adjacency kept for the acyclicity check in compact mode: a stream of
//! u32 words, per expanded state in index order its out-degree and then its
//! successors. The search writes each successor as its fingerprint (two
//! words, low first): the visited set holds no indices, so a successor seen
//! before has none to give. After the search, [`EdgeStream::numbered`]
//! rewrites the stream with indices, one word each, which is what the check
//! reads (`liveness.rs`). The first chunks stay in memory; past
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
    pub fn push_fp(&mut self, fp: u64) {
        self.push(fp as u32);
        self.push((fp >> 32) as u32);
    }

    /// The stream of indices for this stream of fingerprints (see the top
    /// of this file).
    pub fn numbered(&mut self, numbering: &Indices) -> io::Result<EdgeStream> {
        let mut out = EdgeStream::new();
        // Successors left in this state's part.
        let mut left = 0u32;
        let mut low = None;
        // Out-degrees pass through in order (`None`), successors are looked
        // up a few at a time so that their memory accesses overlap.
        let mut ahead = Ahead::new();
        let emit = |out: &mut EdgeStream, (fp, w): (Option<u64>, u32)| match fp {
            Some(fp) => out.push(numbering.index(fp)),
            None => out.push(w),
        };
        self.for_each(|w| {
            if left == 0 {
                left = w;
                if let Some(due) = ahead.push(numbering, None, w) {
                    emit(&mut out, due);
                }
                return;
            }
            match low.take() {
                None => low = Some(w),
                Some(lo) => {
                    let fp = u64::from(lo) | u64::from(w) << 32;
                    if let Some(due) = ahead.push(numbering, Some(fp), 0) {
                        emit(&mut out, due);
                    }
                    left -= 1;
                }
            }
        })?;
        while let Some(due) = ahead.pop() {
            emit(&mut out, due);
        }
        assert!(
            left == 0 && low.is_none(),
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
