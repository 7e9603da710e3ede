//! Messages in flight (configs with `net` on): the owner's `Replicate`
//! sends an append; `Deliver` hands one message to the process it is
//! addressed to, which decides from the message and its own state alone;
//! `Drop` and `Duplicate` are the network's faults, each budgeted.
//!
//! Note 2 asks for exactly these checks at the receiver: "permission checks
//! must be enforced at the resource boundary that actually accepts writes",
//! "log gap detected; cannot skip", and replay that recognises "writing the
//! same version repeatedly".

use super::*;
use crate::net::Msg;

impl MoveModel {
    /// Messages in flight between `a` and `b`, either way: what the window
    /// of one link counts.
    fn on_link(&self, s: &State, a: NodeId, b: NodeId) -> u8 {
        s.net
            .iter()
            .filter(|m| {
                let src = match *m {
                    Msg::Append { from, .. } => from,
                    Msg::Ack { from, .. } | Msg::Suspend { from, .. } => from.node(),
                    // A refusal answers an append from `to`: it is on the
                    // link the append came over, whichever replica sent it.
                    Msg::Refuse { .. } | Msg::None => return m.dest() == a || m.dest() == b,
                };
                (src == a && m.dest() == b) || (src == b && m.dest() == a)
            })
            .count() as u8
    }

    /// `Replicate` with messages in flight: the owner ships the entry after
    /// the last position the replica acknowledged to it, with the entry
    /// before it, so the replica can refuse a gap. It knows nothing else of
    /// the replica: not whether it is up, nor what its log holds.
    pub(super) fn send_append(&self, s: &State, from: NodeId, to: NodeId) -> Step {
        self.may_ship(s, from, to)?;
        let f = &s.nodes[from as usize];
        let slot = s.slot(to);
        let pos = f.serving.acks.get(slot) + 1;
        need(
            pos <= f.log.len,
            "sender holds an entry the replica has not acknowledged",
        )?;
        let msg = Msg::Append {
            from,
            to: slot,
            epoch: f.serving.epoch,
            pos,
            prev: f.log.at(pos - 1),
            entry: f.log.at(pos),
        };
        // The sender keeps at most `window` messages outstanding on the
        // link (its append, or the reply to it); a resend comes only after
        // one is lost. Premature resends are the network's duplicates.
        need(
            self.on_link(s, from, to) < self.cfg.window,
            "the link's window has room",
        )?;
        let mut t = *s;
        t.net.add(msg);
        Ok(t)
    }

    pub(super) fn deliver(&self, s: &State, msg: Msg) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(s.net.contains(msg), "message in flight")?;
        // A message to a process that is down waits in the network (a
        // retransmission after it restarts); it may be delivered to the
        // process's next incarnation, or dropped.
        need(s.nodes[msg.dest() as usize].alive, "destination up")?;
        let mut t = *s;
        t.net.remove(msg);
        match msg {
            Msg::None => unreachable!("invariant broken: the empty cell was in flight"),
            Msg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            } => self.on_append(s, &mut t, from, to, epoch, pos, prev, entry),
            Msg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            } => self.on_ack(&mut t, to, epoch, from, inc, pos, entry, admitted),
            Msg::Refuse { to, epoch } => {
                let m = &mut t.nodes[to as usize];
                if !self.has(Mutant::RefusalIgnored) {
                    m.seen = m.seen.max(epoch);
                    if m.serving.active && m.serving.epoch < epoch {
                        m.serving = Serving::default();
                    }
                }
            }
            Msg::Suspend { to, from, inc } => {
                let m = &mut t.nodes[to as usize];
                if m.serving.active {
                    m.serving.acks = m.serving.acks.set(from, 0);
                    m.serving.muted = m.serving.muted.with(from);
                    m.serving.raise_floor(from.node(), inc);
                }
            }
        }
        Ok(t)
    }

    /// A replica receives an append. A disk that is gone loses it.
    #[allow(clippy::too_many_arguments)]
    fn on_append(
        &self,
        s: &State,
        t: &mut State,
        from: NodeId,
        to: Slot,
        epoch: u8,
        pos: u8,
        prev: Entry,
        entry: Entry,
    ) {
        let n = to.node();
        let nd = &s.nodes[n as usize];
        if !s.current(to) {
            return;
        }
        if !self.accepts(s, n, epoch) {
            // Refused: the replica answers with the newer epoch it knows.
            let newer = nd.seen.max(nd.sealed_at + 1);
            t.net.add(Msg::Refuse {
                to: from,
                epoch: newer,
            });
            return;
        }
        let m = &mut t.nodes[n as usize];
        m.seen = m.seen.max(epoch);
        if m.serving.active && m.serving.epoch < epoch {
            m.serving = Serving::default();
        }
        let gap = pos > 1 && (nd.log.len < pos - 1 || nd.log.at(pos - 1) != prev);
        if gap {
            // Note 2: "log gap detected; cannot skip". Nothing is applied
            // and nothing acknowledged.
            return;
        }
        if nd.log.at(pos) == entry {
            // The same write again (a duplicate or a resend): idempotent.
            if self.has(Mutant::DuplicateAppendAppliesTwice) && (m.log.len as usize) < LOG_MAX {
                m.log.push(entry);
            }
        } else {
            m.log.truncate(pos - 1);
            m.log.push(entry);
        }
        // A restarted follower awaiting re-admission catches up like a
        // learner but marks its acknowledgement: it must not count yet.
        let admitted = !s.record.suspended.contains(to) || self.has(Mutant::RejoinCountsEarly);
        t.net.add(Msg::Ack {
            to: from,
            epoch,
            from: to,
            inc: nd.inc,
            pos,
            entry,
            admitted,
        });
    }

    /// An owner receives an acknowledgement: it takes it only while it
    /// still serves at the epoch the append was sent at, only from an
    /// incarnation no older than the last suspension it heard of, and only
    /// if it holds the acknowledged entry at that position (history, not
    /// length: finding 1). One marked suspended mutes the copy; an admitted
    /// one unmutes it.
    #[allow(clippy::too_many_arguments)]
    fn on_ack(
        &self,
        t: &mut State,
        to: NodeId,
        epoch: u8,
        from: Slot,
        inc: u8,
        pos: u8,
        entry: Entry,
        admitted: bool,
    ) {
        let o = &t.nodes[to as usize];
        if !o.serving.active || o.serving.epoch != epoch {
            return;
        }
        if inc < o.serving.floor_of(from.node()) && !self.has(Mutant::StaleAckCounts) {
            return;
        }
        let holds = if self.has(Mutant::CoversByLength) {
            o.log.len >= pos
        } else {
            o.log.at(pos) == entry
        };
        if !holds {
            return;
        }
        let sv = &mut t.nodes[to as usize].serving;
        sv.muted = if admitted {
            sv.muted.without(from)
        } else {
            sv.muted.with(from)
        };
        if pos > sv.acks.get(from) {
            sv.acks = sv.acks.set(from, pos);
        }
    }

    pub(super) fn drop_msg(&self, s: &State, msg: Msg) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(s.net.contains(msg), "message in flight")?;
        need(s.budget.drops < self.cfg.drops, "drop budget left")?;
        let mut t = *s;
        t.net.remove(msg);
        t.budget.drops += 1;
        Ok(t)
    }

    pub(super) fn duplicate(&self, s: &State, msg: Msg) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(s.net.contains(msg), "message in flight")?;
        need(s.budget.dups < self.cfg.dups, "duplicate budget left")?;
        let mut t = *s;
        t.net.add(msg);
        t.budget.dups += 1;
        Ok(t)
    }
}
