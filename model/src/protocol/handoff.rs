//! Planned owner handoff (note 1, "Moving an owner"; note 2, the cutover
//! barrier Lcut): close admission, drain and report F, commit at epoch + 1
//! with a continuation certificate, activate without seal or inspection.

use super::*;

impl MoveModel {
    pub(super) fn close_admission(&self, s: &State, to: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        need(
            r.handoff.phase == HandoffPhase::None,
            "no handoff in flight",
        )?;
        need(r.mv.phase == MovePhase::None, "no move in flight")?;
        need(!r.recovery.pending, "no pending recovery")?;
        need(s.budget.handoffs < self.cfg.handoffs, "handoff budget left")?;
        let o = self.owner(s)?;
        need(s.nodes[o as usize].serving.open, "admission open")?;
        let slot = s.slot(to);
        need(
            to != o
                && s.nodes[to as usize].alive
                && r.followers.contains(slot)
                && !r.suspended.contains(slot),
            "new owner is an admitted follower, alive",
        )?;
        *t = *s;
        t.budget.handoffs += 1;
        if !self.has(Mutant::HandoffWithoutBarrier) {
            t.nodes[o as usize].serving.open = false;
        }
        t.record.handoff = Handoff {
            phase: HandoffPhase::Closed,
            from: o,
            to,
            fin: 0,
            fin_entry: Entry(0),
        };
        Ok(())
    }

    pub(super) fn report_final_boundary(&self, s: &State, t: &mut State) -> Step {
        let h = &s.record.handoff;
        need(h.phase == HandoffPhase::Closed, "handoff closed")?;
        let o = self.owner(s)?;
        need(o == h.from, "the closing owner reports")?;
        let nd = &s.nodes[o as usize];
        need(nd.serving.confirmed == nd.log.len, "in-flight work drained")?;
        *t = *s;
        let hm = &mut t.record.handoff;
        hm.phase = HandoffPhase::Reported;
        hm.fin = nd.log.len;
        hm.fin_entry = nd.log.at(nd.log.len);
        Ok(())
    }

    pub(super) fn commit_handoff(&self, s: &State, t: &mut State) -> Step {
        let r = &s.record;
        let h = &r.handoff;
        need(h.phase == HandoffPhase::Reported, "final boundary reported")?;
        need(!r.recovery.pending, "no pending recovery")?;
        let o = if self.cfg.net {
            self.known(s)?;
            r.owner.node()
        } else {
            self.owner(s)?
        };
        need(o == h.from, "the reporting owner still owns")?;
        let to = s.slot(h.to);
        need(
            r.followers.contains(to) && !r.suspended.contains(to),
            "new owner an admitted follower on its disk",
        )?;
        // With messages in flight the controller has only reports: it
        // cannot tell whether the new owner's process is up at this moment
        // (finding 27, from a runtime trace). Its disk holds F, and the
        // activation waits for its process.
        need(
            self.cfg.net || s.nodes[h.to as usize].alive,
            "new owner alive (read at the write, atomic delivery)",
        )?;
        need(
            self.sees_covering(s, to, Some(h.fin))?,
            "new owner durable at F",
        )?;
        *t = *s;
        let rm = &mut t.record;
        rm.epoch = r.epoch + 1;
        rm.owner = to;
        rm.followers = r.followers.without(to).with(r.owner);
        rm.handoff.phase = HandoffPhase::Committed;
        if self.has(Mutant::OldOwnerServesAfterCommit) {
            // The wrong idea: the old owner takes the commit for the end of
            // its handoff and reopens admission, as after a cancel.
            let sv = &mut t.nodes[o as usize].serving;
            if sv.active {
                sv.open = true;
            }
        }
        Ok(())
    }

    pub(super) fn activate_owner(&self, s: &State, t: &mut State) -> Step {
        let r = &s.record;
        let h = r.handoff;
        need(h.phase == HandoffPhase::Committed, "handoff committed")?;
        need(!r.recovery.pending, "no pending recovery")?;
        let nd = &s.nodes[h.to as usize];
        need(
            nd.alive && s.slot(h.to) == r.owner,
            "committed owner alive on its instance",
        )?;
        // The continuation certificate names F and the entry at F.
        let mut certificate = Log {
            len: h.fin,
            ..Log::default()
        };
        if h.fin > 0 {
            certificate.entries[h.fin as usize - 1] = h.fin_entry;
        }
        need(
            self.covers(&nd.log, &certificate, h.fin),
            "new owner holds F",
        )?;
        need(
            nd.seen <= r.epoch && nd.sealed_at < r.epoch,
            "new owner not fenced",
        )?;
        *t = *s;
        let m = &mut t.nodes[h.to as usize];
        m.serving = Serving {
            active: true,
            epoch: r.epoch,
            counted: r.followers,
            w: majority(r.rf),
            open: true,
            confirmed: h.fin,
            via_handoff: true,
            // The continuation certificate carries F, not the copies'
            // progress: the new owner hears from its copies as it ships.
            acks: Acks::default(),
            ..Serving::default()
        };
        m.seen = r.epoch;
        // The certificate names the history the new owner continues: F and
        // nothing past it. The old owner drained to F and closed admission,
        // so an entry the new owner holds past F is a divergent tail from
        // an older epoch (its own as a zombie, or a zombie's it took), never
        // confirmed; kept, it would sit past its confirmed tail with an
        // epoch tag no acknowledgement lets it confirm (finding 33).
        if !self.has(Mutant::HandoffKeepsStaleTail) {
            debug_assert!(m.base <= h.fin, "invariant broken: a checkpoint past F");
            m.log.truncate(h.fin);
        }
        let log = m.log;
        t.record.handoff = Handoff::default();
        t.note_confirmed(&log, h.fin);
        Ok(())
    }

    /// The operator's cancel before the commit: a budgeted request.
    pub(super) fn cancel_handoff(&self, s: &State, t: &mut State) -> Step {
        need(
            matches!(
                s.record.handoff.phase,
                HandoffPhase::Closed | HandoffPhase::Reported
            ),
            "handoff not yet committed",
        )?;
        need(
            s.budget.cancels < self.cfg.cancels,
            "operator cancel budget left",
        )?;
        self.end_handoff(s, t)?;
        t.budget.cancels += 1;
        Ok(())
    }

    /// The controller's abort before the commit, for a reason: the new owner
    /// is down or its disk is gone (note 1: "a failure before the next write
    /// cancels the handoff"). A failure of the old owner opens a recovery,
    /// which cancels the handoff itself.
    pub(super) fn abort_handoff(&self, s: &State, t: &mut State) -> Step {
        let h = s.record.handoff;
        need(
            matches!(h.phase, HandoffPhase::Closed | HandoffPhase::Reported),
            "handoff not yet committed",
        )?;
        let to = &s.nodes[h.to as usize];
        need(
            !to.alive || !s.record.followers.contains(s.slot(h.to)),
            "new owner down or lost",
        )?;
        self.end_handoff(s, t)
    }

    /// End a handoff before its commit; the old owner reopens admission.
    fn end_handoff(&self, s: &State, t: &mut State) -> Step {
        let h = s.record.handoff;
        need(
            matches!(h.phase, HandoffPhase::Closed | HandoffPhase::Reported),
            "handoff not yet committed",
        )?;
        *t = *s;
        t.record.handoff = Handoff::default();
        let sv = &mut t.nodes[h.from as usize].serving;
        if sv.active && sv.epoch == s.record.epoch {
            sv.open = true;
        }
        Ok(())
    }
}
