//! A progress measure: a value of every state, ordered, that no action of
//! the protocol lowers, and that most actions raise.
//!
//! The `eventually` properties are checked on terminal states, which is
//! sound only if the reachable graph has no cycle. Along a cycle a measure
//! that never falls cannot rise either, so every cycle lies within edges
//! that leave the measure unchanged ("flat" edges). The compact checker
//! therefore evaluates the measure on both ends of every edge it generates:
//! if it never falls, only the flat edges need the acyclicity check, and
//! the whole adjacency (every edge, numbered after the search) is not
//! needed. If it falls on some edge, the checker says where and checks the
//! whole adjacency instead, so the measure is never trusted: it is a way to
//! check less, verified on every edge of every run, and a wrong measure
//! only costs time.
//!
//! The measure is lexicographic: an action may lower a component as long
//! as it raises one before it. Why each component rises or holds:
//!
//! 1. `spent`: every budget counts up (operations, faults, retries earned),
//!    and nothing gives a budget back.
//! 2. `epoch`: the record's epoch only grows.
//! 3. `recovery`: a pending recovery's seals, receipts and chosen tail only
//!    accumulate; only the activation clears them, at the next epoch.
//! 4. `handoff`: closing admission costs a handoff (or a cancel) budget;
//!    from there the phases go forward, and a commit raises the epoch. So
//!    "no handoff" ranks above every phase: an abort or the new owner's
//!    activation ends one by raising this component.
//! 5. `unreplaced`: counted followers that are down or lost and not being
//!    replaced by a move whose target is up, fewest first. Only a fault
//!    (budgeted) takes a copy down; a replacement's `AddLearner` takes one
//!    in hand, its swap takes it out of the followers.
//! 6. `mv`: a move's phases go forward, each phase above the one before,
//!    with its target up above down (a swap back, which needs the target
//!    down, names the leaving copy, which is up), then the owner's
//!    adoption; "no move" ranks above every phase. A planned `AddLearner`
//!    is paid for by its budget, a replacement's by `unreplaced`; an abort
//!    needs its target down.
//! 7. `active`: copies that serve, fewest first. Only an activation (a
//!    handoff's or a recovery's, which end a phase or raise the epoch)
//!    makes one serve; a refusal, a newer epoch or a crash stops one.
//! 8. `suspended`, then `aware`: fewer suspended copies in the record, then
//!    fewer copies that know themselves suspended: a restart (budgeted)
//!    adds one, a rejoin or a recovery's activation takes one out, a
//!    `NoticeRejoin` clears what a copy knows.
//! 9. `floors`: the incarnations whose acknowledgements owners refuse only
//!    rise while an owner serves (a new one starts afresh, above).
//! 10. `seen`: what each copy knows of epochs (the newest it saw, the epoch
//!     it sealed at) only grows.
//! 11. `agree`: how much of the owner's log each copy holds in order: an
//!     append that cuts a divergent suffix still adds to it.
//! 12. `logs`, `confirmed`, `acks`, what the controller `known`s and the
//!     history of confirmed entries and settles: each only grows between
//!     the changes above.
//! 13. `clients`: a request goes from sent to accepted to done, and each
//!     redirect it follows is one more hop; a new request is budgeted.
//!
//! `aware`, `floors` and `known` change only with messages in flight, and
//! `clients` only with clients: elsewhere they are left at zero, since the
//! measure is evaluated twice per edge.
//!
//! Messages in flight are not measured: sending one and delivering one
//! that changes nothing leave the measure where it was, so with `net` on
//! many edges are flat, and the check over them does the work.

use super::*;
use std::cmp::Reverse;

/// A state's progress measure; compared lexicographically, in field order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default, Hash)]
pub struct Measure {
    spent: u16,
    epoch: u8,
    recovery: u8,
    handoff: u8,
    unreplaced: Reverse<u8>,
    mv: u8,
    active: Reverse<u8>,
    suspended: Reverse<u8>,
    aware: Reverse<u8>,
    floors: u16,
    seen: u16,
    agree: u8,
    logs: u8,
    confirmed: u8,
    acks: u16,
    known: (u8, u8, u16),
    history: (u8, u8),
    clients: u16,
}

impl MoveModel {
    /// The progress measure of `s` (see the module's documentation).
    pub fn measure(&self, s: &State) -> Measure {
        let spent = s.budget.counters().iter().map(|&x| u16::from(x)).sum();
        let r = &s.record;
        let rec = &r.recovery;
        let recovery =
            u8::from(rec.pending) + rec.sealed.len() + rec.installed.len() + u8::from(rec.chosen);
        let handoff = match r.handoff.phase {
            HandoffPhase::Closed => 0,
            HandoffPhase::Reported => 1,
            HandoffPhase::Committed => 2,
            HandoffPhase::None => 3,
        };
        let up = |x: Slot| s.current(x) && s.nodes[x.node() as usize].alive;
        let target_up = r.mv.phase != MovePhase::None && up(r.mv.target);
        let unreplaced = r
            .followers
            .iter()
            .filter(|&f| !(up(f) || target_up && r.mv.replaces.contains(f)))
            .count() as u8;
        let mv = match r.mv.phase {
            MovePhase::Learning => 0,
            MovePhase::Admitted => 4,
            MovePhase::Swapped | MovePhase::Promoted => 8,
            MovePhase::None => 12,
        } + if r.mv.phase == MovePhase::None {
            0
        } else {
            2 * u8::from(target_up) + u8::from(r.adopted)
        };
        let owner_log = &s.nodes[r.owner.node() as usize].log;
        let (mut aware, mut floors, mut seen, mut agree, mut active) = (0, 0, 0, 0, 0);
        let (mut logs, mut confirmed, mut acks) = (0, 0, 0);
        for n in &s.nodes {
            seen += u16::from(n.seen) + u16::from(n.sealed_at);
            agree += n.log.common_prefix(owner_log);
            active += u8::from(n.serving.active);
            logs += n.log.len;
            confirmed += n.serving.confirmed;
            acks += n.serving.acks.total();
        }
        // What only messages in flight and clients change: nothing to add
        // up in the other configs (this runs for every edge).
        let mut known = (0, 0, 0);
        if self.cfg.net {
            for n in &s.nodes {
                aware += u8::from(n.suspended);
                floors += (0..NODES_MAX as u8)
                    .map(|k| u16::from(n.serving.floor_of(k)))
                    .sum::<u16>();
            }
            known = (s.known.epoch, s.known.confirmed, s.known.acks.total());
        }
        let mut clients = 0;
        if self.cfg.client_hops > 0 {
            clients = s
                .clients
                .iter()
                .map(|c| {
                    let phase = match c.phase {
                        ReqPhase::Sent => 0,
                        ReqPhase::Accepted => 1,
                        ReqPhase::Idle => 2,
                    };
                    phase * 64 + u16::from(c.hops)
                })
                .sum();
        }
        Measure {
            spent,
            epoch: r.epoch,
            recovery,
            handoff,
            unreplaced: Reverse(unreplaced),
            mv,
            active: Reverse(active),
            suspended: Reverse(r.suspended.len()),
            aware: Reverse(aware),
            floors,
            seen,
            agree,
            logs,
            confirmed,
            acks,
            known,
            history: (s.confirmed.len, s.settled.count_ones() as u8),
            clients,
        }
    }
}
