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
//!
//! This is note 2's `Target` as the replica's own path: the checkpoint's
//! state is the queue's state at its base (`fold`: message key to body,
//! a put publishes, a delete settles), shipped with note 2's
//! `checksum(boundary, data)`, which the copy checks before it changes
//! anything; replay through `handle_append` refuses gaps, takes a
//! duplicate as already applied only when the entry there is the same
//! (position and epoch tag, never the position alone), and a late or
//! older checkpoint is refused once the copy holds its entry. Position and
//! data are one batch of `Persist` commands (`storage.rs`), so no crash
//! leaves "position 12 reached, the delete at 12 not saved".

use super::{Ack, Append, Persist, Replica, ReplicaError};
use crate::entry::{Entry, Op};
use crate::ids::{Epoch, Position};
use crate::mutant::{Mutant, Mutants};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The queue's state after `entries`, in order: message key to body. A put
/// publishes (or overwrites) its key, a delete settles it; a missing
/// position (only under `replay_accepts_gap`) applies nothing.
pub fn fold(entries: &[Entry]) -> BTreeMap<u64, u64> {
    let mut data = BTreeMap::new();
    for e in entries {
        match e.op {
            Op::Put { key, value } => {
                data.insert(key, value);
            }
            Op::Delete { key } => {
                data.remove(&key);
            }
            Op::Missing => {}
        }
    }
    data
}

/// Note 2's checksum over a checkpoint: FNV-1a over the boundary and the
/// sorted state, what sender and copy both compute.
pub fn checksum(boundary: Position, data: &BTreeMap<u64, u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(boundary);
    for (k, v) in data {
        eat(*k);
        eat(*v);
    }
    h
}

/// Where a checkpoint is bound: its position and the epoch tag of the
/// entry there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckpointBase {
    /// The last position folded into the checkpoint (at least 1).
    pub pos: Position,
    /// The epoch tag of the entry at `pos`.
    pub epoch: Epoch,
}

/// A checkpoint shipped to a copy: the sender's epoch, the base, the
/// history whose effect the checkpoint's state is (positions `1..=base.pos`;
/// the copy keeps their epoch tags to compare histories), and the
/// checksum of that state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointOffer {
    /// The epoch the sender serves at.
    pub epoch: Epoch,
    /// Where the checkpoint is bound.
    pub base: CheckpointBase,
    /// The sender's log up to the base.
    pub history: Vec<Entry>,
    /// `checksum(base.pos, fold(history))` as the sender computed it.
    pub checksum: u64,
}

impl CheckpointOffer {
    /// The checkpoint of `history` (which ends at `base`), checksummed by
    /// the sender.
    pub fn new(epoch: Epoch, base: CheckpointBase, history: Vec<Entry>) -> Self {
        let checksum = checksum(base.pos, &fold(&history));
        CheckpointOffer {
            epoch,
            base,
            history,
            checksum,
        }
    }

    /// The checkpoint's state: the queue at its base.
    pub fn state(&self) -> BTreeMap<u64, u64> {
        fold(&self.history)
    }
}

impl Replica {
    /// The queue's state this copy has applied: the checkpoint's state and
    /// every increment replayed after it.
    pub fn state(&self) -> BTreeMap<u64, u64> {
        fold(&self.log)
    }

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
        let computed = checksum(base.pos, &offer.state());
        if computed != offer.checksum {
            return Err(ReplicaError::ChecksumMismatch {
                pos: base.pos,
                expected: offer.checksum,
                computed,
            });
        }
        let mut out = self.observe_epoch(offer.epoch);
        out.extend(self.adopt_log(&offer.history));
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
        out.extend(self.adopt_log(&want));
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
