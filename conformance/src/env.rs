//! Which of the model's guards belong to the environment rather than to the
//! implementation.
//!
//! The model bounds every path with budgets (messages, crashes, moves, ...)
//! and plays the failure detector (`OpenRecovery{zombie}` needs the owner
//! crashed, or alive and a suspicion left). An implementation has no such
//! budgets: a crash is always possible, a third publish is accepted. Negative
//! conformance therefore asks the implementation to refuse only what the
//! model refuses for a protocol reason. It evaluates each disabled action on
//! a relaxed model (the same config with every budget lifted); if that
//! model enables it, or names one of [`ENV_GUARDS`], the action is counted
//! as skipped, not checked.
//!
//! Not lifted: the planned moves (`moves`, `rf_increases`). The controller
//! keeps its plan itself (`Cluster::with_planned_moves`), so a step 0 with
//! no copy to replace and no planned move left is a refusal it must make.
//! The operator's cancels are requests from outside, budgeted like faults.
//! The owner's truncations are lifted too (atomic configs; the model has
//! no retention with messages in flight). With messages in flight, the
//! network's losses and duplicates are lifted too (the implementation does not count them); the link window is
//! not: a send over a full link is a refusal the implementation makes.
//! The consumer's settles (`settles`) are lifted too. The client's
//! publishes and retries draw on the same `messages` and
//! `publish_retries` budgets, lifted too; its hop limit is not a budget
//! (`Cluster::with_client` keeps it), and which producer a config has is
//! the environment's choice (the three client guards in [`ENV_GUARDS`]).

use livemove_model::state::State;
use livemove_model::types::LOG_MAX;
use livemove_model::{Action, MoveModel};

/// Guards that bound the exploration or play the environment.
pub const ENV_GUARDS: &[&str] = &[
    "messages left",
    "crash budget left",
    "suspicion budget left",
    "restart budget left",
    "disk loss budget left",
    "a disk generation left",
    "handoff budget left",
    "operator cancel budget left",
    "config allows follower moves, or the move replaces a lost copy",
    "config allows an rf increase",
    "owner crashed",
    "owner alive (suspected)",
    "drop budget left",
    "duplicate budget left",
    "truncation budget left",
    "publish retries left",
    "settles left",
    // Who produces is the harness's choice: a config either has the client
    // (whose requests the implementation routes) or the owner's own
    // producer, never both. The implementation's client is configured
    // (`Cluster::with_client`); the owner's `publish` and `retry_publish`
    // stay the direct producer path, which the harness does not drive
    // while a client produces.
    "a client",
    "publishes come from the client",
    "retries come from the client",
];

/// A budget large enough never to bind on the configs' short paths.
const BUDGET_LIFTED: u8 = 200;

/// The same model with every budget lifted.
pub fn relaxed(m: &MoveModel) -> MoveModel {
    let mut c = m.cfg.clone();
    c.messages = LOG_MAX as u8;
    c.crashes = BUDGET_LIFTED;
    c.suspicions = BUDGET_LIFTED;
    c.restarts = BUDGET_LIFTED;
    c.disk_losses = BUDGET_LIFTED;
    c.handoffs = BUDGET_LIFTED;
    c.cancels = BUDGET_LIFTED;
    c.publish_retries = BUDGET_LIFTED;
    c.settles = BUDGET_LIFTED;
    if c.net {
        c.drops = BUDGET_LIFTED;
        c.dups = BUDGET_LIFTED;
    } else {
        // The model's retention is atomic only (with messages in flight it
        // stays at 0, and the guard above skips it).
        c.truncations = BUDGET_LIFTED;
    }
    MoveModel::new(c)
}

/// Whether the model disables `a` in `s` only for a budget or the
/// environment (evaluated on the relaxed model).
pub fn env_only(relaxed: &MoveModel, s: &State, a: Action) -> bool {
    // The model's network holds at most NET_MAX messages: a duplicate
    // beyond it is outside what even the relaxed model can represent.
    if matches!(a, Action::Duplicate { .. }) && s.net.is_full() {
        return true;
    }
    // Likewise a log holds at most LOG_MAX entries: an append to a full
    // log (the relaxed budgets allow more publishes and settles than the
    // config) is beyond the relaxed model too.
    if let Action::Publish { node } | Action::RetryPublish { node } | Action::Settle { node } = a {
        if usize::from(s.nodes[usize::from(node)].log.len) >= LOG_MAX {
            return true;
        }
    }
    match relaxed.apply(s, a) {
        Ok(_) => true,
        Err(g) => ENV_GUARDS.contains(&g.0),
    }
}
