//! Negative conformance: an action the model disables for a protocol reason
//! must be refused by the implementation with a typed error (a
//! `ClusterError`), and the refusal must leave the cluster exactly as it
//! was (compared on the whole cluster, durable storage included, not only
//! its abstraction; a difference is reported as a diff of the two
//! `ClusterState` snapshots).

use super::{field_diff, Kind, Mismatch};
use crate::abstraction::view;
use crate::abstraction::{abstract_state, canon};
use crate::driver::Driven;
use livemove_impl::{Cluster, ClusterState};
use livemove_model::state::State;
use livemove_model::MoveModel;

/// Check the implementation's answer to an action the model disables in
/// `s` (guard `guard`); `before` is the cluster as it was before it.
pub fn agrees(
    m: &MoveModel,
    s: &State,
    guard: &str,
    got: &Driven,
    before: &Cluster,
    after: &Cluster,
) -> Result<(), Mismatch> {
    match got {
        Ok(o) => Err(Mismatch {
            kind: Kind::Refusal,
            model: format!("disabled: guard `{guard}` fails"),
            implementation: format!("applied ({o:?})"),
            changes: field_diff(
                &view(m, &canon(s)),
                &view(m, &canon(&abstract_state(m, after, s))),
            ),
        }),
        Err(e) => {
            if after == before {
                return Ok(());
            }
            let (before, now) = (before.snapshot(), after.snapshot());
            let json =
                |x: &ClusterState| serde_json::to_value(x).expect("cluster state serializes");
            Err(Mismatch {
                kind: Kind::Unchanged,
                model: format!("disabled: guard `{guard}` fails"),
                implementation: format!("refused ({e}) but changed its state"),
                changes: field_diff(&json(&before), &json(&now)),
            })
        }
    }
}
