//! Whether a discovery trace still ends where its property is witnessed.

use crate::action::Action;
use crate::properties::{Check, Kind, Property};
use crate::protocol::MoveModel;
use crate::state::State;

/// Whether a path ending in `s` (entered from `last`) witnesses `p`: an
/// example of a `sometimes` property, a counterexample of an `always`
/// property, and for `eventually` a terminal state where it fails or a
/// state on a cycle.
pub(super) fn witnessed(
    m: &MoveModel,
    p: &Property,
    last: Option<(&State, &Action)>,
    s: &State,
) -> bool {
    let hit = |holds: bool| {
        if p.kind == Kind::Sometimes {
            holds
        } else {
            !holds
        }
    };
    match p.check {
        Check::State(f) => hit(f(m, s)),
        Check::Edge(f) => last.is_some_and(|(from, a)| hit(f(m, from, a, s))),
        Check::Terminal { scope, goal } => {
            let mut succ = Vec::new();
            m.successors(s, &mut succ);
            if succ.is_empty() {
                scope(m, s) && !goal(m, s)
            } else {
                on_cycle(m, s)
            }
        }
    }
}

/// Whether `s` can reach itself (a search of what is reachable from it).
fn on_cycle(m: &MoveModel, s: &State) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![*s];
    let mut succ = Vec::new();
    while let Some(x) = todo.pop() {
        succ.clear();
        m.successors(&x, &mut succ);
        for (_, t) in &succ {
            if t == s {
                return true;
            }
            if seen.insert(*t) {
                todo.push(*t);
            }
        }
    }
    false
}
