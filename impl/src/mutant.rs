//! The bug zoo: named switches that each turn off one guard.
//!
//! All are off by default. The names are shared with the model and the TLA+
//! specification; conformance selects them by name.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One deliberately wrong idea, switched on at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mutant {
    /// W computed from the copies currently assigned (learners included).
    WFromAssignment,
    /// A learner's progress counts as confirm evidence.
    LearnerCounts,
    /// Swap in a target that is not yet in the eligible set.
    SwapBeforeAdmission,
    /// Remove the leaving copy before the target covers the switch boundary.
    RemoveBeforeBoundary,
    /// A pending recovery neither cancels nor pauses moves.
    RecoveryKeepsMove,
    /// Commit a handoff on a "just caught up" observation: admission is never closed.
    HandoffWithoutBarrier,
    /// Sealed replicas still accept appends of the sealed epoch.
    NoSealFencing,
    /// Recovery seals E - W replicas instead of E - W + 1.
    SmallSealQuorum,
    /// Raise the replication factor before the new copy covers the confirmed tail.
    PromoteWithoutCatchup,
    /// A restarted (suspended) follower counts before re-admission.
    RejoinCountsEarly,
    /// A node back with a fresh disk is taken for the storage instance it was.
    StorageIdentityIgnored,
    /// Recovery seals E - W_new + 1 while the owner still confirms on the old W.
    SealWithNewW,
    /// "Covers position p" compares length, not history.
    CoversByLength,
    /// The owner adopts the grown W once the promotion was written, without
    /// the promoted copy covering its confirmed tail at that moment.
    AdoptWBeforeCatchup,
    /// A move whose target is down or lost after the swap waits for the
    /// target: the leaving copy is never swapped back.
    NoSwapBack,
    /// A suspended follower that installed the recovered tail gives no
    /// quorum receipt: activation does not re-admit it.
    ReceiptsSkipSuspended,
    /// A suspended follower that crashes again counts its own suspension
    /// against the W - 1 limit when it restarts.
    RestartCountsOwnSuspension,
    /// A planned move cancelled for a reason (a recovery, a lost target) is
    /// not given back to the controller's plan.
    NoRetryAfterCancel,
    /// The controller never replaces a counted copy that is down or lost:
    /// every move is a planned one.
    NoReplacement,
    /// A copy added as a learner keeps the epoch it last saw: step 0 does
    /// not tell it the record's epoch.
    LearnerKeepsOldEpoch,
    /// Networked delivery: an acknowledgement sent before its sender
    /// restarted is counted after the owner heard of the suspension (the
    /// owner's incarnation floor is not checked).
    StaleAckCounts,
    /// Networked delivery: a replica that already holds an append's entry
    /// applies it again at its tail.
    DuplicateAppendAppliesTwice,
    /// Networked delivery: a stale owner told of a newer epoch by a refusal
    /// keeps serving.
    RefusalIgnored,
    /// Networked delivery: the controller keeps progress per node and
    /// across epochs, and acts on a report whatever instance or epoch it
    /// was about: a report older than a disk loss or an epoch change
    /// admits, swaps, removes, rejoins or commits.
    StaleProgressAdmits,
    /// Networked delivery: a recovery's activation leaves the controller
    /// knowing nothing at the new epoch; the receipts are not taken as
    /// progress (finding 24).
    ActivationForgetsReceipts,
    /// Networked delivery: a move whose target became the owner through a
    /// recovery is swapped back (or its promotion withdrawn) when that
    /// owner fails, which makes the owner itself a leaving copy (finding
    /// 25).
    SwapBackOfOwner,
    /// Networked delivery: an owner's report window covers only its
    /// report, not the controller's refusal on its way back, so a stale
    /// owner reports again and again and the refusals pile up (finding 23).
    ReportWindowIgnoresRefusal,
    /// Retention: the owner takes its checkpoint at its log's tail, past
    /// what it has confirmed, and reclaims increments that recovery may
    /// still discard.
    TruncateBeforeConfirm,
    /// Retention: a copy installs a checkpoint whatever it already applied,
    /// so an older checkpoint overwrites newer state.
    CheckpointOverwritesNewer,
    /// Retention: a checkpoint is bound to its position only, not to the
    /// epoch tag of the entry there, so a copy holding a different entry at
    /// that position takes itself for caught up.
    CheckpointWithoutEpochTag,
    /// Producer retries: the owner appends a retried publish without
    /// looking up the producer's sequence in its history.
    RetryWithoutProducerId,
    /// Handoff: the old owner reopens admission at the commit and accepts
    /// publishes between the commit and the new owner's activation.
    OldOwnerServesAfterCommit,
    /// Client routing: the client takes an ASK for an ownership change and
    /// writes the ASK's node and epoch into its topology cache.
    AskUpdatesRoute,
    /// Client routing: the request driver follows redirects and try-again
    /// answers without a hop limit.
    NoHopLimit,
    /// Client routing: the client is acknowledged once the accepting node
    /// holds its publish, before that node's confirmed tail covers it.
    AckBeforeConfirm,
    /// Retention: a copy that lacks increments the sender reclaimed takes
    /// the first increment the sender still keeps, past the gap; the
    /// positions between stay missing (`Op::Missing`).
    ReplayAcceptsGap,
    /// Consumer settles: the consumer is told its settle is done when the
    /// owner appends the `Delete`, before the owner confirms it.
    SettleAckedBeforeConfirm,
    /// Handoff: the new owner activates with the entries it holds past the
    /// final boundary F, a divergent tail of an older epoch that no
    /// acknowledgement lets it confirm (finding 33).
    HandoffKeepsStaleTail,
    /// Recovery: the tail is the sealed log with the newest last epoch tag,
    /// then the longest, whether or not it holds the tail the last recovery
    /// confirmed (finding 34).
    RecoveryTrustsLastTag,
    /// Networked delivery: the owner never reads re-admissions from the
    /// record; it unmutes a copy only on that copy's next admitted
    /// acknowledgement, and a copy that holds the owner's whole log is
    /// sent nothing to acknowledge (findings 32 and 35).
    OwnerIgnoresReadmission,
}

impl Mutant {
    /// Every mutant, in declaration order.
    pub const ALL: [Mutant; 40] = [
        Mutant::WFromAssignment,
        Mutant::LearnerCounts,
        Mutant::SwapBeforeAdmission,
        Mutant::RemoveBeforeBoundary,
        Mutant::RecoveryKeepsMove,
        Mutant::HandoffWithoutBarrier,
        Mutant::NoSealFencing,
        Mutant::SmallSealQuorum,
        Mutant::PromoteWithoutCatchup,
        Mutant::RejoinCountsEarly,
        Mutant::StorageIdentityIgnored,
        Mutant::SealWithNewW,
        Mutant::CoversByLength,
        Mutant::AdoptWBeforeCatchup,
        Mutant::NoSwapBack,
        Mutant::ReceiptsSkipSuspended,
        Mutant::RestartCountsOwnSuspension,
        Mutant::NoRetryAfterCancel,
        Mutant::NoReplacement,
        Mutant::LearnerKeepsOldEpoch,
        Mutant::StaleAckCounts,
        Mutant::DuplicateAppendAppliesTwice,
        Mutant::RefusalIgnored,
        Mutant::StaleProgressAdmits,
        Mutant::ActivationForgetsReceipts,
        Mutant::SwapBackOfOwner,
        Mutant::ReportWindowIgnoresRefusal,
        Mutant::TruncateBeforeConfirm,
        Mutant::CheckpointOverwritesNewer,
        Mutant::CheckpointWithoutEpochTag,
        Mutant::RetryWithoutProducerId,
        Mutant::OldOwnerServesAfterCommit,
        Mutant::AskUpdatesRoute,
        Mutant::NoHopLimit,
        Mutant::AckBeforeConfirm,
        Mutant::ReplayAcceptsGap,
        Mutant::SettleAckedBeforeConfirm,
        Mutant::HandoffKeepsStaleTail,
        Mutant::RecoveryTrustsLastTag,
        Mutant::OwnerIgnoresReadmission,
    ];

    /// The shared snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Mutant::WFromAssignment => "w_from_assignment",
            Mutant::LearnerCounts => "learner_counts",
            Mutant::SwapBeforeAdmission => "swap_before_admission",
            Mutant::RemoveBeforeBoundary => "remove_before_boundary",
            Mutant::RecoveryKeepsMove => "recovery_keeps_move",
            Mutant::HandoffWithoutBarrier => "handoff_without_barrier",
            Mutant::NoSealFencing => "no_seal_fencing",
            Mutant::SmallSealQuorum => "small_seal_quorum",
            Mutant::PromoteWithoutCatchup => "promote_without_catchup",
            Mutant::RejoinCountsEarly => "rejoin_counts_early",
            Mutant::StorageIdentityIgnored => "storage_identity_ignored",
            Mutant::SealWithNewW => "seal_with_new_w",
            Mutant::CoversByLength => "covers_by_length",
            Mutant::AdoptWBeforeCatchup => "adopt_w_before_catchup",
            Mutant::NoSwapBack => "no_swap_back",
            Mutant::ReceiptsSkipSuspended => "receipts_skip_suspended",
            Mutant::RestartCountsOwnSuspension => "restart_counts_own_suspension",
            Mutant::NoRetryAfterCancel => "no_retry_after_cancel",
            Mutant::NoReplacement => "no_replacement",
            Mutant::LearnerKeepsOldEpoch => "learner_keeps_old_epoch",
            Mutant::StaleAckCounts => "stale_ack_counts",
            Mutant::DuplicateAppendAppliesTwice => "duplicate_append_applies_twice",
            Mutant::RefusalIgnored => "refusal_ignored",
            Mutant::StaleProgressAdmits => "stale_progress_admits",
            Mutant::ActivationForgetsReceipts => "activation_forgets_receipts",
            Mutant::SwapBackOfOwner => "swap_back_of_owner",
            Mutant::ReportWindowIgnoresRefusal => "report_window_ignores_refusal",
            Mutant::TruncateBeforeConfirm => "truncate_before_confirm",
            Mutant::CheckpointOverwritesNewer => "checkpoint_overwrites_newer",
            Mutant::CheckpointWithoutEpochTag => "checkpoint_without_epoch_tag",
            Mutant::RetryWithoutProducerId => "retry_without_producer_id",
            Mutant::OldOwnerServesAfterCommit => "old_owner_serves_after_commit",
            Mutant::AskUpdatesRoute => "ask_updates_route",
            Mutant::NoHopLimit => "no_hop_limit",
            Mutant::AckBeforeConfirm => "ack_before_confirm",
            Mutant::ReplayAcceptsGap => "replay_accepts_gap",
            Mutant::SettleAckedBeforeConfirm => "settle_acked_before_confirm",
            Mutant::HandoffKeepsStaleTail => "handoff_keeps_stale_tail",
            Mutant::RecoveryTrustsLastTag => "recovery_trusts_last_tag",
            Mutant::OwnerIgnoresReadmission => "owner_ignores_readmission",
        }
    }

    fn bit(self) -> u64 {
        1 << (self as u64)
    }
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for a mutant name nobody knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mutant `{name}`")]
pub struct UnknownMutant {
    /// The name that was given.
    pub name: String,
}

impl FromStr for Mutant {
    type Err = UnknownMutant;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mutant::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMutant { name: s.to_owned() })
    }
}

// One bit per mutant in `Mutants`.
const _: () = assert!(
    Mutant::ALL.len() <= 64,
    "Mutants holds one bit per mutant in a u64"
);

/// A set of switched-on mutants; empty (the correct protocol) by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Mutants(u64);

impl Mutants {
    /// No mutant: the correct protocol.
    pub const NONE: Mutants = Mutants(0);

    /// Only `m`.
    pub fn only(m: Mutant) -> Self {
        Mutants(m.bit())
    }

    /// This set plus `m`.
    pub fn with(self, m: Mutant) -> Self {
        Mutants(self.0 | m.bit())
    }

    /// Whether `m` is switched on.
    pub fn on(self, m: Mutant) -> bool {
        self.0 & m.bit() != 0
    }

    /// The switched-on mutants, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = Mutant> {
        Mutant::ALL.into_iter().filter(move |m| self.on(*m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str_and_serde() {
        for m in Mutant::ALL {
            assert_eq!(m.name().parse::<Mutant>(), Ok(m));
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.name()));
            assert_eq!(serde_json::from_str::<Mutant>(&json).unwrap(), m);
        }
        assert!("nope".parse::<Mutant>().is_err());
    }

    #[test]
    fn mutant_sets_start_empty() {
        assert_eq!(Mutants::default().iter().count(), 0);
        let s = Mutants::only(Mutant::SealWithNewW).with(Mutant::NoSealFencing);
        assert!(s.on(Mutant::SealWithNewW) && s.on(Mutant::NoSealFencing));
        assert!(!s.on(Mutant::LearnerCounts));
    }
}
