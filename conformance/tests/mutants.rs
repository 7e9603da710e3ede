//! Every mutant of the bug zoo is caught by conformance: the implementation
//! with the mutant switched on, run against the correct model, diverges. The
//! first divergence of each (config, kind, step, action) is pinned, so a
//! silent change shows.

use livemove_conformance::catches;
use livemove_model::Mutant;

/// Config, kind, 0-based step and action of each mutant's first divergence.
const PINNED: [(&str, &str, &str, usize, &str); 40] = [
    (
        "w_from_assignment",
        "rf-increase",
        "outcome",
        3,
        "Confirm { node: n1 }",
    ),
    (
        "learner_counts",
        "join-and-move",
        "refusal",
        3,
        "Confirm { node: n1 }",
    ),
    (
        "swap_before_admission",
        "join-and-move",
        "refusal",
        1,
        "Swap { target: n4, leaving: n2 }",
    ),
    (
        "remove_before_boundary",
        "join-and-move",
        "refusal",
        7,
        "RemoveLeaving",
    ),
    (
        "recovery_keeps_move",
        "recovery-during-move",
        "state",
        1,
        "OpenRecovery { zombie: true }",
    ),
    (
        "handoff_without_barrier",
        "handoff",
        "state",
        0,
        "CloseAdmission { to: n2 }",
    ),
    (
        "no_seal_fencing",
        "zombie-recovery",
        "outcome",
        2,
        "Replicate { from: n1, to: n2 }",
    ),
    (
        "small_seal_quorum",
        "zombie-recovery",
        "resume",
        2,
        "(resume from the persisted record)",
    ),
    (
        "promote_without_catchup",
        "rf-increase",
        "refusal",
        4,
        "OwnerSwitch",
    ),
    (
        "rejoin_counts_early",
        "restart-rejoin",
        "state",
        3,
        "Restart { node: n2, fresh_disk: false }",
    ),
    (
        "storage_identity_ignored",
        "fresh-disk-zombie",
        "state",
        1,
        "Restart { node: n1, fresh_disk: true }",
    ),
    (
        "seal_with_new_w",
        "rf-increase",
        "resume",
        7,
        "(resume from the persisted record)",
    ),
    (
        "covers_by_length",
        "lost-follower-replaced",
        "refusal",
        12,
        "Rejoin { node: n1 }",
    ),
    (
        "adopt_w_before_catchup",
        "rf-increase",
        "refusal",
        4,
        "OwnerSwitch",
    ),
    (
        "no_swap_back",
        "target-lost-after-swap",
        "outcome",
        4,
        "SwapBack",
    ),
    (
        "receipts_skip_suspended",
        "suspended-during-recovery",
        "outcome",
        8,
        "ActivateRecovery { candidate: n2 }",
    ),
    (
        "restart_counts_own_suspension",
        "crashes-rf3",
        "outcome",
        3,
        "Restart { node: n2, fresh_disk: false }",
    ),
    (
        "no_retry_after_cancel",
        "retry-after-recovery",
        "state",
        1,
        "OpenRecovery { zombie: true }",
    ),
    (
        "no_replacement",
        "lost-follower-replaced",
        "state",
        1,
        "AddLearner { target: n4 }",
    ),
    (
        "learner_keeps_old_epoch",
        "learner-after-two-recoveries",
        "state",
        0,
        "AddLearner { target: n4 }",
    ),
    (
        "stale_ack_counts",
        "suspended-during-recovery-net",
        "state",
        6,
        "Deliver { Ack n2#0 -> n1 e1 @1 m1@e1 }",
    ),
    (
        "duplicate_append_applies_twice",
        "handoff-net",
        "state",
        4,
        "Deliver { Append n1 -> n2 e1 @1 m1@e1 (prev -) }",
    ),
    (
        "refusal_ignored",
        "handoff-net",
        "state",
        7,
        "Deliver { Refuse -> n1 e2 }",
    ),
    (
        "stale_progress_admits",
        "disk-lost-replaced-net",
        "refusal",
        15,
        "RemoveLeaving",
    ),
    (
        "activation_forgets_receipts",
        "target-becomes-owner-net",
        "state",
        5,
        "ActivateRecovery { candidate: n1 }",
    ),
    (
        "swap_back_of_owner",
        "recovery-during-move-net-small",
        "refusal",
        13,
        "SwapBack",
    ),
    (
        "report_window_ignores_refusal",
        "target-becomes-owner-net",
        "refusal",
        10,
        "ReportProgress { from: n1, of: n2 }",
    ),
    (
        "truncate_before_confirm",
        "retention-faults",
        "refusal",
        1,
        "Truncate { node: n1 }",
    ),
    (
        "checkpoint_overwrites_newer",
        "retention",
        "refusal",
        4,
        "InstallCheckpoint { from: n1, to: n2 }",
    ),
    (
        "checkpoint_without_epoch_tag",
        "retention-faults",
        "outcome",
        11,
        "InstallCheckpoint { from: n2, to: n1 }",
    ),
    (
        "retry_without_producer_id",
        "publish-retry",
        "state",
        1,
        "RetryPublish { node: n1 }",
    ),
    (
        "old_owner_serves_after_commit",
        "handoff",
        "state",
        2,
        "CommitHandoff",
    ),
    (
        "ask_updates_route",
        "client-handoff",
        "state",
        4,
        "AnswerClient { client: c1 }",
    ),
    (
        "no_hop_limit",
        "client-handoff",
        "state",
        4,
        "AnswerClient { client: c1 }",
    ),
    (
        "ack_before_confirm",
        "client-recovery",
        "refusal",
        2,
        "AckClient { client: c1 }",
    ),
    (
        "replay_accepts_gap",
        "retention",
        "refusal",
        5,
        "Replicate { from: n1, to: n3 }",
    ),
    (
        "settle_acked_before_confirm",
        "settle-recovery",
        "state",
        3,
        "Settle { node: n1 }",
    ),
    (
        "handoff_keeps_stale_tail",
        "zombie-handed-back",
        "state",
        10,
        "ActivateOwner",
    ),
    (
        "recovery_trusts_last_tag",
        "three-recoveries",
        "state",
        17,
        "InstallRecovered { node: n1 }",
    ),
    (
        "owner_ignores_readmission",
        "readmitted-silent-net",
        "state",
        6,
        "NoticeReadmission { node: n1 }",
    ),
];

#[test]
fn every_implementation_mutant_diverges_from_the_correct_model() {
    assert_eq!(Mutant::ALL.len(), PINNED.len(), "every mutant is pinned");
    let mut missed = Vec::new();
    for (m, (name, config, kind, step, action)) in Mutant::ALL.into_iter().zip(PINNED) {
        assert_eq!(m.name(), name, "pinned in Mutant::ALL order");
        match catches(m) {
            Some(c) => {
                println!(
                    "{m}: {} step {} ({}): {}",
                    c.config, c.step, c.kind, c.summary
                );
                assert_eq!(
                    (
                        c.config.as_str(),
                        c.kind.to_string().as_str(),
                        c.step,
                        c.action.as_str()
                    ),
                    (config, kind, step, action),
                    "{m}: config, kind, step, action"
                );
            }
            None => missed.push(m),
        }
    }
    assert!(missed.is_empty(), "mutants conformance misses: {missed:?}");
}
