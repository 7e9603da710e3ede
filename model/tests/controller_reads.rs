//! Findings 27 and 28: with messages in flight the controller's guarded
//! writes read only what the owner reported, not whether a process is up
//! at the moment of the write. Finding 27, the handoff's commit (found by
//! validating a runtime trace: seed 8 of `livemove sim --handoffs 1`, where
//! the owner's node committed from its acknowledgements 10 ms after the new
//! owner crashed); finding 28, a move's admission, swap and promotion,
//! which read the target's liveness the same way. Atomic delivery keeps
//! the liveness guards: there the controller reads the copy in the same
//! step.

use livemove_model::{Action, Cfg, MoveModel, State};

mod common;
use common::run;

use Action::*;

/// The first enabled action named `name` from `s`, and where it leads.
fn first(m: &MoveModel, s: &State, name: &str) -> (Action, State) {
    let mut out = Vec::new();
    m.successors(s, &mut out);
    out.into_iter()
        .find(|(a, _)| a.name() == name)
        .unwrap_or_else(|| panic!("no {name} enabled"))
}

/// n1 hands off to n2 with nothing published (F = 0), n2 crashes, and the
/// owner's report of n2 reaches the controller.
fn reported_with_new_owner_down(m: &MoveModel) -> State {
    let s = *run(
        m,
        &[
            CloseAdmission { to: 1 },
            ReportFinalBoundary,
            Crash { node: 1 },
        ],
    )
    .last()
    .unwrap();
    assert!(!s.nodes[1].alive);
    let (_, s) = first(m, &s, "ReportProgress");
    let (_, s) = first(m, &s, "Deliver");
    s
}

#[test]
fn with_messages_in_flight_a_handoff_commits_while_the_new_owner_is_down() {
    let m = MoveModel::new(Cfg::named("handoff-faults-net-small"));
    let s = reported_with_new_owner_down(&m);
    let t = m
        .apply(&s, CommitHandoff)
        .expect("the commit reads reports only");
    assert_eq!((t.record.epoch, t.record.owner.node()), (2, 1));
    // The activation waits for the new owner's process; this config has no
    // restart, and the committed owner that is down is a recovery's case.
    assert!(m.apply(&t, ActivateOwner).is_err());
    assert!(m.apply(&t, OpenRecovery { zombie: false }).is_ok());
}

#[test]
fn with_atomic_delivery_the_commit_still_needs_the_new_owner_up() {
    let m = MoveModel::new(Cfg::named("handoff-faults"));
    let s = *run(
        &m,
        &[
            CloseAdmission { to: 1 },
            ReportFinalBoundary,
            Crash { node: 1 },
        ],
    )
    .last()
    .unwrap();
    let e = m.apply(&s, CommitHandoff).expect_err("refused");
    assert!(e.to_string().contains("new owner alive"), "{e}");
}

/// n4 joins with nothing published (it covers the confirmed tail 0), the
/// owner's report of it reaches the controller, and n4 crashes.
fn learner_reported_then_down(m: &MoveModel) -> State {
    let s = *run(m, &[AddLearner { target: 3 }]).last().unwrap();
    let (_, s) = first(m, &s, "ReportProgress");
    let (_, s) = first(m, &s, "Deliver");
    m.apply(&s, Crash { node: 3 }).expect("n4 crashes")
}

#[test]
fn with_messages_in_flight_a_move_admits_and_swaps_a_target_that_is_down() {
    let m = MoveModel::new(Cfg::named("target-lost-after-swap-net-small"));
    let s = learner_reported_then_down(&m);
    assert!(!s.nodes[3].alive);
    let t = m
        .apply(&s, AdmitLearner { target: 3 })
        .expect("the admission reads reports only");
    let u = m
        .apply(
            &t,
            Swap {
                target: 3,
                leaving: 2,
            },
        )
        .expect("so does the swap");
    assert!(u.record.followers.contains(u.slot(3)));
    // The owner adopts the new counted set; the target that is down is then
    // the swap back's case.
    let v = m.apply(&u, OwnerSwitch).expect("the owner adopts");
    assert!(
        m.apply(&v, SwapBack).is_ok(),
        "the leaving copy is swapped back"
    );
}

#[test]
fn with_atomic_delivery_the_admission_still_needs_the_target_up() {
    let m = MoveModel::new(Cfg::named("target-lost-after-swap"));
    let s = *run(&m, &[AddLearner { target: 3 }, Crash { node: 3 }])
        .last()
        .unwrap();
    let e = m
        .apply(&s, AdmitLearner { target: 3 })
        .expect_err("refused");
    assert!(e.to_string().contains("target alive"), "{e}");
}
