//! Agreement on the outcome of an action the model enables: the
//! implementation applies it too; a replicate that the model turns into a
//! refusal (the receiver is fenced against the sender, the sender learns the
//! newer epoch and stops serving) is `Outcome::Refused` there, and an
//! accepted one is not.

use super::{Kind, Mismatch};
use crate::driver::Driven;
use livemove_impl::Outcome;
use livemove_model::state::State;
use livemove_model::Action;

/// Check the implementation's outcome of `a`, which the model applied
/// landing on `t`.
pub fn agrees(a: Action, t: &State, got: &Driven) -> Result<(), Mismatch> {
    let o = match got {
        Err(e) => {
            return Err(Mismatch {
                kind: Kind::Outcome,
                model: "applied".into(),
                implementation: format!("refused: {e}"),
                changes: Vec::new(),
            })
        }
        Ok(o) => o,
    };
    if let Action::Replicate { from, .. } = a {
        // The model's sender keeps serving exactly when the append landed.
        let model_refused = !t.nodes[from as usize].serving.active;
        let impl_refused = matches!(o, Outcome::Refused { .. });
        if model_refused != impl_refused {
            let say = |refused: bool| {
                if refused {
                    "append refused by a fenced receiver"
                } else {
                    "append accepted"
                }
            };
            return Err(Mismatch {
                kind: Kind::Outcome,
                model: say(model_refused).into(),
                implementation: format!("{} ({o:?})", say(impl_refused)),
                changes: Vec::new(),
            });
        }
    }
    Ok(())
}
