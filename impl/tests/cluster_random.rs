//! Random action sequences against the in-memory cluster: a refused action
//! never changes anything, nothing panics under any mutant, and under the
//! correct protocol there is one confirmed history that every serving
//! owner at the record's epoch holds, settles the consumer was told of
//! included.

use arbitrary::{Arbitrary, Unstructured};
use livemove_impl::{
    Cluster, ClusterConfig, ClusterError, Entry, Mutant, NodeId, Op, Outcome, Position,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Action {
    Publish(u8),
    Replicate(u8, u8),
    Confirm(u8),
    AddLearner(u8),
    AdmitLearner(u8),
    Swap(u8, u8),
    OwnerSwitch,
    RemoveLeaving,
    CancelMove,
    AbortMove,
    SwapBack,
    PromoteLearner(u8),
    CloseAdmission(u8),
    ReportFinalBoundary,
    CommitHandoff,
    ActivateOwner,
    CancelHandoff,
    AbortHandoff,
    Crash(u8),
    Restart(u8, bool),
    Rejoin(u8),
    OpenRecovery,
    Seal(u8),
    InstallRecovered(u8),
    ActivateRecovery(u8),
    Settle(u8),
}

fn n(i: u8) -> NodeId {
    NodeId(i % 4 + 1)
}

fn apply(c: &mut Cluster, a: Action) -> Result<Outcome, ClusterError> {
    match a {
        Action::Publish(x) => c.publish(n(x)),
        Action::Replicate(x, y) => c.replicate(n(x), n(y)),
        Action::Confirm(x) => c.confirm(n(x)),
        Action::AddLearner(x) => c.add_learner(n(x)),
        Action::AdmitLearner(x) => c.admit_learner(n(x)),
        Action::Swap(x, y) => c.swap(n(x), n(y)),
        Action::OwnerSwitch => c.owner_switch(),
        Action::RemoveLeaving => c.remove_leaving(),
        Action::CancelMove => c.cancel_move(),
        Action::AbortMove => c.abort_move(),
        Action::SwapBack => c.swap_back(),
        Action::PromoteLearner(x) => c.promote_learner(n(x)),
        Action::CloseAdmission(x) => c.close_admission(n(x)),
        Action::ReportFinalBoundary => c.report_final_boundary(),
        Action::CommitHandoff => c.commit_handoff(),
        Action::ActivateOwner => c.activate_owner(),
        Action::CancelHandoff => c.cancel_handoff(),
        Action::AbortHandoff => c.abort_handoff(),
        Action::Crash(x) => c.crash(n(x)),
        Action::Restart(x, fresh) => c.restart(n(x), fresh),
        Action::Rejoin(x) => c.rejoin(n(x)),
        Action::OpenRecovery => c.open_recovery(),
        Action::Seal(x) => c.seal(n(x)),
        Action::InstallRecovered(x) => c.install_recovered(n(x)),
        Action::ActivateRecovery(x) => c.activate_recovery(n(x)),
        Action::Settle(x) => c.settle(n(x)),
    }
}

/// Every position some owner ever confirmed, with the entry it confirmed.
#[derive(Default)]
struct History {
    confirmed: BTreeMap<Position, Entry>,
    lost_disks: bool,
}

impl History {
    fn record_confirmed(&mut self, c: &Cluster, node: NodeId) -> Result<(), String> {
        let nd = c.node(node).unwrap();
        let tail = nd.serving().map_or(0, |s| s.confirmed_tail());
        for (i, e) in nd.replica().entries()[..tail as usize].iter().enumerate() {
            let pos = i as Position + 1;
            if let Some(prev) = self.confirmed.insert(pos, *e) {
                if prev != *e {
                    return Err(format!(
                        "two entries confirmed at {pos}: {prev:?} and {e:?}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_owner_holds(&self, c: &Cluster) -> Result<(), String> {
        if self.lost_disks {
            return Ok(()); // a lost disk may take a copy with it (DESIGN)
        }
        let r = c.record();
        let Some(owner) = c.nodes().iter().find(|nd| {
            nd.serving()
                .is_some_and(|s| s.epoch() == r.epoch && s.me() == r.owner)
        }) else {
            return Ok(());
        };
        let log = owner.replica().entries();
        // A settle the consumer was told of is in the owner's log: the
        // message is never delivered again.
        for key in c.settled() {
            if !log
                .iter()
                .any(|e| matches!(e.op, Op::Delete { key: k } if k == *key))
            {
                return Err(format!(
                    "serving owner {} lacks the settle of {key} the consumer was told of",
                    owner.id()
                ));
            }
        }
        for (pos, e) in &self.confirmed {
            if log.get(*pos as usize - 1) != Some(e) {
                return Err(format!(
                    "serving owner {} lacks confirmed {pos}: {e:?}",
                    owner.id()
                ));
            }
        }
        Ok(())
    }
}

/// Weighted decoding for deep walks: serving actions dominate, faults are rare.
fn weighted(c: &[u8; 8], shift: u8) -> Action {
    let (x, y, f) = (c[1], c[2], c[3] & 1 == 0);
    // Retries skip the faults (crash, restart, open_recovery) so that a walk
    // does not spend itself on them.
    let k = if shift == 0 {
        c[0] % 48
    } else {
        let k = c[0].wrapping_add(shift.wrapping_mul(7)) % 45;
        match k {
            38 => 40,
            39 => 42,
            41 => 43,
            k => k + 3 * u8::from(k >= 42),
        }
    };
    match k {
        0..=6 => Action::Publish(x),
        7 => Action::Settle(x),
        8..=19 => Action::Replicate(x, y),
        20..=25 => Action::Confirm(x),
        26 => Action::AddLearner(x),
        27 => Action::AdmitLearner(x),
        28 => Action::Swap(x, y),
        29 => Action::OwnerSwitch,
        30 => Action::RemoveLeaving,
        31 => Action::CancelMove,
        32 => Action::PromoteLearner(x),
        33 => Action::CloseAdmission(x),
        34 => Action::ReportFinalBoundary,
        35 => Action::CommitHandoff,
        36 => Action::ActivateOwner,
        37 => Action::CancelHandoff,
        38 => Action::Crash(x),
        39 => Action::Restart(x, f && c[4] & 3 == 0),
        40 => Action::Rejoin(x),
        41 => Action::OpenRecovery,
        42 | 43 => Action::Seal(x.wrapping_add(shift)),
        44 | 45 => Action::InstallRecovered(x.wrapping_add(shift)),
        _ => Action::ActivateRecovery(x.wrapping_add(shift)),
    }
}

/// A walk that retries other choices until one is enabled, so that traces
/// go deep (every refused try is still checked).
fn deep_actions(chunks: &[[u8; 8]], c: &mut Cluster) -> Vec<Vec<Action>> {
    let _ = c;
    chunks
        .iter()
        .map(|ch| (0..8).map(|shift| weighted(ch, shift)).collect())
        .collect()
}

fn actions(chunks: &[[u8; 8]]) -> Vec<Action> {
    chunks
        .iter()
        .filter_map(|c| Action::arbitrary(&mut Unstructured::new(c)).ok())
        .collect()
}

fn run(mutant: Option<Mutant>, acts: &[Action]) -> Result<(), String> {
    let tries: Vec<Vec<Action>> = acts.iter().map(|a| vec![*a]).collect();
    run_tries(mutant, &tries)
}

/// Run each step's tries in order until one is accepted.
fn run_tries(mutant: Option<Mutant>, steps: &[Vec<Action>]) -> Result<(), String> {
    let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
    if let Some(m) = mutant {
        c = c.with_mutant(m);
    }
    let mut h = History::default();
    for (i, tries) in steps.iter().enumerate() {
        for a in tries {
            let before = c.snapshot();
            match apply(&mut c, *a) {
                Err(e) => {
                    if c.snapshot() != before {
                        return Err(format!(
                            "step {i} {a:?} refused ({e}) but changed the cluster"
                        ));
                    }
                }
                Ok(out) => {
                    if let Action::Restart(_, true) = a {
                        h.lost_disks = true;
                    }
                    if mutant.is_none() {
                        match (a, out) {
                            (Action::Confirm(x), Outcome::Confirmed { .. }) => {
                                h.record_confirmed(&c, n(*x))?
                            }
                            (_, Outcome::Activated { owner, .. }) => {
                                h.record_confirmed(&c, owner)?
                            }
                            _ => {}
                        }
                        h.check_owner_holds(&c)
                            .map_err(|e| format!("after step {i} {a:?}: {e}"))?;
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn correct_protocol_keeps_one_confirmed_history(chunks in proptest::collection::vec(any::<[u8; 8]>(), 0..160)) {
        let acts = actions(&chunks);
        if let Err(e) = run(None, &acts) {
            prop_assert!(false, "{e}\nactions: {acts:?}");
        }
    }

    #[test]
    fn deep_walks_keep_one_confirmed_history(chunks in proptest::collection::vec(any::<[u8; 8]>(), 0..200)) {
        let mut scratch = Cluster::new(ClusterConfig::atomic(4, 3));
        let steps = deep_actions(&chunks, &mut scratch);
        if let Err(e) = run_tries(None, &steps) {
            let taken: Vec<&Action> = steps.iter().map(|t| &t[0]).collect();
            prop_assert!(false, "{e}\nfirst choices: {taken:?}");
        }
    }

    #[test]
    fn refused_actions_change_nothing_under_every_mutant(
        chunks in proptest::collection::vec(any::<[u8; 8]>(), 0..96),
        m in 0usize..Mutant::ALL.len(),
    ) {
        let acts = actions(&chunks);
        if let Err(e) = run(Some(Mutant::ALL[m]), &acts) {
            prop_assert!(false, "{e}\nactions: {acts:?}");
        }
    }
}

/// The snapshot serializes (a harness reads it as JSON).
#[test]
fn snapshot_serializes_to_json() {
    let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
    c.publish(NodeId(1)).unwrap();
    let json = serde_json::to_value(c.snapshot()).unwrap();
    assert_eq!(json["nodes"][0]["replica"]["log"][0]["epoch"], 1);
    assert_eq!(json["record"]["owner"]["node"], 1);
}
