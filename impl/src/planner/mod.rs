//! The rebalance planner: many partitions, one plan per round, made of the
//! protocol's own operations (add learner, swap, remove, handoff).
//!
//! The planner is pure: `plan(view, history, policy)` reads a cluster view
//! (nodes, partitions, placement, transfers in flight, retained copies,
//! pending recovery, pause) and what it remembers from earlier rounds, and
//! returns the moves to start. The controller runs each move's operations
//! in order through the guarded writes and records the plan in the history.
//!
//! - `score`: the load score vector per node.
//! - `policy`: the knobs and their defaults; `policy::band`: the detection
//!   band, the spread and the margin rule.
//! - `limits`: transfer limits; `limits::cooldown`: the memory behind
//!   cooldowns and reversal refusals.
//! - `domains`: failure-domain placement.
//! - `feasibility`: catch-up time D/b + B/(a - r), refused when a <= r.
//! - `bound`: lower bounds on moves and bytes.
//! - `sim`: a round-based simulation that executes plans.
//! - `scenarios`: built-in and synthetic clusters, measured.

pub mod bound;
pub mod domains;
pub mod error;
pub mod feasibility;
pub mod limits;
pub mod ops;
pub mod policy;
mod round;
pub mod scenarios;
pub mod score;
pub mod sim;
pub mod view;

pub use bound::{lower_bounds, LowerBounds};
pub use error::PlanError;
pub use limits::cooldown::History;
pub use ops::{Hold, Op, Plan, PlannedMove, Refusals};
pub use policy::{Limits, Policy, Weights};
pub use round::plan;
pub use score::{Loads, ScoreVector};
pub use view::{
    ClusterView, NodeIx, NodeSpec, PartIx, PartitionSpec, Placement, Retained, Transfer,
};
