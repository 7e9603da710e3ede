//! Stateright model of live replica moves for one replicated queue partition.
//!
//! The design is in `docs/protocol.md`; the requirement is the two design
//! notes it cites. Start with [`protocol::MoveModel`] (guards and effects),
//! [`properties`] (what must hold, with the argument for each) and
//! [`config::Cfg`] (the named scenarios).

pub mod action;
pub mod canon;
pub mod checker;
pub mod config;
pub mod mutant;
pub mod net;
pub mod properties;
pub mod protocol;
pub mod sr;
pub mod state;
pub mod svg;
pub mod trace;
pub mod types;
pub mod view;
pub mod zoo;

pub use action::Action;
pub use config::Cfg;
pub use mutant::Mutant;
pub use protocol::MoveModel;
pub use state::State;
