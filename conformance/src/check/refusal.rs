//! Negative conformance: an action the model disables for a protocol reason
//! must be refused by the implementation with a typed error (a
//! `ClusterError`), and the refusal must leave the cluster exactly as it
//! was (compared on the full `ClusterState`, not only its abstraction).

use super::{field_diff, Kind, Mismatch};
use crate::abstraction::{abstract_state, canon};
use crate::driver::Driven;
use livemove_impl::{Cluster, ClusterState};
use livemove_model::state::State;
use livemove_model::view::view;
use livemove_model::MoveModel;

/// Check the implementation's answer to an action the model disables in
/// `s` (guard `guard`); `before` is the cluster's snapshot before it.
pub fn agrees(
    m: &MoveModel,
    s: &State,
    guard: &str,
    got: &Driven,
    before: &ClusterState,
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
            let now = after.snapshot();
            if now == *before {
                return Ok(());
            }
            let json =
                |x: &ClusterState| serde_json::to_value(x).expect("cluster state serializes");
            Err(Mismatch {
                kind: Kind::Unchanged,
                model: format!("disabled: guard `{guard}` fails"),
                implementation: format!("refused ({e}) but changed its state"),
                changes: field_diff(&json(before), &json(&now)),
            })
        }
    }
}
