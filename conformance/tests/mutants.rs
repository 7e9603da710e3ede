//! Every mutant of the bug zoo is caught by conformance: the implementation
//! with the mutant switched on, run against the correct model, diverges.

use livemove_conformance::catches;
use livemove_model::Mutant;

#[test]
fn every_implementation_mutant_diverges_from_the_correct_model() {
    let mut missed = Vec::new();
    for m in Mutant::ALL {
        match catches(m) {
            Some(c) => println!(
                "{m}: {} step {} ({}): {}",
                c.config, c.step, c.kind, c.summary
            ),
            None => missed.push(m),
        }
    }
    assert!(missed.is_empty(), "mutants conformance misses: {missed:?}");
}
