//! Log entries. Every entry carries the epoch it was written in, so that a
//! copy "covers" a position only if it holds the same entry (same epoch tag),
//! not merely a log of the same length.

use crate::ids::Epoch;
use serde::{Deserialize, Serialize};

/// A state-changing operation of the queue partition.
///
/// Messages are keyed; settling a message is a delete, carried as a log event
/// like any other (note 2: deletions propagate as log events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// Publish (or overwrite) message `key` with body `value`.
    Put {
        /// The message key.
        key: u64,
        /// The message body.
        value: u64,
    },
    /// Settle (delete) message `key`: the consumer is done with it.
    Delete {
        /// The message key.
        key: u64,
    },
    /// No operation: a position this copy never received. Only the
    /// `replay_accepts_gap` mutant writes it (a copy that takes an
    /// increment past a gap leaves the positions between missing); the
    /// correct protocol never holds one.
    Missing,
}

/// One immutable log record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Entry {
    /// The epoch of the owner that wrote the entry.
    pub epoch: Epoch,
    /// What the entry does.
    pub op: Op,
}

impl Entry {
    /// The missing entry at a position a copy never received (see
    /// [`Op::Missing`]); its epoch tag is 0, which no owner serves at.
    pub fn missing() -> Entry {
        Entry {
            epoch: Epoch(0),
            op: Op::Missing,
        }
    }

    /// Whether this position was never received (a gap).
    pub fn is_missing(&self) -> bool {
        self.op == Op::Missing
    }
}

/// The length of the longest common prefix of two logs, compared entry by
/// entry (epoch tag and operation).
pub fn common_prefix(a: &[Entry], b: &[Entry]) -> u64 {
    let n = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
    n as u64
}
