//! Consumer settles and replay gaps (note 2: "how are deletions
//! synchronized?", "log gap detected; cannot skip"): a settle is a log
//! entry under the confirm rule, carried by recovery and by checkpoints; a
//! copy that lacks reclaimed increments takes a checkpoint, never the
//! increment after the gap.

use livemove_model::properties::{no_gap_applied, settled_never_redelivered};
use livemove_model::types::{Entry, Log};
use livemove_model::{Action, Cfg, MoveModel, Mutant};

mod common;
use common::run;

use Action::*;

fn model(cfg: &str, mutant: Option<Mutant>) -> MoveModel {
    MoveModel::new(Cfg::named(cfg).with_mutant(mutant))
}

fn log_of(entries: &[Entry]) -> Log {
    let mut l = Log::default();
    entries.iter().for_each(|e| l.push(*e));
    l
}

/// n1 publishes m1 and confirms it on n2; the consumer was delivered m1.
const CONFIRMED: [Action; 3] = [
    Publish { node: 0 },
    Replicate { from: 0, to: 1 },
    Confirm { node: 0 },
];

/// A zombie's recovery that activates n2 at epoch 2 (n1 still believes it
/// serves at epoch 1).
const RECOVERED_ON_N2: [Action; 6] = [
    OpenRecovery { zombie: true },
    Seal { node: 1 },
    Seal { node: 2 },
    InstallRecovered { node: 1 },
    InstallRecovered { node: 2 },
    ActivateRecovery { candidate: 1 },
];

#[test]
fn a_settle_is_confirmed_like_a_publish_and_then_told() {
    let m = model("settle-recovery", None);
    let mut path = CONFIRMED.to_vec();
    path.push(Settle { node: 0 });
    let states = run(&m, &path);
    let s = *states.last().expect("a path");
    assert_eq!(
        s.nodes[0].log,
        log_of(&[Entry::new(1, 1), Entry::settle(1, 1)])
    );
    assert!(!s.is_settled(1), "not told before the settle is confirmed");
    assert_eq!(m.delivered(&s, 0), None, "the owner stops delivering m1");
    // Only one copy holds the settle: no confirm yet.
    assert!(m.apply(&s, Confirm { node: 0 }).is_err());
    let t = m
        .apply(&s, Replicate { from: 0, to: 1 })
        .expect("replicates");
    let u = m.apply(&t, Confirm { node: 0 }).expect("confirms");
    assert!(u.is_settled(1), "told once the settle is confirmed");
    // Nothing left to settle.
    assert!(m.apply(&u, Settle { node: 0 }).is_err());
}

#[test]
fn nothing_unconfirmed_is_delivered_or_settled() {
    let m = model("settle-recovery", None);
    let s = *run(&m, &[Publish { node: 0 }]).last().expect("a path");
    assert_eq!(m.delivered(&s, 0), None);
    assert_eq!(
        m.apply(&s, Settle { node: 0 }).map(|_| ()).unwrap_err().0,
        "a delivered message to settle"
    );
}

/// The settle reaches a recovery's seals and is confirmed by the recovered
/// tail: the new owner holds it and does not deliver m1 again.
#[test]
fn a_settle_is_kept_by_the_recovery_that_confirms_it() {
    let m = model("settle-recovery", None);
    let mut path = CONFIRMED.to_vec();
    path.push(Settle { node: 0 });
    path.push(Replicate { from: 0, to: 1 });
    path.extend(RECOVERED_ON_N2);
    let s = *run(&m, &path).last().expect("a path");
    assert!(s.is_settled(1), "the recovered tail confirms the settle");
    assert_eq!(s.current_owner(), Some(1));
    assert_eq!(m.delivered(&s, 1), None, "n2 does not deliver m1 again");
    assert!(settled_never_redelivered(&m, &s));
}

/// `settle_acked_before_confirm`: the zombie n1, deposed by a recovery it
/// has not heard of, takes the consumer's settle and tells it at once; the
/// settle is on no other copy, and n2 delivers m1 again (10 steps).
#[test]
fn a_settle_told_before_its_confirm_is_undone_by_a_recovery() {
    let mut path = CONFIRMED.to_vec();
    path.extend(RECOVERED_ON_N2);
    path.push(Settle { node: 0 });
    let bad = model("settle-recovery", Some(Mutant::SettleAckedBeforeConfirm));
    let s = *run(&bad, &path).last().expect("a path");
    assert!(s.is_settled(1));
    assert_eq!(bad.delivered(&s, 1), Some(1), "n2 delivers m1 again");
    assert!(!settled_never_redelivered(&bad, &s));
    // The correct protocol takes the same steps and tells nothing: the
    // zombie's settle can never be confirmed.
    let good = model("settle-recovery", None);
    let s = *run(&good, &path).last().expect("a path");
    assert!(!s.is_settled(1));
    assert!(settled_never_redelivered(&good, &s));
}

/// Note 2's "12 deletes y": the owner settles m1 and checkpoints past the
/// settle; a learner that installs the checkpoint holds the settle as part
/// of the folded state, and an older checkpoint cannot be installed over it.
#[test]
fn a_checkpoint_carries_a_settle_to_a_learner() {
    let m = model("settle-retention", None);
    let path = [
        Publish { node: 0 },
        Replicate { from: 0, to: 1 },
        Confirm { node: 0 },
        Settle { node: 0 },
        Replicate { from: 0, to: 1 },
        Confirm { node: 0 },
        Truncate { node: 0 },
        AddLearner { target: 3 },
        InstallCheckpoint { from: 0, to: 3 },
    ];
    let s = *run(&m, &path).last().expect("a path");
    let learner = &s.nodes[3];
    assert_eq!(learner.base, 2);
    assert_eq!(
        learner.log,
        log_of(&[Entry::new(1, 1), Entry::settle(1, 1)])
    );
    assert_eq!(
        m.apply(&s, InstallCheckpoint { from: 0, to: 3 })
            .map(|_| ())
            .unwrap_err()
            .0,
        "the receiver lacks the checkpoint's entry"
    );
}

/// `replay_accepts_gap`, note 2's `replay(13, ...)` at position 11: the
/// owner reclaimed m1 below its checkpoint, and n3, which lacks m1, takes
/// m2 at position 2 with position 1 empty (6 steps). The correct protocol
/// refuses the append and sends the checkpoint first.
#[test]
fn a_copy_past_reclaimed_increments_takes_a_checkpoint_not_the_next_increment() {
    let path = [
        Publish { node: 0 },
        Publish { node: 0 },
        Replicate { from: 0, to: 1 },
        Confirm { node: 0 },
        Truncate { node: 0 },
    ];
    let good = model("retention", None);
    let s = *run(&good, &path).last().expect("a path");
    assert_eq!(
        good.apply(&s, Replicate { from: 0, to: 2 })
            .map(|_| ())
            .unwrap_err()
            .0,
        "the increment was reclaimed: a checkpoint first"
    );
    let t = good
        .apply(&s, InstallCheckpoint { from: 0, to: 2 })
        .expect("the checkpoint first");
    let u = good
        .apply(&t, Replicate { from: 0, to: 2 })
        .expect("then the increment");
    assert_eq!(u.nodes[2].log, s.nodes[0].log);
    assert!(no_gap_applied(&good, &u));

    let bad = model("retention", Some(Mutant::ReplayAcceptsGap));
    let s = *run(&bad, &path).last().expect("a path");
    let t = bad
        .apply(&s, Replicate { from: 0, to: 2 })
        .expect("the mutant replays past the gap");
    assert_eq!(t.nodes[2].log, log_of(&[Entry(0), Entry::new(1, 2)]));
    assert_eq!(t.nodes[0].serving.acks.get(t.slot(2)), 2);
    assert!(!no_gap_applied(&bad, &t));
}

#[test]
fn settle_entries_print_and_parse() {
    assert_eq!(Entry::settle(2, 3).to_string(), "s3@e2");
    assert_eq!(Entry::settle(2, 3).settles(), Some(3));
    assert_eq!(Entry::settle(2, 3).publishes(), None);
    assert_eq!(Entry::new(2, 3).publishes(), Some(3));
    assert_eq!(Entry::new(2, 3).settles(), None);
    assert_eq!(Entry(0).to_string(), "-");
}
