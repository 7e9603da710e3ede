//! Retention and checkpoint catch-up (note 2, "Snapshots must correspond to
//! a log boundary"; note 1, step 0: "D copies a checkpoint if the owner has
//! truncated, then follows the log tail").
//!
//! A checkpoint is bound to a log position and to the epoch tag of the
//! entry there. The owner takes one at its confirmed tail and reclaims the
//! increments below it (`Truncate`); a copy that lacks a reclaimed increment
//! can only catch up by installing the checkpoint (`InstallCheckpoint`) and
//! then replaying (`Replicate`); a copy that already holds the checkpoint's
//! entry refuses it, so an older checkpoint never overwrites newer state; a
//! copy whose next increment was reclaimed again takes a new checkpoint.

use super::*;

impl MoveModel {
    /// How far `to`'s log agrees with the sender `from`'s: the common prefix.
    /// Under `checkpoint_without_epoch_tag` the sender cannot compare the
    /// entry at its checkpoint's position (it kept the position, not the
    /// tag), so a copy at least that long is taken to agree through it, and
    /// then as far as the entries past it agree (an append never rewrites
    /// an entry the copy already holds).
    pub(crate) fn agreed_prefix(&self, to: &Node, from: &Node) -> u8 {
        let c = to.log.common_prefix(&from.log);
        let b = from.base;
        if self.has(Mutant::CheckpointWithoutEpochTag) && c < b && to.log.len >= b {
            let mut agreed = b;
            while agreed < to.log.len
                && agreed < from.log.len
                && to.log.at(agreed + 1) == from.log.at(agreed + 1)
            {
                agreed += 1;
            }
            agreed
        } else {
            c
        }
    }

    /// Whether copy `to` needs `from`'s checkpoint: it does not hold the
    /// entry at the checkpoint's position (history compare). Under
    /// `checkpoint_without_epoch_tag`, only whether it is that long; under
    /// `checkpoint_overwrites_newer`, also whenever it has not installed a
    /// checkpoint this far yet, whatever it already replayed (a copy that
    /// recognises a checkpoint it installed, but not one its own replay has
    /// passed).
    fn lacks_checkpoint(&self, to: &Node, from: &Node) -> bool {
        let b = from.base;
        if self.has(Mutant::CheckpointWithoutEpochTag) {
            to.log.len < b
        } else if self.has(Mutant::CheckpointOverwritesNewer) {
            !to.log.covers(&from.log, b) || to.base < b
        } else {
            !to.log.covers(&from.log, b)
        }
    }

    pub(super) fn truncate(&self, s: &State, n: NodeId, t: &mut State) -> Step {
        need(self.serves(s, n), "node serves")?;
        need(
            s.budget.truncations < self.cfg.truncations,
            "truncation budget left",
        )?;
        let nd = &s.nodes[n as usize];
        let at = if self.has(Mutant::TruncateBeforeConfirm) {
            nd.log.len
        } else {
            nd.serving.confirmed
        };
        need(at > nd.base, "confirmed past the checkpoint")?;
        *t = *s;
        t.budget.truncations += 1;
        t.nodes[n as usize].base = at;
        Ok(())
    }

    pub(super) fn install_checkpoint(
        &self,
        s: &State,
        from: NodeId,
        to: NodeId,
        t: &mut State,
    ) -> Step {
        self.may_ship(s, from, to)?;
        let f = &s.nodes[from as usize];
        let tn = &s.nodes[to as usize];
        need(tn.alive, "receiver alive")?;
        need(f.base > 0, "the sender has a checkpoint")?;
        let epoch = f.serving.epoch;
        need(
            self.accepts(s, to, epoch),
            "the receiver takes writes at the sender's epoch",
        )?;
        need(
            self.lacks_checkpoint(tn, f),
            "the receiver lacks the checkpoint's entry",
        )?;
        let b = f.base;
        *t = *s;
        let tm = &mut t.nodes[to as usize];
        let mut log = f.log;
        log.truncate(b);
        tm.log = log;
        tm.base = b;
        tm.seen = tm.seen.max(epoch);
        if tm.serving.active && tm.serving.epoch < epoch {
            tm.serving = Serving::default();
        }
        let slot = s.slot(to);
        if !s.record.suspended.contains(slot) || self.has(Mutant::RejoinCountsEarly) {
            let fm = &mut t.nodes[from as usize].serving;
            fm.acks = fm.acks.set(slot, b);
        }
        Ok(())
    }
}
