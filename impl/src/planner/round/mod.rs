//! One planning round: follower moves first, then owner handoffs.
//!
//! Nothing is planned while a recovery is pending or the operator paused
//! rebalancing. Otherwise a round opens an episode when some node leaves
//! the detection band, then repeatedly takes the most loaded eligible node
//! and plans the move off it that lowers the spread most, within the
//! transfer limits, cooldowns, failure domains and catch-up feasibility,
//! until no node has a move that passes the margin. Handoffs wait until no
//! follower move is planned or in flight, except handoffs off a draining
//! node, which come first because its owned copies cannot leave otherwise.

mod follower;
mod handoff;

use crate::planner::domains::domain_count;
use crate::planner::error::PlanError;
use crate::planner::limits::cooldown::History;
use crate::planner::limits::Budget;
use crate::planner::ops::{Hold, Plan, PlannedMove, Refusals};
use crate::planner::policy::band::out_of_band;
use crate::planner::policy::Policy;
use crate::planner::score::{contribution, Loads, DIMS};
use crate::planner::view::{ClusterView, NodeIx, PartIx};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Plan one round over `view`, given what the planner remembers.
pub fn plan(view: &ClusterView, history: &History, policy: &Policy) -> Result<Plan, PlanError> {
    view.validate()?;
    let hold = if view.recovery_pending {
        Some(Hold::RecoveryPending)
    } else if view.paused {
        Some(Hold::Paused)
    } else {
        None
    };
    if hold.is_some() {
        return Ok(Plan {
            hold,
            episode_open: history.episode_open,
            ..Plan::default()
        });
    }
    let loads = Loads::compute(view, policy);
    let draining_holds = view
        .placement
        .iter()
        .any(|pl| pl.copies().any(|c| view.nodes[c as usize].draining));
    if !(history.episode_open || draining_holds || out_of_band(&loads, policy)) {
        return Ok(Plan::default());
    }
    let mut r = Round::new(view, history, policy, loads);
    if draining_holds {
        handoff::plan(&mut r, true);
    }
    follower::plan(&mut r);
    if r.moves.is_empty() && view.transfers.is_empty() {
        handoff::plan(&mut r, false);
    }
    let episode_open = !(r.moves.is_empty() && view.transfers.is_empty());
    Ok(Plan {
        moves: r.moves,
        hold: None,
        episode_open,
        refusals: r.refusals,
    })
}

/// The working state of one round.
pub(crate) struct Round<'a> {
    view: &'a ClusterView,
    history: &'a History,
    policy: &'a Policy,
    loads: Loads,
    budget: Budget,
    /// Partitions with a transfer in flight or a move planned this round.
    busy: Vec<bool>,
    /// Whether the cluster has a domain for every copy of a partition with `k` copies.
    domains: usize,
    moves: Vec<PlannedMove>,
    refusals: Refusals,
    /// The typical load a handoff shifts (owner minus follower contribution).
    typical_handoff: [f64; DIMS],
    /// The typical load a follower move shifts.
    typical_follower: [f64; DIMS],
}

impl<'a> Round<'a> {
    fn new(view: &'a ClusterView, history: &'a History, policy: &'a Policy, loads: Loads) -> Self {
        let mut busy = vec![false; view.partitions.len()];
        for t in &view.transfers {
            busy[t.partition as usize] = true;
        }
        let (own, fol) = typical(view, policy);
        Round {
            view,
            history,
            policy,
            budget: Budget::new(view, policy.limits),
            busy,
            domains: domain_count(view),
            loads,
            moves: Vec::new(),
            refusals: Refusals::default(),
            typical_handoff: std::array::from_fn(|d| own[d] - fol[d]),
            typical_follower: fol,
        }
    }

    fn draining(&self, n: NodeIx) -> bool {
        self.view.nodes[n as usize].draining
    }

    /// Which side of the mean `n` is on along the direction `w` moves
    /// load: positive when `n` is above the mean in the dimensions the move
    /// takes off it.
    fn along(&self, n: NodeIx, w: &[f64; DIMS]) -> f64 {
        dot(&self.weighted_dev(n), w)
    }

    /// `n`'s weighted relative distance from the mean per dimension.
    fn weighted_dev(&self, n: NodeIx) -> [f64; DIMS] {
        let i = n as usize;
        let c = self.loads.capacity[i];
        std::array::from_fn(|d| {
            let m = self.loads.mean[d];
            if m > 0.0 {
                self.loads.weights[d] * (self.loads.x[i][d] / (c * m) - 1.0)
            } else {
                0.0
            }
        })
    }

    fn enough_domains(&self, p: PartIx) -> bool {
        self.view.placement[p as usize].followers.len() < self.domains
    }
}

fn dot(a: &[f64; DIMS], b: &[f64; DIMS]) -> f64 {
    (0..DIMS).map(|d| a[d] * b[d]).sum()
}

/// A node keyed by its score, for a max-heap of sources.
#[derive(PartialEq)]
struct Keyed(f64, NodeIx);

impl Eq for Keyed {}

impl PartialOrd for Keyed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Keyed {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .total_cmp(&other.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Sources in order of how far above the mean they are along the typical
/// move of one kind (`w`, the mean contribution it shifts), highest first;
/// draining nodes before all others. A popped entry whose key changed since
/// it was pushed is pushed again with the new key.
struct Sources {
    heap: BinaryHeap<Keyed>,
    w: [f64; DIMS],
}

impl Sources {
    fn new(r: &Round, w: [f64; DIMS], eligible: impl Fn(NodeIx) -> bool) -> Sources {
        let mut s = Sources {
            heap: BinaryHeap::new(),
            w,
        };
        for n in (0..r.view.nodes.len() as NodeIx).filter(|&n| eligible(n)) {
            s.push(r, n);
        }
        s
    }

    fn key(&self, r: &Round, n: NodeIx) -> f64 {
        if r.draining(n) {
            f64::MAX
        } else {
            r.along(n, &self.w)
        }
    }

    /// The next source above the mean, if any: a node sheds load only when
    /// it is above the mean (along the typical move of this kind).
    fn pop(&mut self, r: &Round) -> Option<NodeIx> {
        while let Some(Keyed(k, n)) = self.heap.pop() {
            let now = self.key(r, n);
            if now != k {
                self.heap.push(Keyed(now, n));
            } else if now > 0.0 {
                return Some(n);
            } else {
                return None;
            }
        }
        None
    }

    fn push(&mut self, r: &Round, n: NodeIx) {
        self.heap.push(Keyed(self.key(r, n), n));
    }
}

/// The mean contribution of one copy as owner and as follower.
fn typical(view: &ClusterView, policy: &Policy) -> ([f64; DIMS], [f64; DIMS]) {
    let (mut own, mut fol) = ([0.0; DIMS], [0.0; DIMS]);
    for p in 0..view.partitions.len() as PartIx {
        let (o, f) = (
            contribution(view, policy, p, true),
            contribution(view, policy, p, false),
        );
        for d in 0..DIMS {
            own[d] += o[d];
            fol[d] += f[d];
        }
    }
    let k = view.partitions.len().max(1) as f64;
    (own.map(|x| x / k), fol.map(|x| x / k))
}
