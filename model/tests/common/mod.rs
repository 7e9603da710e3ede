//! Helpers shared by the model's test files.

use livemove_model::checker::{PropResult, Report};
use livemove_model::{Action, MoveModel, State};

/// The action names of a result's path (example or counterexample).
#[allow(dead_code)] // not every test file that includes this module reads a result
pub fn step_names(p: &PropResult) -> Vec<&'static str> {
    p.path
        .as_ref()
        .expect("a reached or violated property has a path")
        .steps
        .iter()
        .map(|(a, _)| a.name())
        .collect()
}

/// The names of the properties a report finds failing (violated, or a
/// reachability property unreached), in report order.
#[allow(dead_code)] // not every test file that includes this module reads a report
pub fn failing(r: &Report) -> Vec<&'static str> {
    r.results
        .iter()
        .filter(|p| !p.ok())
        .map(|p| p.name)
        .collect()
}

/// Every state along `path` from the initial state, the initial one first;
/// panics naming the first action the model disables.
#[allow(dead_code)] // not every test file that includes this module replays a path
pub fn run(m: &MoveModel, path: &[Action]) -> Vec<State> {
    let mut s = m.init();
    let mut seen = vec![s];
    for a in path {
        s = m
            .apply(&s, *a)
            .unwrap_or_else(|g| panic!("{a} disabled: {g}"));
        seen.push(s);
    }
    seen
}
