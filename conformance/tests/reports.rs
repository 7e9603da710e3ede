//! Progress reports to the controller in lockstep: the owner's report,
//! its delivery, the controller's knowledge (part of the abstraction) and
//! its refusal of a report from an older epoch.

mod common;
use common::{N1, N2};
use livemove_conformance::check::{self, Negative};
use livemove_conformance::driver;
use livemove_conformance::env::relaxed;
use livemove_model::net::Msg;
use livemove_model::types::Slot;
use livemove_model::{Action, Cfg, MoveModel};

/// n1's report on n2 during a handoff to n2, before anything is published.
const REPORT: Msg = Msg::Progress {
    from: Slot(N1 * 2),
    epoch: 1,
    of: Slot(N2 * 2),
    pos: 0,
    confirmed: 0,
};

/// A handoff to n2 whose report is duplicated; the second copy arrives
/// after the commit, the controller refuses it and the refusal stops n1.
fn stale_report_story() -> Vec<Action> {
    use Action::*;
    vec![
        CloseAdmission { to: N2 },
        ReportFinalBoundary,
        ReportProgress { from: N1, of: N2 },
        Duplicate { msg: REPORT },
        Deliver { msg: REPORT },
        CommitHandoff,
        Deliver { msg: REPORT },
        Deliver {
            msg: Msg::Refuse { to: N1, epoch: 2 },
        },
    ]
}

#[test]
fn a_report_from_an_older_epoch_is_refused_and_stops_the_stale_owner_in_lockstep() {
    let steps = stale_report_story();
    let (m, s) = common::replay_in_lockstep("handoff-net", &steps);
    assert!(!s.nodes[usize::from(N1)].serving.active, "n1 stopped");
    let before_refusal = steps[..7]
        .iter()
        .fold(m.init(), |s, a| m.apply(&s, *a).unwrap());
    assert!(before_refusal
        .net
        .contains(Msg::Refuse { to: N1, epoch: 2 }));
    assert_eq!(
        before_refusal.known.epoch, 1,
        "the stale report was not taken"
    );
}

/// Drive `steps` on a fresh cluster in lockstep; the model, its state and
/// the cluster after them.
fn drive(
    config: &str,
    steps: &[Action],
) -> (
    MoveModel,
    livemove_model::state::State,
    livemove_impl::Cluster,
) {
    let m = MoveModel::new(Cfg::named(config));
    let mut c = driver::cluster_for(&m.cfg, None);
    let mut s = m.init();
    for a in steps {
        let t = m.apply(&s, *a).unwrap();
        check::edge(&m, *a, &t, &mut c).unwrap();
        s = t;
    }
    (m, s, c)
}

#[test]
fn a_second_report_while_one_is_in_flight_is_refused_by_both_sides() {
    use Action::*;
    let steps = [
        CloseAdmission { to: N2 },
        ReportProgress { from: N1, of: N2 },
    ];
    let (m, s, mut c) = drive("handoff-net", &steps);
    let again = ReportProgress { from: N1, of: N2 };
    let g = m.apply(&s, again).expect_err("one report outstanding");
    assert_eq!(g.0, "no report outstanding");
    let before = check::Before::of(&c);
    assert_eq!(
        check::disabled(&m, &relaxed(&m), &s, again, g.0, &mut c, &before),
        Negative::Refused
    );
    assert!(matches!(
        driver::step(&mut c, again),
        Err(livemove_impl::ClusterError::ReportOutstanding { .. })
    ));
}

/// The controller's knowledge is part of the abstraction: a cluster whose
/// controller has not taken the report disagrees with a model that has,
/// on that field alone.
#[test]
fn a_difference_in_what_the_controller_knows_is_a_divergence() {
    use Action::*;
    let steps = [
        CloseAdmission { to: N2 },
        ReportProgress { from: N1, of: N2 },
    ];
    let (m, s, c) = drive("handoff-net", &steps);
    let deliver = Deliver { msg: REPORT };
    let mut t = m.apply(&s, deliver).unwrap();
    assert_eq!(t.known.epoch, 1);
    // The model took the report; the cluster has it still in flight.
    t.net = s.net;
    let got = Ok(livemove_impl::Outcome::Crashed);
    let e = check::state::agrees(&m, &c, &t, check::Kind::State, &got)
        .expect_err("the knowledge differs");
    let paths: Vec<&str> = e.changes.iter().map(|c| c.path.as_str()).collect();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p.starts_with("controller_knows")),
        "{paths:?}"
    );
}
