//! Messages in flight: a copy's own knowledge of its suspension, in
//! lockstep with the model (findings 21 and 22). The controller re-admits
//! on the owner's report alone, so it may re-admit a copy that crashed
//! again; the copy marks its acknowledgements from what it knows, which
//! lags the record until it reads its re-admission (`NoticeRejoin`).
//! Every state on the way is also checked for negative conformance, so
//! `NoticeRejoin` is refused by the implementation exactly where the model
//! disables it.

mod common;
use common::{N1, N2};
use livemove_model::net::Msg;
use livemove_model::state::State;
use livemove_model::types::Slot;
use livemove_model::{Action, Cfg, MoveModel};

/// One step of a story: an action, or the delivery of the one message in
/// flight that matches a predicate (read from the model's state, so the
/// story need not spell out every field).
enum Step {
    Do(Action),
    Deliver(fn(&Msg) -> bool),
}

/// The stories' actions, resolved against the model on `config`.
fn resolve(config: &str, story: &[Step]) -> Vec<Action> {
    let m = MoveModel::new(Cfg::named(config));
    let mut s: State = m.init();
    let mut out = Vec::new();
    for (i, st) in story.iter().enumerate() {
        let a = match st {
            Step::Do(a) => *a,
            Step::Deliver(pred) => {
                let v: Vec<Msg> = s.net.iter().filter(pred).collect();
                assert_eq!(v.len(), 1, "step {i}: expected one match in flight: {v:?}");
                Action::Deliver { msg: v[0] }
            }
        };
        s = m
            .apply(&s, a)
            .unwrap_or_else(|e| panic!("the model refuses step {i} ({a}): {e:?}"));
        out.push(a);
    }
    out
}

const N2_SLOT: Slot = Slot(N2 * 2);

fn progress(x: &Msg) -> bool {
    matches!(x, Msg::Progress { .. })
}
fn append(x: &Msg) -> bool {
    matches!(x, Msg::Append { .. })
}
fn suspend(x: &Msg) -> bool {
    matches!(x, Msg::Suspend { .. })
}
fn marked_suspended(x: &Msg) -> bool {
    matches!(
        x,
        Msg::Ack {
            admitted: false,
            ..
        }
    )
}
fn marked_admitted(x: &Msg) -> bool {
    matches!(x, Msg::Ack { admitted: true, .. })
}

/// n1 publishes and ships to n2, which crashes and restarts on its disk;
/// the owner reports it and the controller re-admits it; then the append
/// reaches n2, which has not read the record yet: it marks its
/// acknowledgement suspended (a mark read from the record would say
/// admitted, and the message in flight would differ), and that mark mutes
/// it at n1 (nine steps).
fn late_mark() -> Vec<Step> {
    use Action::*;
    vec![
        Step::Do(Publish { node: N1 }),
        Step::Do(Replicate { from: N1, to: N2 }),
        Step::Do(Crash { node: N2 }),
        Step::Do(Restart {
            node: N2,
            fresh_disk: false,
        }),
        Step::Do(ReportProgress { from: N1, of: N2 }),
        Step::Deliver(progress),
        Step::Do(Rejoin { node: N2 }),
        Step::Deliver(append),
        Step::Deliver(marked_suspended),
    ]
}

#[test]
fn a_late_suspended_mark_mutes_the_readmitted_copy_until_its_next_admitted_acknowledgement() {
    use Action::*;
    let mut story = late_mark();
    story.extend([
        Step::Do(NoticeRejoin { node: N2 }),
        // The restart's suspension notice, late: n1 forgets n2's progress.
        Step::Deliver(suspend),
        Step::Do(Replicate { from: N1, to: N2 }),
        Step::Deliver(append),
        Step::Deliver(marked_admitted),
        Step::Do(Confirm { node: N1 }),
    ]);
    let config = "suspended-during-recovery-net";
    let steps = resolve(config, &story);
    let (m, _) = common::replay_in_lockstep(config, &steps);
    let states: Vec<State> = steps
        .iter()
        .scan(m.init(), |s, a| {
            *s = m.apply(s, *a).expect("replayed above");
            Some(*s)
        })
        .collect();
    let muted = |i: usize| {
        states[i].nodes[usize::from(N1)]
            .serving
            .muted
            .contains(N2_SLOT)
    };
    assert!(
        states[6].record.suspended.is_empty(),
        "re-admitted at step 6"
    );
    assert!(!muted(7) && muted(8), "the late mark mutes n2 again");
    assert!(states[8].nodes[usize::from(N2)].suspended);
    assert!(!states[9].nodes[usize::from(N2)].suspended);
    assert!(!muted(13), "the admitted acknowledgement unmutes n2");
    assert_eq!(states[14].nodes[usize::from(N1)].serving.confirmed, 1);
}

/// Finding 35: the same late mark, and the owner reads the re-admission
/// from the record instead of waiting for an admitted acknowledgement: n2
/// holds the whole log and is sent nothing, yet counts again.
#[test]
fn the_owner_reads_the_readmission_the_late_mark_hid() {
    use Action::*;
    let mut story = late_mark();
    story.extend([
        Step::Do(NoticeReadmission { node: N1 }),
        Step::Do(Confirm { node: N1 }),
    ]);
    let config = "suspended-during-recovery-net";
    let steps = resolve(config, &story);
    let (_, s) = common::replay_in_lockstep(config, &steps);
    let n1 = &s.nodes[usize::from(N1)].serving;
    assert!(!n1.muted.contains(N2_SLOT));
    assert_eq!(n1.confirmed, 1);
    assert!(
        s.nodes[usize::from(N2)].suspended,
        "the copy itself has not read the record yet"
    );
}

#[test]
fn the_controller_readmits_a_reported_copy_that_crashed_again() {
    use Action::*;
    let story = [
        Step::Do(Crash { node: N2 }),
        Step::Do(Restart {
            node: N2,
            fresh_disk: false,
        }),
        Step::Do(ReportProgress { from: N1, of: N2 }),
        Step::Deliver(progress),
        Step::Do(Crash { node: N2 }),
        Step::Do(Rejoin { node: N2 }),
    ];
    let config = "suspended-during-recovery-net";
    let steps = resolve(config, &story);
    let (_, s) = common::replay_in_lockstep(config, &steps);
    let n2 = &s.nodes[usize::from(N2)];
    assert!(!n2.alive && !n2.suspended);
    assert!(s.record.suspended.is_empty());
}
