//! The abstraction function: the implementation's cluster mapped to a model
//! `State`, and the equivalences both sides are compared under.
//!
//! The result is a model `State` (`Eq + Hash + Debug`); its serialized form
//! is the model's readable view (`livemove_model::view::view`), which is
//! what divergence reports diff.
//!
//! What maps how:
//!
//! - nodes: `alive`; `gen` is the disk incarnation of the storage instance
//!   the node runs (`replica.id().disk`); the log maps entry by entry (epoch
//!   tag, and the message key as the model's message id, which both sides
//!   number 1, 2, ... in publish order); `seen` is the replica's fence,
//!   `sealed_at` its seal; `base` is the position of the replica's
//!   checkpoint (0: none; the epoch tag it is bound to is the log's entry
//!   there, which the log maps already); `serving` is the owner's serving state, with the
//!   owner itself left out of `counted` (the model keeps followers only).
//! - record: storage instances map to slots (`n2/d1` is `n2'`); `leaving`
//!   is a set of at most one; `lost` is not mapped (the model derives it
//!   from the nodes' disks); `rf_served` is the replication factor whose W
//!   is the record's `confirm_w`; `adopted` is false exactly while a swap or
//!   promotion awaits the owner's switch (implementation phase `Swapped`);
//!   the implementation's `Switched` phase is the model's `Swapped` with
//!   `adopted`; a promotion is the model's `Promoted`.
//! - a committed handoff while a recovery is pending: the implementation
//!   keeps the handoff until activation clears it, the model drops it when
//!   the recovery opens. Neither lets it do anything while the recovery is
//!   pending (activation needs no pending recovery, cancel needs an
//!   uncommitted handoff), so it maps to no handoff.
//! - the handoff's certificate entry (`fin_entry`) is the old owner's entry
//!   at F: the implementation's certificate names F and checks copies
//!   against the old owner's history.
//! - budgets and history variables (`budget`, `confirmed`, `forked`,
//!   `wiped_unbound`, `via_handoff`) are the harness's bookkeeping and are
//!   copied from the model's post-state (`book`; the truncation and settle
//!   budgets too: the implementation reclaims and settles whenever asked),
//!   except `budget.retries`: the controller's plan of planned moves is
//!   implementation state, and `retries` is read from it (see [`retries`]).
//! - `settled`, the model's history of the settles the consumer was told
//!   are done, is the cluster's consumer record (`Cluster::settled`), one
//!   bit per message key: the implementation tells its consumer itself,
//!   when an owner confirms the `Delete` (a confirm, or an activation that
//!   takes a confirmed tail).
//! - log entries: a publish `Put { key }` is `m<key>`, a settle
//!   `Delete { key }` is `s<key>` (`Entry::settle`), both with their epoch
//!   tag; a missing position (`Op::Missing`, only under
//!   `replay_accepts_gap`) is the model's empty entry inside a log.
//! - a move's `replaces` is the record's `Move::replaces`.
//! - messages in flight (`net`) map one for one (`messages`); a node's
//!   `inc` is its process incarnation (the model counts restarts only with
//!   messages in flight, so it is 0 otherwise); a node's `suspended` is
//!   what its process knows of its own suspension (the implementation
//!   keeps it only with messages in flight, so it is false otherwise); the
//!   owner's `floor` and `muted` are its serving state's.
//! - the controller's knowledge of progress (`known`) is the cluster's
//!   `Known`: the epoch of the report taken last (0: none), the reported
//!   confirmed tail, and each instance's reported position.
//! - the clients (configs with `client_hops`) are the cluster's
//!   `QueueClient`s, the model's client `k` the producer `c<k+1>`: the stable route is its topology cache's route (owner
//!   node and epoch; `n1@1` at the start on both sides, none without a
//!   client); the request's phase, node, epoch, ASKING flag and hops are
//!   the request in flight's (`Sent`, `Accepted`; idle: none, all zero);
//!   `msg` is the key of the request in flight, or of the message that
//!   ended unacknowledged (`pending`), 0 for none; `acked` is the set of
//!   acknowledged keys, one bit per key (a key beyond 8 shows as all ones).
//!   Message ids are message keys, numbered 1, 2, ... in publish order on
//!   both sides (every client's publishes draw from the cluster's keys, and
//!   with clients nothing else publishes).

use livemove_impl::cluster::{QueueClient, RequestPhase};
use livemove_impl::store::{
    HandoffPhase as IHandoffPhase, MovePhase as IMovePhase, Record as IRecord,
};
use livemove_impl::{Cluster, Entry as IEntry, Epoch, NodeId, Op, Position, StorageId};
use livemove_model::state::{
    Client, Handoff, HandoffPhase, Known, Move, MovePhase, Node, Record, Recovery, ReqPhase,
    Serving, State,
};
use livemove_model::types::{
    majority, Acks, Entry, Log, Slot, Slots, GENS_MAX, LOG_MAX, SETTLE_BIT,
};
use livemove_model::MoveModel;

/// An entry, epoch tag or slot the model cannot represent (out of its
/// bounds): it shows as itself in a diff and never equals a model value.
pub(crate) const UNREPRESENTABLE: u8 = 0xff;

/// The implementation's state as a model state; bookkeeping from `book`.
pub fn abstract_state(m: &MoveModel, c: &Cluster, book: &State) -> State {
    let mut s = State::default();
    for n in 0..m.cfg.nodes as usize {
        let node = &c.nodes()[n];
        let rep = node.replica();
        let serving = node
            .serving()
            .map(|sv| Serving {
                active: true,
                epoch: epoch(sv.epoch()),
                counted: slots(sv.counted().iter().filter(|x| **x != sv.me())),
                w: sv.w(),
                open: sv.admission_open(),
                confirmed: pos(sv.confirmed_tail()),
                via_handoff: book.nodes[n].serving.via_handoff,
                acks: acks(sv, rep),
                floor: floor(sv),
                muted: slots(sv.muted()),
            })
            .unwrap_or_default();
        s.nodes[n] = Node {
            alive: node.alive(),
            gen: gen(rep.id().disk),
            log: log(rep.entries()),
            seen: epoch(rep.fence()),
            sealed_at: rep.sealed().map_or(0, epoch),
            serving,
            inc: if m.cfg.net {
                u8::try_from(node.inc()).unwrap_or(UNREPRESENTABLE)
            } else {
                0
            },
            suspended: node.suspended(),
            wiped_unbound: book.nodes[n].wiped_unbound,
            base: rep.checkpoint().map_or(0, |b| pos(b.pos)),
        };
    }
    let r = c.record();
    let pending = r.recovery.is_some();
    let recovery = r
        .recovery
        .as_ref()
        .map(|p| Recovery {
            pending: true,
            sealed: slots(&p.sealed),
            installed: slots(&p.installed),
            chosen: p.tail.is_some(),
            // Before the tail is fixed, the evidence the seals gave (with
            // messages in flight; none otherwise).
            tail: p
                .tail
                .as_ref()
                .or(p.evidence.as_ref())
                .map_or(Log::default(), |t| log(&t.entries)),
        })
        .unwrap_or_default();
    let mv = r.move_task.as_ref().map_or(Move::default(), |mv| Move {
        phase: match (mv.phase, mv.promotion) {
            (IMovePhase::Learner, _) => MovePhase::Learning,
            (IMovePhase::Admitted, _) => MovePhase::Admitted,
            (IMovePhase::Swapped | IMovePhase::Switched, true) => MovePhase::Promoted,
            (IMovePhase::Swapped | IMovePhase::Switched, false) => MovePhase::Swapped,
        },
        target: slot(mv.target),
        boundary: mv.boundary.map_or(0, pos),
        replaces: slots(mv.replaces.iter()),
    });
    let handoff = match &r.handoff {
        Some(h) if !(h.phase == IHandoffPhase::Committed && pending) => {
            let fin = h.final_boundary.map_or(0, pos);
            let from = &c.nodes()[h.from.node.index()];
            let fin_entry = if fin > 0 && from.replica().id() == h.from {
                from.replica()
                    .entry(u64::from(fin))
                    .map_or(Entry(UNREPRESENTABLE), |e| entry(*e))
            } else {
                Entry(0)
            };
            Handoff {
                phase: match h.phase {
                    IHandoffPhase::Closed => HandoffPhase::Closed,
                    IHandoffPhase::Reported => HandoffPhase::Reported,
                    IHandoffPhase::Committed => HandoffPhase::Committed,
                },
                from: crate::driver::to_model(h.from.node),
                to: crate::driver::to_model(h.to.node),
                fin,
                fin_entry,
            }
        }
        _ => Handoff::default(),
    };
    s.record = Record {
        epoch: epoch(r.epoch),
        owner: slot(r.owner),
        followers: slots(&r.followers),
        learners: slots(&r.learners),
        leaving: slots(r.leaving.iter()),
        eligible: slots(&r.eligible),
        suspended: slots(&r.suspended),
        rf: r.rf,
        rf_served: rf_served(r),
        adopted: !matches!(&r.move_task, Some(mv) if mv.phase == IMovePhase::Swapped),
        recovery,
        mv,
        handoff,
        start: r.recovered.map_or(0, |m| pos(m.pos)),
        start_entry: r.recovered.map_or(Entry(0), |m| entry(m.entry)),
    };
    s.net = crate::messages::net(c.in_flight().iter());
    s.known = known(c.known());
    for (k, cl) in c.clients().iter().enumerate() {
        assert_eq!(
            cl.producer().index(),
            k,
            "invariant broken: the cluster's clients are not c1, c2, ... in order"
        );
        assert!(
            k < s.clients.len(),
            "invariant broken: the cluster has more clients than the model's CLIENTS_MAX"
        );
        s.clients[k] = client(cl);
    }
    s.budget = book.budget;
    s.budget.retries = retries(m, c, book);
    s.confirmed = book.confirmed;
    s.forked = book.forked;
    s.settled = settled(c.settled());
    s
}

/// The model's own equivalences, applied to both sides before they are
/// compared. Each leaves every guard and effect of the model unchanged:
///
/// - `seen` is taken as `max(seen, sealed_at)`: the model accepts an append
///   at epoch e iff `e >= seen && e > sealed_at`, which is the same test
///   with either value, and every other use (`serves`, a refusal's newer
///   epoch, `ActivateOwner`) is unchanged too. The implementation raises
///   its fence when it seals.
/// - a serving state that can never serve again is dropped: a node whose
///   seal or seen epoch has reached past its serving epoch fails `serves`
///   forever (both only grow), and a fenced owner fails `owner()` either
///   way. The model keeps such a serving until something resets it; the
///   implementation drops it when the node seals or learns the newer epoch.
pub fn canon(s: &State) -> State {
    let mut t = *s;
    for nd in t.nodes.iter_mut() {
        nd.seen = nd.seen.max(nd.sealed_at);
        let sv = nd.serving;
        if sv.active && (nd.sealed_at >= sv.epoch || nd.seen > sv.epoch) {
            nd.serving = Serving::default();
        }
    }
    t
}

/// The model's `retries` as the controller's plan tells it: the plan starts
/// with the config's planned moves, each planned step 0 uses one (counted by
/// the model's `learner_adds`), each planned move cancelled for a reason
/// gives one back, so `retries = left + learner_adds - planned`.
fn retries(m: &MoveModel, c: &Cluster, book: &State) -> u8 {
    let planned = m.cfg.moves + m.cfg.rf_increases;
    c.planned_moves()
        .and_then(|left| (left + book.budget.learner_adds).checked_sub(planned))
        .unwrap_or(UNREPRESENTABLE)
}

/// The replication factor whose W is the record's `confirm_w`: the
/// configured one, or the one before a promotion the owner has not adopted.
fn rf_served(r: &IRecord) -> u8 {
    let pending_promotion = matches!(&r.move_task,
        Some(mv) if mv.promotion && mv.phase == IMovePhase::Swapped);
    let before = r.rf.saturating_sub(1);
    if pending_promotion && majority(before) == r.confirm_w {
        before
    } else if majority(r.rf) == r.confirm_w {
        r.rf
    } else if majority(before) == r.confirm_w {
        before
    } else {
        UNREPRESENTABLE
    }
}

pub(crate) fn epoch(e: Epoch) -> u8 {
    u8::try_from(e.0).unwrap_or(UNREPRESENTABLE)
}

pub(crate) fn pos(p: Position) -> u8 {
    u8::try_from(p).unwrap_or(UNREPRESENTABLE)
}

fn gen(disk: u32) -> u8 {
    u8::try_from(disk)
        .ok()
        .filter(|g| *g < GENS_MAX)
        .unwrap_or(UNREPRESENTABLE)
}

/// A storage instance as a model slot.
pub fn slot(s: StorageId) -> Slot {
    let n = crate::driver::to_model(s.node);
    let g = gen(s.disk);
    if g == UNREPRESENTABLE || n as usize >= livemove_model::types::NODES_MAX {
        return Slot(15);
    }
    Slot::new(n, g)
}

/// The owner's acknowledgement map as the model keeps it: per instance, the
/// position through which the owner credits it (an acknowledgement whose
/// entry the owner no longer holds credits nothing). Instances and
/// positions beyond the model's bounds cannot occur within a config's
/// budgets; they would show in `counted` or the logs first.
fn acks(sv: &livemove_impl::owner::Serving, own: &livemove_impl::replica::Replica) -> Acks {
    sv.progress()
        .keys()
        .filter(|s| **s != sv.me())
        .fold(Acks::default(), |a, s| {
            let x = slot(*s);
            let p = sv.covered(own, *s);
            if usize::from(x.0) < livemove_model::types::NODES_MAX * usize::from(GENS_MAX)
                && p <= LOG_MAX as Position
            {
                a.set(x, pos(p))
            } else {
                a
            }
        })
}

/// The controller's knowledge as the model keeps it. Instances and
/// positions beyond the model's bounds cannot occur within a config's
/// budgets (as for the owner's acknowledgements).
fn known(k: &livemove_impl::controller::Known) -> Known {
    let acks = k.acks().iter().fold(Acks::default(), |a, (s, p)| {
        let x = slot(*s);
        if usize::from(x.0) < livemove_model::types::NODES_MAX * usize::from(GENS_MAX)
            && *p <= LOG_MAX as Position
        {
            a.set(x, pos(*p))
        } else {
            a
        }
    });
    Known {
        epoch: k.epoch().map_or(0, epoch),
        confirmed: pos(k.confirmed()),
        acks,
    }
}

/// The implementation's client as the model's.
fn client(cl: &QueueClient) -> Client {
    let (route_node, route_epoch) = cl
        .route()
        .map_or((0, 0), |r| (node(r.owner), epoch(r.epoch)));
    let mut out = Client {
        route_node,
        route_epoch,
        msg: cl.pending().map_or(0, key),
        acked: cl.acked().iter().fold(0u8, |bits, k| match key(*k) {
            m @ 1..=8 => bits | 1 << (m - 1),
            _ => u8::MAX,
        }),
        ..Client::default()
    };
    if let Some(r) = cl.request() {
        let a = r.attempt();
        out.phase = match r.phase() {
            RequestPhase::Sent => ReqPhase::Sent,
            RequestPhase::Accepted => ReqPhase::Accepted,
        };
        out.at = node(a.node);
        out.epoch = epoch(a.epoch);
        out.asking = a.asking;
        out.hops = r.hops();
        out.msg = key(r.key());
    }
    out
}

/// A node id as the model's node index (beyond the model's bounds: shows
/// as itself and never equals a model node).
fn node(n: NodeId) -> u8 {
    let i = crate::driver::to_model(n);
    if usize::from(i) < livemove_model::types::NODES_MAX {
        i
    } else {
        UNREPRESENTABLE
    }
}

/// A message key as the model's message id.
fn key(k: u64) -> u8 {
    u8::try_from(k).unwrap_or(UNREPRESENTABLE)
}

/// The owner's incarnation floor per node, three bits per model node; a
/// floor beyond three bits shows as all ones.
fn floor(sv: &livemove_impl::owner::Serving) -> u16 {
    sv.floor().iter().fold(0u16, |acc, (n, f)| {
        let i = crate::driver::to_model(*n);
        if usize::from(i) >= livemove_model::types::NODES_MAX {
            return acc;
        }
        let f = u16::try_from(*f).unwrap_or(7).min(7);
        acc | f << (3 * i)
    })
}

fn slots<'a>(set: impl IntoIterator<Item = &'a StorageId>) -> Slots {
    set.into_iter()
        .fold(Slots::EMPTY, |acc, s| acc.with(slot(*s)))
}

/// An entry as the model's: a publish `Put { key }` is `m<key>@e<epoch>`,
/// a settle `Delete { key }` is `s<key>@e<epoch>` (`Entry::settle`), and a
/// missing position (only under `replay_accepts_gap`) is the model's empty
/// entry. Message ids are `1..SETTLE_BIT` on both sides: the model keeps
/// the rest of the entry's nibble for settles.
pub(crate) fn entry(e: IEntry) -> Entry {
    let (settle, key) = match e.op {
        Op::Put { key, .. } => (false, key),
        Op::Delete { key } => (true, key),
        Op::Missing => return Entry(0),
    };
    match (u8::try_from(e.epoch.0), u8::try_from(key)) {
        (Ok(ep), Ok(m)) if ep < 16 && (1..SETTLE_BIT).contains(&m) => {
            if settle {
                Entry::settle(ep, m)
            } else {
                Entry::new(ep, m)
            }
        }
        _ => Entry(UNREPRESENTABLE),
    }
}

/// The consumer's record as the model's `settled`: one bit per message
/// key (bit `key - 1`); a key beyond the model's message ids shows as all
/// ones.
fn settled(keys: &std::collections::BTreeSet<u64>) -> u8 {
    keys.iter().fold(0u8, |bits, k| match key(*k) {
        m @ 1..=7 => bits | 1 << (m - 1),
        _ => u8::MAX,
    })
}

fn log(entries: &[IEntry]) -> Log {
    let mut l = Log::default();
    for (i, e) in entries.iter().enumerate() {
        if i == LOG_MAX {
            // Longer than the model can hold: the last slot says so.
            l.entries[LOG_MAX - 1] = Entry(UNREPRESENTABLE);
            break;
        }
        l.entries[i] = entry(*e);
        l.len += 1;
    }
    l
}

/// The model's readable view of `s`, plus what messages in flight add to a
/// state (the messages, each node's incarnation, the owner's floor and
/// muted set), so a divergence on them shows as a field diff too. Only
/// diffs use it: trace files keep the model's own view, which the model's
/// trace reader checks field by field.
pub fn view(m: &MoveModel, s: &State) -> serde_json::Value {
    let mut v = livemove_model::view::view(m, s);
    if !m.cfg.net {
        return v;
    }
    v["in_flight"] = s.net.iter().map(|x| x.to_string()).collect();
    for n in 0..m.cfg.nodes {
        let nd = &s.nodes[usize::from(n)];
        let name = livemove_model::types::node_name(n);
        v["nodes"][&name]["inc"] = nd.inc.into();
        if nd.serving.active {
            let sv = &nd.serving;
            v["nodes"][&name]["serving"]["muted"] = sv.muted.names().into();
            let floor: serde_json::Map<String, serde_json::Value> = (0..m.cfg.nodes)
                .filter(|x| sv.floor_of(*x) > 0)
                .map(|x| (livemove_model::types::node_name(x), sv.floor_of(x).into()))
                .collect();
            v["nodes"][&name]["serving"]["floor"] = floor.into();
        }
    }
    v
}
