//! Join and move: step 0 (AddLearner, AdmitLearner), step 1 (Swap,
//! OwnerSwitch), step 2 (RemoveLeaving), CancelMove and PromoteLearner
//! (note 1, "Moving a follower: two steps" and "Uses of the same mechanism").

use super::*;

impl MoveModel {
    /// The move's target, if it names node `n` on its current disk.
    fn move_target(&self, s: &State, n: NodeId) -> Result<Slot, Disabled> {
        let t = s.record.mv.target;
        need(t == s.slot(n), "target is the move's, on its disk")?;
        // With messages in flight the controller has only reports: it
        // cannot tell whether the target's process is up at this moment
        // (finding 28, the shape of findings 21 and 27). What the target
        // acknowledged is on its disk.
        need(
            self.cfg.net || s.nodes[n as usize].alive,
            "target alive (read at the write, atomic delivery)",
        )?;
        Ok(t)
    }

    /// The counted followers whose copy is down or lost, which the
    /// controller replaces (note 1, "Lost follower replaced": step 0 on the
    /// replacement, then the lost copy leaves).
    pub(crate) fn to_replace(&self, s: &State) -> Slots {
        let mut out = Slots::EMPTY;
        if self.has(Mutant::NoReplacement) {
            return out;
        }
        for f in s.record.followers.iter() {
            if !s.current(f) || !s.nodes[f.node() as usize].alive {
                out = out.with(f);
            }
        }
        out
    }

    /// Planned moves (follower moves and rf increases) the controller may
    /// still start: the config's budget, plus one retry for each planned
    /// move a recovery or a lost target cancelled.
    fn planned_left(&self, s: &State) -> bool {
        let retries = if self.has(Mutant::NoRetryAfterCancel) {
            0
        } else {
            s.budget.retries
        };
        s.budget.learner_adds < self.cfg.moves + self.cfg.rf_increases + retries
    }

    /// Step 0, for one of two reasons: a counted copy is down or lost (the
    /// controller replaces it, the lowest such instance first, and the swap
    /// must take that copy out), or a planned move is left in the budget.
    pub(super) fn add_learner(&self, s: &State, target: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        need(r.mv.phase == MovePhase::None, "no move in flight")?;
        need(
            r.handoff.phase == HandoffPhase::None,
            "no handoff in flight",
        )?;
        self.no_recovery_for_moves(s)?;
        let replace = self.to_replace(s).iter().next();
        need(
            replace.is_some() || self.planned_left(s),
            "a copy to replace or a planned move left",
        )?;
        // With messages in flight the controller knows the owner from its
        // record; no progress is needed to start a move.
        let o = if self.cfg.net {
            r.owner.node()
        } else {
            self.owner(s)?
        };
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
        *t = *s;
        let replaces = match replace {
            Some(x) => Slots::EMPTY.with(x),
            None => {
                t.budget.learner_adds += 1;
                Slots::EMPTY
            }
        };
        t.record.learners = r.learners.with(slot);
        // The new copy joins under the record's epoch and refuses appends of
        // an older one from then on (note 2: "permission checks must be
        // enforced at the resource boundary that actually accepts writes"). A
        // node that kept data from an earlier stint as a learner may already
        // cover the confirmed tail and be admitted without one append from
        // the current owner, so only this write tells it the epoch (finding
        // 17).
        if !self.has(Mutant::LearnerKeepsOldEpoch) {
            let nd = &mut t.nodes[target as usize];
            nd.seen = nd.seen.max(r.epoch);
        }
        t.record.mv = Move {
            phase: MovePhase::Learning,
            target: slot,
            boundary: 0,
            replaces,
        };
        // Atomically the learner reports its durable tail to the owner as
        // it joins, as a re-admitted copy does: one that kept data from an
        // earlier stint may hold the owner's whole log already, and then
        // no append draws an acknowledgement from it (finding 37). With
        // messages in flight the owner's resends do.
        if !self.cfg.net {
            let credit = self.credit(s, o, &s.nodes[target as usize].log);
            let ov = &mut t.nodes[o as usize].serving;
            ov.acks = ov.acks.set(slot, credit);
        }
        Ok(())
    }

    pub(super) fn admit_learner(&self, s: &State, target: NodeId, t: &mut State) -> Step {
        need(
            s.record.mv.phase == MovePhase::Learning,
            "move phase learning",
        )?;
        self.no_recovery_for_moves(s)?;
        let slot = self.move_target(s, target)?;
        need(
            self.sees_covering(s, slot, None)?,
            "learner covers the confirmed tail",
        )?;
        *t = *s;
        t.record.eligible = t.record.eligible.with(slot);
        t.record.mv.phase = MovePhase::Admitted;
        Ok(())
    }

    pub(super) fn swap(&self, s: &State, target: NodeId, leaving: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        need(
            self.cfg.moves > 0 || !r.mv.replaces.is_empty(),
            "config allows follower moves, or the move replaces a lost copy",
        )?;
        let ok_phase = r.mv.phase == MovePhase::Admitted
            || (self.has(Mutant::SwapBeforeAdmission) && r.mv.phase == MovePhase::Learning);
        need(ok_phase, "move phase admitted")?;
        self.no_recovery_for_moves(s)?;
        let slot = self.move_target(s, target)?;
        self.controller_sees_owner(s)?;
        let leave = r
            .followers
            .iter()
            .find(|x| x.node() == leaving && *x != slot);
        let leave = leave.ok_or(Disabled("leaving is a follower"))?;
        need(
            r.mv.replaces.is_empty() || r.mv.replaces.contains(leave),
            "a replacement swaps out the copy it replaces",
        )?;
        need(
            self.sees_covering(s, slot, None)?,
            "target covers the confirmed tail",
        )?;
        *t = *s;
        let rm = &mut t.record;
        rm.followers = r.followers.without(leave).with(slot);
        rm.learners = r.learners.without(slot);
        rm.leaving = Slots::EMPTY.with(leave);
        rm.adopted = false;
        rm.mv.phase = MovePhase::Swapped;
        Ok(())
    }

    pub(super) fn owner_switch(&self, s: &State, t: &mut State) -> Step {
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
            // The owner's own knowledge: atomically the copy's log, with
            // messages in flight what the copy acknowledged to it.
            let covered = if self.cfg.net {
                s.nodes[o as usize].serving.acks.get(r.mv.target) >= tail
            } else {
                let nd = &s.nodes[r.mv.target.node() as usize];
                nd.alive
                    && s.current(r.mv.target)
                    && self.covers(&nd.log, &s.nodes[o as usize].log, tail)
            };
            need(covered, "promoted copy covers the confirmed tail")?;
        }
        *t = *s;
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
        Ok(())
    }

    pub(super) fn remove_leaving(&self, s: &State, t: &mut State) -> Step {
        let r = &s.record;
        need(
            r.mv.phase == MovePhase::Swapped && r.adopted,
            "swap adopted by the owner",
        )?;
        self.no_recovery_for_moves(s)?;
        self.controller_sees_owner(s)?;
        if !self.has(Mutant::RemoveBeforeBoundary) {
            let target = r.mv.target;
            need(
                s.current(target) && self.sees_covering(s, target, Some(r.mv.boundary))?,
                "target durable at or beyond B",
            )?;
        }
        *t = *s;
        let rm = &mut t.record;
        rm.eligible = r.eligible.minus(r.leaving);
        rm.suspended = r.suspended.minus(r.leaving);
        rm.leaving = Slots::EMPTY;
        rm.mv = Move::default();
        Ok(())
    }

    /// The operator's cancel, before the swap: a budgeted request.
    pub(super) fn cancel_move(&self, s: &State, t: &mut State) -> Step {
        let r = &s.record;
        need(
            matches!(r.mv.phase, MovePhase::Learning | MovePhase::Admitted),
            "move before the swap",
        )?;
        need(
            s.budget.cancels < self.cfg.cancels,
            "operator cancel budget left",
        )?;
        *t = *s;
        t.budget.cancels += 1;
        drop_learner(t, false);
        Ok(())
    }

    /// Whether the move's target is down or its disk is gone.
    fn target_gone(&self, s: &State) -> bool {
        let target = s.record.mv.target;
        !s.current(target) || !s.nodes[target.node() as usize].alive
    }

    /// A move's target that a recovery made the owner is not a copy the
    /// move can take back: when that owner fails, recovery replaces it
    /// first, and the move's way out applies to the follower it is again
    /// afterwards (finding 25: swapping back a failed owner-target marked
    /// the owner itself as leaving, and the recovery that followed kept it
    /// counted after its removal). Atomically the controller acts only
    /// while the owner is up, so this never binds there.
    fn target_not_owner(&self, s: &State) -> Result<(), Disabled> {
        if self.has(Mutant::SwapBackOfOwner) {
            return Ok(());
        }
        need(
            s.record.mv.target != s.record.owner,
            "the target is not the owner (a failed owner is recovered first)",
        )
    }

    /// The controller's abort of a move whose target is down or lost, before
    /// the swap (the learner is dropped) or before the owner adopted a
    /// promotion (the promotion is withdrawn: the owner still confirms on
    /// the old counted set and W, so taking the copy out again changes no
    /// confirm contract).
    pub(super) fn abort_move(&self, s: &State, t: &mut State) -> Step {
        let r = &s.record;
        need(
            matches!(
                r.mv.phase,
                MovePhase::Learning | MovePhase::Admitted | MovePhase::Promoted
            ),
            "move before the swap or an unadopted promotion",
        )?;
        need(!r.recovery.pending, "no pending recovery")?;
        need(self.target_gone(s), "target down or lost")?;
        self.target_not_owner(s)?;
        *t = *s;
        if r.mv.phase == MovePhase::Promoted {
            debug_assert!(
                !r.adopted,
                "a promotion is adopted only by clearing the move"
            );
            let target = r.mv.target;
            let rm = &mut t.record;
            rm.followers = r.followers.without(target);
            rm.eligible = r.eligible.without(target);
            rm.suspended = r.suspended.without(target);
            rm.rf = r.rf - 1;
            rm.adopted = true;
            rm.mv = Move::default();
            t.budget.retries += 1;
        } else {
            drop_learner(t, true);
        }
        Ok(())
    }

    /// The controller's way out of a swapped move whose target is down or
    /// lost: the leaving copy kept replicating and stayed eligible, so one
    /// guarded write swaps it back in (it must cover the owner's confirmed
    /// tail, as any swap target must) and marks the target as leaving. The
    /// owner's switch records a new boundary B, and removal of the target
    /// waits for the copy swapped back to cover it: the same argument as the
    /// forward swap.
    pub(super) fn swap_back(&self, s: &State, t: &mut State) -> Step {
        let r = &s.record;
        need(!self.has(Mutant::NoSwapBack), "swap back exists")?;
        need(r.mv.phase == MovePhase::Swapped, "move phase swapped")?;
        need(!r.recovery.pending, "no pending recovery")?;
        need(self.target_gone(s), "target down or lost")?;
        self.target_not_owner(s)?;
        self.controller_sees_owner(s)?;
        let back = r.leaving.iter().next().ok_or(Disabled("a leaving copy"))?;
        need(
            s.current(back)
                && s.nodes[back.node() as usize].alive
                && self.sees_covering(s, back, None)?,
            "leaving copy alive, covers the confirmed tail",
        )?;
        let target = r.mv.target;
        *t = *s;
        let rm = &mut t.record;
        rm.followers = r.followers.without(target).with(back);
        rm.leaving = Slots::EMPTY.with(target);
        rm.adopted = false;
        rm.mv = Move {
            phase: MovePhase::Swapped,
            target: back,
            boundary: 0,
            replaces: Slots::EMPTY,
        };
        Ok(())
    }

    pub(super) fn promote_learner(&self, s: &State, target: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        need(r.mv.phase == MovePhase::Admitted, "move phase admitted")?;
        need(r.rf < self.cfg.rf_max(), "config allows an rf increase")?;
        self.no_recovery_for_moves(s)?;
        need(
            r.mv.replaces.is_empty(),
            "a replacement swaps, it does not promote",
        )?;
        let slot = self.move_target(s, target)?;
        self.controller_sees_owner(s)?;
        if !self.has(Mutant::PromoteWithoutCatchup) {
            need(
                self.sees_covering(s, slot, None)?,
                "learner covers the confirmed tail",
            )?;
        }
        *t = *s;
        let rm = &mut t.record;
        rm.followers = r.followers.with(slot);
        rm.learners = r.learners.without(slot);
        rm.rf = r.rf + 1;
        rm.adopted = false;
        rm.mv.phase = MovePhase::Promoted;
        Ok(())
    }
}

/// Cancel a move before its swap: the learner never counted, so dropping it
/// (and its eligible slot, if admitted) changes no confirm contract. A
/// planned move cancelled for a reason (`retry`: a recovery, a lost target)
/// earns one retry; a replacement needs none (the copy it replaces is still
/// counted, down or lost, so the controller starts another).
pub(crate) fn drop_learner(t: &mut State, retry: bool) {
    if retry && t.record.mv.replaces.is_empty() {
        t.budget.retries += 1;
    }
    let target = t.record.mv.target;
    t.record.learners = t.record.learners.without(target);
    t.record.eligible = t.record.eligible.without(target);
    t.record.mv = Move::default();
}
