//! The eventually properties of a main TLC run joined in one invariant.
//!
//! In `tla/LiveMove.tla` each eventually property is `<Ok> \/ ~Terminal`,
//! with `Terminal == ~ENABLED Next`. TLC evaluates `ENABLED Next` (about
//! as costly as computing a state's successors) once for each such
//! invariant in every state where its `<Ok>` fails, and keeps nothing
//! between invariants: where a move is pending, three or four of them
//! evaluate it again. Joined,
//!
//! ```text
//! EventuallyAtRest ==
//!     LET enabled == ENABLED Next
//!     IN  /\ RecoveryOk \/ enabled
//!         /\ MoveOk \/ enabled
//! ```
//!
//! TLC evaluates it at most once per state (the value of a LET definition
//! is kept for the rest of the expression). The invariant is the
//! conjunction of the properties, term for term, so it holds in exactly the
//! states where each of them holds. When TLC finds it violated, `livemove
//! tlc` runs TLC again with the properties apart, to name the one violated
//! and its shortest counterexample.
//!
//! The joined invariant is written into a root module of its own, in the
//! run's scratch folder, that extends the configuration's `MC_` module (TLC
//! finds that one through `-DTLA-Library`); the committed files are not
//! touched. Each `<Ok>` is read from the spec's text: a property whose
//! definition is not exactly `<Ok> \/ ~Terminal` (or a `Terminal` that is
//! not `~ENABLED Next`) is not joined, and the run checks the properties
//! apart as before.

use std::fmt::Write;

/// The joined invariant's name.
pub const INVARIANT: &str = "EventuallyAtRest";

/// The root module's name (and file stem).
pub const MODULE: &str = "Joined";

/// The body of the top-level definition `id == ...` in `spec`, whitespace
/// collapsed: the lines after `==` up to the next line that starts in the
/// first column.
fn definition(spec: &str, id: &str) -> Option<String> {
    let head = format!("\n{id} ==");
    let at = spec.find(&head)? + head.len();
    let mut body = String::new();
    for (i, line) in spec[at..].split('\n').enumerate() {
        let continued = line.starts_with(' ') || line.starts_with('\t');
        if i > 0 && !continued {
            break;
        }
        body.push(' ');
        body.push_str(line);
    }
    Some(body.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The `<Ok>` of the eventually property `id` when its definition in
/// `spec` is exactly `<Ok> \/ ~Terminal`.
fn ok_operator(spec: &str, id: &str) -> Option<String> {
    let body = definition(spec, id)?;
    let ok = body.strip_suffix(" \\/ ~Terminal")?;
    let plain = !ok.is_empty() && ok.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then(|| ok.to_string())
}

/// The root module checking `model` with the eventually properties `ids`
/// joined, or None when some property is not of the joinable form (or
/// there are fewer than two, where joining saves nothing).
pub fn module(spec: &str, model: &str, ids: &[String]) -> Option<String> {
    if ids.len() < 2 || definition(spec, "Terminal").as_deref() != Some("~ENABLED Next") {
        return None;
    }
    let oks = ids
        .iter()
        .map(|id| ok_operator(spec, id))
        .collect::<Option<Vec<_>>>()?;
    let mut s = String::new();
    let bar = "-".repeat(30);
    let _ = writeln!(s, "{bar} MODULE {MODULE} {bar}");
    let _ = writeln!(
        s,
        "(* Written by `livemove tlc`: the eventually properties of {model} *)"
    );
    let _ = writeln!(
        s,
        "(* in one invariant, with ENABLED Next evaluated once per state.    *)"
    );
    let _ = writeln!(s, "EXTENDS {model}\n");
    let _ = writeln!(s, "(* {} *)", ids.join(", "));
    let _ = writeln!(s, "{INVARIANT} ==");
    let _ = writeln!(s, "    LET enabled == ENABLED Next");
    for (i, ok) in oks.iter().enumerate() {
        let lead = if i == 0 { "IN " } else { "   " };
        let _ = writeln!(s, "    {lead} /\\ {ok} \\/ enabled");
    }
    let _ = writeln!(s, "{}", "=".repeat(77));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::tlc::models::tla_name;
    use livemove_model::properties::{self, Kind};

    #[test]
    fn every_eventually_property_of_the_spec_can_be_joined() {
        // Should a property take another form, the main runs would check
        // the properties apart again: correct, but slower by a quarter on
        // the largest configuration. This test says so first.
        let spec = include_str!("../../../tla/LiveMove.tla");
        let ids: Vec<String> = properties::all()
            .into_iter()
            .filter(|p| p.kind == Kind::Eventually)
            .map(|p| tla_name(p.name))
            .collect();
        assert!(ids.len() >= 2, "{ids:?}");
        let m =
            module(spec, "MC_x", &ids).expect("every eventually property is <Ok> \\/ ~Terminal");
        assert_eq!(m.matches(" \\/ enabled\n").count(), ids.len(), "{m}");
        assert!(m.contains("LET enabled == ENABLED Next"), "{m}");
    }

    #[test]
    fn a_property_of_another_form_is_not_joined() {
        let spec = "\nTerminal == ~ENABLED Next\n\nA ==\n    AOk \\/ ~Terminal\nB == BOk \\/ Other \\/ ~Terminal\nC == COk \\/ ~Terminal\n";
        assert_eq!(ok_operator(spec, "A").as_deref(), Some("AOk"));
        assert_eq!(ok_operator(spec, "B"), None);
        let ac = module(spec, "MC_x", &["A".into(), "C".into()]).expect("joinable");
        assert!(ac.contains("IN  /\\ AOk \\/ enabled\n"), "{ac}");
        assert!(ac.contains("    /\\ COk \\/ enabled\n"), "{ac}");
        assert_eq!(module(spec, "MC_x", &["A".into(), "B".into()]), None);
        assert_eq!(module(spec, "MC_x", &["A".into()]), None, "one alone");
        let other = spec.replace("~ENABLED Next", "FALSE");
        assert_eq!(module(&other, "MC_x", &["A".into(), "C".into()]), None);
    }
}
