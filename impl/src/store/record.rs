//! The controller's replicated record for one queue partition.

use crate::entry::Entry;
use crate::ids::{write_quorum, Epoch, Position, StorageId, Version};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Where a follower move stands (note 1, steps 0 to 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MovePhase {
    /// Step 0 written: the target is a learner and catches up.
    Learner,
    /// The target's storage instance is in the accepted history.
    Admitted,
    /// Step 1 written: the target counts in the record, the owner has not adopted it yet.
    Swapped,
    /// The owner adopted the new counted set and recorded the switch boundary.
    Switched,
}

/// A follower move or a replication-factor increase in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    /// The storage instance that joins.
    pub target: StorageId,
    /// The follower that leaves; `None` for a replication-factor increase,
    /// or for a move whose leaving copy is chosen at the swap.
    pub leaving: Option<StorageId>,
    /// Where the move stands.
    pub phase: MovePhase,
    /// Whether the swap was a promotion (replication-factor increase).
    pub promotion: bool,
    /// The switch boundary B, the owner's confirmed tail when it adopted the new set.
    pub boundary: Option<Position>,
    /// For the controller's replacement of a counted copy that is down or
    /// lost (note 1, "Lost follower replaced"): that copy. The swap must take
    /// it out, and a replacement never promotes. `None` for a planned move.
    #[serde(default)]
    pub replaces: Option<StorageId>,
}

/// Where a planned owner handoff stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffPhase {
    /// The owner closed admission and drains.
    Closed,
    /// The owner reported its final boundary F.
    Reported,
    /// The new owner is committed at epoch + 1 and has not activated yet.
    Committed,
}

/// A planned owner handoff in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handoff {
    /// The follower that becomes owner.
    pub to: StorageId,
    /// The owner that hands over.
    pub from: StorageId,
    /// Where the handoff stands.
    pub phase: HandoffPhase,
    /// The final boundary F, once reported.
    pub final_boundary: Option<Position>,
}

/// The result of inspecting the sealed copies: the history recovery keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoveredTail {
    /// The sealed copy the tail was read from.
    pub source: StorageId,
    /// The recovered log, position 1 first.
    pub entries: Vec<Entry>,
}

/// A pending recovery: serving is fenced until it activates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRecovery {
    /// The epoch being sealed (the record's epoch when recovery opened).
    pub epoch: Epoch,
    /// How many seals of the eligible set activation needs (E - W + 1).
    pub seal_quorum: u8,
    /// Storage instances that sealed at `epoch`.
    pub sealed: BTreeSet<StorageId>,
    /// Storage instances that hold the recovered tail (quorum receipts).
    pub installed: BTreeSet<StorageId>,
    /// The recovered tail, fixed at the first install.
    pub tail: Option<RecoveredTail>,
    /// With messages in flight, until the tail is fixed: the best history
    /// the seals gave as evidence (newest last epoch, then longest).
    #[serde(default)]
    pub evidence: Option<RecoveredTail>,
}

/// The coordination record. Every change is one guarded write (`store::write`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Bumped by every write; writers name the version they read.
    pub version: Version,
    /// The current permission generation.
    pub epoch: Epoch,
    /// The storage instance that owns the partition.
    pub owner: StorageId,
    /// Counted copies besides the owner.
    pub followers: BTreeSet<StorageId>,
    /// Copies that replicate but never count and never change W.
    pub learners: BTreeSet<StorageId>,
    /// A follower swapped out: still replicating and eligible until removed.
    pub leaving: Option<StorageId>,
    /// The accepted history: every storage instance recovery must hear from.
    pub eligible: BTreeSet<StorageId>,
    /// Restarted followers awaiting re-admission; they keep their eligible slot.
    pub suspended: BTreeSet<StorageId>,
    /// Storage instances whose disk is gone; they can neither seal nor install.
    pub lost: BTreeSet<StorageId>,
    /// A pending recovery, if any.
    pub recovery: Option<PendingRecovery>,
    /// A follower move or replication-factor increase, if any.
    pub move_task: Option<Move>,
    /// A planned owner handoff, if any.
    pub handoff: Option<Handoff>,
    /// Operator pause: no new rebalancing starts.
    pub paused: bool,
    /// The configured replication factor.
    pub rf: u8,
    /// The W the serving owner confirms on; it lags `write_quorum(rf)` until
    /// the owner adopts a replication-factor increase.
    pub confirm_w: u8,
    /// The tail the last recovery confirmed (`None` before any recovery, or
    /// when that tail was empty). Every later confirmed history extends it,
    /// so recovery chooses only among sealed copies that hold it (finding
    /// 34).
    #[serde(default)]
    pub recovered: Option<TailMark>,
}

/// Where a recovered tail ends: its last position and the entry there
/// (one owner per epoch writes one entry per position, so the entry names
/// the history below it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailMark {
    /// The tail's last position.
    pub pos: Position,
    /// The entry at `pos`.
    pub entry: Entry,
}

impl TailMark {
    /// The mark of a non-empty history's end.
    pub fn of(entries: &[Entry]) -> Option<TailMark> {
        entries.last().map(|e| TailMark {
            pos: entries.len() as Position,
            entry: *e,
        })
    }

    /// Whether `log` holds the marked history (an unmarked, empty one is
    /// held by every log).
    pub fn held_by(mark: Option<TailMark>, log: &[Entry]) -> bool {
        mark.is_none_or(|m| m.pos >= 1 && log.get((m.pos - 1) as usize) == Some(&m.entry))
    }
}

impl Record {
    /// The initial record: `owner` serves at epoch 1 with `followers`.
    pub fn initial(
        owner: StorageId,
        followers: impl IntoIterator<Item = StorageId>,
        rf: u8,
    ) -> Self {
        let followers: BTreeSet<StorageId> = followers.into_iter().collect();
        assert!(
            !followers.contains(&owner),
            "the owner cannot also be a follower"
        );
        let mut eligible = followers.clone();
        eligible.insert(owner);
        Record {
            version: Version(1),
            epoch: Epoch(1),
            owner,
            followers,
            learners: BTreeSet::new(),
            leaving: None,
            eligible,
            suspended: BTreeSet::new(),
            lost: BTreeSet::new(),
            recovery: None,
            move_task: None,
            handoff: None,
            paused: false,
            rf,
            confirm_w: write_quorum(rf),
            recovered: None,
        }
    }

    /// The counted set: the owner plus the followers.
    pub fn counted(&self) -> BTreeSet<StorageId> {
        let mut c = self.followers.clone();
        c.insert(self.owner);
        c
    }

    /// Every storage instance the record assigns a copy to.
    pub fn assigned(&self) -> BTreeSet<StorageId> {
        let mut a = self.counted();
        a.extend(self.learners.iter().copied());
        a.extend(self.leaving);
        a
    }

    /// Whether `s` is assigned in any role.
    pub fn is_assigned(&self, s: StorageId) -> bool {
        self.owner == s
            || self.followers.contains(&s)
            || self.learners.contains(&s)
            || self.leaving == Some(s)
    }

    /// W under the configured replication factor.
    pub fn configured_w(&self) -> u8 {
        write_quorum(self.rf)
    }

    /// Whether a recovery is pending.
    pub fn recovery_pending(&self) -> bool {
        self.recovery.is_some()
    }
}
