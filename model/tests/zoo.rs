//! The bug zoo, as the model checker sees it: each mutant is caught by an
//! outcome property (never only by a rule that restates the guard it
//! removes), with a pinned counterexample length; the correct protocol passes
//! the same configurations (see `configs.rs`).

use livemove_model::zoo::check_mutant;
use livemove_model::Mutant;

fn caught(m: Mutant, property: &str, len: Option<usize>) {
    let row = check_mutant(m);
    assert_eq!(row.property, Some(property), "{m}: wrong or no property");
    assert_eq!(row.len, len, "{m}: counterexample length changed");
}

#[test]
fn w_from_assignment_is_caught() {
    caught(
        Mutant::WFromAssignment,
        "a publish is confirmed while a learner catches up and one follower is down",
        None,
    );
}

#[test]
fn learner_counts_is_caught() {
    caught(Mutant::LearnerCounts, "no confirmed entry is lost", Some(4));
}

#[test]
fn swap_before_admission_is_caught() {
    caught(
        Mutant::SwapBeforeAdmission,
        "no confirmed entry is lost",
        Some(6),
    );
}

#[test]
fn remove_before_boundary_is_caught() {
    caught(
        Mutant::RemoveBeforeBoundary,
        "no confirmed entry is lost",
        Some(8),
    );
}

#[test]
fn recovery_keeps_move_is_caught() {
    caught(
        Mutant::RecoveryKeepsMove,
        "no confirmed entry is lost",
        Some(13),
    );
}

#[test]
fn handoff_without_barrier_is_caught() {
    caught(
        Mutant::HandoffWithoutBarrier,
        "a committed handoff's new owner holds F and its old owner accepted nothing after it",
        Some(4),
    );
}

#[test]
fn no_seal_fencing_is_caught() {
    caught(
        Mutant::NoSealFencing,
        "a pending recovery activates",
        Some(6),
    );
}

#[test]
fn small_seal_quorum_is_caught() {
    caught(
        Mutant::SmallSealQuorum,
        "no confirmed entry is lost",
        Some(8),
    );
}

#[test]
fn promote_without_catchup_is_caught() {
    caught(
        Mutant::PromoteWithoutCatchup,
        "no confirmed entry is lost",
        Some(7),
    );
}

#[test]
fn rejoin_counts_early_is_caught() {
    caught(
        Mutant::RejoinCountsEarly,
        "no confirmed entry is lost",
        Some(14),
    );
}

#[test]
fn storage_identity_ignored_is_caught() {
    caught(
        Mutant::StorageIdentityIgnored,
        "a pending recovery activates",
        Some(8),
    );
}

#[test]
fn seal_with_new_w_is_caught() {
    caught(Mutant::SealWithNewW, "no confirmed entry is lost", Some(13));
}

#[test]
fn covers_by_length_is_caught() {
    caught(
        Mutant::CoversByLength,
        "no confirmed entry is lost",
        Some(12),
    );
}

#[test]
fn adopt_w_before_catchup_is_caught() {
    caught(
        Mutant::AdoptWBeforeCatchup,
        "no confirmed entry is lost",
        Some(7),
    );
}

// ---- the progress section: wedges, a state the partition can never leave --

#[test]
fn no_swap_back_is_caught() {
    caught(
        Mutant::NoSwapBack,
        "a started move completes or is cancelled",
        Some(11),
    );
}

#[test]
fn receipts_skip_suspended_is_caught() {
    caught(
        Mutant::ReceiptsSkipSuspended,
        "a pending recovery activates",
        Some(8),
    );
}

#[test]
fn restart_counts_own_suspension_is_caught() {
    caught(
        Mutant::RestartCountsOwnSuspension,
        "a process that restarts is let back in",
        Some(6),
    );
}

#[test]
fn no_retry_after_cancel_is_caught() {
    caught(
        Mutant::NoRetryAfterCancel,
        "a planned move is carried out while a free node can take it",
        Some(10),
    );
}

#[test]
fn no_replacement_is_caught() {
    caught(
        Mutant::NoReplacement,
        "the partition rests with rf counted copies on live, current instances",
        Some(12),
    );
}

/// About ten million states (the config is outside `ci`).
#[test]
fn learner_keeps_old_epoch_is_caught() {
    caught(
        Mutant::LearnerKeepsOldEpoch,
        "no confirmed entry is lost",
        Some(22),
    );
}

// ---- messages in flight ----------------------------------------------------------

#[test]
fn duplicate_append_applies_twice_is_caught() {
    caught(
        Mutant::DuplicateAppendAppliesTwice,
        "no copy holds one message twice",
        Some(5),
    );
}

/// Finding 19: a stale owner that ignores refusals resends to a fenced
/// replica. The cycle it makes runs where the partition is whole and nothing
/// is pending, so it harmed no outcome until the progress property of
/// finding 32 asked that a whole partition's owner confirm what it holds:
/// the cycle also runs while the new owner's first entry waits, so the
/// stale owner's resends may go on for ever before it is confirmed (the
/// model assumes no fairness; a cycle that misses a goal is a livelock, as
/// for the progress mutants). The rule still fails too, in 8 steps.
#[test]
fn refusal_ignored_is_caught_by_a_livelock_and_its_rule() {
    assert!(!Mutant::RefusalIgnored.rule_only());
    caught(
        Mutant::RefusalIgnored,
        "what the owner accepted is confirmed once the partition is whole",
        Some(14),
    );
    let r = livemove_model::checker::check(
        &livemove_model::MoveModel::new(
            livemove_model::Cfg::named(livemove_model::zoo::config_for(Mutant::RefusalIgnored))
                .with_mutant(Some(Mutant::RefusalIgnored)),
        ),
        livemove_model::checker::Options::default(),
    );
    let rule = r.result("a refused owner stops serving");
    assert_eq!(
        rule.path.as_ref().map(|p| p.steps.len()),
        Some(8),
        "the rule's counterexample"
    );
    assert_eq!(r.acyclic, Some(false), "the mutant makes a cycle");
}

/// A follower acknowledges, loses its disk and comes back empty; the
/// controller keeps progress per node, so the owner's report on the lost
/// instance lets the fresh one stand in for it at the removal, and the
/// entry confirmed on the lost disk is left on the owner alone.
#[test]
fn stale_progress_admits_is_caught() {
    caught(
        Mutant::StaleProgressAdmits,
        "no confirmed entry is lost",
        Some(16),
    );
}

/// Finding 18: the late acknowledgement breaks the rule (the owner counts a
/// copy it heard is suspended) but harms no outcome; the zoo says so.
#[test]
fn stale_ack_counts_is_caught_by_its_rule_and_harms_no_outcome() {
    assert!(Mutant::StaleAckCounts.rule_only());
    caught(
        Mutant::StaleAckCounts,
        "the owner counts only committed, eligible, unsuspended followers",
        Some(7),
    );
}

/// Finding 24: a recovery makes the move's target the owner; without the
/// receipts as its first knowledge the controller waits forever for a
/// report on the target, which no one sends (the owner does not report on
/// itself).
#[test]
fn activation_forgets_receipts_is_caught() {
    caught(
        Mutant::ActivationForgetsReceipts,
        "a started move completes or is cancelled",
        Some(14),
    );
}

/// Finding 25: a recovery makes the move's target the owner, the target
/// fails, and the controller swaps the move back as if the target were a
/// follower: the owner itself becomes the leaving copy, the recovery that
/// follows keeps it among the followers, and its removal leaves the new
/// owner counting a copy that is no longer eligible, for ever.
#[test]
fn swap_back_of_owner_is_caught() {
    caught(
        Mutant::SwapBackOfOwner,
        "the partition rests with rf counted copies on live, current instances",
        Some(22),
    );
}

/// Finding 23: a stale owner's report window that does not cover the
/// controller's refusal lets it report again while the refusal is in
/// flight; report after report, refusal after refusal, the network fills.
#[test]
fn report_window_ignores_refusal_is_caught() {
    caught(
        Mutant::ReportWindowIgnoresRefusal,
        "messages in flight stay below the network's capacity",
        Some(29),
    );
}

/// Note 2: "could an older record in the snapshot overwrite a newer value
/// that arrived first?" A copy that already replayed m2 installs the
/// checkpoint at 1 and drops m2, which was confirmed on it and the owner.
#[test]
fn checkpoint_overwrites_newer_is_caught() {
    caught(
        Mutant::CheckpointOverwritesNewer,
        "no confirmed entry is lost",
        Some(8),
    );
}

/// Finding 1 through a checkpoint: a copy that holds the zombie's entry at
/// the checkpoint's position is taken for caught up by position, replays on
/// top of it and is counted; recovery then chooses its history.
#[test]
fn checkpoint_without_epoch_tag_is_caught() {
    caught(
        Mutant::CheckpointWithoutEpochTag,
        "no confirmed entry is lost",
        Some(18),
    );
}

/// A checkpoint past the confirmed tail folds in an entry that recovery
/// discards; the copy cannot roll its checkpoint back, gives no receipt,
/// and the recovery never activates.
#[test]
fn truncate_before_confirm_is_caught() {
    caught(
        Mutant::TruncateBeforeConfirm,
        "a pending recovery activates",
        Some(8),
    );
}

/// Without the producer's sequence, a retry the owner already holds (its
/// acknowledgement was late or lost) is appended again: the shortest story
/// is the retry reaching the same owner (2 steps), confirmed twice in 5.
#[test]
fn retry_without_producer_id_is_caught() {
    caught(
        Mutant::RetryWithoutProducerId,
        "no copy holds one message twice",
        Some(2),
    );
}

/// Note 2: "after switching, the old source cannot be treated as a still
/// valid write entry". An old owner that reopens admission at the commit
/// accepts a publish past F (4 steps); confirmed with a follower that has
/// not heard of the new epoch, it is lost when the new owner activates (7).
#[test]
fn old_owner_serves_after_commit_is_caught() {
    caught(
        Mutant::OldOwnerServesAfterCommit,
        "a committed handoff's new owner holds F and its old owner accepted nothing after it",
        Some(4),
    );
}

/// Note 2: "upon receiving ASK, only a one-time retry plan is generated for
/// the target". A client that writes the ASK's node into its stable route
/// does so at the first ASK, between the handoff's commit and activation
/// (5 steps).
#[test]
fn ask_updates_route_is_caught() {
    caught(
        Mutant::AskUpdatesRoute,
        "an ASK never changes a client's stable route",
        Some(5),
    );
}

/// Note 2: "redirects and forwards must also limit the number of hops".
/// Without a limit, a request at the old owner while admission is closed
/// is told to try again past the limit (5 steps); between commit and
/// activation it follows ASK and try-again answers between the two owners
/// forever, a cycle on which the handoff never activates (7).
#[test]
fn no_hop_limit_is_caught() {
    caught(
        Mutant::NoHopLimit,
        "every redirect chain ends within the hop limit",
        Some(5),
    );
}

/// An owner that acknowledges a publish when it appends it tells the
/// client of a write that is not yet confirmed (3 steps: publish, accept,
/// acknowledge); a recovery may then discard it.
#[test]
fn ack_before_confirm_is_caught() {
    caught(
        Mutant::AckBeforeConfirm,
        "a client's publish is acknowledged only after it is confirmed",
        Some(3),
    );
}

/// Note 2: "log gap detected; cannot skip". A copy that lacks the
/// increments the owner reclaimed takes the first one kept, past the gap
/// (6 steps: two publishes, a confirm on n2, a checkpoint, the append to
/// n3); later the copy's hole lets a confirmed entry go (8).
#[test]
fn replay_accepts_gap_is_caught() {
    caught(Mutant::ReplayAcceptsGap, "no copy applies a gap", Some(6));
}

/// A settle told to the consumer when the owner appends it: the zombie
/// n1, deposed by a recovery it has not heard of, takes the settle, and n2
/// delivers the message again (10 steps).
#[test]
fn settle_acked_before_confirm_is_caught() {
    caught(
        Mutant::SettleAckedBeforeConfirm,
        "a settled message is never delivered again after its settle is confirmed",
        Some(10),
    );
}

/// Finding 33: a zombie owner's entry past the recovered tail survives at
/// the zombie; a handoff gives it the partition back, and it activates with
/// that entry past F, an entry of an older epoch it can never confirm.
#[test]
fn handoff_keeps_stale_tail_is_caught() {
    caught(
        Mutant::HandoffKeepsStaleTail,
        "what the owner accepted is confirmed once the partition is whole",
        Some(15),
    );
}

/// Finding 34: the first recovery leaves out the zombie n1's publish; the
/// second, sealing n1, confirms it (its tag is the older epoch 1); the
/// third prefers n2's unconfirmed entry of epoch 2 for its newer tag,
/// though n2 lacks what the second recovery confirmed (18 steps).
#[test]
fn recovery_trusts_last_tag_is_caught() {
    caught(
        Mutant::RecoveryTrustsLastTag,
        "no confirmed entry is lost",
        Some(18),
    );
}

/// Findings 32 and 35: an owner that never reads re-admissions from the
/// record waits for an admitted acknowledgement from a copy that holds its
/// whole log and is sent nothing.
#[test]
fn owner_ignores_readmission_is_caught() {
    caught(
        Mutant::OwnerIgnoresReadmission,
        "what the owner accepted is confirmed once the partition is whole",
        Some(19),
    );
}
