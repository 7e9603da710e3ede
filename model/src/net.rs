//! Messages in flight (configs with `net` on): appends, acknowledgements,
//! refusals and suspension notices travel through a bounded multiset, so a
//! delivery may come late, twice, or never, and may cross a crash, a
//! restart, a disk loss, a seal or an epoch change. With `net` off every
//! replication step is atomic, as before.
//!
//! Only what a process could know travels: a message carries the sender's
//! serving epoch, the storage instance and incarnation it speaks for, and
//! the position and epoch-tagged entry it is about. The receiver decides
//! from the message and its own state alone.

use crate::types::{node_name, Entry, NodeId, Slot};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Upper bound on messages in flight at once: one per link in each
/// direction's window for two owners that both believe they serve (a
/// zombie and the current one) on up to four nodes, plus suspension notices
/// and duplicates.
pub const NET_MAX: usize = 12;

/// The controller as a message endpoint (not a node: no node id reaches it).
pub const CONTROLLER: NodeId = 31;
const _: () = assert!(
    CONTROLLER as usize >= crate::types::NODES_MAX,
    "the controller's endpoint must not be a node"
);

/// One message. Field names are the wire format's (impl/ and the TLA+ spec
/// use the same ones).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Msg {
    /// Not a message: the empty cell of [`Net`].
    #[default]
    #[serde(skip)]
    None,
    /// Owner `from`, serving at `epoch`, ships the entry at `pos` to the
    /// replica instance `to`; `prev` is its entry at `pos - 1` (none at 1),
    /// so the replica can refuse a gap (note 2: "log gap detected; cannot
    /// skip").
    Append {
        #[serde(with = "crate::types::node_serde")]
        from: NodeId,
        #[serde(with = "slot_serde")]
        to: Slot,
        epoch: u8,
        pos: u8,
        #[serde(with = "entry_serde")]
        prev: Entry,
        #[serde(with = "entry_serde")]
        entry: Entry,
    },
    /// Replica instance `from` (process incarnation `inc`) tells owner `to`,
    /// serving at `epoch`, that it durably holds `entry` at `pos`;
    /// `admitted` is false while it is a restarted follower awaiting
    /// re-admission (its progress paces catch-up but does not count).
    Ack {
        #[serde(with = "crate::types::node_serde")]
        to: NodeId,
        epoch: u8,
        #[serde(with = "slot_serde")]
        from: Slot,
        inc: u8,
        pos: u8,
        #[serde(with = "entry_serde")]
        entry: Entry,
        admitted: bool,
    },
    /// A replica refused an append from `to` and tells it the newer epoch.
    Refuse {
        #[serde(with = "crate::types::node_serde")]
        to: NodeId,
        epoch: u8,
    },
    /// A follower instance that restarted (now incarnation `inc`) tells the
    /// owner the record names that it is suspended: that owner forgets its
    /// progress and takes no acknowledgement from an earlier incarnation.
    Suspend {
        #[serde(with = "crate::types::node_serde")]
        to: NodeId,
        #[serde(with = "slot_serde")]
        from: Slot,
        inc: u8,
    },
    /// Owner instance `from`, serving at `epoch`, tells the controller that
    /// copy `of` holds its history through `pos` (the copy acknowledged the
    /// entry there and the owner found the same entry, epoch tag and all, at
    /// that position of its own log) and that its confirmed tail is
    /// `confirmed`. This is all the controller knows of a copy's progress
    /// (note 1, step 07: "D reports durable progress at 500 or beyond").
    Progress {
        #[serde(with = "slot_serde")]
        from: Slot,
        epoch: u8,
        #[serde(with = "slot_serde")]
        of: Slot,
        pos: u8,
        confirmed: u8,
    },
}

impl Msg {
    /// The message kind, as the action log prints it.
    pub fn kind(&self) -> &'static str {
        match self {
            Msg::None => "None",
            Msg::Append { .. } => "Append",
            Msg::Ack { .. } => "Ack",
            Msg::Refuse { .. } => "Refuse",
            Msg::Suspend { .. } => "Suspend",
            Msg::Progress { .. } => "Progress",
        }
    }

    /// Whether the message is addressed to the controller (which the model
    /// keeps always up: its record is the replicated store).
    pub fn to_controller(&self) -> bool {
        matches!(self, Msg::Progress { .. })
    }

    /// The node the message is addressed to ([`CONTROLLER`] for the
    /// controller).
    pub fn dest(&self) -> NodeId {
        match *self {
            Msg::None => unreachable!("invariant broken: the empty cell is not a message"),
            Msg::Progress { .. } => CONTROLLER,
            Msg::Append { to, .. } => to.node(),
            Msg::Ack { to, .. } | Msg::Refuse { to, .. } | Msg::Suspend { to, .. } => to,
        }
    }

    /// Six bytes that identify the message, for hashing and the packed codec.
    pub fn pack(&self) -> [u8; 6] {
        match *self {
            Msg::None => [0; 6],
            Msg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            } => [1 | from << 3, to.0, epoch, pos, prev.0, entry.0],
            Msg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            } => [
                2 | to << 3,
                from.0,
                epoch,
                pos | inc << 4,
                admitted as u8,
                entry.0,
            ],
            Msg::Refuse { to, epoch } => [3 | to << 3, 0, epoch, 0, 0, 0],
            Msg::Suspend { to, from, inc } => [4 | to << 3, from.0, 0, inc, 0, 0],
            Msg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            } => [5, from.0, epoch, of.0, pos, confirmed],
        }
    }

    /// The inverse of [`Msg::pack`].
    pub fn unpack(b: [u8; 6]) -> Msg {
        let n = b[0] >> 3;
        match b[0] & 7 {
            0 => Msg::None,
            1 => Msg::Append {
                from: n,
                to: Slot(b[1]),
                epoch: b[2],
                pos: b[3],
                prev: Entry(b[4]),
                entry: Entry(b[5]),
            },
            2 => Msg::Ack {
                to: n,
                epoch: b[2],
                from: Slot(b[1]),
                inc: b[3] >> 4,
                pos: b[3] & 0xf,
                entry: Entry(b[5]),
                admitted: b[4] != 0,
            },
            3 => Msg::Refuse { to: n, epoch: b[2] },
            4 => Msg::Suspend {
                to: n,
                from: Slot(b[1]),
                inc: b[3],
            },
            5 => Msg::Progress {
                from: Slot(b[1]),
                epoch: b[2],
                of: Slot(b[3]),
                pos: b[4],
                confirmed: b[5],
            },
            k => panic!("invariant broken: packed message kind {k}"),
        }
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = |x: Entry| {
            if x.is_none() {
                "-".to_string()
            } else {
                x.to_string()
            }
        };
        match *self {
            Msg::None => f.write_str("none"),
            Msg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            } => write!(
                f,
                "Append {} -> {to} e{epoch} @{pos} {} (prev {})",
                node_name(from),
                e(entry),
                e(prev)
            ),
            Msg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            } => write!(
                f,
                "Ack {from}#{inc} -> {} e{epoch} @{pos} {}{}",
                node_name(to),
                e(entry),
                if admitted { "" } else { " (suspended)" }
            ),
            Msg::Refuse { to, epoch } => write!(f, "Refuse -> {} e{epoch}", node_name(to)),
            Msg::Suspend { to, from, inc } => {
                write!(f, "Suspend {from}#{inc} -> {}", node_name(to))
            }
            Msg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            } => write!(
                f,
                "Progress {from} -> controller e{epoch} {of}@{pos} confirmed {confirmed}"
            ),
        }
    }
}

/// The messages in flight: a multiset kept sorted, so equal multisets are
/// equal states.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Net {
    pub len: u8,
    pub msgs: [Msg; NET_MAX],
}

impl Net {
    pub fn iter(&self) -> impl Iterator<Item = Msg> + '_ {
        self.msgs[..self.len as usize].iter().copied()
    }
    pub fn contains(&self, m: Msg) -> bool {
        self.iter().any(|x| x == m)
    }
    /// How many copies of `m` are in flight.
    pub fn count(&self, m: Msg) -> usize {
        self.iter().filter(|x| *x == m).count()
    }
    pub fn is_full(&self) -> bool {
        self.len as usize == NET_MAX
    }
    /// Add one copy of `m`.
    pub fn add(&mut self, m: Msg) {
        assert!(
            !self.is_full(),
            "invariant broken: more than NET_MAX messages in flight"
        );
        debug_assert!(m != Msg::None);
        self.msgs[self.len as usize] = m;
        self.len += 1;
        self.msgs[..self.len as usize].sort_unstable();
    }
    /// Remove one copy of `m`; false if none is in flight.
    pub fn remove(&mut self, m: Msg) -> bool {
        let n = self.len as usize;
        match self.msgs[..n].iter().position(|x| *x == m) {
            None => false,
            Some(i) => {
                self.msgs.copy_within(i + 1..n, i);
                self.msgs[n - 1] = Msg::None;
                self.len -= 1;
                true
            }
        }
    }
    /// The distinct messages in flight, in order.
    pub fn distinct(&self) -> impl Iterator<Item = Msg> + '_ {
        let n = self.len as usize;
        (0..n)
            .filter(move |&i| i == 0 || self.msgs[i] != self.msgs[i - 1])
            .map(move |i| self.msgs[i])
    }
}

/// Serde for storage instances as printed (`"n2"`, `"n2'"` for a fresh disk).
pub mod slot_serde {
    use crate::types::{node_serde, Slot};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &Slot, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&x.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Slot, D::Error> {
        let s = String::deserialize(d)?;
        let (name, gen) = match s.strip_suffix('\'') {
            Some(n) => (n, 1),
            None => (s.as_str(), 0),
        };
        let n = node_serde::parse(name).map_err(serde::de::Error::custom)?;
        Ok(Slot::new(n, gen))
    }
}

/// Serde for entries as `"m1@e1"` (`"-"` for none).
pub mod entry_serde {
    use crate::types::Entry;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &Entry, s: S) -> Result<S::Ok, S::Error> {
        if x.is_none() {
            s.serialize_str("-")
        } else {
            s.serialize_str(&x.to_string())
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Entry, D::Error> {
        let s = String::deserialize(d)?;
        if s == "-" {
            return Ok(Entry(0));
        }
        let bad = || {
            serde::de::Error::custom(format!(
                "expected an entry such as `m1@e2`, `s1@e2` or `-`, got `{s}`"
            ))
        };
        let (settle, rest) = match (s.strip_prefix('m'), s.strip_prefix('s')) {
            (Some(rest), _) => (false, rest),
            (None, Some(rest)) => (true, rest),
            (None, None) => return Err(bad()),
        };
        let (m, e) = rest.split_once("@e").ok_or_else(bad)?;
        let m: u8 = m.parse().map_err(|_| bad())?;
        let e: u8 = e.parse().map_err(|_| bad())?;
        if m == 0 || e >= 16 || m >= crate::types::SETTLE_BIT {
            return Err(bad());
        }
        Ok(if settle {
            Entry::settle(e, m)
        } else {
            Entry::new(e, m)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_every_kind() {
        let msgs = [
            Msg::Append {
                from: 0,
                to: Slot::new(2, 1),
                epoch: 2,
                pos: 3,
                prev: Entry::new(1, 2),
                entry: Entry::new(2, 3),
            },
            Msg::Ack {
                to: 1,
                epoch: 3,
                from: Slot::new(4, 0),
                inc: 2,
                pos: 4,
                entry: Entry::new(3, 1),
                admitted: false,
            },
            Msg::Refuse { to: 3, epoch: 2 },
            Msg::Suspend {
                to: 0,
                from: Slot::new(1, 0),
                inc: 1,
            },
            Msg::Progress {
                from: Slot::new(1, 1),
                epoch: 3,
                of: Slot::new(3, 0),
                pos: 2,
                confirmed: 1,
            },
        ];
        for m in msgs {
            assert_eq!(Msg::unpack(m.pack()), m, "{m}");
        }
    }

    #[test]
    fn the_multiset_is_sorted_and_counts_copies() {
        let a = Msg::Refuse { to: 1, epoch: 2 };
        let b = Msg::Refuse { to: 0, epoch: 2 };
        let mut n = Net::default();
        n.add(a);
        n.add(b);
        n.add(a);
        let mut m = Net::default();
        m.add(b);
        m.add(a);
        m.add(a);
        assert_eq!(n, m, "insertion order must not matter");
        assert_eq!(n.count(a), 2);
        assert_eq!(n.distinct().count(), 2);
        assert!(n.remove(a));
        assert_eq!(n.count(a), 1);
        assert!(!n.remove(Msg::Refuse { to: 4, epoch: 1 }));
    }
}
