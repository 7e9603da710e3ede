//! Resume agreement: the step a restarted controller computes from the
//! persisted record alone (`livemove_impl::store::resume::next_step`) is one
//! the model enables, or one that waits only on facts outside the record,
//! so a restarted controller never tries a write the store must refuse.
//!
//! Resume names a kind of step (`InstallRecovered`, `Swap{target}`, ...);
//! its candidates are the model actions of that kind on the copies the
//! record allows (for `Seal`, the eligible copies not yet sealed, for
//! example). The verdict in one state:
//!
//! - [`Resumed::Enabled`]: the model enables a candidate.
//! - [`Resumed::Waits`]: no candidate is enabled, and one is disabled only
//!   by a fact the controller observes and waits on ([`WAIT_GUARDS`]: a
//!   node down, a copy catching up, the owner not serving); or resume has
//!   no candidate and the model enables no continuation step either (only
//!   faults can change the state).
//! - [`Resumed::Idle`]: resume says nothing is in flight and the model
//!   enables no continuation step.
//!
//! Anything else is a mismatch: resume names a step the record itself
//! rules out (wrong phase, receipts or seals short), or says idle while the
//! model continues something.

use super::{Kind, Mismatch};
use crate::driver::to_model;
use livemove_impl::store::resume::{next_step, NextStep};
use livemove_impl::{Cluster, StorageId};
use livemove_model::state::State;
use livemove_model::{Action, MoveModel};

/// The model's guards that test facts outside the record: a controller
/// waits for them to change (by replication, a restart, a rejoin).
pub const WAIT_GUARDS: &[&str] = &[
    "node alive",
    "node sealed, alive",
    "candidate installed, alive",
    "target is the move's, on its disk",
    "target alive (read at the write, atomic delivery)",
    "learner covers the confirmed tail",
    "target covers the confirmed tail",
    "promoted copy covers the confirmed tail",
    "target durable at or beyond B",
    "leaving copy alive, covers the confirmed tail",
    "owner serving at the record's epoch",
    "owner not fenced",
    "in-flight work drained",
    "the closing owner reports",
    "the reporting owner still owns",
    "new owner an admitted follower on its disk",
    "new owner alive (read at the write, atomic delivery)",
    "new owner durable at F",
    "committed owner alive on its instance",
    "new owner holds F",
    "new owner not fenced",
    "a progress report at the record's epoch",
];

/// The verdict on resume in one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resumed {
    Enabled,
    Waits,
    Idle,
}

/// Whether `a` continues a move, a handoff or a recovery in flight (what
/// resume may name), as opposed to serving, faults, starting new work or
/// the operator's requests.
pub fn continues(a: Action) -> bool {
    matches!(
        a,
        Action::AdmitLearner { .. }
            | Action::Swap { .. }
            | Action::PromoteLearner { .. }
            | Action::OwnerSwitch
            | Action::RemoveLeaving
            | Action::AbortMove
            | Action::SwapBack
            | Action::ReportFinalBoundary
            | Action::CommitHandoff
            | Action::ActivateOwner
            | Action::AbortHandoff
            | Action::Seal { .. }
            | Action::InstallRecovered { .. }
            | Action::ActivateRecovery { .. }
    )
}

/// Check the step resume computes from `c`'s record against the model in
/// state `s`.
pub fn agrees(m: &MoveModel, s: &State, c: &Cluster) -> Result<Resumed, Mismatch> {
    let step = next_step(c.record());
    let continuing = || {
        m.actions(s)
            .filter(|a| continues(*a) && m.apply(s, *a).is_ok())
            .collect::<Vec<_>>()
    };
    let fail = |model: String| Mismatch {
        kind: Kind::Resume,
        model,
        implementation: format!("resume names {step:?}"),
        changes: Vec::new(),
    };
    if step == NextStep::Idle {
        let enabled = continuing();
        return match enabled.first() {
            None => Ok(Resumed::Idle),
            Some(a) => Err(fail(format!("enables {a} ({} in all)", enabled.len()))),
        };
    }
    let cands = candidates(m, c, &step);
    let mut guards = Vec::new();
    let mut waits = false;
    for &a in &cands {
        match m.apply(s, a) {
            Ok(_) => return Ok(Resumed::Enabled),
            Err(g) => {
                waits |= WAIT_GUARDS.contains(&g.0);
                guards.push(format!("{a}: `{}`", g.0));
            }
        }
    }
    if waits {
        return Ok(Resumed::Waits);
    }
    let enabled = continuing();
    if cands.is_empty() && enabled.is_empty() {
        return Ok(Resumed::Waits);
    }
    if cands.is_empty() {
        return Err(fail(format!(
            "resume has no candidate, the model enables {}",
            enabled[0]
        )));
    }
    Err(fail(format!(
        "disables every candidate: {}",
        guards.join("; ")
    )))
}

/// The model actions of the kind resume names, on the copies the record
/// allows.
fn candidates(m: &MoveModel, c: &Cluster, step: &NextStep) -> Vec<Action> {
    let r = c.record();
    let nodes = m.cfg.nodes;
    // A storage instance on its node's current disk, as a model node.
    let current = |s: &StorageId| {
        c.node(s.node)
            .ok()
            .filter(|n| n.replica().id() == *s)
            .map(|_| to_model(s.node))
    };
    let rec = r.recovery.as_ref();
    match *step {
        NextStep::Idle => Vec::new(),
        NextStep::Seal { .. } => r
            .eligible
            .iter()
            .filter(|s| rec.is_some_and(|p| !p.sealed.contains(s)))
            .filter_map(current)
            .map(|node| Action::Seal { node })
            .collect(),
        NextStep::InstallRecovered => rec
            .map(|p| {
                p.sealed
                    .iter()
                    .filter(|s| !p.installed.contains(s))
                    .filter_map(current)
                    .map(|node| Action::InstallRecovered { node })
                    .collect()
            })
            .unwrap_or_default(),
        NextStep::ActivateRecovery => rec
            .map(|p| {
                p.installed
                    .iter()
                    .filter(|s| r.counted().contains(s))
                    .filter_map(current)
                    .map(|candidate| Action::ActivateRecovery { candidate })
                    .collect()
            })
            .unwrap_or_default(),
        NextStep::AdmitLearner { target } => vec![Action::AdmitLearner {
            target: to_model(target.node),
        }],
        NextStep::Swap { target } => {
            let t = to_model(target.node);
            let mut v: Vec<Action> = (0..nodes)
                .map(|leaving| Action::Swap { target: t, leaving })
                .collect();
            v.push(Action::PromoteLearner { target: t });
            v
        }
        NextStep::OwnerSwitch => vec![Action::OwnerSwitch],
        NextStep::RemoveLeaving { .. } => vec![Action::RemoveLeaving],
        NextStep::ReportFinalBoundary => vec![Action::ReportFinalBoundary],
        NextStep::CommitHandoff { .. } => vec![Action::CommitHandoff],
        NextStep::ActivateOwner { .. } => vec![Action::ActivateOwner],
        NextStep::AbortMove { .. } => vec![Action::AbortMove],
        NextStep::SwapBack { .. } => vec![Action::SwapBack],
        NextStep::AbortHandoff { .. } => vec![Action::AbortHandoff],
        // Opening a recovery is the controller's observation of a failure,
        // not a continuation the record names.
        NextStep::RecoverOwner { .. } => Vec::new(),
    }
}
