//! The planner's memory between rounds: when each node last received a
//! copy or ownership, when each partition last moved and where, and whether
//! a rebalancing episode is open.
//!
//! Cooldowns stop a node that just received partitions from being judged
//! overloaded and drained again, and a partition from moving twice in quick
//! succession; the last move per partition lets the planner refuse a move
//! straight back (a reversal).

use crate::planner::ops::Plan;
use crate::planner::policy::Policy;
use crate::planner::view::{NodeIx, PartIx};
use serde::{Deserialize, Serialize};

/// One partition's last move of one kind.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LastMove {
    /// Where it left.
    pub from: NodeIx,
    /// Where it went.
    pub to: NodeIx,
    /// When it was planned, seconds.
    pub at_secs: f64,
}

/// What the planner remembers between rounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// Per node: when it last received a copy or ownership.
    pub node_received_secs: Vec<Option<f64>>,
    /// Per partition: its last follower move.
    pub last_copy_move: Vec<Option<LastMove>>,
    /// Per partition: its last handoff.
    pub last_handoff: Vec<Option<LastMove>>,
    /// Whether a rebalancing episode is open.
    pub episode_open: bool,
}

impl History {
    /// An empty memory for `nodes` nodes and `partitions` partitions.
    pub fn new(nodes: usize, partitions: usize) -> History {
        History {
            node_received_secs: vec![None; nodes],
            last_copy_move: vec![None; partitions],
            last_handoff: vec![None; partitions],
            episode_open: false,
        }
    }

    /// Grow to a cluster that gained nodes.
    pub fn resize_nodes(&mut self, nodes: usize) {
        self.node_received_secs.resize(nodes, None);
    }

    /// Whether `n` received something within the node cooldown.
    pub fn node_cooling(&self, policy: &Policy, n: NodeIx, now_secs: f64) -> bool {
        self.node_received_secs
            .get(n as usize)
            .copied()
            .flatten()
            .is_some_and(|t| now_secs - t < policy.node_cooldown_secs)
    }

    /// Whether `p` moved within the partition cooldown.
    pub fn partition_cooling(&self, policy: &Policy, p: PartIx, now_secs: f64) -> bool {
        let recent = |m: &Option<LastMove>| {
            m.is_some_and(|m| now_secs - m.at_secs < policy.partition_cooldown_secs)
        };
        recent(&self.last_copy_move[p as usize]) || recent(&self.last_handoff[p as usize])
    }

    /// Whether moving `p` from `from` to `to` undoes its last move of that
    /// kind within the retained grace period.
    pub fn reverses(
        &self,
        policy: &Policy,
        p: PartIx,
        from: NodeIx,
        to: NodeIx,
        handoff: bool,
        now_secs: f64,
    ) -> bool {
        let last = if handoff {
            self.last_handoff[p as usize]
        } else {
            self.last_copy_move[p as usize]
        };
        last.is_some_and(|m| {
            m.from == to && m.to == from && now_secs - m.at_secs < policy.retained_grace_secs
        })
    }

    /// Remember a round's plan, planned at `now_secs`.
    pub fn record(&mut self, plan: &Plan, now_secs: f64) {
        for m in &plan.moves {
            let last = Some(LastMove {
                from: m.from,
                to: m.to,
                at_secs: now_secs,
            });
            if m.is_handoff() {
                self.last_handoff[m.partition as usize] = last;
            } else {
                self.last_copy_move[m.partition as usize] = last;
            }
            self.node_received_secs[m.to as usize] = Some(now_secs);
        }
        self.episode_open = plan.episode_open;
    }
}
