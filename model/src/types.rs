//! Small, `Copy` building blocks of the model state: node ids, storage
//! instances (slots), slot sets, log entries and logs.
//!
//! The state is hashed millions of times per run, so everything here is a
//! fixed-size value: bitsets instead of `BTreeSet`, arrays instead of `Vec`.

use std::fmt;

/// Upper bound on nodes in any configuration.
pub const NODES_MAX: usize = 5;
/// Upper bound on log length (every publish appends one entry).
pub const LOG_MAX: usize = 4;
/// Upper bound on clients (producers that publish through routes).
pub const CLIENTS_MAX: usize = 2;
/// Disk generations per node: a node can come back with a fresh disk once.
pub const GENS_MAX: u8 = 2;

// A slot set is a `u16`; every (node, generation) pair needs its own bit.
const _: () = assert!(NODES_MAX * GENS_MAX as usize <= 16);
// Entries pack the epoch and the message id into four bits each.
const _: () = assert!(LOG_MAX < 16);

/// A node index, 0-based; printed as `n1`, `n2`, ...
pub type NodeId = u8;

/// A client index, 0-based; printed as `c1`, `c2`, ... Each client is a
/// producer of its own (its index is its producer id).
pub type ClientId = u8;

/// Prints a client id as users see it (`c1` for index 0).
pub fn client_name(c: ClientId) -> String {
    format!("c{}", c + 1)
}

/// Prints a node id as users see it (`n1` for index 0).
pub fn node_name(n: NodeId) -> String {
    format!("n{}", n + 1)
}

/// A storage instance: one disk of one node. Note 1: "the accepted history
/// names the exact process and storage instance of each replica". A node that
/// comes back with a fresh disk is a new instance, so it is a new replica.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct Slot(pub u8);

impl Slot {
    /// The instance of node `n` on disk generation `gen`.
    pub fn new(n: NodeId, gen: u8) -> Slot {
        debug_assert!((n as usize) < NODES_MAX && gen < GENS_MAX);
        Slot(n * GENS_MAX + gen)
    }
    /// The node this instance lives on.
    pub fn node(self) -> NodeId {
        self.0 / GENS_MAX
    }
    /// The disk generation of this instance.
    pub fn gen(self) -> u8 {
        self.0 % GENS_MAX
    }
    fn bit(self) -> u16 {
        1 << self.0
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.gen() == 0 {
            write!(f, "n{}", self.node() + 1)
        } else {
            write!(f, "n{}'", self.node() + 1)
        }
    }
}

/// Bits per acknowledged position in [`Acks`]: positions run 0..=LOG_MAX.
const ACK_BITS: u32 = 3;
// Every slot's acknowledged position fits its field of the `u32`.
const _: () = assert!(LOG_MAX < (1 << ACK_BITS));
const _: () = assert!(NODES_MAX * GENS_MAX as usize * ACK_BITS as usize <= 32);

/// What an owner knows of its copies' durable progress: for each storage
/// instance, the position through which that copy acknowledged holding the
/// owner's history (0: nothing). Packed three bits per slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Acks(pub u32);

impl Acks {
    /// The position instance `s` acknowledged (0 if none).
    pub fn get(self, s: Slot) -> u8 {
        ((self.0 >> (u32::from(s.0) * ACK_BITS)) & ((1 << ACK_BITS) - 1)) as u8
    }
    /// The same map with `s` acknowledged at `pos` (0 forgets it).
    #[must_use]
    pub fn set(self, s: Slot, pos: u8) -> Acks {
        assert!(
            (pos as usize) <= LOG_MAX,
            "invariant broken: acknowledged position {pos} beyond LOG_MAX"
        );
        let shift = u32::from(s.0) * ACK_BITS;
        let mask = ((1u32 << ACK_BITS) - 1) << shift;
        Acks((self.0 & !mask) | (u32::from(pos) << shift))
    }
    /// The sum of every instance's acknowledged position (the fields'
    /// sum, one bit weight at a time).
    pub fn total(self) -> u16 {
        const LOW: u32 = {
            let mut m = 0u32;
            let mut i = 0;
            while i < NODES_MAX as u32 * GENS_MAX as u32 {
                m |= 1 << (i * ACK_BITS);
                i += 1;
            }
            m
        };
        (0..ACK_BITS)
            .map(|b| ((self.0 & (LOW << b)).count_ones() << b) as u16)
            .sum()
    }
    /// Every instance with a nonzero acknowledged position, in slot order.
    pub fn iter(self) -> impl Iterator<Item = (Slot, u8)> {
        (0..(NODES_MAX as u8 * GENS_MAX))
            .map(Slot)
            .map(move |s| (s, self.get(s)))
            .filter(|(_, p)| *p > 0)
    }
}

/// A set of storage instances as a bitset.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Slots(pub u16);

impl Slots {
    pub const EMPTY: Slots = Slots(0);
    pub fn contains(self, s: Slot) -> bool {
        self.0 & s.bit() != 0
    }
    #[must_use]
    pub fn with(self, s: Slot) -> Slots {
        Slots(self.0 | s.bit())
    }
    #[must_use]
    pub fn without(self, s: Slot) -> Slots {
        Slots(self.0 & !s.bit())
    }
    #[must_use]
    pub fn union(self, o: Slots) -> Slots {
        Slots(self.0 | o.0)
    }
    #[must_use]
    pub fn minus(self, o: Slots) -> Slots {
        Slots(self.0 & !o.0)
    }
    #[must_use]
    pub fn inter(self, o: Slots) -> Slots {
        Slots(self.0 & o.0)
    }
    pub fn len(self) -> u8 {
        self.0.count_ones() as u8
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Members in ascending order (lowest set bit first, one step per
    /// member).
    pub fn iter(self) -> impl Iterator<Item = Slot> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let i = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                Slot(i)
            })
        })
    }
    /// Members as printable names, for views and diffs.
    pub fn names(self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

/// One log entry: the message it carries and the epoch it was written in.
/// `Entry(0)` is "no entry". Note 1's recovery compares histories by the
/// epoch tag; message ids are unique per publish, so equal entries are the
/// same write. The low nibble is the operation: `1..=SETTLE_BIT - 1`
/// publishes that message, `SETTLE_BIT + m` settles (deletes) message `m`
/// (note 2: "deletions must propagate as log events").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Entry(pub u8);

impl Entry {
    pub fn new(epoch: u8, msg: u8) -> Entry {
        assert!(
            epoch < 16 && msg < 16 && msg > 0,
            "entry fields out of range"
        );
        Entry(epoch << 4 | msg)
    }
    pub fn epoch(self) -> u8 {
        self.0 >> 4
    }
    pub fn msg(self) -> u8 {
        self.0 & 0xf
    }
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
    /// The consumer's settle of message `m`, written at `epoch`.
    pub fn settle(epoch: u8, m: u8) -> Entry {
        assert!(
            m > 0 && m < SETTLE_BIT,
            "invariant broken: settle of message {m} beyond the publish range"
        );
        Entry::new(epoch, SETTLE_BIT | m)
    }
    /// The message this entry settles, if it is a settle.
    pub fn settles(self) -> Option<u8> {
        (self.msg() & SETTLE_BIT != 0 && self.msg() != SETTLE_BIT).then(|| self.msg() & !SETTLE_BIT)
    }
    /// The message this entry publishes, if it is a publish.
    pub fn publishes(self) -> Option<u8> {
        (self.msg() > 0 && self.msg() < SETTLE_BIT).then_some(self.msg())
    }
}

/// The operation bit of a settle entry: publishes are messages
/// `1..SETTLE_BIT`, so a config publishes at most `SETTLE_BIT - 1` messages.
pub const SETTLE_BIT: u8 = 8;

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            // An empty position inside a log: a gap (only under a mutant).
            return f.write_str("-");
        }
        match self.settles() {
            Some(m) => write!(f, "s{m}@e{}", self.epoch()),
            None => write!(f, "m{}@e{}", self.msg(), self.epoch()),
        }
    }
}

/// A log: positions are 1-based, as in the notes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Log {
    pub len: u8,
    pub entries: [Entry; LOG_MAX],
}

impl Log {
    /// The entry at 1-based position `p`, or `Entry(0)` past the end.
    pub fn at(&self, p: u8) -> Entry {
        if p == 0 || p > self.len {
            Entry(0)
        } else {
            self.entries[p as usize - 1]
        }
    }
    pub fn push(&mut self, e: Entry) {
        assert!(
            (self.len as usize) < LOG_MAX,
            "log overflow: LOG_MAX too small for config"
        );
        self.entries[self.len as usize] = e;
        self.len += 1;
    }
    pub fn truncate(&mut self, len: u8) {
        for i in len as usize..LOG_MAX {
            self.entries[i] = Entry(0);
        }
        self.len = self.len.min(len);
    }
    pub fn last_epoch(&self) -> u8 {
        self.at(self.len).epoch()
    }
    /// Whether this log holds `other`'s history through position `p`
    /// (history compare, not length: DESIGN "covers position p").
    pub fn covers(&self, other: &Log, p: u8) -> bool {
        p == 0 || (self.len >= p && other.len >= p && self.at(p) == other.at(p))
    }
    /// Length of the common prefix.
    pub fn common_prefix(&self, other: &Log) -> u8 {
        let mut i = 0;
        while i < self.len && i < other.len && self.entries[i as usize] == other.entries[i as usize]
        {
            i += 1;
        }
        i
    }
    pub fn names(&self) -> Vec<String> {
        (1..=self.len).map(|p| self.at(p).to_string()).collect()
    }
}

/// Majority write requirement for a configured replication factor.
pub fn majority(rf: u8) -> u8 {
    rf / 2 + 1
}

/// Serde for node ids as their printed names (`"n4"`), for trace files.
pub mod client_serde {
    use super::ClientId;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(c: &ClientId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::client_name(*c))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ClientId, D::Error> {
        let s = String::deserialize(d)?;
        parse(&s).map_err(serde::de::Error::custom)
    }

    /// Parse `"c2"` into client index 1 (the canonical spelling only).
    pub fn parse(s: &str) -> Result<ClientId, String> {
        s.strip_prefix('c')
            .and_then(|k| k.parse::<u8>().ok())
            .filter(|k| *k >= 1 && (*k as usize) <= super::CLIENTS_MAX)
            .map(|k| k - 1)
            .filter(|c| super::client_name(*c) == s)
            .ok_or_else(|| {
                format!(
                    "expected a client name such as `c1` (`c` and a number from 1 to {}, no leading zero), got `{s}`",
                    super::CLIENTS_MAX
                )
            })
    }
}

pub mod node_serde {
    use super::NodeId;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(n: &NodeId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::node_name(*n))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NodeId, D::Error> {
        let s = String::deserialize(d)?;
        parse(&s).map_err(serde::de::Error::custom)
    }

    /// Parse `"n4"` into node index 3.
    /// Only the canonical spelling is accepted (`n01` is not `n1`); whether
    /// the node exists in a config is checked where the config is known.
    pub fn parse(s: &str) -> Result<NodeId, String> {
        s.strip_prefix('n')
            .and_then(|k| k.parse::<u8>().ok())
            .filter(|k| *k >= 1 && (*k as usize) <= super::NODES_MAX)
            .map(|k| k - 1)
            .filter(|n| super::node_name(*n) == s)
            .ok_or_else(|| {
                format!(
                    "expected a node name such as `n1` (`n` and a number from 1, no leading zero), got `{s}`"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_total_is_the_sum_of_the_positions() {
        let mut a = Acks::default();
        assert_eq!(a.total(), 0);
        let mut sum = 0u16;
        for (i, slot) in (0..NODES_MAX as u8 * GENS_MAX).map(Slot).enumerate() {
            let pos = (i % (LOG_MAX + 1)) as u8;
            a = a.set(slot, pos);
            sum += u16::from(pos);
            assert_eq!(a.total(), sum);
            assert_eq!(a.total(), a.iter().map(|(_, p)| u16::from(p)).sum::<u16>());
        }
        assert!(sum > 0, "the test set some positions");
    }
}
