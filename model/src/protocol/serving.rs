//! Serving: Publish, Replicate, Confirm (note 1, "Learners and the confirm
//! contract"; note 2, epochs enforced where writes are accepted).

use super::*;

impl MoveModel {
    /// The instances whose acknowledgements owner `n` counts: the counted set
    /// it adopted from a committed record (DESIGN: never learners). Suspended
    /// followers are kept out by their acknowledgements, not by this set: the
    /// owner named in the record forgets a follower's progress when it
    /// restarts, and a suspended copy acknowledges nothing until it rejoins.
    pub fn counted_for_confirm(&self, s: &State, n: NodeId) -> Slots {
        let sv = &s.nodes[n as usize].serving;
        let mut c = sv.counted.minus(sv.muted);
        if self.has(Mutant::LearnerCounts) {
            c = c.union(s.record.learners);
        }
        c
    }

    /// The write requirement owner `n` confirms with: the one it adopted from
    /// the configured replication factor.
    pub fn effective_w(&self, s: &State, n: NodeId) -> u8 {
        if self.has(Mutant::WFromAssignment) {
            let r = &s.record;
            majority(1 + r.followers.len() + r.learners.len())
        } else {
            s.nodes[n as usize].serving.w
        }
    }

    /// The tail owner `n` could confirm now: the last entry of its own epoch
    /// that W counted copies (itself included) acknowledged. An
    /// acknowledgement is durable progress the copy reported to this owner;
    /// a copy that crashed or lost its disk since still counts for what it
    /// acknowledged (what a lost disk takes away, "no confirmed entry is
    /// lost" accounts for).
    pub fn confirmable(&self, s: &State, n: NodeId) -> u8 {
        let nd = &s.nodes[n as usize];
        let sv = &nd.serving;
        let counted = self.counted_for_confirm(s, n);
        let w = self.effective_w(s, n);
        let me = s.slot(n);
        let mut p = nd.log.len;
        while p > sv.confirmed {
            if nd.log.at(p).epoch() == sv.epoch {
                let copies = 1 + counted
                    .iter()
                    .filter(|x| *x != me && sv.acks.get(*x) >= p)
                    .count();
                if copies >= w as usize {
                    return p;
                }
            }
            p -= 1;
        }
        sv.confirmed
    }

    /// What owner `o` credits for a copy that reports its durable tail
    /// `log`: the whole tail if the owner holds the same entry at its end
    /// (a copy that holds one of the owner's entries holds the owner's
    /// history up to it), else nothing.
    pub(crate) fn credit(&self, s: &State, o: NodeId, log: &Log) -> u8 {
        if self.covers(log, &s.nodes[o as usize].log, log.len) {
            log.len
        } else {
            0
        }
    }

    /// Whether `from` may ship entries to `to`: distinct nodes, the sender
    /// serves, and the receiver's current instance is one of its replicas
    /// (the counted set it adopted, or the record's followers, learners or
    /// leaving copy).
    pub(super) fn may_ship(&self, s: &State, from: NodeId, to: NodeId) -> Result<(), Disabled> {
        need(from != to, "distinct nodes")?;
        need(self.serves(s, from), "sender serves")?;
        let r = &s.record;
        let targets = s.nodes[from as usize]
            .serving
            .counted
            .union(r.followers)
            .union(r.learners)
            .union(r.leaving);
        need(
            targets.contains(s.slot(to)),
            "receiver is a replica of the sender",
        )
    }

    pub(super) fn publish(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(self.cfg.client_hops == 0, "publishes come from the client")?;
        need(self.serves(s, n), "node serves")?;
        let nd = &s.nodes[n as usize];
        need(nd.serving.open, "admission open")?;
        need(s.budget.published < self.cfg.messages, "messages left")?;
        *t = *s;
        t.budget.published += 1;
        let e = Entry::new(nd.serving.epoch, t.budget.published);
        t.nodes[n as usize].log.push(e);
        Ok(())
    }

    /// The producer's retry of its newest publish, message `m` (its
    /// sequence number), at `n`. The owner's history is its producer
    /// record: an entry carries the producer's sequence, so whatever
    /// carried the history to this owner (replication, a recovery's
    /// install, a handoff's continuation, a checkpoint, which folds in the
    /// record of what it folds in) carried the record with it. An owner that
    /// holds `m` answers with its position; one that lacks it appends it.
    pub(super) fn retry_publish(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(self.cfg.client_hops == 0, "retries come from the client")?;
        need(
            s.budget.publish_retries < self.cfg.publish_retries,
            "publish retries left",
        )?;
        need(s.budget.published > 0, "a publish to retry")?;
        need(self.serves(s, n), "node serves")?;
        let nd = &s.nodes[n as usize];
        need(nd.serving.open, "admission open")?;
        let m = s.budget.published;
        *t = *s;
        t.budget.publish_retries += 1;
        let held = (1..=nd.log.len).any(|p| nd.log.at(p).msg() == m);
        if !held || self.has(Mutant::RetryWithoutProducerId) {
            t.nodes[n as usize]
                .log
                .push(Entry::new(nd.serving.epoch, m));
        }
        Ok(())
    }

    pub(super) fn replicate(&self, s: &State, from: NodeId, to: NodeId, t: &mut State) -> Step {
        if self.cfg.net {
            return self.send_append(s, from, to, t);
        }
        self.may_ship(s, from, to)?;
        let f = &s.nodes[from as usize];
        let r = &s.record;
        let tn = &s.nodes[to as usize];
        need(tn.alive, "receiver alive")?;
        let epoch = f.serving.epoch;
        *t = *s;
        if !self.accepts(s, to, epoch) {
            // The replica refuses and answers with the newer epoch it knows;
            // the stale sender stops serving.
            let newer = tn.seen.max(tn.sealed_at + 1);
            let fm = &mut t.nodes[from as usize];
            fm.serving = Serving::default();
            fm.seen = fm.seen.max(newer);
            return Ok(());
        }
        let c = self.agreed_prefix(tn, f);
        need(c < f.log.len, "receiver lacks an entry of the sender")?;
        // Retention: the sender ships increments above its checkpoint only,
        // and a copy never cuts into its own checkpoint (folded state has
        // no suffix to drop). Under `replay_accepts_gap` a copy that lacks
        // reclaimed increments replays the first one the sender kept, and
        // the positions between stay empty: a gap.
        let gap = c < f.base;
        need(
            !gap || self.has(Mutant::ReplayAcceptsGap),
            "the increment was reclaimed: a checkpoint first",
        )?;
        need(
            c >= tn.base,
            "the append would cut into the receiver's checkpoint",
        )?;
        // Past a gap the copy is taken to agree as far as its entries above
        // the sender's checkpoint match the sender's.
        let at = if gap {
            let mut p = f.base;
            while p < f.log.len && tn.log.at(p + 1) == f.log.at(p + 1) {
                p += 1;
            }
            p
        } else {
            c
        };
        need(at < f.log.len, "the sender kept an increment past the gap")?;
        let next = f.log.at(at + 1);
        let tm = &mut t.nodes[to as usize];
        tm.log.truncate(at);
        while tm.log.len < at {
            tm.log.push(Entry(0));
        }
        tm.log.push(next);
        tm.seen = tm.seen.max(epoch);
        if tm.serving.active && tm.serving.epoch < epoch {
            tm.serving = Serving::default();
        }
        // The copy acknowledges its new tail, unless it is a restarted
        // follower awaiting re-admission: it learned of its suspension when
        // it restarted and reports no progress until it rejoins.
        let slot = s.slot(to);
        if !r.suspended.contains(slot) || self.has(Mutant::RejoinCountsEarly) {
            let fm = &mut t.nodes[from as usize].serving;
            fm.acks = fm.acks.set(slot, at + 1);
        }
        Ok(())
    }

    pub(super) fn confirm(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(self.serves(s, n), "node serves")?;
        let tail = self.confirmable(s, n);
        need(
            tail > s.nodes[n as usize].serving.confirmed,
            "W counted copies hold a newer own-epoch entry",
        )?;
        *t = *s;
        t.nodes[n as usize].serving.confirmed = tail;
        let log = t.nodes[n as usize].log;
        t.note_confirmed(&log, tail);
        Ok(())
    }
}
