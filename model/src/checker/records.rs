//! Per visited state, in index order, its fingerprint and its parent's
//! index: what rebuilding a path needs, and nothing else does. They are
//! written once and read back only for the few states on reported paths,
//! so they go to an unlinked temporary file past a small buffer (12 bytes
//! per state on disk instead of in memory). If the file cannot be created
//! or written, the rest stays in memory: more memory, never a lost record.

use std::fs::File;
use std::os::unix::fs::FileExt;

const RECORD: usize = 12;
/// Records buffered before a write.
const BUFFERED: usize = 1 << 16;

pub(super) struct Records {
    file: Option<File>,
    /// Records in the file: those with the smallest indices.
    on_file: usize,
    /// The records after them, encoded.
    kept: Vec<u8>,
    /// Once a write failed, everything stays in memory, to keep the order.
    failed: bool,
}

impl Records {
    pub fn new() -> Records {
        Records {
            file: None,
            on_file: 0,
            kept: Vec::new(),
            failed: false,
        }
    }

    pub fn push(&mut self, fp: u64, parent: u32) {
        self.kept.extend_from_slice(&fp.to_le_bytes());
        self.kept.extend_from_slice(&parent.to_le_bytes());
        if !self.failed && self.kept.len() >= BUFFERED * RECORD {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.file.is_none() {
            self.file = super::scratch::unlinked("records").ok();
        }
        let written = self.file.as_mut().is_some_and(|f| {
            f.write_all_at(&self.kept, (self.on_file * RECORD) as u64)
                .is_ok()
        });
        if written {
            self.on_file += self.kept.len() / RECORD;
            self.kept.clear();
        } else {
            self.failed = true;
        }
    }

    /// The fingerprint and the parent index of state `i`.
    pub fn get(&self, i: u32) -> (u64, u32) {
        let i = i as usize;
        let mut r = [0u8; RECORD];
        if i < self.on_file {
            self.file
                .as_ref()
                .expect("records on file have a file")
                .read_exact_at(&mut r, (i * RECORD) as u64)
                .unwrap_or_else(|e| {
                    panic!("reading back a visited-state record this search wrote failed: {e}")
                });
        } else {
            let at = (i - self.on_file) * RECORD;
            r.copy_from_slice(
                self.kept
                    .get(at..at + RECORD)
                    .unwrap_or_else(|| panic!("invariant broken: no record of state {i}")),
            );
        }
        let fp = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
        let parent = u32::from_le_bytes(r[8..].try_into().expect("4 bytes"));
        (fp, parent)
    }

    /// Call `f` with every fingerprint, in index order.
    pub fn scan(&self, mut f: impl FnMut(u64)) -> std::io::Result<()> {
        let mut buf = vec![0u8; BUFFERED * RECORD];
        let mut done = 0;
        while done < self.on_file {
            let n = (self.on_file - done).min(BUFFERED);
            let buf = &mut buf[..n * RECORD];
            self.file
                .as_ref()
                .expect("records on file have a file")
                .read_exact_at(buf, (done * RECORD) as u64)?;
            for r in buf.chunks_exact(RECORD) {
                f(u64::from_le_bytes(r[..8].try_into().expect("8 bytes")));
            }
            done += n;
        }
        for r in self.kept.chunks_exact(RECORD) {
            f(u64::from_le_bytes(r[..8].try_into().expect("8 bytes")));
        }
        Ok(())
    }

    /// Bytes held in memory and on disk.
    pub fn bytes(&self) -> (usize, usize) {
        (self.kept.capacity(), self.on_file * RECORD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_reads_back_from_file_or_buffer() {
        let mut r = Records::new();
        let n = 3 * BUFFERED as u32 + 17;
        for i in 0..n {
            r.push(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15), i / 3);
        }
        assert!(r.bytes().1 > 0, "the records should reach the file");
        let mut next = 0u32;
        r.scan(|fp| {
            assert_eq!(fp, u64::from(next).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            next += 1;
        })
        .unwrap();
        assert_eq!(next, n, "the scan reads every record");
        for i in (0..n).step_by(997).chain([n - 1, 0]) {
            assert_eq!(
                r.get(i),
                (u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15), i / 3)
            );
        }
    }
}
