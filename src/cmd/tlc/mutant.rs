//! Mutants: which outcome property TLC names for one, by the bug zoo's rule,
//! and the zoo's TLC column.

use super::models::Checks;
use super::report::PropRow;
use super::tool::Tlc;
use super::{run_tlc, violated_alone, violated_property, Scratch};
use livemove_model::checker::{self, Options, Report, Status};
use livemove_model::properties::{self, Class, Kind};
use livemove_model::{zoo, Cfg, MoveModel, Mutant};

fn is_eventually(name: &str) -> bool {
    properties::all()
        .iter()
        .any(|p| p.name == name && p.kind == Kind::Eventually)
}

fn is_sometimes(name: &str) -> bool {
    properties::all()
        .iter()
        .any(|p| p.name == name && p.kind == Kind::Sometimes)
}

/// Whether the model finds the configuration's state graph cyclic.
fn cyclic(cfg: &Cfg) -> bool {
    checker::check(&MoveModel::new(cfg.clone()), Options::default()).acyclic == Some(false)
}

/// The outcome property the model names for a mutant.
pub(super) fn model_names(r: &Report) -> Option<&'static str> {
    zoo::outcome_of(r).map(|b| b.0)
}

/// The outcome property TLC names for a mutant, by the same rule (TLC's
/// trace lengths; the model's for a cycle, which has no shortest one).
pub(super) fn tlc_names(rows: &[PropRow]) -> Option<&'static str> {
    zoo::shortest(
        rows.iter()
            .filter(|r| r.prop.class == Class::Outcome)
            .filter_map(|r| match r.tlc {
                Some(Status::Violated) if r.shortest => Some((r.prop.name, r.tlc_steps)),
                Some(Status::Violated) => Some((r.prop.name, r.model_steps)),
                Some(Status::Unreached) => Some((r.prop.name, None)),
                _ => None,
            }),
    )
    .map(|b| b.0)
}

/// For the bug zoo: the outcome property TLC finds violated (or unreached)
/// for `mutant` on its zoo configuration, given the one the model named (a
/// rule for a mutant that harms no outcome).
/// `Err` when Java or TLC is missing (the zoo then prints "n/a").
pub fn check_mutant(
    mutant: Mutant,
    model_says: Option<&'static str>,
) -> Result<Option<&'static str>, String> {
    let tlc = Tlc::find()?;
    let cfg = Cfg::named(livemove_model::zoo::config_for(mutant)).with_mutant(Some(mutant));
    let scratch = Scratch::new(&format!("zoo-{mutant}"))?;
    let main = run_tlc(&tlc, &cfg, &Checks::Outcomes, 1, &scratch.0, "main", None)?;
    if let Some(e) = main.error {
        return Err(format!("TLC: {e}"));
    }
    if let Some(p) = violated_property(&main) {
        if Some(p.name) == model_says || model_says.is_none() {
            return Ok(Some(p.name));
        }
        // TLC stopped at another outcome first: ask it about the model's
        // choice alone; an eventually property as leads-to too when the
        // mutant's state graph is cyclic (no terminal state shows a cycle).
        let name = model_says.expect("checked above");
        let checks = if is_eventually(name) && cyclic(&cfg) {
            Checks::Leads(name)
        } else {
            Checks::One(name)
        };
        let o = run_tlc(&tlc, &cfg, &checks, 1, &scratch.0, "confirm", None)?;
        return Ok(Some(if violated_alone(&o, name) {
            name
        } else {
            p.name
        }));
    }
    // No outcome violated in the main run. The model's choice may be a rule
    // (a rule-only mutant harms no outcome, finding 18), or an eventually
    // property on a cyclic graph (no terminal state shows a cycle): ask TLC
    // about it alone, as leads-to on a cyclic graph.
    if let Some(name) = model_says.filter(|n| !is_sometimes(n)) {
        let checks = if is_eventually(name) && cyclic(&cfg) {
            Checks::Leads(name)
        } else {
            Checks::One(name)
        };
        let o = run_tlc(&tlc, &cfg, &checks, 1, &scratch.0, "alone", None)?;
        if let Some(e) = o.error {
            return Err(format!("TLC on {name}: {e}"));
        }
        if violated_alone(&o, name) {
            return Ok(Some(name));
        }
    }
    // Look for an outcome that is no longer reached.
    let mut candidates: Vec<&'static str> = properties::for_cfg(&cfg)
        .into_iter()
        .filter(|p| p.kind == Kind::Sometimes && p.class == Class::Outcome)
        .map(|p| p.name)
        .collect();
    candidates.sort_by_key(|n| Some(*n) != model_says);
    for name in candidates {
        let o = run_tlc(&tlc, &cfg, &Checks::One(name), 1, &scratch.0, "reach", None)?;
        if o.no_error {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_only_a_mutant_makes_is_seen_by_tlc_leads_to() {
        // Without seal fencing a zombie's append and the recovered install
        // undo each other forever: no terminal state shows it, the leads-to
        // form does. (The zoo's path, one liveness run; `livemove tlc
        // --mutant no_seal_fencing` asks every violated property and takes
        // minutes.)
        if let Err(e) = Tlc::find() {
            eprintln!("skipped: {e}");
            return;
        }
        let want = "a pending recovery activates";
        let got = check_mutant(Mutant::NoSealFencing, Some(want)).expect("TLC runs");
        assert_eq!(got, Some(want));
    }

    #[test]
    fn a_duplicated_append_applied_twice_is_caught_by_tlc_with_messages_in_flight() {
        if let Err(e) = Tlc::find() {
            eprintln!("skipped: {e}");
            return;
        }
        let want = "no copy holds one message twice";
        let got = check_mutant(Mutant::DuplicateAppendAppliesTwice, Some(want)).expect("TLC runs");
        assert_eq!(got, Some(want));
    }
}
