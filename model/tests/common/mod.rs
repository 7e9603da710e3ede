//! Helpers shared by the model's test files.

use livemove_model::checker::PropResult;

/// The action names of a result's path (example or counterexample).
pub fn step_names(p: &PropResult) -> Vec<&'static str> {
    p.path
        .as_ref()
        .expect("a reached or violated property has a path")
        .steps
        .iter()
        .map(|(a, _)| a.name())
        .collect()
}
