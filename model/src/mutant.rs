//! The bug zoo: named wrong ideas, each a switch that removes or bends one
//! guard. The same names exist in the implementation and the TLA+ spec.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Mutant {
    /// W computed from the copies currently assigned.
    WFromAssignment,
    /// A learner's progress counts as confirm evidence.
    LearnerCounts,
    /// Swap in a target that is not yet in the eligible set.
    SwapBeforeAdmission,
    /// Remove the leaving copy before the target covers B.
    RemoveBeforeBoundary,
    /// A pending recovery does not cancel or pause moves.
    RecoveryKeepsMove,
    /// Commit a handoff on a "just caught up" observation, without a barrier.
    HandoffWithoutBarrier,
    /// Sealed replicas still accept appends of the old epoch.
    NoSealFencing,
    /// Recovery seals E - W instead of E - W + 1.
    SmallSealQuorum,
    /// Raise RF before the new copy covers the confirmed tail.
    PromoteWithoutCatchup,
    /// A restarted follower counts before re-admission.
    RejoinCountsEarly,
    /// A node back with a fresh disk is taken for the replica it was.
    StorageIdentityIgnored,
    /// Recovery seals with the new W while the owner still confirms on the old one.
    SealWithNewW,
    /// "Covers position p" compares length, not history.
    CoversByLength,
    /// The owner adopts the grown W once the promotion was written, without
    /// the promoted copy covering its confirmed tail at that moment.
    AdoptWBeforeCatchup,
    /// A move whose target is down or lost after the swap waits for the
    /// target: there is no way back.
    NoSwapBack,
    /// A suspended follower that installed the recovered tail gives no
    /// quorum receipt (finding 10's rule).
    ReceiptsSkipSuspended,
    /// A suspended follower that crashes again counts its own suspension
    /// against the W - 1 limit when it restarts.
    RestartCountsOwnSuspension,
    /// A planned move cancelled by a recovery or a lost target is not retried.
    NoRetryAfterCancel,
    /// The controller never replaces a counted copy that is down or lost.
    NoReplacement,
    /// A copy added as a learner keeps the epoch it last saw: it is not told
    /// the record's epoch when it joins.
    LearnerKeepsOldEpoch,
    /// Messages in flight: an acknowledgement sent before its sender
    /// restarted is counted after the owner heard of the suspension.
    StaleAckCounts,
    /// Messages in flight: a replica that already holds an append's entry
    /// applies it again at its tail.
    DuplicateAppendAppliesTwice,
    /// Messages in flight: a stale owner that is told a newer epoch keeps
    /// serving.
    RefusalIgnored,
    /// Messages in flight: the controller keeps progress per node and acts
    /// on a report whatever instance or epoch it was about: a report older
    /// than a disk loss or an epoch change admits, swaps, removes, rejoins
    /// or commits.
    StaleProgressAdmits,
    /// Messages in flight: a recovery's activation leaves the controller
    /// knowing nothing at the new epoch; the receipts in the record are
    /// not taken as progress (finding 24).
    ActivationForgetsReceipts,
    /// Messages in flight: a move whose target became the owner through a
    /// recovery is swapped back (or its promotion withdrawn) when that owner
    /// fails, which makes the owner itself a leaving copy (finding 25).
    SwapBackOfOwner,
    /// Messages in flight: an owner's report window covers only its report,
    /// not the controller's refusal on its way back, so a stale owner
    /// reports again and again and the refusals pile up (finding 23).
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
    /// looking up the producer's sequence in its history, so a retry of a
    /// message it already holds is appended a second time.
    RetryWithoutProducerId,
    /// Handoff: the old owner reopens admission at the commit (it takes the
    /// commit for the end of its handoff) and accepts publishes between the
    /// commit and the new owner's activation.
    OldOwnerServesAfterCommit,
    /// Client routing: the client takes an ASK for an ownership change and
    /// writes the ASK's node into its stable route.
    AskUpdatesRoute,
    /// Client routing: the client follows redirects and retry answers
    /// without a hop limit.
    NoHopLimit,
    /// Client routing: the owner acknowledges a publish to the client when
    /// it appends it, before its confirmed tail covers it.
    AckBeforeConfirm,
    /// Retention: a copy that lacks increments the sender reclaimed
    /// replays the first increment the sender still keeps, skipping the
    /// positions between (note 2's `replay(13, ...)` at position 11).
    ReplayAcceptsGap,
    /// Consumer settles: the owner tells the consumer its settle is done
    /// when it appends the settle entry, before confirming it.
    SettleAckedBeforeConfirm,
    /// Handoff: the new owner activates with the entries it holds past the
    /// final boundary F (a divergent tail from an older epoch), which it can
    /// never confirm without a publish of its own (finding 33).
    HandoffKeepsStaleTail,
    /// Recovery chooses among all sealed logs by newest last epoch tag,
    /// then length, as if tags ordered histories, without checking that a
    /// log holds the tail the last recovery confirmed: a recovered tail keeps
    /// the older tags of the entries it confirms, so a stale copy holding
    /// an unconfirmed entry of an owner a recovery replaced outranks it
    /// (finding 34).
    RecoveryTrustsLastTag,
    /// With messages in flight: the owner never reads re-admissions from
    /// the record; it unmutes a copy only on that copy's next admitted
    /// acknowledgement, and a copy that holds the owner's whole log is
    /// sent nothing to acknowledge (findings 32 and 35).
    OwnerIgnoresReadmission,
}

impl Mutant {
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

    /// Wrong ideas that break a rule of the protocol without harming any
    /// outcome the model can observe (finding 18): the zoo reports them as
    /// caught by that rule, and says so, instead of claiming an outcome.
    pub fn rule_only(self) -> bool {
        matches!(self, Mutant::StaleAckCounts)
    }

    /// The zoo's section for this mutant, in print order (see
    /// [`Mutant::SECTIONS`]).
    pub fn section(self) -> &'static str {
        if self.rule_only() {
            Mutant::SECTIONS[3]
        } else if self.progress() {
            Mutant::SECTIONS[2]
        } else if self.needs_net() {
            Mutant::SECTIONS[1]
        } else {
            Mutant::SECTIONS[0]
        }
    }

    /// The zoo's sections, in print order.
    pub const SECTIONS: [&'static str; 4] = [
        "safety and reachability",
        "messages in flight",
        "progress: wedges and livelocks (a state or a cycle the partition can never leave)",
        "rules only: no outcome harmed (findings 18, 19)",
    ];

    /// Wrong ideas that only messages in flight can expose: they live in the
    /// handling of a late, repeated or refused message.
    pub fn needs_net(self) -> bool {
        matches!(
            self,
            Mutant::StaleAckCounts
                | Mutant::DuplicateAppendAppliesTwice
                | Mutant::RefusalIgnored
                | Mutant::StaleProgressAdmits
                | Mutant::ActivationForgetsReceipts
                | Mutant::SwapBackOfOwner
                | Mutant::ReportWindowIgnoresRefusal
                | Mutant::OwnerIgnoresReadmission
        )
    }

    /// The progress section of the zoo: wrong ideas that lose no message but
    /// leave the partition in a state it can never leave.
    pub fn progress(self) -> bool {
        matches!(
            self,
            Mutant::NoSwapBack
                | Mutant::ReceiptsSkipSuspended
                | Mutant::RestartCountsOwnSuspension
                | Mutant::NoRetryAfterCancel
                | Mutant::NoReplacement
                | Mutant::ActivationForgetsReceipts
                | Mutant::SwapBackOfOwner
                | Mutant::TruncateBeforeConfirm
                | Mutant::HandoffKeepsStaleTail
                | Mutant::OwnerIgnoresReadmission
        )
    }

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

    /// The wrong idea in one line.
    pub fn idea(self) -> &'static str {
        match self {
            Mutant::WFromAssignment => "W computed from the copies currently assigned",
            Mutant::LearnerCounts => "a learner's progress counts as confirm evidence",
            Mutant::SwapBeforeAdmission => "swap in a target that is not yet in the eligible set",
            Mutant::RemoveBeforeBoundary => "remove the leaving copy before the target covers B",
            Mutant::RecoveryKeepsMove => "a pending recovery does not cancel or pause moves",
            Mutant::HandoffWithoutBarrier => "commit a handoff on a \"just caught up\" observation",
            Mutant::NoSealFencing => "sealed replicas still accept appends of the old epoch",
            Mutant::SmallSealQuorum => "recovery seals E - W instead of E - W + 1",
            Mutant::PromoteWithoutCatchup => {
                "raise RF before the new copy covers the confirmed tail"
            }
            Mutant::RejoinCountsEarly => "a restarted follower counts before re-admission",
            Mutant::StorageIdentityIgnored => {
                "a node back with a fresh disk is taken for the replica it was"
            }
            Mutant::SealWithNewW => {
                "recovery seals with the new W while the owner still confirms on the old W"
            }
            Mutant::CoversByLength => "\"covers position p\" compares length, not history",
            Mutant::AdoptWBeforeCatchup => {
                "the owner adopts the grown W before the promoted copy covers its confirmed tail"
            }
            Mutant::NoSwapBack => {
                "a move whose target is lost after the swap waits for the target forever"
            }
            Mutant::ReceiptsSkipSuspended => {
                "a suspended follower that installed the recovered tail gives no quorum receipt"
            }
            Mutant::RestartCountsOwnSuspension => {
                "a suspended follower that crashes again counts its own slot when it restarts"
            }
            Mutant::NoRetryAfterCancel => {
                "a move cancelled by a recovery or a lost target is never retried"
            }
            Mutant::NoReplacement => "a counted copy that is down or lost is never replaced",
            Mutant::LearnerKeepsOldEpoch => {
                "a copy added as a learner is not told the record's epoch"
            }
            Mutant::StaleAckCounts => {
                "an acknowledgement sent before a restart counts after the suspension"
            }
            Mutant::DuplicateAppendAppliesTwice => {
                "a duplicated append is applied again at the replica's tail"
            }
            Mutant::RefusalIgnored => "a stale owner told of a newer epoch keeps serving",
            Mutant::StaleProgressAdmits => {
                "the controller acts on a progress report older than a truncation of that copy"
            }
            Mutant::ActivationForgetsReceipts => {
                "after a recovery the controller knows nothing until someone reports"
            }
            Mutant::SwapBackOfOwner => {
                "a move's target that became the owner is swapped back when it fails"
            }
            Mutant::ReportWindowIgnoresRefusal => {
                "a stale owner reports again while the controller's refusal is in flight"
            }
            Mutant::TruncateBeforeConfirm => {
                "the owner checkpoints and reclaims increments past its confirmed tail"
            }
            Mutant::CheckpointOverwritesNewer => {
                "a copy installs a checkpoint older than what it already applied"
            }
            Mutant::CheckpointWithoutEpochTag => {
                "a checkpoint is bound to a position, not to the epoch tag of the entry there"
            }
            Mutant::RetryWithoutProducerId => {
                "a retried publish is appended without looking up the producer's sequence"
            }
            Mutant::OldOwnerServesAfterCommit => {
                "the old owner reopens admission at the handoff's commit"
            }
            Mutant::AskUpdatesRoute => "the client writes an ASK's node into its stable route",
            Mutant::NoHopLimit => "the client follows redirects without a hop limit",
            Mutant::AckBeforeConfirm => {
                "the owner acknowledges a client's publish when it appends it, before confirming it"
            }
            Mutant::ReplayAcceptsGap => {
                "a copy replays an increment past a gap left by reclaimed increments"
            }
            Mutant::SettleAckedBeforeConfirm => {
                "the owner tells the consumer a settle is done when it appends it, before confirming it"
            }
            Mutant::HandoffKeepsStaleTail => {
                "a handoff's new owner keeps the entries it holds past the final boundary"
            }
            Mutant::OwnerIgnoresReadmission => {
                "the owner unmutes a re-admitted copy only on its next admitted acknowledgement, never from the record"
            }
            Mutant::RecoveryTrustsLastTag => {
                "recovery takes the sealed log with the newest last epoch tag without checking it holds the tail the last recovery confirmed"
            }
        }
    }
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown mutant name.
#[derive(Debug, thiserror::Error)]
#[error("unknown mutant `{name}`; known mutants: {known}")]
pub struct UnknownMutant {
    pub name: String,
    pub known: String,
}

impl FromStr for Mutant {
    type Err = UnknownMutant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mutant::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMutant {
                name: s.to_string(),
                known: Mutant::ALL.map(|m| m.name()).join(", "),
            })
    }
}
