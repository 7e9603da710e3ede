//! Compact mode: the visited set holds a fingerprint per state
//! ([`FpTable`]); each state's fingerprint and parent index go, in index
//! order, to [`Records`] on disk for path rebuilds; whole states live only
//! in the frontier, the states discovered and not yet expanded. The search
//! order, and so every count, depth and shortest path, is the exact mode's:
//! states get the same indices in the same order.
//!
//! What the exact mode does after the search from its arena, this one does
//! while expanding, where each state is whole for the last time: terminal
//! states are counted and the `eventually` properties evaluated on them
//! (the first violation in breadth-first order is kept, as the exact mode
//! finds it by scanning terminals in index order). The edges for the
//! acyclicity check go to an [`EdgeStream`], mostly on disk, as
//! fingerprints; after the search the table becomes a sorted array that
//! turns them into indices, and is freed before the check runs.

use super::edges::EdgeStream;
use super::fingerprint::{collision_probability, fingerprint};
use super::fptable::FpTable;
use super::frontier::Frontier;
use super::records::Records;
use super::{liveness, Footprint, Found, Mode, Options, Path, Progress, Report, ROOT};
use crate::action::Action;
use crate::properties::{Check, EdgeFn as EdgeCheck, Kind, Property, StateFn};
use crate::protocol::MoveModel;
use crate::state::State;
use std::time::Instant;

/// Rebuild the path to state `i`: follow parent links to the initial state,
/// then replay, taking at each step the first action (in alphabet order, as
/// the exact mode does) whose successor has the next state's fingerprint.
fn path_to(m: &MoveModel, v: &Records, i: u32) -> Path {
    let mut chain = vec![v.get(i)];
    while chain.last().expect("non-empty").1 != ROOT {
        chain.push(v.get(chain.last().expect("non-empty").1));
    }
    chain.reverse();
    let init = m.init();
    assert_eq!(
        fingerprint(&init),
        chain[0].0,
        "the parent chain does not start at the initial state: checker bookkeeping broken"
    );
    let mut steps = Vec::new();
    let mut from = init;
    for &(want, _) in &chain[1..] {
        let (a, to) = m
            .actions(&from)
            .find_map(|a| {
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

/// How many successors ahead of its insert the merge prefetches a
/// fingerprint's slot: enough to cover a memory access's latency with the
/// work of the inserts between.
const PREFETCH_AHEAD: usize = 8;

/// Frontier states expanded per batch and worker.
const BATCH_PER_WORKER: usize = 4096;

/// What expanding a run of consecutive frontier states produced, computed
/// where they are whole (by one worker; positions are within the batch).
#[derive(Default)]
struct Expanded {
    /// Successors, state after state, and apart from them their
    /// fingerprints, which the merge reads for every successor (and the
    /// state only for a new one).
    succ: Vec<State>,
    fps: Vec<u64>,
    /// Per state, where its successors end in `succ` and `fps`.
    ends: Vec<usize>,
    /// Terminal states: position, and whether reached through a fault
    /// within tolerance.
    terminals: Vec<(u32, bool)>,
    /// Per property: terminal states in scope, first violating position.
    in_scope: Vec<usize>,
    violation: Vec<Option<u32>>,
    /// Per property: the first edge that decides it (position, action).
    edge: Vec<Option<(u32, Action)>>,
}

/// Expand `states`, the batch's states from position `base` on. Edge
/// properties in `open` (not yet decided) are evaluated on every edge.
fn expand(
    m: &MoveModel,
    props: &[Property],
    live: &[usize],
    open: &[bool],
    states: &[State],
    base: u32,
    out: &mut Expanded,
) {
    out.succ.clear();
    out.fps.clear();
    out.ends.clear();
    out.terminals.clear();
    out.in_scope = vec![0; props.len()];
    out.violation = vec![None; props.len()];
    out.edge = vec![None; props.len()];
    // The edge properties still open, found once rather than per edge.
    let edge_props: Vec<(usize, EdgeCheck, Kind)> = open_checks(props, open, |c| match c {
        Check::Edge(f) => Some(*f),
        _ => None,
    });
    for (k, s) in states.iter().enumerate() {
        let pos = base + k as u32;
        let first = out.succ.len();
        let edge = &mut out.edge;
        let succ = &mut out.succ;
        let fps = &mut out.fps;
        m.for_each_successor(s, |a, t| {
            for &(p, f, kind) in &edge_props {
                if edge[p].is_some() {
                    continue;
                }
                let hit = match kind {
                    Kind::Always => !f(m, s, &a, t),
                    _ => f(m, s, &a, t),
                };
                if hit {
                    edge[p] = Some((pos, a));
                }
            }
            succ.push(*t);
            fps.push(fingerprint(t));
        });
        if out.succ.len() == first {
            out.terminals
                .push((pos, super::after_fault_within_tolerance(m, s)));
            for &p in live {
                let Check::Terminal { scope, goal } = props[p].check else {
                    unreachable!("`live` holds only terminal properties")
                };
                if scope(m, s) {
                    out.in_scope[p] += 1;
                    if out.violation[p].is_none() && !goal(m, s) {
                        out.violation[p] = Some(pos);
                    }
                }
            }
        }
        out.ends.push(out.succ.len());
    }
}

/// Into how many parts to split `n` items of work: starting threads costs
/// more than a small batch (the early and late layers), so those run whole.
fn split(n: usize, workers: usize) -> usize {
    if n < 2048 {
        1
    } else {
        workers
    }
}

/// Run `f` on each of `parts` from its own thread (the first on this one).
fn in_parallel<T: Send>(parts: &mut [T], f: impl Fn(&mut T) + Sync) {
    let Some((first, rest)) = parts.split_first_mut() else {
        return;
    };
    if rest.is_empty() {
        f(first);
        return;
    }
    std::thread::scope(|scope| {
        for part in rest {
            let f = &f;
            scope.spawn(move || f(part));
        }
        f(first);
    });
}

/// The state properties of newly discovered states `(index, state)`: per
/// property, the smallest index where it is decided.
fn eval_new(
    m: &MoveModel,
    props: &[Property],
    open: &[bool],
    new: &[(u32, &State)],
) -> Vec<Option<u32>> {
    let mut first = vec![None; props.len()];
    // The state properties still open, found once rather than per state.
    let state_props: Vec<(usize, StateFn, Kind)> = open_checks(props, open, |c| match c {
        Check::State(f) => Some(*f),
        _ => None,
    });
    for &(j, t) in new {
        for &(p, f, kind) in &state_props {
            if first[p].is_some() {
                continue;
            }
            let hit = match kind {
                Kind::Always => !f(m, t),
                _ => f(m, t),
            };
            if hit {
                first[p] = Some(j);
            }
        }
    }
    first
}

/// New states `(index, state)` to evaluate, and per property the first
/// index that decides it.
type NewJob<'a, 'b> = (&'a [(u32, &'b State)], Vec<Option<u32>>);

/// Per terminal property: terminal states in scope, first violating one.
#[derive(Clone, Copy, Default)]
struct Terminals {
    in_scope: usize,
    first_violation: Option<u32>,
}

/// The search runs in batches of consecutive frontier states. Workers
/// expand contiguous parts of a batch (successors, fingerprints, edge and
/// terminal properties); then one thread inserts the successors in order,
/// so every state gets the index, parent and depth a one-state-at-a-time
/// search gives it; then workers evaluate the state properties of the new
/// states. Each property keeps its first decision in index order, whatever
/// the number of workers: counts, verdicts and paths do not depend on it.
/// The properties still open whose check `pick` takes, with their index
/// and kind: found once per batch rather than per state or edge.
fn open_checks<F>(
    props: &[Property],
    open: &[bool],
    pick: impl Fn(&Check) -> Option<F>,
) -> Vec<(usize, F, Kind)> {
    props
        .iter()
        .enumerate()
        .filter(|&(p, _)| open[p])
        .filter_map(|(p, prop)| pick(&prop.check).map(|f| (p, f, prop.kind)))
        .collect()
}

pub(super) fn search(m: &MoveModel, props: &[Property], opts: &mut Options<'_>) -> Report {
    let start = Instant::now();
    let mut last_progress = start;
    let workers = opts.workers.max(1);
    let mut v = FpTable::new();
    let mut records = Records::new();
    let mut found: Found = vec![None; props.len()];
    let init = m.init();
    v.insert(fingerprint(&init));
    records.push(fingerprint(&init), ROOT);
    super::eval_state(m, props, &mut found, &init, 0);
    let mut frontier = Frontier::new(opts.memory);
    frontier.push(init, 0);

    let live = super::live_props(props);
    let mut stream = (!live.is_empty()).then(EdgeStream::new);
    let mut per_live = vec![Terminals::default(); props.len()];
    let mut terminal_states = 0usize;
    let mut after_faults = 0usize;
    let mut next = 0usize;
    let mut total = 1usize;
    let mut edges = 0usize;
    let mut depth = 0usize;
    let mut layer_end = 1usize;
    let mut complete = true;
    let mut batch: Vec<State> = Vec::new();
    let mut new_bits: Vec<u32> = Vec::new();
    let mut seen: Vec<u64> = Vec::new();
    let mut parts: Vec<Expanded> = (0..workers).map(|_| Expanded::default()).collect();
    'search: loop {
        batch.clear();
        frontier.pop_into(&mut batch, BATCH_PER_WORKER * workers);
        if batch.is_empty() {
            break;
        }
        let open: Vec<bool> = found.iter().map(|f| f.is_none()).collect();
        let per = batch.len().div_ceil(split(batch.len(), workers));
        {
            let mut jobs: Vec<(u32, &[State], &mut Expanded)> = batch
                .chunks(per)
                .zip(parts.iter_mut())
                .enumerate()
                .map(|(w, (states, out))| ((w * per) as u32, states, out))
                .collect();
            in_parallel(&mut jobs, |(base, states, out)| {
                expand(m, props, &live, &open, states, *base, out)
            });
        }
        let used = batch.len().div_ceil(per);

        // Insert in order; `cut` is the last position expanded.
        // New states stay in the workers' buffers until evaluated.
        let mut new: Vec<(u32, &State)> = Vec::new();
        let first = next as u32;
        let mut cut = batch.len() as u32;
        'merge: for out in &parts[..used] {
            let mut from = 0;
            for &end in &out.ends {
                let pos = next as u32 - first;
                if next == layer_end {
                    depth += 1;
                    layer_end = v.len();
                }
                let i = next as u32;
                next += 1;
                // This state's part of the adjacency: which successors are
                // new, and the others' fingerprints.
                new_bits.clear();
                new_bits.resize((end - from).div_ceil(32), 0);
                seen.clear();
                for (j, fp) in out.fps[from..end].iter().enumerate() {
                    if let Some(ahead) = out.fps.get(from + j + PREFETCH_AHEAD) {
                        v.prefetch(*ahead);
                    }
                    let t = &out.succ[from + j];
                    edges += 1;
                    total += 1;
                    if v.insert(*fp) {
                        new.push((v.len() as u32 - 1, t));
                        records.push(*fp, i);
                        let held = v.bytes()
                            + records.bytes().0
                            + stream.as_ref().map_or(0, |e| e.bytes().0);
                        frontier.push(*t, held);
                        new_bits[j / 32] |= 1 << (j % 32);
                    } else {
                        seen.push(*fp);
                    }
                }
                if let Some(e) = stream.as_mut() {
                    e.push_state((end - from) as u32, &new_bits, &seen);
                }
                from = end;
                // Reading the clock costs as much as a successor: not every state.
                if let Some(cb) = opts
                    .progress
                    .as_deref_mut()
                    .filter(|_| next.is_multiple_of(1024))
                {
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
                        cut = pos;
                        break 'merge;
                    }
                }
            }
        }
        for out in &parts[..used] {
            for &(pos, fault) in &out.terminals {
                if pos <= cut {
                    terminal_states += 1;
                    after_faults += fault as usize;
                }
            }
            for p in 0..props.len() {
                per_live[p].in_scope += out.in_scope[p];
                if per_live[p].first_violation.is_none() {
                    per_live[p].first_violation = out.violation[p]
                        .filter(|&pos| pos <= cut)
                        .map(|pos| first + pos);
                }
                if found[p].is_none() {
                    found[p] = out.edge[p]
                        .filter(|&(pos, _)| pos <= cut)
                        .map(|(pos, a)| (first + pos, Some(a)));
                }
            }
        }

        // State properties of the new states, in parallel, first index wins.
        let per = new.len().div_ceil(split(new.len(), workers)).max(1);
        let mut jobs: Vec<NewJob> = new.chunks(per).map(|c| (c, Vec::new())).collect();
        in_parallel(&mut jobs, |(chunk, first)| {
            *first = eval_new(m, props, &open, chunk)
        });
        for (_, hits) in &jobs {
            for (p, hit) in hits.iter().enumerate() {
                if found[p].is_none() {
                    found[p] = hit.map(|j| (j, None));
                }
            }
        }
        if !complete {
            break 'search;
        }
    }
    let unique_states = v.len();
    let mut footprint = Footprint {
        visited_bytes: v.bytes() + records.bytes().0,
        frontier_bytes: frontier.max_in_memory * size_of::<State>(),
        frontier_disk_bytes: frontier.max_disk_bytes,
        ..Footprint::default()
    };
    drop(frontier);

    // Liveness, as in the exact mode: the first violating terminal state in
    // breadth-first order, or a cycle all of whose states are in the
    // property's scope and miss its goal, whichever comes first. A cycle is
    // rare (only mutants make one); then the graph is loaded and the states
    // of its cyclic core are rebuilt by replaying their paths.
    let mut cycle_at = None;
    let mut in_scope: Vec<Option<usize>> = vec![None; props.len()];
    let mut table = Some(v);
    if let (Some(mut by_fp), true) = (stream.take(), complete) {
        // Turn the edges' fingerprints into indices, then free the numbering
        // before the check takes its 4 bytes per state.
        let numbering = table
            .take()
            .expect("the table is still there")
            .into_indices(|f| records.scan(f))
            .unwrap_or_else(|err| {
                panic!("reading back the visited-state records to number them failed: {err}")
            });
        let mut e = by_fp
            .numbered(&numbering, 1)
            .unwrap_or_else(|err| panic!("reading back the adjacency to number it failed: {err}"));
        footprint.liveness_bytes = numbering.bytes().max(unique_states * 4);
        (footprint.edges_bytes, footprint.edges_disk_bytes) = by_fp.bytes();
        drop(by_fp);
        drop(numbering);
        let e = &mut e;
        cycle_at = liveness::find_cycle_stream(e, unique_states).unwrap_or_else(|err| {
            panic!("reading back the adjacency for the acyclicity check failed: {err}")
        });
        let core = cycle_at.map(|_| {
            let core = liveness::core_stream(e, unique_states).unwrap_or_else(|err| {
                panic!("reading back the adjacency for the cycle analysis failed: {err}")
            });
            let states: Vec<State> = core
                .states
                .iter()
                .map(|&i| {
                    let p = path_to(m, &records, i);
                    p.steps.last().map_or(p.init, |(_, s)| *s)
                })
                .collect();
            (core, states)
        });
        for &k in &live {
            found[k] = per_live[k].first_violation.map(|t| (t, None));
            in_scope[k] = Some(per_live[k].in_scope);
            if let Some((core, states)) = &core {
                let Check::Terminal { scope, goal } = props[k].check else {
                    unreachable!("`live` holds only terminal properties")
                };
                let keep: Vec<bool> = states
                    .iter()
                    .map(|st| scope(m, st) && !goal(m, st))
                    .collect();
                if let Some(c) = core.cycle_within(&keep) {
                    found[k] = Some(found[k].map_or((c, None), |(t, a)| (t.min(c), a)));
                }
            }
        }
    }
    drop(stream);
    drop(table);

    let cyclic = cycle_at.is_some();
    let results = super::results(m, props, &found, &in_scope, complete, cyclic, |i| {
        path_to(m, &records, i)
    });
    Report {
        mode: Mode::Compact,
        workers,
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
