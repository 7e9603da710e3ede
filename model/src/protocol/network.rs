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
                    Msg::Ack { from, .. }
                    | Msg::Suspend { from, .. }
                    | Msg::Progress { from, .. } => from.node(),
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
    pub(super) fn send_append(&self, s: &State, from: NodeId, to: NodeId, t: &mut State) -> Step {
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
        *t = *s;
        t.net.add(msg);
        Ok(())
    }

    /// The copies a guarded write of the record waits to hear about: the
    /// move's target, a leaving copy (a swap back), a suspended follower
    /// (its rejoin) and a handoff's new owner.
    fn awaited(&self, s: &State) -> Slots {
        let r = &s.record;
        let mut out = r.leaving.union(r.suspended);
        if r.mv.phase != MovePhase::None {
            out = out.with(r.mv.target);
        }
        if matches!(
            r.handoff.phase,
            HandoffPhase::Closed | HandoffPhase::Reported
        ) {
            out = out.with(s.slot(r.handoff.to));
        }
        out
    }

    /// `ReportProgress`: the owner tells the controller how far a copy the
    /// record waits on holds its history. Like any message it may arrive
    /// late, twice or never; the owner keeps one report outstanding and
    /// sends again while the controller holds something else.
    pub(super) fn report_progress(
        &self,
        s: &State,
        from: NodeId,
        of: NodeId,
        t: &mut State,
    ) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(self.serves(s, from), "reporter serves")?;
        // The window of a report covers its answer: a refusal on its way to
        // the reporter (finding 23: a stale owner that reported again while
        // the controller's refusal was in flight piled up refusals without
        // bound).
        let covers_refusal = !self.has(Mutant::ReportWindowIgnoresRefusal);
        need(
            !s.net.iter().any(|m| match m {
                Msg::Progress { from: f, .. } => f.node() == from,
                Msg::Refuse { to, .. } => covers_refusal && to == from,
                _ => false,
            }),
            "no report outstanding",
        )?;
        // Every guard that waits on a copy waits for it to hold the owner's
        // confirmed tail (or a boundary at or below it), so the owner
        // reports a copy once it has caught up. Of the instances on node
        // `of` the record waits on (a lost one leaving, its fresh successor
        // joining), the first caught-up one whose progress the controller
        // holds otherwise.
        let sv = &s.nodes[from as usize].serving;
        let k = &s.known;
        let news = |x: Slot| {
            sv.acks.get(x) >= sv.confirmed
                && (k.epoch != sv.epoch
                    || k.confirmed != sv.confirmed
                    || k.acks.get(x) != sv.acks.get(x))
        };
        let x = self
            .awaited(s)
            .iter()
            .find(|x| x.node() == of && news(*x))
            .ok_or(Disabled(
                "the record waits on a caught-up copy the controller knows otherwise",
            ))?;
        let msg = Msg::Progress {
            from: s.slot(from),
            epoch: sv.epoch,
            of: x,
            pos: sv.acks.get(x),
            confirmed: sv.confirmed,
        };
        *t = *s;
        t.net.add(msg);
        Ok(())
    }

    /// The controller takes a report only from the owner the record names,
    /// at the record's epoch; a report from an older epoch is answered with
    /// the record's epoch, which stops a stale owner that still serves
    /// (note 2: "when requests carry an old version, the server should
    /// reject").
    #[allow(clippy::too_many_arguments)]
    fn on_progress(
        &self,
        s: &State,
        t: &mut State,
        from: Slot,
        epoch: u8,
        of: Slot,
        pos: u8,
        confirmed: u8,
    ) {
        let r = &s.record;
        if epoch == r.epoch && from == r.owner {
            let k = &mut t.known;
            if k.epoch != epoch && !self.has(Mutant::StaleProgressAdmits) {
                *k = Known::default();
            }
            k.epoch = epoch;
            k.confirmed = confirmed;
            k.acks = k.acks.set(of, pos);
        } else if epoch < r.epoch {
            t.net.add(Msg::Refuse {
                to: from.node(),
                epoch: r.epoch,
            });
        }
    }

    pub(super) fn deliver(&self, s: &State, msg: Msg, t: &mut State) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(s.net.contains(msg), "message in flight")?;
        // A message to a process that is down waits in the network (a
        // retransmission after it restarts); it may be delivered to the
        // process's next incarnation, or dropped. The controller is always
        // up (its record is the replicated store).
        need(
            msg.to_controller() || s.nodes[msg.dest() as usize].alive,
            "destination up",
        )?;
        *t = *s;
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
            } => self.on_append(s, t, from, to, epoch, pos, prev, entry),
            Msg::Ack {
                to,
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
            } => self.on_ack(t, to, epoch, from, inc, pos, entry, admitted),
            Msg::Refuse { to, epoch } => {
                let m = &mut t.nodes[to as usize];
                if !self.has(Mutant::RefusalIgnored) {
                    m.seen = m.seen.max(epoch);
                    if m.serving.active && m.serving.epoch < epoch {
                        m.serving = Serving::default();
                    }
                }
            }
            Msg::Progress {
                from,
                epoch,
                of,
                pos,
                confirmed,
            } => self.on_progress(s, t, from, epoch, of, pos, confirmed),
            Msg::Suspend { to, from, inc } => {
                let m = &mut t.nodes[to as usize];
                if m.serving.active {
                    m.serving.acks = m.serving.acks.set(from, 0);
                    m.serving.muted = m.serving.muted.with(from);
                    m.serving.raise_floor(from.node(), inc);
                }
            }
        }
        Ok(())
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
        // learner but marks its acknowledgement: it must not count yet. The
        // mark is what the copy knows of its own suspension, which may lag
        // the record (finding 22).
        let admitted = !nd.suspended || self.has(Mutant::RejoinCountsEarly);
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

    pub(super) fn drop_msg(&self, s: &State, msg: Msg, t: &mut State) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(s.net.contains(msg), "message in flight")?;
        need(s.budget.drops < self.cfg.drops, "drop budget left")?;
        *t = *s;
        t.net.remove(msg);
        t.budget.drops += 1;
        Ok(())
    }

    pub(super) fn duplicate(&self, s: &State, msg: Msg, t: &mut State) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(s.net.contains(msg), "message in flight")?;
        need(s.budget.dups < self.cfg.dups, "duplicate budget left")?;
        *t = *s;
        t.net.add(msg);
        t.budget.dups += 1;
        Ok(())
    }
}
