//! Compact mode: the visited set holds a fingerprint and a parent index per
//! state ([`FpSet`]); whole states live only in the frontier, the states
//! discovered and not yet expanded. The search order, and so every count,
//! depth and shortest path, is the exact mode's: states get the same indices
//! in the same order.
//!
//! What the exact mode does after the search from its arena, this one does
//! while expanding, where each state is whole for the last time: terminal
//! states are counted and the `eventually` properties evaluated on them
//! (the first violation in breadth-first order is kept, as the exact mode
//! finds it by scanning terminals in index order). The edges for the
//! acyclicity check go to an [`EdgeStream`], mostly on disk.

use super::edges::EdgeStream;
use super::fingerprint::{collision_probability, fingerprint, FpSet};
use super::frontier::Frontier;
use super::{liveness, Footprint, Found, Mode, Options, Path, Progress, Report, ROOT};
use crate::properties::{Check, Property};
use crate::protocol::MoveModel;
use crate::state::State;
use std::time::Instant;

/// Rebuild the path to state `i`: follow parent links to the initial state,
/// then replay, taking at each step the first action (in alphabet order, as
/// the exact mode does) whose successor has the next state's fingerprint.
fn path_to(m: &MoveModel, v: &FpSet, i: u32) -> Path {
    let mut chain = vec![i];
    while v.parents[*chain.last().expect("non-empty") as usize] != ROOT {
        chain.push(v.parents[*chain.last().expect("non-empty") as usize]);
    }
    chain.reverse();
    let init = m.init();
    assert_eq!(
        fingerprint(&init),
        v.fps[chain[0] as usize],
        "the parent chain does not start at the initial state: checker bookkeeping broken"
    );
    let mut steps = Vec::new();
    let mut from = init;
    for &j in &chain[1..] {
        let want = v.fps[j as usize];
        let (a, to) = m
            .alphabet()
            .iter()
            .find_map(|&a| {
                m.apply(&from, a)
                    .ok()
                    .filter(|t| fingerprint(t) == want)
                    .map(|t| (a, t))
            })
            .expect("parent link without an action: checker bookkeeping broken");
        steps.push((a, to));
        from = to;
    }
    Path { init, steps }
}

/// Per terminal property: terminal states in scope, first violating one.
#[derive(Clone, Copy, Default)]
struct Terminals {
    in_scope: usize,
    first_violation: Option<u32>,
}

pub(super) fn search(m: &MoveModel, props: &[Property], opts: &mut Options<'_>) -> Report {
    let start = Instant::now();
    let mut last_progress = start;
    let mut v = FpSet::new();
    let mut found: Found = vec![None; props.len()];
    let init = m.init();
    let (i0, _) = v.insert(fingerprint(&init), ROOT);
    super::eval_state(m, props, &mut found, &init, i0);
    let mut frontier = Frontier::new(opts.memory);
    frontier.push(init, 0);

    let live = super::live_props(props);
    let mut stream = (!live.is_empty()).then(EdgeStream::new);
    let mut per_live = vec![Terminals::default(); props.len()];
    let mut terminal_states = 0usize;
    let mut after_faults = 0usize;
    let mut succ = Vec::new();
    let mut next = 0usize;
    let mut total = 1usize;
    let mut edges = 0usize;
    let mut depth = 0usize;
    let mut layer_end = 1usize;
    let mut complete = true;
    while let Some(s) = frontier.pop() {
        if next == layer_end {
            depth += 1;
            layer_end = v.len();
        }
        let i = next as u32;
        next += 1;
        succ.clear();
        m.successors(&s, &mut succ);
        if succ.is_empty() {
            terminal_states += 1;
            after_faults += super::after_fault_within_tolerance(m, &s) as usize;
            for &k in &live {
                let Check::Terminal { scope, goal } = props[k].check else {
                    unreachable!("`live` holds only terminal properties")
                };
                if scope(m, &s) {
                    let t = &mut per_live[k];
                    t.in_scope += 1;
                    if t.first_violation.is_none() && !goal(m, &s) {
                        t.first_violation = Some(i);
                    }
                }
            }
        }
        if let Some(e) = stream.as_mut() {
            e.push(succ.len() as u32);
        }
        for (a, t) in succ.iter() {
            edges += 1;
            total += 1;
            super::eval_edge(m, props, &mut found, (&s, i), a, t);
            let (j, new) = v.insert(fingerprint(t), i);
            if new {
                super::eval_state(m, props, &mut found, t, j);
                let held = v.bytes() + stream.as_ref().map_or(0, |e| e.bytes().0);
                frontier.push(*t, held);
            }
            if let Some(e) = stream.as_mut() {
                e.push(j);
            }
        }
        if let Some(cb) = opts.progress.as_deref_mut() {
            if last_progress.elapsed() >= opts.progress_every {
                last_progress = Instant::now();
                cb(Progress {
                    unique_states: v.len(),
                    total_states: total,
                    depth,
                    seconds: start.elapsed().as_secs_f64(),
                });
            }
        }
        if opts.max_states.is_some_and(|cap| v.len() >= cap) {
            complete = next >= v.len();
            if !complete {
                break;
            }
        }
    }
    let unique_states = v.len();
    let mut footprint = Footprint {
        visited_bytes: v.bytes(),
        frontier_bytes: frontier.max_in_memory * size_of::<State>(),
        frontier_disk_bytes: frontier.max_on_disk * super::codec::STATE_BYTES,
        ..Footprint::default()
    };
    drop(frontier);
    v.drop_table();

    // Liveness, as in the exact mode: a cycle fails every terminal property
    // at the first state left by Kahn's algorithm; otherwise the first
    // violating terminal state in breadth-first order.
    let mut cycle_at = None;
    let mut in_scope: Vec<Option<usize>> = vec![None; props.len()];
    if let (Some(e), true) = (stream.as_mut(), complete) {
        (footprint.edges_bytes, footprint.edges_disk_bytes) = e.bytes();
        cycle_at = liveness::find_cycle_stream(e, unique_states).unwrap_or_else(|err| {
            panic!("reading back the adjacency for the acyclicity check failed: {err}")
        });
        for &k in &live {
            if let Some(c) = cycle_at {
                found[k] = Some((c, None));
                continue;
            }
            found[k] = per_live[k].first_violation.map(|t| (t, None));
            in_scope[k] = Some(per_live[k].in_scope);
        }
    }
    drop(stream);

    let results = super::results(m, props, &found, &in_scope, complete, |i| path_to(m, &v, i));
    Report {
        mode: Mode::Compact,
        collision_probability: Some(collision_probability(unique_states)),
        footprint,
        unique_states,
        total_states: total,
        edges,
        max_depth: depth,
        seconds: start.elapsed().as_secs_f64(),
        complete,
        acyclic: (!live.is_empty() && complete).then_some(cycle_at.is_none()),
        terminal_states,
        terminal_states_after_faults: after_faults,
        results,
    }
}
