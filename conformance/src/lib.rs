//! Conformance: holds the model (`livemove-model`) and the implementation
//! (`livemove-impl`) together.
//!
//! - [`driver`]: one function per model action, calling the implementation's
//!   in-memory `Cluster` (model node `n` is implementation `NodeId(n + 1)`).
//! - [`messages`]: messages in flight, model <-> implementation.
//! - [`abstraction`]: the implementation's state mapped to a model `State`,
//!   and [`abstraction::canon`], the model's own equivalences both sides are
//!   compared under.
//! - [`check`]: one file per agreement checked after every step (outcome,
//!   state, refusal, and resume from the persisted record), each returning
//!   a typed [`check::Mismatch`].
//! - Modes: [`lockstep`] (every reachable edge, with negative conformance in
//!   every visited state), [`replay`] (exported trace files), [`walk`]
//!   (random deep walks, shrunk before they are reported).
//! - [`divergence`]: the report of a disagreement, its trace file and the
//!   command that replays it; [`report`]: one run's numbers.
//! - [`catches`]: the bug zoo's conformance column.
//!
//! Budgets (`budget`) and history variables (`confirmed`, `forked`,
//! `wiped_unbound`, `via_handoff`) are the harness's bookkeeping, not
//! implementation state: the abstraction takes them from the model's
//! post-state. Two exceptions the implementation keeps itself: the
//! controller's plan of planned moves (the model's `retries`) and the
//! consumer's record of the settles it was told are done (the model's
//! `settled`).

pub mod abstraction;
pub mod catches;
pub mod check;
pub mod divergence;
pub mod driver;
pub mod env;
pub mod lockstep;
pub mod messages;
pub mod replay;
pub mod report;
pub mod walk;

pub use catches::{catches, Catch};
pub use divergence::Divergence;
pub use report::RunReport;
