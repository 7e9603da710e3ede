//! The segment file's record format, and the scan that reads it back.
//!
//! A record is a 12-byte header and a payload:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..4 | payload length, u32 little-endian |
//! | 4..8 | CRC32 of the payload |
//! | 8..12 | CRC32 of bytes 0..8 |
//! | 12.. | the payload: `(position, entry)` encoded with postcard |
//!
//! The header has its own checksum so that a damaged length is caught
//! as damage instead of read as a record running past the end of the file,
//! which would look like a torn tail and be truncated away.

use livemove_impl::{Entry, Position};
use serde::{Deserialize, Serialize};

/// Bytes of a record header.
pub const HEADER_BYTES: usize = 12;

/// The largest payload a record may have. An entry encodes in a few dozen
/// bytes; a header announcing more is damage, never a record.
pub const PAYLOAD_BYTES_MAX: u32 = 64 * 1024;

#[derive(Serialize, Deserialize)]
struct Payload {
    pos: Position,
    entry: Entry,
}

/// Append the record of `entry` at `pos` to `out`.
pub fn encode(pos: Position, entry: Entry, out: &mut Vec<u8>) {
    let payload = postcard::to_allocvec(&Payload { pos, entry })
        .expect("invariant broken: an entry always encodes");
    assert!(
        payload.len() <= PAYLOAD_BYTES_MAX as usize,
        "invariant broken: an entry of {} bytes exceeds the record maximum",
        payload.len()
    );
    let mut header = [0u8; HEADER_BYTES];
    header[0..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    header[4..8].copy_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    let header_crc = crc32fast::hash(&header[0..8]);
    header[8..12].copy_from_slice(&header_crc.to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&payload);
}

/// What a scan of a segment found.
#[derive(Debug, Default)]
pub struct Scan {
    /// The entries, position 1 first.
    pub entries: Vec<Entry>,
    /// Byte offset of each entry's record.
    pub offsets: Vec<u64>,
    /// Where the last complete record ends.
    pub end: u64,
}

/// Damage found by a scan.
#[derive(Debug, PartialEq, Eq)]
pub enum Damage {
    /// The last record is incomplete (a write torn by a crash): everything
    /// from `offset` on can be cut away.
    TornTail {
        /// Where the torn record starts.
        offset: u64,
    },
    /// A record is damaged with more data after it.
    Corrupt {
        /// Where the damaged record starts.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

/// Read every complete record of `bytes`; stop at the first damage.
///
/// A torn tail is what a crash during an append leaves: a partial header,
/// a payload shorter than its header says, a last record whose payload
/// checksum fails, or zeros (a file extended before its data reached the
/// disk). Damage with intact data after it is corruption.
pub fn scan(bytes: &[u8]) -> (Scan, Option<Damage>) {
    let mut scan = Scan::default();
    let mut offset = 0usize;
    while offset < bytes.len() {
        let at = offset as u64;
        let rest = &bytes[offset..];
        let torn = Some(Damage::TornTail { offset: at });
        let corrupt = |reason: String| Some(Damage::Corrupt { offset: at, reason });
        if rest.len() < HEADER_BYTES {
            return (scan, torn);
        }
        let word = |i: usize| u32::from_le_bytes(rest[i..i + 4].try_into().expect("4 bytes"));
        if crc32fast::hash(&rest[0..8]) != word(8) {
            if rest.iter().all(|&b| b == 0) {
                return (scan, torn);
            }
            return (scan, corrupt("header checksum mismatch".into()));
        }
        let len = word(0);
        if len > PAYLOAD_BYTES_MAX {
            return (
                scan,
                corrupt(format!(
                    "payload length {len} over the maximum {PAYLOAD_BYTES_MAX}"
                )),
            );
        }
        let record_end = HEADER_BYTES + len as usize;
        if rest.len() < record_end {
            return (scan, torn);
        }
        let payload = &rest[HEADER_BYTES..record_end];
        if crc32fast::hash(payload) != word(4) {
            if rest.len() == record_end {
                return (scan, torn);
            }
            return (scan, corrupt("payload checksum mismatch".into()));
        }
        let p: Payload = match postcard::from_bytes(payload) {
            Ok(p) => p,
            Err(e) => return (scan, corrupt(format!("payload does not decode: {e}"))),
        };
        let expected = scan.entries.len() as Position + 1;
        if p.pos != expected {
            return (
                scan,
                corrupt(format!(
                    "record holds position {}, expected {expected}",
                    p.pos
                )),
            );
        }
        scan.entries.push(p.entry);
        scan.offsets.push(at);
        offset += record_end;
        scan.end = offset as u64;
    }
    (scan, None)
}
