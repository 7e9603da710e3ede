//! Follower moves: add a learner on the target, swap it in for the leaving
//! follower, remove the leaving copy (note 1, steps 0 to 2).

use super::{dot, Round, Sources};
use crate::planner::domains::move_keeps_domains;
use crate::planner::feasibility::estimate;
use crate::planner::ops::{Op, PlannedMove};
use crate::planner::policy::band::{improvement, improvement_from, passes_margin, terms};
use crate::planner::score::{contribution, DIMS};
use crate::planner::view::{NodeIx, PartIx};
use std::collections::HashMap;

/// The best move found off one source.
struct Candidate {
    p: PartIx,
    b: NodeIx,
    gain: f64,
    fresh: bool,
    bytes: u64,
    retained: bool,
    w: [f64; DIMS],
    catch_up: crate::planner::feasibility::CatchUp,
}

pub(super) fn plan(r: &mut Round) {
    let n = r.view.nodes.len();
    let mut followed: Vec<Vec<PartIx>> = vec![Vec::new(); n];
    for (p, pl) in r.view.placement.iter().enumerate() {
        if !r.busy[p] {
            for &f in &pl.followers {
                followed[f as usize].push(p as PartIx);
            }
        }
    }
    let mut retained: HashMap<PartIx, Vec<(NodeIx, f64)>> = HashMap::new();
    for c in &r.view.retained {
        if r.view.now_secs - c.since_secs < r.policy.retained_grace_secs {
            retained
                .entry(c.partition)
                .or_default()
                .push((c.node, c.since_secs));
        }
    }
    let now = r.view.now_secs;
    let mut sources = Sources::new(r, r.typical_follower, |a| {
        !followed[a as usize].is_empty()
            && (r.draining(a) || !r.history.node_cooling(r.policy, a, now))
    });
    // Targets are the nodes below the mean at the start of the round; the
    // margin rule keeps each from overshooting it.
    let mut below: Vec<NodeIx> = (0..n as NodeIx)
        .filter(|&b| !r.draining(b) && r.along(b, &r.typical_follower) < 0.0)
        .collect();
    let mut failed = 0;
    while r.budget.cluster_room() && failed < r.policy.sources_failed_max {
        let Some(a) = sources.pop(r) else { break };
        if !r.budget.can_send(a) {
            continue;
        }
        below.retain(|&b| r.budget.can_receive(b));
        if below.is_empty() {
            break;
        }
        let targets = targets(r, a, &below);
        let Some(c) = best_move(r, a, &followed[a as usize], &targets, &retained) else {
            failed += 1;
            continue;
        };
        failed = 0;
        r.budget.take_transfer(a, c.b);
        r.loads.shift(a, c.b, &c.w);
        r.busy[c.p as usize] = true;
        r.moves.push(PlannedMove {
            partition: c.p,
            from: a,
            to: c.b,
            ops: vec![
                Op::AddLearner {
                    partition: c.p,
                    target: c.b,
                },
                Op::Swap {
                    partition: c.p,
                    target: c.b,
                    leaving: a,
                },
                Op::Remove {
                    partition: c.p,
                    leaving: a,
                },
            ],
            bytes: c.bytes,
            from_retained: c.retained,
            catch_up: Some(c.catch_up),
            improvement: c.gain,
        });
        if r.budget.can_send(a) {
            sources.push(r, a);
        }
    }
}

/// The least loaded nodes that can take a copy, fewest first (sync load
/// counts, so a node still catching up ranks lower).
fn targets(r: &Round, a: NodeIx, below: &[NodeIx]) -> Vec<NodeIx> {
    let k = r.policy.targets_tried_max;
    let mut best: Vec<(f64, NodeIx)> = Vec::with_capacity(k + 1);
    for &b in below {
        if b == a || !r.budget.can_receive(b) {
            continue;
        }
        let s = r.loads.score(b).total;
        if best.len() == k && s >= best[k - 1].0 {
            continue;
        }
        let at = best.partition_point(|&(t, _)| t <= s);
        best.insert(at, (s, b));
        best.truncate(k);
    }
    best.into_iter().map(|(_, b)| b).collect()
}

fn best_move(
    r: &mut Round,
    a: NodeIx,
    followed: &[PartIx],
    targets: &[NodeIx],
    retained: &HashMap<PartIx, Vec<(NodeIx, f64)>>,
) -> Option<Candidate> {
    let now = r.view.now_secs;
    let drain = r.draining(a);
    let mut best: Option<Candidate> = None;
    let a_dev = (!drain).then(|| r.weighted_dev(a));
    let t_dev: Vec<[f64; DIMS]> = targets.iter().map(|&b| r.weighted_dev(b)).collect();
    let a_terms = (!drain).then(|| terms(&r.loads, a));
    let t_terms: Vec<_> = targets.iter().map(|&b| terms(&r.loads, b)).collect();
    for &p in followed {
        if r.busy[p as usize] {
            continue;
        }
        if !drain && r.history.partition_cooling(r.policy, p, now) {
            r.refusals.cooldown += 1;
            continue;
        }
        let w = contribution(r.view, r.policy, p, false);
        if a_dev.is_some_and(|d| dot(&d, &w) <= 0.0) {
            continue;
        }
        let pl = &r.view.placement[p as usize];
        let spec = &r.view.partitions[p as usize];
        let enough = r.enough_domains(p);
        for ((&b, b_dev), b_terms) in targets.iter().zip(&t_dev).zip(&t_terms) {
            if pl.holds(b) || (!drain && dot(b_dev, &w) >= 0.0) {
                continue;
            }
            if !move_keeps_domains(r.view, p, a, b, enough) {
                r.refusals.domain += 1;
                continue;
            }
            if r.history.reverses(r.policy, p, a, b, false, now) {
                r.refusals.cooldown += 1;
                continue;
            }
            let (gain, own) = match &a_terms {
                Some(at) => improvement_from(&r.loads, at, b_terms, &w),
                None => improvement(&r.loads, a, b, &w),
            };
            if !passes_margin(r.policy, gain, own) {
                r.refusals.margin += 1;
                break;
            }
            // Targets come least loaded first: the first that may take the
            // copy decides for this partition, whether or not it passes the
            // margin (a more loaded target would gain less).
            if best.as_ref().is_some_and(|c| gain < c.gain * (1.0 - 1e-9)) {
                break;
            }
            // A retained copy needs only what was published since it stopped counting.
            let kept = retained
                .get(&p)
                .and_then(|v| v.iter().find(|(n, _)| *n == b))
                .map(|&(_, since)| spec.incoming_bps * (now - since).max(0.0));
            let bytes = kept.map_or(spec.history_bytes, |k| {
                (k.ceil() as u64).min(spec.history_bytes)
            });
            let node = &r.view.nodes[b as usize];
            let catch_up = match estimate(
                bytes as f64,
                node.bandwidth_bps,
                node.apply_bps,
                spec.incoming_bps,
            ) {
                Ok(c) => c,
                Err(_) => {
                    r.refusals.catch_up_infeasible += 1;
                    continue;
                }
            };
            // Ties go to a partition that never moved (so that repeated
            // moves stay rare), then to the cheaper copy.
            let fresh = r.history.last_copy_move[p as usize].is_none();
            let better = match &best {
                None => true,
                Some(c) => {
                    gain > c.gain * (1.0 + 1e-9)
                        || (gain >= c.gain * (1.0 - 1e-9) && (fresh, c.bytes) > (c.fresh, bytes))
                }
            };
            if better {
                best = Some(Candidate {
                    p,
                    b,
                    gain,
                    fresh,
                    bytes,
                    retained: kept.is_some(),
                    w,
                    catch_up,
                });
            }
            break;
        }
    }
    best
}
