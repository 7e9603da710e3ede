//! Serving: Publish, Replicate, Confirm (note 1, "Learners and the confirm
//! contract"; note 2, epochs enforced where writes are accepted).

use super::*;

impl MoveModel {
    /// The instances whose acknowledgements owner `n` counts: the counted set
    /// it adopted from a committed record, less followers the record marks
    /// suspended (DESIGN: never learners, never suspended).
    pub fn counted_for_confirm(&self, s: &State, n: NodeId) -> Slots {
        let sv = &s.nodes[n as usize].serving;
        let mut c = sv.counted;
        if !self.has(Mutant::RejoinCountsEarly) {
            c = c.minus(s.record.suspended);
        }
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
    /// that W counted copies (itself included) hold durably, compared by
    /// history. Acknowledgements are modeled as reads of the copies' disks:
    /// a copy holds an entry of the owner's epoch only if the owner shipped
    /// it there, so the read says what the ack said.
    pub fn confirmable(&self, s: &State, n: NodeId) -> u8 {
        let nd = &s.nodes[n as usize];
        let sv = &nd.serving;
        let counted = self.counted_for_confirm(s, n);
        let w = self.effective_w(s, n);
        // Before re-admission nothing has checked a returning copy's history;
        // taking its reported durable progress at face value is the mutant.
        let by_length = |j: NodeId| {
            self.has(Mutant::RejoinCountsEarly) && s.record.suspended.contains(s.slot(j))
        };
        let mut p = nd.log.len;
        while p > sv.confirmed {
            if nd.log.at(p).epoch() == sv.epoch {
                let mut copies = 1u8;
                for j in 0..self.cfg.nodes {
                    let other = &s.nodes[j as usize];
                    // A copy that crashed after storing the entry still holds
                    // it durably: the ack it sent then still counts.
                    if j != n
                        && counted.contains(s.slot(j))
                        && (self.covers(&other.log, &nd.log, p)
                            || (by_length(j) && other.log.len >= p))
                    {
                        copies += 1;
                    }
                }
                if copies >= w {
                    return p;
                }
            }
            p -= 1;
        }
        sv.confirmed
    }

    pub(super) fn publish(&self, s: &State, n: NodeId) -> Step {
        need(self.serves(s, n), "node serves")?;
        let nd = &s.nodes[n as usize];
        need(nd.serving.open, "admission open")?;
        need(s.budget.published < self.cfg.messages, "messages left")?;
        let mut t = *s;
        t.budget.published += 1;
        let e = Entry::new(nd.serving.epoch, t.budget.published);
        t.nodes[n as usize].log.push(e);
        Ok(t)
    }

    pub(super) fn replicate(&self, s: &State, from: NodeId, to: NodeId) -> Step {
        need(from != to, "distinct nodes")?;
        need(self.serves(s, from), "sender serves")?;
        let f = &s.nodes[from as usize];
        let r = &s.record;
        let targets = f
            .serving
            .counted
            .union(r.followers)
            .union(r.learners)
            .union(r.leaving);
        need(
            targets.contains(s.slot(to)),
            "receiver is a replica of the sender",
        )?;
        let tn = &s.nodes[to as usize];
        need(tn.alive, "receiver alive")?;
        let epoch = f.serving.epoch;
        let mut t = *s;
        if !self.accepts(s, to, epoch) {
            // The replica refuses and answers with the newer epoch it knows;
            // the stale sender stops serving.
            let newer = tn.seen.max(tn.sealed_at + 1);
            let fm = &mut t.nodes[from as usize];
            fm.serving = Serving::default();
            fm.seen = fm.seen.max(newer);
            return Ok(t);
        }
        let c = tn.log.common_prefix(&f.log);
        need(c < f.log.len, "receiver lacks an entry of the sender")?;
        let next = f.log.at(c + 1);
        let tm = &mut t.nodes[to as usize];
        tm.log.truncate(c);
        tm.log.push(next);
        tm.seen = tm.seen.max(epoch);
        if tm.serving.active && tm.serving.epoch < epoch {
            tm.serving = Serving::default();
        }
        Ok(t)
    }

    pub(super) fn confirm(&self, s: &State, n: NodeId) -> Step {
        need(self.serves(s, n), "node serves")?;
        let tail = self.confirmable(s, n);
        need(
            tail > s.nodes[n as usize].serving.confirmed,
            "W counted copies hold a newer own-epoch entry",
        )?;
        let mut t = *s;
        t.nodes[n as usize].serving.confirmed = tail;
        let log = t.nodes[n as usize].log;
        t.note_confirmed(&log, tail);
        Ok(t)
    }
}
