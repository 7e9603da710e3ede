//! Consumer settles (note 2: "deletions must propagate as log events or
//! tombstones, and cannot be assumed synchronized just because the target
//! hasn't seen the record").
//!
//! A settle is a log entry like a publish: the owner appends it at its
//! epoch, replication, recovery, handoff and checkpoints carry it, and the
//! consumer is told its settle is done only when the owner confirms the
//! entry (`State::note_confirmed`). The owner delivers what it confirmed
//! and its log has not settled, so a settle the consumer was told of is in
//! every later owner's log (a confirmed entry is never lost), and its
//! message is never delivered again.

use super::*;

impl MoveModel {
    /// The oldest message owner `n` delivers: the first publish within its
    /// confirmed tail whose message no entry of its log settles.
    pub fn delivered(&self, s: &State, n: NodeId) -> Option<u8> {
        let nd = &s.nodes[n as usize];
        (1..=nd.serving.confirmed)
            .filter_map(|p| nd.log.at(p).publishes())
            .find(|&m| !settled_in(&nd.log, m))
    }

    pub(super) fn settle(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(self.serves(s, n), "node serves")?;
        need(s.budget.settles < self.cfg.settles, "settles left")?;
        let nd = &s.nodes[n as usize];
        need(nd.serving.open, "admission open")?;
        let m = self
            .delivered(s, n)
            .ok_or(Disabled("a delivered message to settle"))?;
        *t = *s;
        t.budget.settles += 1;
        t.nodes[n as usize]
            .log
            .push(Entry::settle(nd.serving.epoch, m));
        if self.has(Mutant::SettleAckedBeforeConfirm) {
            // The consumer is told at once, before any copy holds the
            // settle: a recovery may choose a tail without it.
            t.note_settled(m);
        }
        Ok(())
    }
}

/// Whether some entry of `log` settles message `m`.
pub fn settled_in(log: &Log, m: u8) -> bool {
    (1..=log.len).any(|p| log.at(p).settles() == Some(m))
}
