//! The model state: the coordination record, each node, budgets that bound
//! the exploration, and history variables that only properties read.

use crate::types::*;

/// What an owner keeps while it serves (volatile: lost on crash).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Serving {
    /// Whether this node believes it is the owner and serves.
    pub active: bool,
    /// The epoch it serves at.
    pub epoch: u8,
    /// The counted followers it adopted from a committed record (instances).
    pub counted: Slots,
    /// The write requirement it adopted with them.
    pub w: u8,
    /// Admission of state-changing work (closed for a handoff).
    pub open: bool,
    /// Its confirmed tail.
    pub confirmed: u8,
    /// Whether it activated from a handoff's continuation certificate.
    pub via_handoff: bool,
    /// The durable progress its copies acknowledged to it, per instance.
    pub acks: Acks,
    /// With messages in flight: per node, the oldest process incarnation
    /// whose acknowledgements it still takes (three bits per node), raised
    /// by a suspension notice so an acknowledgement sent before a restart
    /// and delivered after the notice is not counted.
    pub floor: u16,
    /// With messages in flight: instances it heard are suspended (a notice,
    /// or an acknowledgement marked suspended); their progress paces
    /// catch-up but does not count until an admitted acknowledgement.
    pub muted: Slots,
}

impl Serving {
    /// The oldest incarnation of node `n` whose acknowledgements count.
    pub fn floor_of(&self, n: NodeId) -> u8 {
        ((self.floor >> (3 * n)) & 7) as u8
    }
    /// Raise node `n`'s floor to `inc` (never lowers it).
    pub fn raise_floor(&mut self, n: NodeId, inc: u8) {
        assert!(inc < 8, "invariant broken: incarnation {inc} beyond 3 bits");
        if inc > self.floor_of(n) {
            self.floor = (self.floor & !(7 << (3 * n))) | (u16::from(inc) << (3 * n));
        }
    }
}

/// One node: process liveness, its current disk, and what is on that disk.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Node {
    pub alive: bool,
    /// Disk generation: the storage instance is `Slot::new(node, gen)`.
    pub gen: u8,
    /// Durable log.
    pub log: Log,
    /// Newest epoch this replica has seen; appends from older senders are refused.
    pub seen: u8,
    /// Sealed at this epoch (0: never); appends from senders at or below it are refused.
    pub sealed_at: u8,
    pub serving: Serving,
    /// Process incarnation: how often this node restarted (counted only
    /// with messages in flight, where acknowledgements carry it).
    pub inc: u8,
    /// With messages in flight: what this copy knows of its own suspension.
    /// Set when it comes back on its disk as a follower (it wrote the
    /// suspension itself), cleared when it reads its re-admission from the
    /// record (`NoticeRejoin`); its acknowledgements are marked from this,
    /// never from the record at the moment it handles an append.
    pub suspended: bool,
    /// History variable: this disk was replaced by a fresh one that the
    /// protocol took for the old instance (only under a mutant).
    pub wiped_unbound: bool,
    /// Retention (note 2): the log position of this disk's checkpoint (0:
    /// none). Positions 1..=base are folded into the checkpoint, bound to
    /// the epoch tag of the entry at `base`; their increments are gone, so
    /// this copy can no longer ship them, nor cut its log below `base`.
    /// (`log` still names those entries: the checkpoint's state is their
    /// effect, and the properties read them.)
    pub base: u8,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub enum MovePhase {
    #[default]
    None,
    /// Step 0: the target is a learner, catching up.
    Learning,
    /// The target is admitted to the accepted history (eligible), still a learner.
    Admitted,
    /// Step 1 written: the target counts, `leaving` is swapped out.
    Swapped,
    /// Replication-factor increase written: the target counts, rf grew.
    Promoted,
}

/// The move in flight (at most one: the record has a single slot for it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Move {
    pub phase: MovePhase,
    pub target: Slot,
    /// Switch boundary B recorded by the owner when it adopted the new set.
    pub boundary: u8,
    /// For the controller's replacement of a counted copy that is down or
    /// lost: that copy (the swap must take it out). Empty for a planned move.
    pub replaces: Slots,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub enum HandoffPhase {
    #[default]
    None,
    /// The owner closed admission.
    Closed,
    /// The owner drained and reported its final boundary.
    Reported,
    /// The new owner is committed at epoch + 1, not yet active.
    Committed,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Handoff {
    pub phase: HandoffPhase,
    pub from: NodeId,
    pub to: NodeId,
    /// Final boundary F and the entry at it (the continuation certificate).
    pub fin: u8,
    pub fin_entry: Entry,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Recovery {
    pub pending: bool,
    /// Instances that sealed for this recovery.
    pub sealed: Slots,
    /// Instances that installed the recovered tail (quorum receipts).
    pub installed: Slots,
    /// Whether inspection has chosen the recovered tail.
    pub chosen: bool,
    /// The recovered tail once chosen. With messages in flight, before
    /// that, the best history the seals so far wrote as evidence (newest
    /// last epoch, then longest).
    pub tail: Log,
}

/// The controller's replicated record. Every change is one guarded write; the
/// model's actions are atomic, which is what the version compare buys the
/// implementation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Record {
    pub epoch: u8,
    pub owner: Slot,
    /// Counted copies besides the owner.
    pub followers: Slots,
    /// Replicate, never count, never change W.
    pub learners: Slots,
    /// A follower swapped out, still replicating and eligible.
    pub leaving: Slots,
    /// The accepted history: instances recovery must hear from.
    pub eligible: Slots,
    /// Restarted followers awaiting re-admission (they keep their eligible slot).
    pub suspended: Slots,
    /// Configured replication factor.
    pub rf: u8,
    /// The replication factor the owner has adopted (W it may confirm on).
    pub rf_served: u8,
    /// Whether the owner adopted the current counted set (false between a
    /// swap or promotion and `OwnerSwitch`).
    pub adopted: bool,
    pub recovery: Recovery,
    pub mv: Move,
    pub handoff: Handoff,
    /// The history the last recovery confirmed: the recovered tail's last
    /// position (0 before any recovery) and the entry there. Every later
    /// history extends it, so recovery chooses only among sealed copies
    /// that hold it (finding 34): epoch tags alone do not order histories,
    /// because a recovered tail keeps the older tags of the entries it
    /// confirms. A handoff leaves it: the history F ends with entries of
    /// the old owner's epoch, newer than any tag a stale copy can hold,
    /// unless F adds nothing to it.
    pub start: u8,
    pub start_entry: Entry,
}

/// Remaining fault and operation budgets: they bound every path.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Budget {
    pub published: u8,
    pub crashes: u8,
    pub suspicions: u8,
    pub restarts: u8,
    pub disk_losses: u8,
    /// Planned moves started (step 0 of a move or an rf increase).
    pub learner_adds: u8,
    pub handoffs: u8,
    /// Operator cancels of a move or a handoff.
    pub cancels: u8,
    /// Planned moves cancelled for a reason (a recovery, a lost target):
    /// each earns one retry (note 1: "a move retries after the recovery
    /// activates").
    pub retries: u8,
    /// Messages the network dropped, and messages it delivered twice.
    pub drops: u8,
    pub dups: u8,
    /// Truncations of an owner's log below a checkpoint (retention).
    pub truncations: u8,
    /// The producer's retries of its newest publish.
    pub publish_retries: u8,
    /// The consumer's settles.
    pub settles: u8,
}

impl Budget {
    /// Every counter, in declaration order (what the state's packings and
    /// the progress measure read).
    pub fn counters(&self) -> [u8; 14] {
        let b = self;
        [
            b.published,
            b.crashes,
            b.suspicions,
            b.restarts,
            b.disk_losses,
            b.learner_adds,
            b.handoffs,
            b.cancels,
            b.retries,
            b.drops,
            b.dups,
            b.truncations,
            b.publish_retries,
            b.settles,
        ]
    }
}

/// What the controller knows of the copies' progress (configs with messages
/// in flight): what the last progress report it took said. A report is
/// taken only from the owner the record names, at the record's epoch, so
/// knowledge from an earlier epoch is never read. Controller memory, not
/// part of the replicated record.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Known {
    /// The epoch of the report taken last (0: nothing reported).
    pub epoch: u8,
    /// The owner's confirmed tail, as reported.
    pub confirmed: u8,
    /// Per instance, the position through which it holds the owner's
    /// history, as reported.
    pub acks: Acks,
}

/// Where the client's request stands.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub enum ReqPhase {
    /// No request in flight.
    #[default]
    Idle,
    /// Sent to `at`, awaiting its answer.
    Sent,
    /// `at` accepted it (appended it, or found it in its history) and
    /// acknowledges it once its confirmed tail covers it.
    Accepted,
}

/// The client (note 2, "routing publication can have atomic decisions, but
/// clients won't refresh simultaneously"): a producer with a cached route
/// that publishes through redirects. Configs without a client
/// (`client_hops` 0) leave it idle.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Client {
    /// The stable route: the owner it believes in and that owner's epoch.
    /// Only a MOVED (or a refresh from the record) changes it, and only
    /// forward in epoch.
    pub route_node: NodeId,
    pub route_epoch: u8,
    pub phase: ReqPhase,
    /// Where the request in flight is (or was accepted), with the epoch it
    /// carries and whether it follows an ASK (sent with ASKING, one shot).
    pub at: NodeId,
    pub epoch: u8,
    pub asking: bool,
    /// Redirects and retry answers this request followed.
    pub hops: u8,
    /// The message (producer sequence) of the request in flight, or of the
    /// last one that timed out or gave up unacknowledged (0: none).
    pub msg: u8,
    /// Messages acknowledged to the client, one bit per message.
    pub acked: u8,
}

impl Client {
    /// Whether message `m` was acknowledged to the client.
    pub fn is_acked(&self, m: u8) -> bool {
        m > 0 && self.acked & (1 << (m - 1)) != 0
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct State {
    pub nodes: [Node; NODES_MAX],
    pub record: Record,
    pub budget: Budget,
    /// Messages in flight (empty unless the config has `net` on).
    pub net: crate::net::Net,
    /// The controller's knowledge of progress (with messages in flight).
    pub known: Known,
    /// The clients that publish through routes (configs with
    /// `client_hops`), each a producer of its own: `cfg.clients` of them
    /// take part, the rest stay idle with no route.
    pub clients: [Client; CLIENTS_MAX],
    /// History variable: the entry confirmed at each position (first confirm).
    pub confirmed: Log,
    /// History variable: a different entry was confirmed at a confirmed position.
    pub forked: bool,
    /// History variable: the messages whose settle the consumer was told
    /// is done (one bit per message: bit `m - 1`), which the protocol does
    /// once an owner confirms the settle entry.
    pub settled: u8,
}

impl State {
    /// The current storage instance of node `n`.
    pub fn slot(&self, n: NodeId) -> Slot {
        Slot::new(n, self.nodes[n as usize].gen)
    }
    /// Whether instance `s` still exists (its node has not lost that disk).
    pub fn current(&self, s: Slot) -> bool {
        self.nodes[s.node() as usize].gen == s.gen()
    }
    /// Instances of `set` whose disk still exists.
    pub fn current_of(&self, set: Slots) -> Slots {
        let mut out = Slots::EMPTY;
        for s in set.iter() {
            if self.current(s) {
                out = out.with(s);
            }
        }
        out
    }
    /// The node the record names as owner.
    pub fn owner_node(&self) -> NodeId {
        self.record.owner.node()
    }
    /// The owner's node if it serves at the record's epoch (activated, alive).
    pub fn current_owner(&self) -> Option<NodeId> {
        let n = self.owner_node();
        let nd = &self.nodes[n as usize];
        (nd.alive
            && self.current(self.record.owner)
            && nd.serving.active
            && nd.serving.epoch == self.record.epoch)
            .then_some(n)
    }
    /// Whether the consumer was told message `m`'s settle is done.
    pub fn is_settled(&self, m: u8) -> bool {
        m > 0 && self.settled & (1 << (m - 1)) != 0
    }
    /// Tell the consumer message `m`'s settle is done.
    pub fn note_settled(&mut self, m: u8) {
        assert!(
            m > 0 && m <= 8,
            "invariant broken: settled message {m} beyond one byte of bits"
        );
        self.settled |= 1 << (m - 1);
    }
    /// Record a confirm in the history variables: a confirmed settle is
    /// the consumer's answer that its settle is done.
    pub fn note_confirmed(&mut self, from: &Log, upto: u8) {
        for p in 1..=upto {
            let e = from.at(p);
            if let Some(m) = e.settles() {
                self.note_settled(m);
            }
            if p <= self.confirmed.len {
                if self.confirmed.at(p) != e {
                    self.forked = true;
                }
            } else {
                self.confirmed.push(e);
            }
        }
    }
}

/// Bytes written per node and for the rest of the state by [`State`]'s hash.
const NODE_KEY: usize = 20 + LOG_MAX;
const KEY_LEN: usize = NODES_MAX * NODE_KEY + 83 + 7 * CLIENTS_MAX + 6 * crate::net::NET_MAX;

impl State {
    /// Every field packed into bytes, for hashing in one pass (the derived
    /// hash writes a hundred single bytes; this is the checker's hot path),
    /// and how many of them are used: the messages in flight come last and
    /// only as many as there are (their count is written first, so the
    /// packing stays injective), so configs without a network hash no more
    /// than before it existed.
    fn key(&self, k: &mut [u8; KEY_LEN]) -> usize {
        // Written a group of bytes at a time: one bounds check a group
        // instead of one a byte. The bytes and their order are the
        // fingerprint's: changing them changes every fingerprint.
        let mut w = KeyWriter { k, i: 0 };
        for n in &self.nodes {
            let sv = &n.serving;
            w.put([
                n.alive as u8
                    | (n.gen << 1)
                    | (n.wiped_unbound as u8) << 3
                    | (sv.active as u8) << 4
                    | (n.suspended as u8) << 5,
                n.log.len,
            ]);
            w.put(n.log.entries.map(|e| e.0));
            w.put([
                n.seen,
                n.sealed_at,
                sv.epoch,
                sv.counted.0 as u8,
                (sv.counted.0 >> 8) as u8,
                sv.w,
                sv.open as u8 | (sv.via_handoff as u8) << 1,
                sv.confirmed,
            ]);
            w.put(sv.acks.0.to_le_bytes());
            w.put([
                n.inc,
                sv.floor as u8,
                (sv.floor >> 8) as u8,
                sv.muted.0 as u8,
                (sv.muted.0 >> 8) as u8,
                n.base,
            ]);
        }
        let r = &self.record;
        let [fl, ll, el, sl, eg] =
            [r.followers, r.learners, r.leaving, r.eligible, r.suspended].map(|set| set.0);
        let [rs, ri] = [r.recovery.sealed, r.recovery.installed].map(|set| set.0);
        w.put([
            r.epoch,
            r.owner.0,
            fl as u8,
            (fl >> 8) as u8,
            ll as u8,
            (ll >> 8) as u8,
            el as u8,
            (el >> 8) as u8,
            sl as u8,
            (sl >> 8) as u8,
            eg as u8,
            (eg >> 8) as u8,
            r.rf,
            r.rf_served,
            r.adopted as u8
                | (r.recovery.pending as u8) << 1
                | (r.recovery.chosen as u8) << 2
                | (self.forked as u8) << 3,
            rs as u8,
            (rs >> 8) as u8,
            ri as u8,
            (ri >> 8) as u8,
            r.recovery.tail.len,
        ]);
        w.put(r.recovery.tail.entries.map(|e| e.0));
        w.put([
            r.mv.phase as u8,
            r.mv.target.0,
            r.mv.boundary,
            r.mv.replaces.0 as u8,
            (r.mv.replaces.0 >> 8) as u8,
            r.handoff.phase as u8,
            r.handoff.from,
            r.handoff.to,
            r.handoff.fin,
            r.handoff.fin_entry.0,
            r.start,
            r.start_entry.0,
        ]);
        w.put(self.budget.counters());
        w.put([self.settled, self.known.epoch, self.known.confirmed]);
        w.put(self.known.acks.0.to_le_bytes());
        for c in &self.clients {
            w.put([
                c.route_node,
                c.route_epoch,
                c.phase as u8 | (c.asking as u8) << 2 | c.at << 3,
                c.epoch,
                c.hops,
                c.msg,
                c.acked,
            ]);
        }
        w.put([self.confirmed.len]);
        w.put(self.confirmed.entries.map(|e| e.0));
        w.put([self.net.len]);
        for m in self.net.iter() {
            w.put(m.pack());
        }
        w.i
    }
}

/// Writes a state's key a group of bytes at a time.
struct KeyWriter<'a> {
    k: &'a mut [u8; KEY_LEN],
    i: usize,
}

impl KeyWriter<'_> {
    #[inline(always)]
    fn put<const N: usize>(&mut self, bytes: [u8; N]) {
        self.k[self.i..self.i + N].copy_from_slice(&bytes);
        self.i += N;
    }
}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // Filled in place: returning the array would copy it.
        let mut k = [0u8; KEY_LEN];
        let n = self.key(&mut k);
        h.write(&k[..n]);
    }
}
