//! The checker's successor loop tries only the actions a config's budgets
//! can ever enable (`MoveModel::possible_alphabet`); this checks, on every
//! state of every `ci` configuration reached within a bound, that each
//! action left out is disabled there, so leaving it out changes nothing.

use livemove_model::{Cfg, MoveModel};
use std::collections::{HashSet, VecDeque};

/// States visited per configuration: every `ci` config's first layers.
const STATES_MAX: usize = 20_000;

#[test]
fn possible_alphabet_drops_only_disabled_actions() {
    let mut checked = 0usize;
    let mut dropped_any = false;
    for cfg in Cfg::resolve("ci").expect("the ci group") {
        let m = MoveModel::new(cfg.clone());
        let kept: HashSet<_> = m.possible_alphabet().iter().copied().collect();
        let dropped: Vec<_> = m
            .alphabet()
            .iter()
            .copied()
            .filter(|a| !kept.contains(a))
            .collect();
        dropped_any |= !dropped.is_empty();
        let init = m.init();
        let mut seen = HashSet::from([init]);
        let mut queue = VecDeque::from([init]);
        while let Some(s) = queue.pop_front() {
            for a in &dropped {
                assert!(
                    m.apply(&s, *a).is_err(),
                    "{}: {a} is left out of the successor loop but enabled in {s:?}",
                    cfg.name
                );
            }
            checked += 1;
            let mut next = Vec::new();
            m.successors(&s, &mut next);
            for (_, t) in next {
                if seen.len() < STATES_MAX && seen.insert(t) {
                    queue.push_back(t);
                }
            }
        }
    }
    assert!(
        dropped_any,
        "no config leaves anything out: nothing was checked"
    );
    assert!(checked > 100_000, "only {checked} states checked");
}
