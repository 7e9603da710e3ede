//! Random walks of a cluster with a client of the queue: a refused action
//! never changes anything, a request never follows more answers than its
//! hop limit, an ASK never changes the client's cache and a MOVED never
//! moves it back, and (without lost disks) every message acknowledged to
//! the client is held by the owner serving at the record's epoch.

use livemove_impl::routing::{ClientReply, Redirect};
use livemove_impl::{Cluster, ClusterConfig, ClusterError, Entry, NodeId, Op, Outcome, ProducerId};

const P1: ProducerId = ProducerId(1);
use proptest::prelude::*;

const HOPS_MAX: u8 = 2;

#[derive(Debug, Clone, Copy)]
enum Action {
    ClientPublish,
    ClientRetry,
    AnswerClient,
    AckClient,
    ClientTimeout,
    Replicate(u8, u8),
    Confirm(u8),
    CloseAdmission(u8),
    ReportFinalBoundary,
    CommitHandoff,
    ActivateOwner,
    CancelHandoff,
    Crash(u8),
    Restart(u8),
    OpenRecovery,
    Seal(u8),
    InstallRecovered(u8),
    ActivateRecovery(u8),
}

/// Weighted decoding: the client and the serving path dominate, handoff
/// steps are common, faults rare.
fn decode(c: &[u8; 3]) -> Action {
    let (x, y) = (c[1], c[2]);
    match c[0] % 40 {
        0..=2 => Action::ClientPublish,
        3 => Action::ClientRetry,
        4..=9 => Action::AnswerClient,
        10..=11 => Action::AckClient,
        12 => Action::ClientTimeout,
        13..=19 => Action::Replicate(x, y),
        20..=23 => Action::Confirm(x),
        24 => Action::CloseAdmission(x),
        25 => Action::ReportFinalBoundary,
        26 => Action::CommitHandoff,
        27 => Action::ActivateOwner,
        28 => Action::CancelHandoff,
        29 => Action::Crash(x),
        30 => Action::Restart(x),
        31 => Action::OpenRecovery,
        32..=34 => Action::Seal(x),
        35..=37 => Action::InstallRecovered(x),
        _ => Action::ActivateRecovery(x),
    }
}

fn n(i: u8) -> NodeId {
    NodeId(i % 3 + 1)
}

fn apply(c: &mut Cluster, a: Action) -> Result<Outcome, ClusterError> {
    match a {
        Action::ClientPublish => c.client_publish(P1),
        Action::ClientRetry => c.client_retry(P1),
        Action::AnswerClient => c.answer_client(P1),
        Action::AckClient => c.ack_client(P1),
        Action::ClientTimeout => c.client_timeout(P1),
        Action::Replicate(x, y) => c.replicate(n(x), n(y)),
        Action::Confirm(x) => c.confirm(n(x)),
        Action::CloseAdmission(x) => c.close_admission(n(x)),
        Action::ReportFinalBoundary => c.report_final_boundary(),
        Action::CommitHandoff => c.commit_handoff(),
        Action::ActivateOwner => c.activate_owner(),
        Action::CancelHandoff => c.cancel_handoff(),
        Action::Crash(x) => c.crash(n(x)),
        Action::Restart(x) => c.restart(n(x), false),
        Action::OpenRecovery => c.open_recovery(),
        Action::Seal(x) => c.seal(n(x)),
        Action::InstallRecovered(x) => c.install_recovered(n(x)),
        Action::ActivateRecovery(x) => c.activate_recovery(n(x)),
    }
}

fn holds(entries: &[Entry], key: u64) -> bool {
    entries
        .iter()
        .any(|e| matches!(e.op, Op::Put { key: k, .. } if k == key))
}

fn walk(acts: &[Action]) -> Result<(), String> {
    let mut c = Cluster::new(ClusterConfig::atomic(3, 3)).with_client(HOPS_MAX);
    for (i, a) in acts.iter().enumerate() {
        let before = c.snapshot();
        let route_before = c.client(P1).unwrap().route().unwrap();
        let out = match apply(&mut c, *a) {
            Err(e) => {
                if c.snapshot() != before {
                    return Err(format!(
                        "step {i} {a:?} refused ({e}) but changed the cluster"
                    ));
                }
                continue;
            }
            Ok(out) => out,
        };
        let cl = c.client(P1).unwrap();
        let route = cl.route().unwrap();
        if route.epoch < route_before.epoch {
            return Err(format!(
                "step {i} {a:?}: route moved back {route_before:?} -> {route:?}"
            ));
        }
        if let Outcome::ClientRedirected {
            reply: ClientReply::Redirect(Redirect::Ask { .. }),
            ..
        } = out
        {
            if route != route_before {
                return Err(format!("step {i}: an ASK changed the route"));
            }
        }
        if let Some(r) = cl.request() {
            if r.hops() > HOPS_MAX {
                return Err(format!("step {i}: {} hops past the limit", r.hops()));
            }
        }
        let r = c.record();
        if let Some(owner) = c.nodes().iter().find(|nd| {
            nd.serving()
                .is_some_and(|s| s.epoch() == r.epoch && s.me() == r.owner)
        }) {
            for k in cl.acked() {
                if !holds(owner.replica().entries(), *k) {
                    return Err(format!(
                        "after step {i} {a:?}: serving owner {} lacks acknowledged key {k}",
                        owner.id()
                    ));
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn a_client_through_handoffs_and_recoveries(chunks in proptest::collection::vec(any::<[u8; 3]>(), 0..160)) {
        let acts: Vec<Action> = chunks.iter().map(decode).collect();
        if let Err(e) = walk(&acts) {
            prop_assert!(false, "{e}\nactions: {acts:?}");
        }
    }
}
