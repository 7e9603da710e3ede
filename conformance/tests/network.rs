//! Messages in flight: the implementation's router driven one delivery,
//! loss and duplicate at a time in lockstep with the model's network.
//!
//! The late acknowledgement is the case the network exists for: with
//! atomic delivery no reachable state holds an acknowledgement sent before
//! a restart and delivered after the owner heard of the suspension, so the
//! owner's filter on it could be removed and conformance would not notice.

mod common;
use common::{N1, N2};
use livemove_conformance::env::relaxed;
use livemove_conformance::lockstep;
use livemove_conformance::replay::{negatives, not_in_flight};
use livemove_conformance::report::Options;
use livemove_conformance::{check, driver};
use livemove_model::net::Msg;
use livemove_model::types::{Entry, Slot};
use livemove_model::{Action, Cfg, MoveModel, Mutant};

const APPEND_M1: Msg = Msg::Append {
    from: N1,
    to: Slot(N2 * 2),
    epoch: 1,
    pos: 1,
    prev: Entry(0),
    entry: Entry(1 << 4 | 1),
};

/// The acknowledgement n2 sends, in incarnation `inc`, for m1.
fn ack_m1(inc: u8, admitted: bool) -> Msg {
    Msg::Ack {
        to: N1,
        epoch: 1,
        from: Slot(N2 * 2),
        inc,
        pos: 1,
        entry: Entry(1 << 4 | 1),
        admitted,
    }
}

/// n2 acknowledges m1, the acknowledgement is held in the network, n2
/// restarts and its suspension notice reaches n1 first.
fn late_ack_story() -> Vec<Action> {
    use Action::*;
    vec![
        Publish { node: N1 },
        Replicate { from: N1, to: N2 },
        Deliver { msg: APPEND_M1 },
        Crash { node: N2 },
        Restart {
            node: N2,
            fresh_disk: false,
        },
        Deliver {
            msg: Msg::Suspend {
                to: N1,
                from: Slot(N2 * 2),
                inc: 1,
            },
        },
        Deliver {
            msg: ack_m1(0, true),
        },
    ]
}

#[test]
fn an_acknowledgement_sent_before_a_restart_is_not_counted_after_the_suspension() {
    let (m, s) = common::replay_in_lockstep("suspended-during-recovery-net", &late_ack_story());
    assert!(
        m.apply(&s, Action::Confirm { node: N1 }).is_err(),
        "the stale acknowledgement must not confirm m1"
    );
}

/// The suspended-follower filter removed (`stale_ack_counts`): the first
/// divergence is the late acknowledgement itself, on step 6 (seven steps),
/// the same length as the model's counterexample.
#[test]
fn the_owner_without_the_suspended_follower_filter_diverges_on_the_late_acknowledgement() {
    let opts = Options {
        stop_at_first: true,
        ..Options::default()
    };
    let cfg = Cfg::named("suspended-during-recovery-net");
    let rep = lockstep::run(&cfg, Some(Mutant::StaleAckCounts), &opts);
    let d = rep.divergences.first().expect("stale_ack_counts diverges");
    assert_eq!(d.kind, check::Kind::State);
    assert_eq!(d.step, 6, "{}", d.text());
    assert_eq!(d.steps, late_ack_story(), "{}", d.text());
    let paths: Vec<&str> = d.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        ["nodes[n1].serving.acks.n2", "nodes[n1].serving.muted"],
        "{}",
        d.text()
    );
}

#[test]
fn a_message_no_longer_in_flight_is_refused_with_a_typed_error() {
    let m = MoveModel::new(Cfg::named("handoff-net"));
    let rel = relaxed(&m);
    let steps = [
        Action::Publish { node: N1 },
        Action::Replicate { from: N1, to: N2 },
        Action::Deliver { msg: APPEND_M1 },
    ];
    let mut c = driver::cluster_for(&m.cfg, None);
    let mut s = m.init();
    let mut parent = s;
    for a in steps {
        let t = m.apply(&s, a).unwrap();
        check::edge(&m, a, &t, &mut c).unwrap();
        parent = s;
        s = t;
    }
    let gone = not_in_flight(&s, &parent);
    assert_eq!(
        gone,
        [
            Action::Deliver { msg: APPEND_M1 },
            Action::Drop { msg: APPEND_M1 },
            Action::Duplicate { msg: APPEND_M1 },
        ]
    );
    for a in &gone {
        let before = c.clone();
        let e = driver::step(&mut c, *a).expect_err("not in flight");
        assert!(
            matches!(
                e,
                livemove_impl::ClusterError::Net(livemove_impl::NetError::NotInFlight { .. })
            ),
            "{a}: {e}"
        );
        assert_eq!(c, before, "{a}: a refusal changes nothing");
    }
    let with = negatives(&m, &rel, &s, Some(&parent), &mut c).unwrap();
    let without = negatives(&m, &rel, &s, None, &mut c).unwrap();
    assert_eq!(with.negative_checks, without.negative_checks + 3);
}

#[test]
fn a_duplicated_append_is_recognised_in_lockstep() {
    use Action::*;
    let steps = [
        Publish { node: N1 },
        Replicate { from: N1, to: N2 },
        Duplicate { msg: APPEND_M1 },
        Deliver { msg: APPEND_M1 },
        Deliver { msg: APPEND_M1 },
        Deliver {
            msg: ack_m1(0, true),
        },
        Deliver {
            msg: ack_m1(0, true),
        },
        Confirm { node: N1 },
    ];
    let (_, s) = common::replay_in_lockstep("handoff-net", &steps);
    assert_eq!(s.nodes[usize::from(N2)].log.len, 1);
    assert!(s.net.iter().next().is_none(), "nothing left in flight");
}

/// A divergence with messages in flight is saved as a model trace file the
/// model's own reader accepts (the model's view, nothing added), and the
/// correct implementation replays it without diverging.
#[test]
fn a_divergence_with_messages_in_flight_saves_a_trace_the_model_replays() {
    let opts = Options {
        stop_at_first: true,
        ..Options::default()
    };
    let m = MoveModel::new(Cfg::named("handoff-net"));
    let rep = lockstep::run(&m.cfg, Some(Mutant::DuplicateAppendAppliesTwice), &opts);
    let d = rep.divergences.first().expect("the mutant diverges");
    assert_eq!(d.step, 4, "{}", d.text());
    let t = d.trace_file(&m);
    t.replay(std::path::Path::new("in memory"))
        .unwrap_or_else(|e| panic!("the model rejects the trace: {e}"));
    let rel = relaxed(&m);
    let n = livemove_conformance::replay::actions(&m, &rel, None, &d.steps, true)
        .unwrap_or_else(|e| panic!("the correct implementation diverges: {e:?}"));
    assert_eq!(n.steps, 5);
}
