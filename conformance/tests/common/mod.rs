//! Helpers shared by the conformance trace tests.
#![allow(dead_code)]

use livemove_conformance::env::relaxed;
use livemove_conformance::replay::{self, Stop};
use livemove_model::state::State;
use livemove_model::{Action, Cfg, MoveModel};

/// Model node indices as the traces name them.
pub const N1: u8 = 0;
pub const N2: u8 = 1;
pub const N3: u8 = 2;
pub const N4: u8 = 3;

/// Replay `steps` on `config` in lockstep with negative conformance in
/// every state, failing the test at the first refusal or divergence; the
/// model and its state after the last step.
pub fn replay_in_lockstep(config: &str, steps: &[Action]) -> (MoveModel, State) {
    let m = MoveModel::new(Cfg::named(config));
    let rel = relaxed(&m);
    match replay::actions(&m, &rel, None, steps, true) {
        Ok(n) => assert_eq!(n.steps, steps.len()),
        Err(Stop::ModelRejects {
            step,
            action,
            guard,
        }) => panic!("the model refuses step {step} ({action}): {guard}"),
        Err(Stop::Diverged {
            prefix,
            action,
            mismatch,
        }) => panic!(
            "diverged after {} steps at {action:?}: {mismatch:?}",
            prefix.len()
        ),
    }
    let s = steps
        .iter()
        .fold(m.init(), |s, a| m.apply(&s, *a).expect("replayed above"));
    (m, s)
}
