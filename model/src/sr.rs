//! The model as a `stateright::Model`: used for Stateright's Explorer
//! (`livemove explore`) and as an independent cross-check of the state
//! count of this crate's own checker.

use crate::action::Action;
use crate::properties;
use crate::protocol::MoveModel;
use crate::state::State;
use stateright::{Model, Property};

impl Model for MoveModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.init()]
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        out.extend(MoveModel::actions(self, s).filter(|a| self.apply(s, *a).is_ok()));
    }

    fn next_state(&self, s: &State, a: Action) -> Option<State> {
        self.apply(s, a).ok()
    }

    fn format_action(&self, a: &Action) -> String {
        a.to_string()
    }

    fn format_step(&self, s: &State, a: Action) -> Option<String> {
        let t = self.apply(s, a).ok()?;
        let changes = crate::view::diff(&crate::view::view(self, s), &crate::view::view(self, &t));
        Some(
            changes
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// The last state of the path as a picture of the partition.
    fn as_svg(&self, path: stateright::Path<State, Action>) -> Option<String> {
        Some(crate::svg::draw(self, path.last_state()))
    }

    /// The outcome properties that are plain state predicates (Stateright
    /// takes function pointers of its own signature, hence the wrappers).
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("no confirmed entry is lost", |m: &MoveModel, s: &State| {
                properties::no_confirmed_entry_lost(m, s)
            }),
            Property::always("one confirmed history", |m: &MoveModel, s: &State| {
                properties::one_confirmed_history(m, s)
            }),
            Property::always(
                "a stale owner never confirms what the current owner lacks",
                |m: &MoveModel, s: &State| properties::stale_owner_confirms_nothing_new(m, s),
            ),
        ]
    }
}
