//! What a plan is made of: the protocol's own operations, grouped into
//! moves, plus why the round planned nothing or refused candidates.

use crate::planner::feasibility::CatchUp;
use crate::planner::view::{NodeIx, PartIx};
use serde::{Deserialize, Serialize};

/// One protocol operation, named after the shared action it asks the
/// controller to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum Op {
    /// Step 0: `target` joins as a learner and catches up.
    AddLearner {
        /// The partition.
        partition: PartIx,
        /// The joining node.
        target: NodeIx,
    },
    /// Step 1: the caught-up `target` counts instead of `leaving`.
    Swap {
        /// The partition.
        partition: PartIx,
        /// The node that starts counting.
        target: NodeIx,
        /// The follower that stops counting.
        leaving: NodeIx,
    },
    /// Step 2: once the target covers the switch boundary, `leaving` is
    /// removed; it keeps its data for the grace period.
    Remove {
        /// The partition.
        partition: PartIx,
        /// The node removed.
        leaving: NodeIx,
    },
    /// Planned owner handoff to an admitted, caught-up follower.
    Handoff {
        /// The partition.
        partition: PartIx,
        /// The owner that hands over and stays as a follower.
        from: NodeIx,
        /// The follower that becomes owner.
        to: NodeIx,
    },
}

impl Op {
    /// The shared action's name.
    pub fn name(&self) -> &'static str {
        match self {
            Op::AddLearner { .. } => "add_learner",
            Op::Swap { .. } => "swap",
            Op::Remove { .. } => "remove",
            Op::Handoff { .. } => "handoff",
        }
    }
}

/// One planned move: its operations in the order the controller runs them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedMove {
    /// The partition.
    pub partition: PartIx,
    /// The node that loses the copy (or ownership).
    pub from: NodeIx,
    /// The node that gains it.
    pub to: NodeIx,
    /// `[add_learner, swap, remove]` for a follower move, `[handoff]` for
    /// an owner handoff.
    pub ops: Vec<Op>,
    /// Bytes the target copies (0 for a handoff; less when it keeps a retained copy).
    pub bytes: u64,
    /// Whether the target starts from a retained copy.
    pub from_retained: bool,
    /// The catch-up estimate of a follower move.
    pub catch_up: Option<CatchUp>,
    /// How much the move lowers the spread.
    pub improvement: f64,
}

impl PlannedMove {
    /// Whether this is an owner handoff.
    pub fn is_handoff(&self) -> bool {
        matches!(self.ops.first(), Some(Op::Handoff { .. }))
    }
}

/// Why a round planned nothing at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// Some recovery is pending: recovery comes first, rebalancing waits.
    RecoveryPending,
    /// The operator paused rebalancing.
    Paused,
}

/// How many candidate moves a round turned down, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusals {
    /// The target's apply rate does not exceed the partition's incoming rate.
    pub catch_up_infeasible: u64,
    /// The target's domain already holds another copy.
    pub domain: u64,
    /// The partition moved within its cooldown, or the move would reverse its last one.
    pub cooldown: u64,
    /// The spread would not drop by the margin.
    pub margin: u64,
}

/// The output of one planning round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Follower moves first, then handoffs.
    pub moves: Vec<PlannedMove>,
    /// Why nothing was planned, when held.
    pub hold: Option<Hold>,
    /// Whether a rebalancing episode is open after this round (the
    /// detection band opens it; it closes when nothing is left to do).
    pub episode_open: bool,
    /// Candidates turned down.
    pub refusals: Refusals,
}
