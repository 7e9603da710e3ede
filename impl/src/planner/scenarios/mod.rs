//! Scenarios: a cluster, optionally a history and a per-round event, run
//! through the simulation until it settles, measured against the lower
//! bounds.

pub mod builtin;
pub mod rng;
pub mod synthetic;

use crate::planner::bound::lower_bounds;
use crate::planner::error::PlanError;
use crate::planner::limits::cooldown::History;
use crate::planner::policy::{Limits, Policy};
use crate::planner::score::Loads;
use crate::planner::sim::Sim;
use crate::planner::view::ClusterView;
use rng::Rng;
use serde::Serialize;

/// Seconds per planning round in every scenario.
pub const ROUND_SECS: f64 = 10.0;
/// Quiet rounds after which a run counts as settled (and the window over
/// which reversals and repeated moves are watched after the last move).
pub const QUIET_ROUNDS: u64 = 50;
/// Most rounds a run may take before it is reported as not settled.
pub const ROUNDS_MAX: u64 = 5_000;

/// Something that happens before every round.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Nothing.
    None,
    /// A recovery is pending the whole run.
    RecoveryPending,
    /// Every partition's traffic is redrawn within +-`frac` of its base.
    TrafficNoise {
        /// Relative amplitude.
        frac: f64,
        /// The noise's seed.
        seed: u64,
    },
}

/// A named cluster to rebalance.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line saying what it is.
    pub about: &'static str,
    /// The cluster at the start.
    pub view: ClusterView,
    /// What the planner remembers at the start.
    pub history: History,
    /// What happens before every round.
    pub event: Event,
}

/// The names of the built-in scenarios, in run order.
pub const NAMES: [&str; 9] = [
    "add-one-node",
    "add-20-percent",
    "drain-node",
    "mixed-capacities",
    "hot-partition",
    "just-received",
    "recovery-pending",
    "steady-noise",
    "failure-domains",
];

/// The built-in scenario called `name`.
pub fn by_name(name: &str) -> Result<Scenario, PlanError> {
    Ok(match name {
        "add-one-node" => builtin::add_one_node(),
        "add-20-percent" => builtin::add_20_percent(),
        "drain-node" => builtin::drain_node(),
        "mixed-capacities" => builtin::mixed_capacities(),
        "hot-partition" => builtin::hot_partition(),
        "just-received" => builtin::just_received(),
        "recovery-pending" => builtin::recovery_pending(),
        "steady-noise" => builtin::steady_noise(),
        "failure-domains" => builtin::failure_domains(),
        _ => {
            return Err(PlanError::UnknownScenario {
                name: name.to_string(),
                known: NAMES.join(", "),
            })
        }
    })
}

/// A synthetic scenario (see `synthetic::synthetic`).
pub fn synthetic(nodes: u32, partitions: u32, seed: u64) -> Result<Scenario, PlanError> {
    let view = synthetic::synthetic(nodes, partitions, seed)?;
    let history = History::new(view.nodes.len(), view.partitions.len());
    Ok(Scenario {
        name: "synthetic",
        about: "random placement, the last tenth of the nodes just joined",
        view,
        history,
        event: Event::None,
    })
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The scenario.
    pub name: String,
    /// Follower moves plus handoffs.
    pub moves: u64,
    /// Follower moves.
    pub follower_moves: u64,
    /// Owner handoffs.
    pub handoffs: u64,
    /// The bound on moves: copies bound plus owned bound.
    pub moves_lower_bound: u64,
    /// The bound on follower moves (copies per node).
    pub follower_moves_lower_bound: u64,
    /// The bound on handoffs (owned per node).
    pub handoffs_lower_bound: u64,
    /// Bytes the follower moves copied.
    pub bytes_moved: u64,
    /// The bound on bytes.
    pub bytes_lower_bound: u64,
    /// Follower moves that started from a retained copy.
    pub from_retained: u64,
    /// The most loaded node's settled score over the mean score, at the end.
    pub max_over_mean: f64,
    /// The last round that started a move or had one in flight.
    pub rounds: u64,
    /// Whether the run settled (QUIET_ROUNDS quiet rounds) within ROUNDS_MAX.
    pub settled: bool,
    /// Most transfers in flight at once.
    pub peak_transfers: u32,
    /// Most transfers into one node at once.
    pub peak_node_incoming: u32,
    /// Most transfers off one node at once.
    pub peak_node_outgoing: u32,
    /// The limits the run planned under.
    pub limits: Limits,
    /// Moves that undid the partition's previous move of the same kind
    /// within 50 rounds (`sim::WATCH_ROUNDS`).
    pub reversals: u64,
    /// Such moves at any distance in time.
    pub reversals_any_time: u64,
    /// Partitions moved twice (same kind) within 50 rounds.
    pub moved_twice: u64,
    /// Partitions with more than one follower move or more than one handoff
    /// over the whole run.
    pub moved_twice_any_time: u64,
    /// Partitions moved more than once, both kinds together (a follower
    /// move then a handoff onto the new copy counts here).
    pub moved_twice_any_kind: u64,
    /// Moves planned inside a cooldown.
    pub cooldown_violations: u64,
    /// Most partitions with two copies in one domain after any round.
    pub domain_violations: usize,
    /// Candidates the failure-domain rule refused.
    pub refused_domain: u64,
    /// Candidates refused because their catch-up could not finish.
    pub refused_catch_up: u64,
    /// Rounds held by a pending recovery.
    pub held_rounds: u64,
    /// Moves in plans made while held (must stay 0).
    pub moves_while_held: u64,
    /// Fewest and most owned partitions on a node that is not draining, at the end.
    pub owned_range: (u32, u32),
    /// Fewest and most copies on a node that is not draining, at the end.
    pub copies_range: (u32, u32),
    /// Copies left on draining nodes at the end.
    pub left_on_draining: u32,
    /// Median plan time per round, ms.
    pub plan_ms_p50: f64,
    /// 99th percentile plan time per round, ms.
    pub plan_ms_p99: f64,
}

/// Run `s` under `policy`; `now_ms` reads a monotonic clock for plan times.
pub fn run(
    s: &Scenario,
    policy: &Policy,
    now_ms: &mut dyn FnMut() -> f64,
) -> Result<Report, PlanError> {
    s.view.validate()?;
    let bounds = lower_bounds(&s.view);
    let base_traffic: Vec<f64> = s.view.partitions.iter().map(|p| p.traffic).collect();
    let mut noise = match s.event {
        Event::TrafficNoise { seed, .. } => Some(Rng::new(seed)),
        _ => None,
    };
    let mut sim = Sim::new(s.view.clone(), s.history.clone(), *policy, ROUND_SECS);
    let mut times = Vec::new();
    let mut quiet = 0;
    for round in 1..=ROUNDS_MAX {
        if round > 1 {
            sim.advance();
        }
        match (&s.event, noise.as_mut()) {
            (Event::RecoveryPending, _) => sim.view.recovery_pending = true,
            (Event::TrafficNoise { frac, .. }, Some(rng)) => {
                for (p, base) in sim.view.partitions.iter_mut().zip(&base_traffic) {
                    p.traffic = base * (1.0 + frac * (2.0 * rng.unit() - 1.0));
                }
            }
            _ => {}
        }
        let (plan, ms) = sim.round(now_ms)?;
        times.push(ms);
        quiet = if plan.moves.is_empty() && sim.settled() {
            quiet + 1
        } else {
            0
        };
        if quiet >= QUIET_ROUNDS {
            break;
        }
    }
    Ok(report(s, &sim, bounds, times, quiet >= QUIET_ROUNDS))
}

fn report(
    s: &Scenario,
    sim: &Sim,
    b: crate::planner::LowerBounds,
    mut times: Vec<f64>,
    settled: bool,
) -> Report {
    let t = &sim.tally;
    let v = &sim.view;
    let loads = Loads::compute(v, &sim.policy);
    let mean = loads.mean_total();
    let live: Vec<u32> = (0..v.nodes.len() as u32)
        .filter(|&n| !v.nodes[n as usize].draining)
        .collect();
    let max_score = live
        .iter()
        .map(|&n| loads.score(n).total)
        .fold(0.0, f64::max);
    let mut owned = vec![0u32; v.nodes.len()];
    let mut copies = vec![0u32; v.nodes.len()];
    for pl in &v.placement {
        owned[pl.owner as usize] += 1;
        for c in pl.copies() {
            copies[c as usize] += 1;
        }
    }
    let range = |xs: &[u32]| {
        let it = live.iter().map(|&n| xs[n as usize]);
        (it.clone().min().unwrap_or(0), it.max().unwrap_or(0))
    };
    times.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        if times.is_empty() {
            0.0
        } else {
            times[((times.len() - 1) as f64 * q).round() as usize]
        }
    };
    Report {
        name: s.name.to_string(),
        moves: t.follower_moves + t.handoffs,
        follower_moves: t.follower_moves,
        handoffs: t.handoffs,
        moves_lower_bound: b.moves,
        follower_moves_lower_bound: b.follower_moves,
        handoffs_lower_bound: b.handoffs,
        bytes_moved: t.bytes_moved,
        bytes_lower_bound: b.bytes,
        from_retained: t.from_retained,
        max_over_mean: if mean > 0.0 { max_score / mean } else { 0.0 },
        rounds: t.last_active_round,
        settled,
        peak_transfers: t.peak_transfers,
        peak_node_incoming: t.peak_node_incoming,
        peak_node_outgoing: t.peak_node_outgoing,
        limits: sim.policy.limits,
        reversals: t.reversals,
        reversals_any_time: t.reversals_any_time,
        moved_twice: t.moved_twice(),
        moved_twice_any_time: t.moved_twice_any_time(),
        moved_twice_any_kind: t.moved_twice_any_kind(),
        cooldown_violations: t.cooldown_violations,
        domain_violations: t.domain_violations,
        refused_domain: t.refused_domain,
        refused_catch_up: t.refused_catch_up,
        held_rounds: t.held_rounds,
        moves_while_held: t.moves_while_held,
        owned_range: range(&owned),
        copies_range: range(&copies),
        left_on_draining: (0..v.nodes.len())
            .filter(|&n| v.nodes[n].draining)
            .map(|n| copies[n])
            .sum(),
        plan_ms_p50: pct(0.5),
        plan_ms_p99: pct(0.99),
    }
}
