//! Retention and checkpoint catch-up on the replica's own log (note 2,
//! "Snapshots must correspond to a log boundary"; note 1, step 0: "D
//! copies a checkpoint if the owner has truncated, then follows the log
//! tail").
//!
//! A checkpoint is bound to a log position and to the epoch tag of the
//! entry there (`CheckpointBase`). The owner takes one at its confirmed
//! tail (`take_checkpoint`, called by `Serving::truncate`) and reclaims the
//! increments below it. A copy that lacks the checkpoint's entry installs
//! it (`install_checkpoint`) and then replays increments (`handle_append`);
//! a copy that already holds that entry refuses it, so an older checkpoint
//! never overwrites newer state, and an append never cuts into a
//! checkpoint (`check_not_cut`). The position only grows along one
//! history: a position alone is never taken as "already applied", the
//! entry's epoch tag is compared.

use super::{Ack, Append, Persist, Replica, ReplicaError};
use crate::entry::{common_prefix, Entry};
use crate::ids::{Epoch, Position};
use crate::mutant::{Mutant, Mutants};
use serde::{Deserialize, Serialize};

/// Where a checkpoint is bound: its position and the epoch tag of the
/// entry there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckpointBase {
    /// The last position folded into the checkpoint (at least 1).
    pub pos: Position,
    /// The epoch tag of the entry at `pos`.
    pub epoch: Epoch,
}

/// A checkpoint shipped to a copy: the sender's epoch, the base, and the
/// history whose effect the checkpoint's state is (positions `1..=base.pos`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointOffer {
    /// The epoch the sender serves at.
    pub epoch: Epoch,
    /// Where the checkpoint is bound.
    pub base: CheckpointBase,
    /// The sender's log up to the base.
    pub history: Vec<Entry>,
}

impl Replica {
    /// Whether this log holds the entry a checkpoint is bound to (history
    /// compare: the epoch tag at the checkpoint's position).
    pub fn holds(&self, base: CheckpointBase) -> bool {
        self.epoch_at(base.pos) == Some(base.epoch)
    }

    /// Take a checkpoint at `at` and reclaim the increments up to it. The
    /// caller (the owner) chooses `at`: past the current base, within the
    /// log.
    pub fn take_checkpoint(&mut self, at: Position) -> (CheckpointBase, Vec<Persist>) {
        assert!(
            at > self.base(),
            "invariant broken: a checkpoint at {at} does not advance the base {}",
            self.base()
        );
        let epoch = self.epoch_at(at).unwrap_or_else(|| {
            panic!("invariant broken: a checkpoint at {at} past the log's tail")
        });
        let base = CheckpointBase { pos: at, epoch };
        self.checkpoint = Some(base);
        tracing::info!(replica = %self.id, pos = at, epoch = epoch.0, "truncate: checkpoint taken");
        (base, vec![Persist::Checkpoint { pos: at, epoch }])
    }

    /// Whether this copy needs the checkpoint `base`: it does not hold the
    /// entry there. Under `checkpoint_without_epoch_tag` only whether its
    /// log is that long; under `checkpoint_overwrites_newer` also whenever
    /// it has not installed a checkpoint this far yet, whatever its own
    /// replay already passed.
    fn needs(&self, base: CheckpointBase, mutants: Mutants) -> bool {
        if mutants.on(Mutant::CheckpointWithoutEpochTag) {
            self.len() < base.pos
        } else if mutants.on(Mutant::CheckpointOverwritesNewer) {
            !self.holds(base) || self.base() < base.pos
        } else {
            !self.holds(base)
        }
    }

    /// Install a checkpoint from a sender at `offer.epoch`: the log becomes
    /// the checkpoint's history, the base the checkpoint's, and the copy
    /// acknowledges the base. Refused when fenced against the sender, and
    /// when this copy already holds the checkpoint's entry (note 2: an
    /// older snapshot cannot overwrite post-increment state).
    pub fn install_checkpoint(
        &mut self,
        offer: &CheckpointOffer,
        mutants: Mutants,
    ) -> Result<(Ack, Vec<Persist>), ReplicaError> {
        let base = offer.base;
        assert!(
            base.pos >= 1
                && offer.history.len() as Position == base.pos
                && offer.history.last().map(|e| e.epoch) == Some(base.epoch),
            "invariant broken: a checkpoint offer whose history does not end at its base"
        );
        if let Some(fence_epoch) = self.fenced_against(offer.epoch, mutants) {
            return Err(ReplicaError::Fenced {
                sender_epoch: offer.epoch,
                fence_epoch,
            });
        }
        if !self.needs(base, mutants) {
            return Err(ReplicaError::CheckpointNotNeeded {
                pos: base.pos,
                epoch: base.epoch,
                len: self.len(),
            });
        }
        let mut out = self.observe_epoch(offer.epoch);
        let keep = common_prefix(&self.log, &offer.history);
        if (keep as usize) < self.log.len() {
            self.log.truncate(keep as usize);
            out.push(Persist::Truncate { from: keep + 1 });
        }
        for (i, e) in offer.history.iter().enumerate().skip(keep as usize) {
            self.log.push(*e);
            out.push(Persist::Append {
                pos: i as Position + 1,
                entry: *e,
            });
        }
        self.checkpoint = Some(base);
        out.push(Persist::Checkpoint {
            pos: base.pos,
            epoch: base.epoch,
        });
        tracing::info!(replica = %self.id, pos = base.pos, epoch = base.epoch.0, "install_checkpoint");
        Ok((
            Ack {
                from: self.id,
                pos: base.pos,
                epoch: base.epoch,
            },
            out,
        ))
    }

    /// Only under `replay_accepts_gap`: take the sender's increment `msg`
    /// although this copy agrees with the sender only through `agreed`,
    /// below `msg.prev_pos` (the increments between were reclaimed). The
    /// copy keeps what it holds up to `msg.prev_pos` unchecked, the
    /// positions up to there it never received are left missing
    /// (`Entry::missing`), anything past is dropped, the entry is written
    /// at `msg.prev_pos + 1`, and the copy acknowledges it. The correct
    /// protocol refuses this append (`ReplicaError::LogGap` or
    /// `PrevMismatch` here, and the owner ships nothing below its
    /// checkpoint).
    pub fn replay_past_gap(
        &mut self,
        agreed: Position,
        msg: &Append,
        mutants: Mutants,
    ) -> Result<(Ack, Vec<Persist>), ReplicaError> {
        assert!(
            mutants.on(Mutant::ReplayAcceptsGap),
            "invariant broken: a replay past a gap without replay_accepts_gap"
        );
        assert!(
            agreed < msg.prev_pos && agreed <= self.len(),
            "invariant broken: no gap between {agreed} and {}",
            msg.prev_pos
        );
        if let Some(fence_epoch) = self.fenced_against(msg.epoch, mutants) {
            return Err(ReplicaError::Fenced {
                sender_epoch: msg.epoch,
                fence_epoch,
            });
        }
        if agreed < self.base() {
            return Err(ReplicaError::WouldCutCheckpoint {
                pos: agreed + 1,
                base: self.base(),
            });
        }
        let mut out = self.observe_epoch(msg.epoch);
        let held = self.log.len().min(msg.prev_pos as usize);
        let mut want = self.log[..held].to_vec();
        want.resize(msg.prev_pos as usize, Entry::missing());
        want.push(msg.entry);
        let keep = common_prefix(&self.log, &want);
        if (keep as usize) < self.log.len() {
            self.log.truncate(keep as usize);
            out.push(Persist::Truncate { from: keep + 1 });
        }
        for (i, e) in want.iter().enumerate().skip(keep as usize) {
            self.log.push(*e);
            out.push(Persist::Append {
                pos: i as Position + 1,
                entry: *e,
            });
        }
        let pos = msg.prev_pos + 1;
        tracing::debug!(replica = %self.id, agreed, pos, "replicate: applied past a gap");
        Ok((
            Ack {
                from: self.id,
                pos,
                epoch: msg.entry.epoch,
            },
            out,
        ))
    }

    /// Refuse writing `entry` at `pos` when that would cut into the
    /// checkpoint: a position at or below the base holding another entry
    /// (folded state has no suffix to drop). The entry already held there
    /// is fine (idempotent).
    pub(super) fn check_not_cut(&self, pos: Position, entry: &Entry) -> Result<(), ReplicaError> {
        match self.checkpoint {
            Some(b) if pos <= b.pos && self.entry(pos) != Some(entry) => {
                Err(ReplicaError::WouldCutCheckpoint { pos, base: b.pos })
            }
            _ => Ok(()),
        }
    }

    /// Whether a recovered history extends this copy's checkpoint: it holds
    /// the checkpoint's entry (it does whenever checkpoints hold only
    /// confirmed history).
    pub fn extends_checkpoint(&self, recovered: &[Entry]) -> Result<(), ReplicaError> {
        let Some(b) = self.checkpoint else {
            return Ok(());
        };
        let at = recovered.get((b.pos - 1) as usize);
        if at.is_some() && at == self.entry(b.pos) {
            return Ok(());
        }
        Err(ReplicaError::RecoveredTailContradictsCheckpoint {
            pos: b.pos,
            epoch: b.epoch,
            found: at.map(|e| e.epoch),
        })
    }
}
