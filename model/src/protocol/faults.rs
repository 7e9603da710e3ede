//! Faults: Crash, Restart (on the old disk or a fresh one) and Rejoin
//! (note 1, "Restarted followers": suspended, rejoins through learner
//! admission without a fence, at most W - 1 at once).

use super::*;

impl MoveModel {
    pub(super) fn crash(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(s.nodes[n as usize].alive, "node alive")?;
        need(s.budget.crashes < self.cfg.crashes, "crash budget left")?;
        *t = *s;
        t.budget.crashes += 1;
        let m = &mut t.nodes[n as usize];
        m.alive = false;
        m.serving = Serving::default();
        // What the process knew of its suspension is learned again when it
        // restarts.
        m.suspended = false;
        Ok(())
    }

    pub(super) fn restart(&self, s: &State, n: NodeId, fresh: bool, t: &mut State) -> Step {
        let nd = &s.nodes[n as usize];
        need(!nd.alive, "node down")?;
        need(s.budget.restarts < self.cfg.restarts, "restart budget left")?;
        if fresh {
            need(
                s.budget.disk_losses < self.cfg.disk_losses,
                "disk loss budget left",
            )?;
        }
        *t = *s;
        t.budget.restarts += 1;
        let old = s.slot(n);
        let r = &s.record;
        if fresh {
            t.budget.disk_losses += 1;
            let m = &mut t.nodes[n as usize];
            m.log = Log::default();
            m.base = 0;
            m.sealed_at = 0;
            m.seen = 0;
            if self.has(Mutant::StorageIdentityIgnored) {
                m.wiped_unbound = true;
            } else {
                need(m.gen + 1 < GENS_MAX, "a disk generation left")?;
                m.gen += 1;
            }
        } else if r.followers.contains(old) {
            // A follower back on its disk is suspended until re-admitted;
            // the controller admits at most W - 1 returning replicas at once.
            // An instance already suspended (it crashed again before it
            // rejoined) keeps the slot it holds. A lost instance holds none:
            // it never rejoins, and counting it kept an intact follower out
            // for good (finding 36).
            let suspended = s.current_of(r.suspended);
            let others = if self.has(Mutant::RestartCountsOwnSuspension) {
                suspended
            } else {
                suspended.without(old)
            };
            need(
                others.len() + 1 < self.w_served(s),
                "fewer than W - 1 suspended",
            )?;
            t.record.suspended = r.suspended.with(old);
            // The copy wrote its own suspension, so it knows of it.
            t.nodes[n as usize].suspended = self.cfg.net;
            // The returning follower's first word to the owner the record
            // names is its suspension: that owner forgets the progress it
            // holds for this instance, even when the controller cannot reach
            // it (a zombie). Under the mutant the owner instead takes the
            // follower's reported durable length at face value, before
            // re-admission has checked its history.
            if self.cfg.net {
                // With messages in flight the suspension is a notice to the
                // node the record names as owner; it may arrive late or be
                // lost (a suspended copy's acknowledgements repeat it).
                t.net.add(crate::net::Msg::Suspend {
                    to: s.owner_node(),
                    from: old,
                    inc: nd.inc + 1,
                });
            } else if let Some(o) = s.current_owner() {
                let pos = if self.has(Mutant::RejoinCountsEarly) {
                    nd.log.len
                } else {
                    0
                };
                let ov = &mut t.nodes[o as usize].serving;
                ov.acks = ov.acks.set(old, pos);
            }
        }
        let m = &mut t.nodes[n as usize];
        m.alive = true;
        m.serving = Serving::default();
        if self.cfg.net {
            m.inc += 1;
        }
        Ok(())
    }

    pub(super) fn rejoin(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        let slot = s.slot(n);
        need(r.suspended.contains(slot), "node is suspended")?;
        need(!r.recovery.pending, "no pending recovery")?;
        if self.cfg.net {
            // The controller has only the owner's report of this copy, not
            // an exact failure detector: the copy may have crashed again
            // since it was reported caught up (finding 21). Its disk
            // survived, so what it acknowledged it still holds; when it
            // comes back it is suspended again. The copy learns of its
            // re-admission when it reads the record (`NoticeRejoin`), and
            // the owner from the copy's next acknowledgement, marked
            // admitted.
            need(
                self.sees_covering(s, slot, None)?,
                "caught up to the confirmed tail",
            )?;
            *t = *s;
            t.record.suspended = r.suspended.without(slot);
            return Ok(());
        }
        need(s.nodes[n as usize].alive, "node alive")?;
        let o = self.owner(s)?;
        let tail = s.nodes[o as usize].serving.confirmed;
        need(
            self.covers(&s.nodes[n as usize].log, &s.nodes[o as usize].log, tail),
            "caught up to the confirmed tail",
        )?;
        *t = *s;
        t.record.suspended = r.suspended.without(slot);
        // Re-admitted, it reports its durable tail to the owner.
        let credit = self.credit(s, o, &s.nodes[n as usize].log);
        let ov = &mut t.nodes[o as usize].serving;
        ov.acks = ov.acks.set(slot, credit);
        Ok(())
    }

    /// `NoticeRejoin`: a copy that knows itself suspended reads the record
    /// and finds it is not (re-admitted, or no longer a follower at all);
    /// from then on its acknowledgements are marked admitted. The runtime
    /// reads the record on its timer; the controller's write does not reach
    /// the copy by itself (finding 22).
    pub(super) fn notice_rejoin(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(self.cfg.net, "messages in flight")?;
        let nd = &s.nodes[n as usize];
        need(nd.alive, "node alive")?;
        need(nd.suspended, "the copy knows itself suspended")?;
        need(
            !s.record.suspended.contains(s.slot(n)),
            "the record no longer suspends it",
        )?;
        *t = *s;
        t.nodes[n as usize].suspended = false;
        Ok(())
    }

    /// `NoticeReadmission`: the record's owner, serving at the record's
    /// epoch, reads the record and unmutes every copy it muted that the
    /// record no longer suspends (finding 35). Muting is what the owner
    /// heard of a suspension (a notice, or an acknowledgement the copy
    /// marked suspended); the record's re-admission is the controller's
    /// decision, taken only once the owner reported the copy caught up to
    /// the confirmed tail. Without this the owner learns of a re-admission
    /// only from the copy's next admitted acknowledgement, and a copy that
    /// holds the owner's whole log is sent nothing to acknowledge (finding
    /// 32). Reading the record needs no message, so nothing here can be
    /// lost. The positions the copy acknowledged while muted are its own
    /// incarnation's (the floor keeps older ones out), and count from now.
    pub(super) fn notice_readmission(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(self.cfg.net, "messages in flight")?;
        need(
            !self.has(Mutant::OwnerIgnoresReadmission),
            "the owner reads re-admissions from the record",
        )?;
        need(
            self.owner(s)? == n,
            "the record's owner, serving at the record's epoch",
        )?;
        let sv = &s.nodes[n as usize].serving;
        let readmitted = sv.muted.minus(s.record.suspended);
        need(
            !readmitted.is_empty(),
            "a muted copy the record no longer suspends",
        )?;
        *t = *s;
        t.nodes[n as usize].serving.muted = sv.muted.minus(readmitted);
        Ok(())
    }
}
