//! Join and move: step 0 (AddLearner, AdmitLearner), step 1 (Swap,
//! OwnerSwitch), step 2 (RemoveLeaving), CancelMove and PromoteLearner
//! (note 1, "Moving a follower: two steps" and "Uses of the same mechanism").

use super::*;

impl MoveModel {
    /// Whether node `n` (on its current disk, alive) holds the owner's
    /// history through position `p`.
    fn node_covers(&self, s: &State, n: NodeId, owner: NodeId, p: u8) -> bool {
        let nd = &s.nodes[n as usize];
        nd.alive && self.covers(&nd.log, &s.nodes[owner as usize].log, p)
    }

    /// Whether node `n` is up and holds the owner's history through the
    /// owner's confirmed tail ("caught up").
    fn covers_confirmed_tail(&self, s: &State, n: NodeId, owner: NodeId) -> bool {
        self.node_covers(s, n, owner, s.nodes[owner as usize].serving.confirmed)
    }

    /// The move's target, if it names node `n` on its current disk.
    fn move_target(&self, s: &State, n: NodeId) -> Result<Slot, Disabled> {
        let t = s.record.mv.target;
        need(
            t == s.slot(n) && s.nodes[n as usize].alive,
            "target is the move's, alive",
        )?;
        Ok(t)
    }

    pub(super) fn add_learner(&self, s: &State, target: NodeId) -> Step {
        let r = &s.record;
        need(r.mv.phase == MovePhase::None, "no move in flight")?;
        need(
            r.handoff.phase == HandoffPhase::None,
            "no handoff in flight",
        )?;
        self.no_recovery_for_moves(s)?;
        need(
            s.budget.learner_adds < self.cfg.moves + self.cfg.rf_increases,
            "move budget left",
        )?;
        let o = self.owner(s)?;
        let slot = s.slot(target);
        need(
            target != o && s.nodes[target as usize].alive,
            "target alive, not the owner",
        )?;
        need(
            !r.followers
                .union(r.learners)
                .union(r.eligible)
                .union(r.leaving)
                .contains(slot),
            "target instance not yet a replica",
        )?;
        let mut t = *s;
        t.budget.learner_adds += 1;
        t.record.learners = r.learners.with(slot);
        t.record.mv = Move {
            phase: MovePhase::Learning,
            target: slot,
            boundary: 0,
        };
        Ok(t)
    }

    pub(super) fn admit_learner(&self, s: &State, target: NodeId) -> Step {
        need(
            s.record.mv.phase == MovePhase::Learning,
            "move phase learning",
        )?;
        self.no_recovery_for_moves(s)?;
        let slot = self.move_target(s, target)?;
        let o = self.owner(s)?;
        need(
            self.covers_confirmed_tail(s, target, o),
            "learner covers the confirmed tail",
        )?;
        let mut t = *s;
        t.record.eligible = t.record.eligible.with(slot);
        t.record.mv.phase = MovePhase::Admitted;
        Ok(t)
    }

    pub(super) fn swap(&self, s: &State, target: NodeId, leaving: NodeId) -> Step {
        let r = &s.record;
        need(self.cfg.moves > 0, "config allows follower moves")?;
        let ok_phase = r.mv.phase == MovePhase::Admitted
            || (self.has(Mutant::SwapBeforeAdmission) && r.mv.phase == MovePhase::Learning);
        need(ok_phase, "move phase admitted")?;
        self.no_recovery_for_moves(s)?;
        let slot = self.move_target(s, target)?;
        let o = self.owner(s)?;
        let leave = r
            .followers
            .iter()
            .find(|x| x.node() == leaving && *x != slot);
        let leave = leave.ok_or(Disabled("leaving is a follower"))?;
        need(
            self.covers_confirmed_tail(s, target, o),
            "target covers the confirmed tail",
        )?;
        let mut t = *s;
        let rm = &mut t.record;
        rm.followers = r.followers.without(leave).with(slot);
        rm.learners = r.learners.without(slot);
        rm.leaving = Slots::EMPTY.with(leave);
        rm.adopted = false;
        rm.mv.phase = MovePhase::Swapped;
        Ok(t)
    }

    pub(super) fn owner_switch(&self, s: &State) -> Step {
        let r = &s.record;
        need(!r.adopted, "a counted set not yet adopted")?;
        self.no_recovery_for_moves(s)?;
        let o = self.owner(s)?;
        let tail = s.nodes[o as usize].serving.confirmed;
        if r.mv.phase == MovePhase::Promoted
            && !self.has(Mutant::PromoteWithoutCatchup)
            && !self.has(Mutant::AdoptWBeforeCatchup)
        {
            // W grows now: every entry confirmed on the old W must also be on
            // the new copy, or seals on the new W could miss it.
            need(
                self.node_covers(s, r.mv.target.node(), o, tail) && s.current(r.mv.target),
                "promoted copy covers the confirmed tail",
            )?;
        }
        let mut t = *s;
        let sv = &mut t.nodes[o as usize].serving;
        sv.counted = r.followers;
        sv.w = majority(r.rf);
        let rm = &mut t.record;
        rm.adopted = true;
        rm.rf_served = r.rf;
        match r.mv.phase {
            MovePhase::Swapped => rm.mv.boundary = tail,
            MovePhase::Promoted => rm.mv = Move::default(),
            _ => {}
        }
        Ok(t)
    }

    pub(super) fn remove_leaving(&self, s: &State) -> Step {
        let r = &s.record;
        need(
            r.mv.phase == MovePhase::Swapped && r.adopted,
            "swap adopted by the owner",
        )?;
        self.no_recovery_for_moves(s)?;
        let o = self.owner(s)?;
        if !self.has(Mutant::RemoveBeforeBoundary) {
            let target = r.mv.target;
            need(
                s.current(target) && self.node_covers(s, target.node(), o, r.mv.boundary),
                "target durable at or beyond B",
            )?;
        }
        let mut t = *s;
        let rm = &mut t.record;
        rm.eligible = r.eligible.minus(r.leaving);
        rm.suspended = r.suspended.minus(r.leaving);
        rm.leaving = Slots::EMPTY;
        rm.mv = Move::default();
        Ok(t)
    }

    pub(super) fn cancel_move(&self, s: &State) -> Step {
        let r = &s.record;
        need(
            matches!(r.mv.phase, MovePhase::Learning | MovePhase::Admitted),
            "move before the swap",
        )?;
        let mut t = *s;
        drop_learner(&mut t);
        Ok(t)
    }

    pub(super) fn promote_learner(&self, s: &State, target: NodeId) -> Step {
        let r = &s.record;
        need(r.mv.phase == MovePhase::Admitted, "move phase admitted")?;
        need(r.rf < self.cfg.rf_max(), "config allows an rf increase")?;
        self.no_recovery_for_moves(s)?;
        let slot = self.move_target(s, target)?;
        let o = self.owner(s)?;
        if !self.has(Mutant::PromoteWithoutCatchup) {
            need(
                self.covers_confirmed_tail(s, target, o),
                "learner covers the confirmed tail",
            )?;
        }
        let mut t = *s;
        let rm = &mut t.record;
        rm.followers = r.followers.with(slot);
        rm.learners = r.learners.without(slot);
        rm.rf = r.rf + 1;
        rm.adopted = false;
        rm.mv.phase = MovePhase::Promoted;
        Ok(t)
    }
}

/// Cancel a move before its swap: the learner never counted, so dropping it
/// (and its eligible slot, if admitted) changes no confirm contract.
pub(crate) fn drop_learner(t: &mut State) {
    let target = t.record.mv.target;
    t.record.learners = t.record.learners.without(target);
    t.record.eligible = t.record.eligible.without(target);
    t.record.mv = Move::default();
}
