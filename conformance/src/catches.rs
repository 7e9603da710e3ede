//! The bug zoo's conformance column: the implementation with one mutant
//! switched on, run against the correct model, must diverge somewhere.

use crate::check::Kind;
use crate::lockstep;
use crate::report::Options;
use livemove_model::{zoo, Cfg, Mutant};
use serde::Serialize;

/// Where conformance catches a mutant.
#[derive(Clone, Debug, Serialize)]
pub struct Catch {
    pub mutant: Mutant,
    /// The config whose lockstep run diverges first.
    pub config: String,
    pub kind: Kind,
    /// 0-based index of the first step that disagrees.
    pub step: usize,
    /// The disagreeing action.
    pub action: String,
    /// One line: the step, what each side did, the first differing field.
    pub summary: String,
}

/// The configs tried for a mutant: the zoo's config first, then the rest of
/// the `ci` group.
pub fn configs_for(m: Mutant) -> Vec<Cfg> {
    let first = zoo::config_for(m);
    let mut v = vec![Cfg::named(first)];
    v.extend(
        Cfg::resolve("ci")
            .expect("the ci group exists")
            .into_iter()
            .filter(|c| c.name != first),
    );
    v
}

/// Run the implementation with mutant `m` against the correct model until
/// the first divergence; `None` if it conforms on every config tried.
pub fn catches(m: Mutant) -> Option<Catch> {
    let opts = Options {
        stop_at_first: true,
        ..Options::default()
    };
    for cfg in configs_for(m) {
        let rep = lockstep::run(&cfg, Some(m), &opts);
        if let Some(d) = rep.divergences.first() {
            let first = d
                .changes
                .first()
                .map_or(String::new(), |c| format!("; {c}"));
            return Some(Catch {
                mutant: m,
                config: cfg.name.clone(),
                kind: d.kind,
                step: d.step,
                action: d.action.clone(),
                summary: format!(
                    "step {}: {}: model {}, implementation {}{first}",
                    d.step, d.action, d.model, d.implementation
                ),
            });
        }
    }
    None
}
