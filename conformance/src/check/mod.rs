//! What is checked after every step, one agreement per file, each returning
//! a typed [`Mismatch`]:
//!
//! - [`outcome`]: an action the model enables is applied by the
//!   implementation too, and a replicate the model turns into a refusal
//!   (the sender learns a newer epoch) is `Outcome::Refused` there.
//! - [`state`]: after the step, the abstraction of the implementation equals
//!   the model's post-state (both under `abstraction::canon`).
//! - [`refusal`]: an action the model disables for a protocol reason is
//!   refused by the implementation with a typed error, and its state is
//!   unchanged.
//! - [`resume`]: the step a restarted controller computes from the
//!   persisted record is one the model enables, or waits only on facts
//!   outside the record.

pub mod outcome;
pub mod refusal;
pub mod resume;
pub mod state;

use crate::driver;
use livemove_impl::Cluster;
use livemove_model::state::State;
use livemove_model::{Action, MoveModel};
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// Which agreement failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The initial states differ.
    Init,
    /// The model applied the action and the implementation refused it, or
    /// one side turned a replicate into a fencing refusal and the other not.
    Outcome,
    /// Both applied the action and the resulting states differ.
    State,
    /// The model disables the action and the implementation applied it.
    Refusal,
    /// The implementation refused the action but its state changed.
    Unchanged,
    /// Resume, from the persisted record, names a step the model's record
    /// rules out.
    Resume,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Init => "init",
            Kind::Outcome => "outcome",
            Kind::State => "state",
            Kind::Refusal => "refusal",
            Kind::Unchanged => "unchanged",
            Kind::Resume => "resume",
        })
    }
}

/// One differing field: its path, the model's value, the implementation's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldDiff {
    pub path: String,
    pub model: Value,
    pub implementation: Value,
}

impl fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: model {} != impl {}",
            self.path,
            show(&self.model),
            show(&self.implementation)
        )
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// The fields that differ between two JSON views (model first).
pub fn field_diff(model: &Value, implementation: &Value) -> Vec<FieldDiff> {
    livemove_model::view::diff(model, implementation)
        .into_iter()
        .map(|c| FieldDiff {
            path: c.path,
            model: c.before,
            implementation: c.after,
        })
        .collect()
}

/// A disagreement at one step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    pub kind: Kind,
    /// What the model did (`applied`, or the guard that disables the action).
    pub model: String,
    /// What the implementation did (its outcome or typed error).
    pub implementation: String,
    /// The differing fields, model vs implementation.
    pub changes: Vec<FieldDiff>,
}

/// Drive `a`, which the model enables into `t`, and check the outcome and
/// the resulting state.
pub fn edge(m: &MoveModel, a: Action, t: &State, c: &mut Cluster) -> Result<(), Mismatch> {
    let got = driver::step(c, a);
    outcome::agrees(a, t, &got).and_then(|()| state::agrees(m, c, t, Kind::State, &got))
}

/// What became of one action the model disables.
#[derive(Clone, Debug, PartialEq)]
pub enum Negative {
    /// Disabled only by a budget or the environment: not checked.
    Skipped,
    /// Refused with a typed error, state unchanged.
    Refused,
    /// The implementation disagrees.
    Mismatch(Mismatch),
}

/// The cluster as it was before negative checks in one state: a copy to
/// restore if the implementation wrongly applies an action, and to compare
/// a refusal against (the whole cluster, durable storage included; the
/// snapshot is taken only to report a difference).
pub struct Before {
    pub cluster: Cluster,
}

impl Before {
    pub fn of(c: &Cluster) -> Before {
        Before { cluster: c.clone() }
    }
}

/// Drive `a`, which the model disables in `s` with `guard`, and check that
/// the implementation refuses it and changes nothing; `c` is restored from
/// `before` if the implementation applied it.
pub fn disabled(
    m: &MoveModel,
    relaxed: &MoveModel,
    s: &State,
    a: Action,
    guard: &str,
    c: &mut Cluster,
    before: &Before,
) -> Negative {
    if crate::env::env_only(relaxed, s, a) {
        return Negative::Skipped;
    }
    let got = driver::step(c, a);
    let r = refusal::agrees(m, s, guard, &got, &before.cluster, c);
    if got.is_ok() {
        *c = before.cluster.clone();
    }
    match r {
        Ok(()) => Negative::Refused,
        Err(e) => Negative::Mismatch(e),
    }
}
