//! The planner's knobs, each default grounded in a precedent (see
//! `docs/planner.md`), and the band and margin rules built on them.

pub mod band;

use serde::{Deserialize, Serialize};

/// Weights of the score dimensions; each dimension is first divided by the
/// node's capacity and by the cluster mean, so 1.0 is average in each.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Owned partitions (serving and confirm work).
    pub owned: f64,
    /// Followed partitions (replication and disk); in the spread it weighs
    /// every copy held, owned or followed (see `score::COPIES`).
    pub followed: f64,
    /// Saturating history weight, sum of h / (h + k).
    pub history: f64,
    /// Publish and delivery load.
    pub traffic: f64,
    /// Bytes still to copy by transfers to or from the node (transient).
    pub sync: f64,
}

/// Hard limits on concurrent transfers, apart from the score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Transfers into one node at once (Elasticsearch: 2 incoming recoveries).
    pub node_incoming_max: u32,
    /// Transfers off one node at once (Elasticsearch: 2 outgoing recoveries).
    pub node_outgoing_max: u32,
    /// Transfers in the whole cluster at once (Cruise Control: 1,250).
    pub cluster_max: u32,
    /// Handoffs per node per round (borrowed from Cruise Control's 5 moves
    /// per broker); a handoff copies nothing but closes admission briefly,
    /// so a node takes part in few at a time.
    pub node_handoffs_max: u32,
}

/// The planner's policy.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Score weights.
    pub weights: Weights,
    /// k in h / (h + k), bytes: a history of k bytes weighs one half.
    pub history_k_bytes: f64,
    /// Detection band, relative to a node's share (CockroachDB: 5%).
    pub band_frac: f64,
    /// Detection band floor in items of the dimension (CockroachDB: 2
    /// replicas, because 5% of few replicas always fires).
    pub band_floor_items: f64,
    /// Fixing band for history and traffic, relative to a node's share
    /// (at least one mean item): inside it they no longer drive moves. Half
    /// the detection band, so fixing is tighter than detecting (Cruise
    /// Control) and a fixed cluster does not re-trigger.
    pub fix_frac: f64,
    /// A move must lower the spread by this many times its own weight term
    /// (1.0: Elasticsearch's threshold, the target after the move stays at
    /// or below the source before it).
    pub margin: f64,
    /// Transfer limits.
    pub limits: Limits,
    /// A node that received a copy or ownership this recently is not drained.
    pub node_cooldown_secs: f64,
    /// A partition that moved this recently does not move again.
    pub partition_cooldown_secs: f64,
    /// A removed copy is kept this long; a move back within it is a reversal
    /// and is refused, a move of the same partition to that node later
    /// starts from the copy.
    pub retained_grace_secs: f64,
    /// How many of the least loaded targets a source tries per move.
    pub targets_tried_max: usize,
    /// A round stops looking for moves of one kind after this many sources
    /// in a row found none: sources come most loaded first, so the rest
    /// rarely have one, and the next round tries again.
    pub sources_failed_max: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            weights: Weights {
                owned: 1.0,
                followed: 1.0,
                history: 1.0,
                traffic: 1.0,
                sync: 1.0,
            },
            history_k_bytes: (1u64 << 30) as f64,
            band_frac: 0.05,
            band_floor_items: 2.0,
            fix_frac: 0.025,
            margin: 1.0,
            limits: Limits {
                node_incoming_max: 2,
                node_outgoing_max: 2,
                cluster_max: 1250,
                node_handoffs_max: 5,
            },
            node_cooldown_secs: 300.0,
            partition_cooldown_secs: 600.0,
            retained_grace_secs: 3600.0,
            targets_tried_max: 8,
            sources_failed_max: 64,
        }
    }
}
