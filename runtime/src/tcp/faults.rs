//! The node's own network fault layer: links cut and healed while the
//! process runs, and optional seeded drop and delay rates on what it sends
//! to its peers.
//!
//! A cut link drops every frame to and from that peer: the node's writer
//! to it drops what the partitions send, its readers drop the peer's
//! messages (the peer names itself when it connects, `Frame::Hello`), and a
//! cut controller link leaves the controller's `Ping` unanswered, so its
//! lease on the node lapses while the node goes on serving everyone else: a
//! suspected owner that is still alive (note 1, "Recovery"). A cut client
//! link is one way: the clients' requests (publish, settle, routed, waits
//! for a confirm) still arrive and are carried out, and their answers are
//! lost (the connection is closed instead), the case of note 2's "does
//! timeout retry cause duplicate effects?": the effect happened and the
//! client cannot know it. A request that never arrives is what a node that
//! is down gives already. Healing a link
//! lets the next frame through. The layer only moves messages: every
//! protocol decision stays the sans-IO `Node`'s, and to it a cut is a run
//! of lost messages, which the resend timer repairs after the heal.
//!
//! Rates act on this node's sends to its peers only: a message is dropped
//! with probability `drop_pct` percent, else held back for up to
//! `delay_ms_max` with probability `delay_pct` percent, so messages sent
//! after it overtake it (delay and reorder on one connection). Each link
//! draws from its own generator seeded with the seed and the peer's
//! number, so a seed names the fate of the k-th message to a peer; when
//! the k-th message is sent depends on the run.
//!
//! With no fault set the layer costs one relaxed atomic load per frame:
//! `Faults::active` is false and nothing else is looked at.

use crate::sim::Rng;
use livemove_impl::NodeId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The longest a message may be held back. A delay is a reordering of
/// messages in flight, not a partition (that is a cut).
pub const DELAY_MS_MAX: u32 = 10_000;

/// A link of this node: to a peer node, to the controller or to its
/// clients. Written as on the command line (`controller`, `clients`,
/// `n2`), on the wire and in JSON alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Link {
    /// The controller's probes (`Frame::Ping`).
    Controller,
    /// A peer node: the messages between the two, both ways.
    Node(NodeId),
    /// The answers to clients' requests (`Frame::Publish`, `Settle`,
    /// `Routed`, `WaitConfirmed`, `WaitConfirmedAt`), one way: the
    /// requests are carried out, the answers lost.
    Clients,
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Link::Controller => f.write_str("controller"),
            Link::Clients => f.write_str("clients"),
            Link::Node(n) => write!(f, "{n}"),
        }
    }
}

/// A link name that is neither `controller`, `clients` nor a node like
/// `n2`.
#[derive(Debug, thiserror::Error)]
#[error("`{0}`: a link is `controller`, `clients` or a node like `n2`")]
pub struct BadLink(String);

impl From<Link> for String {
    fn from(l: Link) -> String {
        l.to_string()
    }
}

impl TryFrom<String> for Link {
    type Error = BadLink;

    fn try_from(s: String) -> Result<Link, BadLink> {
        s.parse()
    }
}

impl FromStr for Link {
    type Err = BadLink;

    fn from_str(s: &str) -> Result<Link, BadLink> {
        match s {
            "controller" => return Ok(Link::Controller),
            "clients" => return Ok(Link::Clients),
            _ => {}
        }
        s.strip_prefix('n')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|&n| n >= 1)
            .map(|n| Link::Node(NodeId(n)))
            .ok_or_else(|| BadLink(s.to_string()))
    }
}

/// Drop and delay rates on this node's sends to its peers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rates {
    /// Percent of messages dropped.
    pub drop_pct: u8,
    /// Percent of the messages not dropped that are held back.
    pub delay_pct: u8,
    /// The longest a held-back message waits (a draw in `1..=max`).
    pub delay_ms_max: u32,
    /// The seed of every link's generator.
    pub seed: u64,
}

/// Rates that make no sense.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadRates {
    /// A percentage above 100.
    #[error("{what} {pct}: a percentage is at most 100")]
    Percent {
        /// Which rate.
        what: &'static str,
        /// Its value.
        pct: u8,
    },
    /// Messages delayed by at most nothing, or by more than `DELAY_MS_MAX`.
    #[error("delay_ms_max {ms}: from 1 to {DELAY_MS_MAX} when messages are delayed")]
    Delay {
        /// The value given.
        ms: u32,
    },
}

impl Rates {
    /// The rates, if they make sense.
    pub fn check(self) -> Result<Rates, BadRates> {
        for (what, pct) in [("drop_pct", self.drop_pct), ("delay_pct", self.delay_pct)] {
            if pct > 100 {
                return Err(BadRates::Percent { what, pct });
            }
        }
        if self.delay_pct > 0 && !(1..=DELAY_MS_MAX).contains(&self.delay_ms_max) {
            return Err(BadRates::Delay {
                ms: self.delay_ms_max,
            });
        }
        Ok(self)
    }
}

/// A change to a node's faults, or none (`Show`): a request on its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FaultChange {
    /// Change nothing; the answer shows the faults set.
    Show,
    /// Cut a link.
    Cut(Link),
    /// Heal a link.
    Heal(Link),
    /// Heal every link and clear the rates.
    HealAll,
    /// Drop and delay this node's sends to its peers.
    SetRates(Rates),
    /// Stop dropping and delaying.
    ClearRates,
}

/// The faults set on a node, and what they did since it started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultState {
    /// The links cut.
    pub cut: BTreeSet<Link>,
    /// The rates on its sends to peers, if set.
    pub rates: Option<Rates>,
    /// What the faults did: never reset, so a test can tell they acted.
    pub counts: FaultCounts,
}

/// What a node's faults did since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounts {
    /// Peer messages dropped, both ways: over a cut link, by the drop
    /// rate, or held back when too many were.
    pub dropped: u64,
    /// Messages to peers the delay rate drew a delay for.
    pub delayed: u64,
    /// The controller's probes left unanswered over its cut link.
    pub probes_unanswered: u64,
}

/// What happens to one message this node sends to a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It goes now.
    Send,
    /// It is lost.
    Drop,
    /// It goes after this long.
    Delay(Duration),
}

/// A node's faults, shared by its reader and writer tasks.
#[derive(Debug, Default)]
pub struct Faults {
    /// Whether any fault is set: the only thing read while none is.
    active: AtomicBool,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    state: FaultState,
    /// Each peer link's generator, made at its first draw under the rates.
    rngs: BTreeMap<NodeId, Rng>,
}

impl Faults {
    /// No fault set.
    pub fn new() -> Faults {
        Faults::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The state is replaced whole under the lock; a panic elsewhere
        // cannot leave it half-changed.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether any fault is set.
    #[inline]
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Apply `change`; the faults set after it.
    pub fn apply(&self, change: FaultChange) -> FaultState {
        let mut inner = self.lock();
        match change {
            FaultChange::Show => {}
            FaultChange::Cut(l) => {
                inner.state.cut.insert(l);
            }
            FaultChange::Heal(l) => {
                inner.state.cut.remove(&l);
            }
            FaultChange::HealAll => {
                inner.state.cut.clear();
                inner.state.rates = None;
                inner.rngs.clear();
            }
            FaultChange::SetRates(r) => {
                inner.state.rates = Some(r);
                inner.rngs.clear();
            }
            FaultChange::ClearRates => {
                inner.state.rates = None;
                inner.rngs.clear();
            }
        }
        let active = !inner.state.cut.is_empty() || inner.state.rates.is_some();
        self.active.store(active, Ordering::Relaxed);
        if change != FaultChange::Show {
            tracing::info!(?change, cut = ?inner.state.cut, rates = ?inner.state.rates, "network faults changed");
        }
        inner.state.clone()
    }

    /// Whether what comes over `link` now is dropped (the link is cut);
    /// counted when it is.
    #[inline]
    pub fn cut_drops(&self, link: Link) -> bool {
        if !self.active() {
            return false;
        }
        let mut inner = self.lock();
        if !inner.state.cut.contains(&link) {
            return false;
        }
        let counts = &mut inner.state.counts;
        match link {
            Link::Controller => counts.probes_unanswered += 1,
            Link::Node(_) => counts.dropped += 1,
            // Not counted: a count would change `FaultCounts` on the wire;
            // the client sees each lost answer itself.
            Link::Clients => {}
        }
        true
    }

    /// Count a message dropped outside a fate drawn here (too many held
    /// back).
    pub fn count_drop(&self) {
        self.lock().state.counts.dropped += 1;
    }

    /// The fate of the next message to `peer`.
    #[inline]
    pub fn on_send(&self, peer: NodeId) -> Fate {
        if !self.active() {
            return Fate::Send;
        }
        self.draw(peer)
    }

    fn draw(&self, peer: NodeId) -> Fate {
        let mut inner = self.lock();
        let fate = Self::fate(&mut inner, peer);
        match fate {
            Fate::Send => {}
            Fate::Drop => inner.state.counts.dropped += 1,
            Fate::Delay(_) => inner.state.counts.delayed += 1,
        }
        fate
    }

    fn fate(inner: &mut Inner, peer: NodeId) -> Fate {
        if inner.state.cut.contains(&Link::Node(peer)) {
            return Fate::Drop;
        }
        let Some(r) = inner.state.rates else {
            return Fate::Send;
        };
        let rng = inner
            .rngs
            .entry(peer)
            .or_insert_with(|| Rng::new(r.seed ^ (u64::from(peer.0) << 56)));
        if rng.chance(u64::from(r.drop_pct)) {
            return Fate::Drop;
        }
        if rng.chance(u64::from(r.delay_pct)) {
            let ms = 1 + rng.below(u64::from(r.delay_ms_max));
            return Fate::Delay(Duration::from_millis(ms));
        }
        Fate::Send
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N2: NodeId = NodeId(2);
    const N3: NodeId = NodeId(3);

    #[test]
    fn with_no_fault_set_every_message_goes_and_no_link_is_cut() {
        let f = Faults::new();
        assert!(!f.active());
        assert_eq!(f.on_send(N2), Fate::Send);
        assert!(!f.cut_drops(Link::Controller));
        assert_eq!(f.apply(FaultChange::Show), FaultState::default());
        assert!(!f.active(), "showing sets nothing");
    }

    #[test]
    fn a_cut_link_drops_until_healed_and_other_links_are_untouched() {
        let f = Faults::new();
        let s = f.apply(FaultChange::Cut(Link::Node(N2)));
        assert_eq!(s.cut, BTreeSet::from([Link::Node(N2)]));
        assert!(f.active());
        assert_eq!(f.on_send(N2), Fate::Drop);
        assert_eq!(f.on_send(N3), Fate::Send);
        assert!(f.cut_drops(Link::Node(N2)));
        assert!(!f.cut_drops(Link::Controller));
        f.apply(FaultChange::Cut(Link::Controller));
        f.apply(FaultChange::Heal(Link::Node(N2)));
        assert_eq!(f.on_send(N2), Fate::Send);
        assert!(f.cut_drops(Link::Controller));
        assert!(f.active(), "the controller link is still cut");
        let s = f.apply(FaultChange::Heal(Link::Controller));
        assert!(!f.active(), "nothing set: back to the one atomic load");
        let counts = FaultCounts {
            dropped: 2,
            delayed: 0,
            probes_unanswered: 1,
        };
        assert_eq!(s.counts, counts, "one send and one receipt over n2's cut");
    }

    #[test]
    fn heal_all_clears_cuts_and_rates() {
        let f = Faults::new();
        f.apply(FaultChange::Cut(Link::Node(N3)));
        f.apply(FaultChange::SetRates(rates(50, 50, 5, 1)));
        let s = f.apply(FaultChange::HealAll);
        assert!(s.cut.is_empty() && s.rates.is_none(), "{s:?}");
        assert!(!f.active());
    }

    fn rates(drop_pct: u8, delay_pct: u8, delay_ms_max: u32, seed: u64) -> Rates {
        Rates {
            drop_pct,
            delay_pct,
            delay_ms_max,
            seed,
        }
        .check()
        .unwrap()
    }

    fn fates(f: &Faults, peer: NodeId, n: usize) -> Vec<Fate> {
        (0..n).map(|_| f.on_send(peer)).collect()
    }

    #[test]
    fn a_seed_names_the_fate_of_each_message_on_a_link_whatever_other_links_draw() {
        let a = Faults::new();
        a.apply(FaultChange::SetRates(rates(20, 30, 50, 7)));
        let b = Faults::new();
        b.apply(FaultChange::SetRates(rates(20, 30, 50, 7)));
        let a2 = fates(&a, N2, 200);
        // b draws for n3 in between: n2's sequence is its own.
        let mut b2 = Vec::new();
        for _ in 0..200 {
            b2.push(b.on_send(N2));
            b.on_send(N3);
        }
        assert_eq!(a2, b2);
        assert_ne!(a2, fates(&a, N3, 200), "each link has its own generator");
        let drops = a2.iter().filter(|f| **f == Fate::Drop).count();
        let delays: Vec<Duration> = a2
            .iter()
            .filter_map(|f| match f {
                Fate::Delay(d) => Some(*d),
                _ => None,
            })
            .collect();
        assert!((20..=60).contains(&drops), "{drops} of 200 dropped at 20%");
        assert!(!delays.is_empty());
        assert!(delays
            .iter()
            .all(|d| (1..=50).contains(&(d.as_millis() as u32))));
    }

    #[test]
    fn rates_that_make_no_sense_are_refused() {
        let r = |d, p, ms| Rates {
            drop_pct: d,
            delay_pct: p,
            delay_ms_max: ms,
            seed: 0,
        };
        assert_eq!(
            r(101, 0, 0).check(),
            Err(BadRates::Percent {
                what: "drop_pct",
                pct: 101
            })
        );
        assert_eq!(r(0, 10, 0).check(), Err(BadRates::Delay { ms: 0 }));
        assert_eq!(
            r(0, 10, DELAY_MS_MAX + 1).check(),
            Err(BadRates::Delay {
                ms: DELAY_MS_MAX + 1
            })
        );
        assert!(r(100, 0, 0).check().is_ok(), "no delay, no bound needed");
    }

    #[test]
    fn links_are_named_as_on_the_command_line() {
        assert_eq!("controller".parse::<Link>().unwrap(), Link::Controller);
        assert_eq!("n3".parse::<Link>().unwrap(), Link::Node(N3));
        assert_eq!("clients".parse::<Link>().unwrap(), Link::Clients);
        assert_eq!(Link::Clients.to_string(), "clients");
        assert_eq!(Link::Node(N3).to_string(), "n3");
        let state = FaultState {
            cut: BTreeSet::from([Link::Controller, Link::Node(N3)]),
            rates: None,
            counts: FaultCounts::default(),
        };
        let json = serde_json::to_string(&state).unwrap();
        assert!(
            json.starts_with(r#"{"cut":["controller","n3"],"rates":null,"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<FaultState>(&json).unwrap(), state);
        for bad in ["n0", "3", "ctrl", "n", "n300"] {
            let e = bad.parse::<Link>().unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }
}
