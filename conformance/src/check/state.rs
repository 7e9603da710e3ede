//! Agreement on state: the abstraction of the implementation equals the
//! model's state, both under `abstraction::canon`. Only the differing
//! fields are reported, as paths into the model's view.

use super::{field_diff, Kind, Mismatch};
use crate::abstraction::view;
use crate::abstraction::{abstract_state, canon};
use crate::driver::Driven;
use livemove_impl::Cluster;
use livemove_model::state::State;
use livemove_model::MoveModel;

/// Check that `c` abstracts to the model state `t`.
pub fn agrees(
    m: &MoveModel,
    c: &Cluster,
    t: &State,
    kind: Kind,
    got: &Driven,
) -> Result<(), Mismatch> {
    let want = canon(t);
    let have = canon(&abstract_state(m, c, t));
    if want == have {
        return Ok(());
    }
    Err(Mismatch {
        kind,
        model: "applied".into(),
        implementation: match got {
            Ok(o) => format!("applied ({o:?})"),
            Err(e) => format!("refused: {e}"),
        },
        changes: field_diff(&view(m, &want), &view(m, &have)),
    })
}
