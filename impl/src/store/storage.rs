//! Durable storage of the coordination record.
//!
//! The record is small and changes one guarded write at a time, so the
//! durable form is an append-only file of records, one JSON document per
//! line, each write followed by `fsync`. Loading takes the last complete,
//! parseable line: a write torn by a crash is ignored, which is exactly
//! "the write did not commit". The file is compacted (rewritten to its last
//! record through a temporary file and an atomic rename) once it holds
//! `RECORDS_PER_FILE_MAX` lines. See `impl/README.md` for why this and not an
//! embedded database.

use crate::store::record::Record;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};

/// Lines kept before the file is compacted to its last record.
pub const RECORDS_PER_FILE_MAX: usize = 1024;

/// Where the committed record lives between restarts.
pub trait RecordStorage {
    /// The last committed record, if any was ever persisted.
    fn load(&mut self) -> io::Result<Option<Record>>;
    /// Make `record` durable; returns only once it survives a crash.
    fn persist(&mut self, record: &Record) -> io::Result<()>;
}

/// Storage in memory, for tests and the in-memory cluster. Cloning it clones
/// the "disk".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemRecordStorage {
    last: Option<Record>,
    writes: u64,
    fail_next: bool,
}

impl MemRecordStorage {
    /// How many records were persisted.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Make the next `persist` fail, as a full disk would.
    pub fn fail_next_persist(&mut self) {
        self.fail_next = true;
    }
}

impl RecordStorage for MemRecordStorage {
    fn load(&mut self) -> io::Result<Option<Record>> {
        Ok(self.last.clone())
    }

    fn persist(&mut self, record: &Record) -> io::Result<()> {
        if std::mem::take(&mut self.fail_next) {
            return Err(io::Error::other("injected persist failure"));
        }
        self.last = Some(record.clone());
        self.writes += 1;
        Ok(())
    }
}

/// Append-only, fsynced file of records.
#[derive(Debug)]
pub struct FileRecordStorage {
    path: PathBuf,
    lines: usize,
}

impl FileRecordStorage {
    /// Storage at `path`; the file is created on the first persist.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileRecordStorage {
            path: path.into(),
            lines: 0,
        }
    }

    /// The file this storage writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn compact(&mut self, record: &Record) -> io::Result<()> {
        let tmp = self.path.with_extension("compact");
        {
            let mut f = File::create(&tmp)?;
            f.write_all(line_of(record)?.as_bytes())?;
            f.sync_all()?;
        }
        fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        self.lines = 1;
        Ok(())
    }
}

fn line_of(record: &Record) -> io::Result<String> {
    let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
    line.push('\n');
    Ok(line)
}

impl RecordStorage for FileRecordStorage {
    fn load(&mut self) -> io::Result<Option<Record>> {
        let f = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut last = None;
        let mut lines = 0;
        for line in BufReader::new(f).lines() {
            let line = line?;
            // A torn last line does not parse: that write never committed.
            if let Ok(r) = serde_json::from_str::<Record>(&line) {
                last = Some(r);
                lines += 1;
            }
        }
        self.lines = lines;
        Ok(last)
    }

    fn persist(&mut self, record: &Record) -> io::Result<()> {
        if self.lines + 1 >= RECORDS_PER_FILE_MAX {
            return self.compact(record);
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        // A torn line from an earlier crash would glue onto this one; start
        // on a fresh line so that only the torn write is lost.
        f.write_all(b"\n")?;
        f.write_all(line_of(record)?.as_bytes())?;
        f.sync_data()?;
        self.lines += 1;
        Ok(())
    }
}
