//! Owner handoffs: the owner hands the partition to an admitted, caught-up
//! follower at a quiet point and stays on as a follower. Copies stay where
//! they are; only the owner work moves.

use super::{Round, Sources};
use crate::planner::ops::{Op, PlannedMove};
use crate::planner::policy::band::{improvement, passes_margin};
use crate::planner::score::{contribution, DIMS};
use crate::planner::view::{NodeIx, PartIx};

/// Plan handoffs; with `drain_only`, only off draining nodes.
pub(super) fn plan(r: &mut Round, drain_only: bool) {
    let n = r.view.nodes.len();
    let mut owned: Vec<Vec<PartIx>> = vec![Vec::new(); n];
    for (p, pl) in r.view.placement.iter().enumerate() {
        if !r.busy[p] && !pl.followers.is_empty() {
            owned[pl.owner as usize].push(p as PartIx);
        }
    }
    let now = r.view.now_secs;
    let mut sources = Sources::new(r, r.typical_handoff, |a| {
        !owned[a as usize].is_empty()
            && if drain_only {
                r.draining(a)
            } else {
                !r.draining(a) && !r.history.node_cooling(r.policy, a, now)
            }
    });
    let mut failed = 0;
    while failed < r.policy.sources_failed_max {
        let Some(a) = sources.pop(r) else { break };
        if !r.budget.handoff_room(a) {
            continue;
        }
        let Some((p, b, gain, w)) = best_handoff(r, a, &owned[a as usize]) else {
            failed += 1;
            continue;
        };
        failed = 0;
        r.budget.take_handoff(a, b);
        r.loads.shift(a, b, &w);
        r.busy[p as usize] = true;
        r.moves.push(PlannedMove {
            partition: p,
            from: a,
            to: b,
            ops: vec![Op::Handoff {
                partition: p,
                from: a,
                to: b,
            }],
            bytes: 0,
            from_retained: false,
            catch_up: None,
            improvement: gain,
        });
        sources.push(r, a);
    }
}

fn best_handoff(
    r: &mut Round,
    a: NodeIx,
    owned: &[PartIx],
) -> Option<(PartIx, NodeIx, f64, [f64; DIMS])> {
    let now = r.view.now_secs;
    let drain = r.draining(a);
    let mut best: Option<(PartIx, NodeIx, f64, [f64; DIMS])> = None;
    for &p in owned {
        if r.busy[p as usize] {
            continue;
        }
        if !drain && r.history.partition_cooling(r.policy, p, now) {
            r.refusals.cooldown += 1;
            continue;
        }
        let own = contribution(r.view, r.policy, p, true);
        let fol = contribution(r.view, r.policy, p, false);
        let w: [f64; DIMS] = std::array::from_fn(|d| own[d] - fol[d]);
        if !drain && r.along(a, &w) <= 0.0 {
            continue;
        }
        for &b in &r.view.placement[p as usize].followers {
            if r.draining(b) || !r.budget.handoff_room(b) || (!drain && r.along(b, &w) >= 0.0) {
                continue;
            }
            if r.history.reverses(r.policy, p, a, b, true, now) {
                r.refusals.cooldown += 1;
                continue;
            }
            let (gain, own_term) = improvement(&r.loads, a, b, &w);
            if !passes_margin(r.policy, gain, own_term) {
                r.refusals.margin += 1;
                continue;
            }
            if !matches!(&best, Some(c) if c.2 >= gain) {
                best = Some((p, b, gain, w));
            }
        }
    }
    best
}
