//! Recovery (note 1, "Aborts" and the recovery story; note 2, epochs as
//! permission generations): OpenRecovery, Seal, InstallRecovered,
//! ActivateRecovery.

use super::moves::drop_learner;
use super::*;

impl MoveModel {
    /// Seals needed: E - W + 1 of the eligible set, with the W the owner may
    /// still be confirming on (the old W until it adopted an rf increase).
    pub fn seal_threshold(&self, s: &State) -> u8 {
        let e = s.record.eligible.len();
        let w = if self.has(Mutant::SealWithNewW) {
            majority(s.record.rf)
        } else {
            self.w_served(s)
        };
        let need = (e + 1).saturating_sub(w);
        if self.has(Mutant::SmallSealQuorum) {
            need.saturating_sub(1)
        } else {
            need
        }
    }

    /// Seals that count: of the eligible set, on a disk that still exists
    /// (a seal lives on its disk).
    fn seals(&self, s: &State) -> Slots {
        s.current_of(s.record.recovery.sealed.inter(s.record.eligible))
    }

    pub(super) fn open_recovery(&self, s: &State, zombie: bool, t: &mut State) -> Step {
        let r = &s.record;
        need(!r.recovery.pending, "no pending recovery")?;
        let o = s.owner_node();
        let ond = &s.nodes[o as usize];
        if zombie {
            need(
                s.budget.suspicions < self.cfg.suspicions,
                "suspicion budget left",
            )?;
            need(ond.alive && s.current(r.owner), "owner alive (suspected)")?;
        } else {
            let awaiting_activation = r.handoff.phase == HandoffPhase::Committed;
            let serving_now = ond.serving.active && ond.serving.epoch == r.epoch;
            let down = !ond.alive || !s.current(r.owner) || !(awaiting_activation || serving_now);
            need(down, "owner crashed")?;
        }
        *t = *s;
        if zombie {
            t.budget.suspicions += 1;
        }
        t.record.recovery = Recovery {
            pending: true,
            ..Recovery::default()
        };
        if !self.has(Mutant::RecoveryKeepsMove)
            && matches!(r.mv.phase, MovePhase::Learning | MovePhase::Admitted)
        {
            drop_learner(t, true);
        }
        // A handoff before its commit is cancelled; one committed but not
        // activated falls back to this recovery.
        t.record.handoff = Handoff::default();
        Ok(())
    }

    pub(super) fn seal(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        need(r.recovery.pending, "recovery pending")?;
        let slot = s.slot(n);
        need(s.nodes[n as usize].alive, "node alive")?;
        need(r.eligible.contains(slot), "node is eligible")?;
        need(!r.recovery.sealed.contains(slot), "not yet sealed")?;
        *t = *s;
        let m = &mut t.nodes[n as usize];
        m.sealed_at = m.sealed_at.max(r.epoch);
        t.record.recovery.sealed = r.recovery.sealed.with(slot);
        if self.cfg.net && !r.recovery.chosen {
            // With messages in flight the seal is the replica's own guarded
            // write, and its history goes with it as evidence (note 1: "B
            // and C seal their history and provide evidence"): the record
            // keeps the best history given so far, and inspection reads
            // that, never a copy's log.
            let log = s.nodes[n as usize].log;
            let best = &mut t.record.recovery.tail;
            if self.candidate(s, &log) && better(&log, best) {
                *best = log;
            }
        }
        Ok(())
    }

    /// Inspection: the best sealed history that holds the one the epoch
    /// began with (newest last epoch, then longest). Equal keys mean equal
    /// logs: one owner writes each epoch.
    fn inspect(&self, s: &State) -> Log {
        let mut best = Log::default();
        for slot in self.seals(s).iter() {
            let log = s.nodes[slot.node() as usize].log;
            if self.candidate(s, &log) && better(&log, &best) {
                best = log;
            }
        }
        best
    }

    /// Whether a sealed history may be the recovered tail: it holds the
    /// tail the last recovery confirmed, which every later confirmed
    /// history extends (finding 34). A copy can hold a newer last epoch tag than that
    /// history and still lack it: an entry its owner wrote that a recovery
    /// since left out, while the tail that recovery confirmed kept the
    /// older tags of its entries. Under `recovery_trusts_last_tag` every
    /// sealed copy is a candidate.
    fn candidate(&self, s: &State, log: &Log) -> bool {
        let r = &s.record;
        self.has(Mutant::RecoveryTrustsLastTag) || log.at(r.start) == r.start_entry
    }

    pub(super) fn install_recovered(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        need(r.recovery.pending, "recovery pending")?;
        need(
            self.seals(s).len() >= self.seal_threshold(s),
            "E - W + 1 seals",
        )?;
        let slot = s.slot(n);
        need(
            s.nodes[n as usize].alive && self.seals(s).contains(slot),
            "node sealed, alive",
        )?;
        // With messages in flight the evidence the seals wrote is the
        // choice; otherwise inspection reads the sealed copies' logs in this
        // step.
        let tail = if r.recovery.chosen || self.cfg.net {
            r.recovery.tail
        } else {
            self.inspect(s)
        };
        need(
            !r.recovery.installed.contains(slot) || s.nodes[n as usize].log != tail,
            "tail not yet installed here",
        )?;
        // A checkpoint cannot be rolled back: the recovered tail must extend
        // it (it does whenever checkpoints hold only confirmed history).
        let nd = &s.nodes[n as usize];
        need(
            nd.log.covers(&tail, nd.base),
            "the recovered tail extends this copy's checkpoint",
        )?;
        *t = *s;
        let rec = &mut t.record.recovery;
        rec.chosen = true;
        rec.tail = tail;
        rec.installed = r.recovery.installed.with(slot);
        t.nodes[n as usize].log = tail;
        Ok(())
    }

    pub(super) fn activate_recovery(&self, s: &State, c: NodeId, t: &mut State) -> Step {
        let r = &s.record;
        let rec = &r.recovery;
        need(rec.pending && rec.chosen, "recovered tail chosen")?;
        let slot = s.slot(c);
        let cn = &s.nodes[c as usize];
        need(
            cn.alive && rec.installed.contains(slot),
            "candidate installed, alive",
        )?;
        // With messages in flight activation is the candidate's own guarded
        // write and reads no other copy's log: a receipt in the record says
        // the instance installed the tail, and a sealed instance changes its
        // log only by an install until the new owner exists (or loses it
        // with its disk, which `current` sees).
        let holds = |x: Slot| {
            s.current(x)
                && (self.cfg.net
                    || self.covers(&s.nodes[x.node() as usize].log, &rec.tail, rec.tail.len))
        };
        // A suspended follower that installed the recovered tail has had its
        // history checked exactly as re-admission would check it (its log is
        // the tail the new owner starts from), so activation re-admits it and
        // counts its receipt (finding 10).
        let readmitted = if self.has(Mutant::ReceiptsSkipSuspended) {
            Slots::EMPTY
        } else {
            let mut x = Slots::EMPTY;
            for i in r.suspended.inter(rec.installed).iter() {
                if holds(i) {
                    x = x.with(i);
                }
            }
            x
        };
        let suspended = r.suspended.minus(readmitted);
        need(
            r.followers.with(r.owner).minus(suspended).contains(slot),
            "candidate is a counted copy",
        )?;
        need(holds(slot), "candidate holds the tail")?;
        let followers = r.followers.with(r.owner).without(slot);
        let counted = followers.minus(suspended);
        let receipts = rec
            .installed
            .inter(counted.with(slot))
            .iter()
            .filter(|x| holds(*x))
            .count();
        need(receipts >= majority(r.rf) as usize, "quorum receipts")?;
        *t = *s;
        let epoch = r.epoch + 1;
        let rm = &mut t.record;
        rm.epoch = epoch;
        rm.owner = slot;
        rm.followers = followers;
        rm.recovery = Recovery::default();
        // The new epoch begins with the recovered tail.
        rm.start = rec.tail.len;
        rm.start_entry = rec.tail.at(rec.tail.len);
        rm.suspended = suspended;
        rm.rf_served = r.rf;
        if !r.adopted {
            rm.adopted = true;
            match r.mv.phase {
                MovePhase::Swapped => rm.mv.boundary = rec.tail.len,
                MovePhase::Promoted => rm.mv = Move::default(),
                _ => {}
            }
        }
        let m = &mut t.nodes[c as usize];
        m.serving = Serving {
            active: true,
            epoch,
            counted: followers,
            w: majority(r.rf),
            open: true,
            confirmed: rec.tail.len,
            via_handoff: false,
            // The quorum receipts are the new owner's first acknowledgements:
            // every unsuspended instance that installed the tail holds it.
            acks: rec
                .installed
                .minus(suspended)
                .without(slot)
                .iter()
                .fold(Acks::default(), |a, x| a.set(x, rec.tail.len)),
            ..Serving::default()
        };
        m.seen = m.seen.max(epoch);
        if self.cfg.net && !self.has(Mutant::ActivationForgetsReceipts) {
            // The receipts in the record are the controller's first
            // knowledge at the new epoch: each instance that installed the
            // tail holds the new owner's history through it, the new owner
            // included (finding 24: a move's target that became the owner
            // is never reported on by anyone else, so without this the
            // removal waited forever).
            t.known = Known {
                epoch,
                confirmed: rec.tail.len,
                acks: rec
                    .installed
                    .iter()
                    .filter(|x| s.current(*x))
                    .fold(Acks::default(), |a, x| a.set(x, rec.tail.len)),
            };
        }
        t.note_confirmed(&rec.tail, rec.tail.len);
        Ok(())
    }
}

/// Whether sealed history `a` beats `b` as the recovered tail: a newer last
/// epoch, then a longer log. Equal keys mean equal logs: one owner writes
/// each epoch.
fn better(a: &Log, b: &Log) -> bool {
    (a.last_epoch(), a.len) > (b.last_epoch(), b.len)
}
