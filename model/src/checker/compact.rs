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
use super::{
    liveness, Acyclicity, AcyclicityCheck, Footprint, Found, Mode, Options, Path, Progress, Report,
    ROOT,
};
use crate::action::Action;
use crate::properties::{Check, EdgeFn as EdgeCheck, Kind, Property, StateFn};
use crate::protocol::MoveModel;
use crate::state::State;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
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

/// Frontier states a thread claims at once: small enough that the threads
/// finish a batch together, large enough that claiming costs nothing.
const CHUNK_STATES: usize = 512;

/// What expanding a run of consecutive frontier states produced, computed
/// where they are whole (by one worker; positions are within the batch).
#[derive(Default)]
struct Expanded {
    /// Successors, state after state (the first `used`; the rest are left
    /// over, to be overwritten), and apart from them their fingerprints,
    /// which the merge reads for every successor (and the state only for a
    /// new one).
    succ: Vec<State>,
    used: usize,
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
    /// Per state property: the first expanded state that decides it
    /// (position). Every state is expanded once, in index order, whole:
    /// there its state properties are evaluated too.
    state: Vec<Option<u32>>,
    /// With the progress measure: the edges that leave it unchanged
    /// (source and target fingerprints), and the first edge that lowers it
    /// (position, action).
    flat: Vec<(u64, u64)>,
    fell: Option<(u32, Action)>,
}

/// Expand `states`, the batch's states from position `base` on. Edge
/// properties in `open` (not yet decided) are evaluated on every edge.
#[allow(clippy::too_many_arguments)]
fn expand(
    m: &MoveModel,
    props: &[Property],
    live: &[usize],
    open: &[bool],
    measured: bool,
    states: &[State],
    base: u32,
    out: &mut Expanded,
) {
    out.flat.clear();
    out.fell = None;
    out.used = 0;
    out.fps.clear();
    out.ends.clear();
    out.terminals.clear();
    out.in_scope = vec![0; props.len()];
    out.violation = vec![None; props.len()];
    out.edge = vec![None; props.len()];
    out.state = vec![None; props.len()];
    // The edge properties still open, found once rather than per edge.
    let edge_props: Vec<(usize, EdgeCheck, Kind)> = open_checks(props, open, |c| match c {
        Check::Edge(f) => Some(*f),
        _ => None,
    });
    let state_props = state_checks(props, open);
    for (k, s) in states.iter().enumerate() {
        let pos = base + k as u32;
        eval_at(m, &state_props, &mut out.state, s, pos);
        let first = out.used;
        let edge = &mut out.edge;
        let fps = &mut out.fps;
        let (flat, fell) = (&mut out.flat, &mut out.fell);
        let ms = measured.then(|| m.measure(s));
        let mut from_fp = None;
        m.successors_in(s, &mut out.succ, &mut out.used, |a, t| {
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
            let fp = fingerprint(t);
            if let Some(ms) = ms {
                match m.measure(t).cmp(&ms) {
                    std::cmp::Ordering::Greater => {}
                    std::cmp::Ordering::Equal => {
                        flat.push((*from_fp.get_or_insert_with(|| fingerprint(s)), fp));
                    }
                    std::cmp::Ordering::Less => {
                        fell.get_or_insert((pos, a));
                    }
                }
            }
            fps.push(fp);
        });
        if out.used == first {
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
        out.ends.push(out.used);
    }
}

/// The state properties still open.
fn state_checks(props: &[Property], open: &[bool]) -> Vec<(usize, StateFn, Kind)> {
    open_checks(props, open, |c| match c {
        Check::State(f) => Some(*f),
        _ => None,
    })
}

/// Evaluate `checks` on state `s` at `at` (a batch position or an index),
/// keeping per property the first that decides it.
fn eval_at(
    m: &MoveModel,
    checks: &[(usize, StateFn, Kind)],
    first: &mut [Option<u32>],
    s: &State,
    at: u32,
) {
    for &(p, f, kind) in checks {
        if first[p].is_some() {
            continue;
        }
        let hit = match kind {
            Kind::Always => !f(m, s),
            _ => f(m, s),
        };
        if hit {
            first[p] = Some(at);
        }
    }
}

/// Per terminal property: terminal states in scope, first violating one.
#[derive(Clone, Copy, Default)]
struct Terminals {
    in_scope: usize,
    first_violation: Option<u32>,
}

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

/// A batch's work: chunks of [`CHUNK_STATES`] consecutive states, each
/// claimed by whichever thread is free and expanded into its own slot.
struct Work {
    slots: Vec<Mutex<Expanded>>,
    claim: AtomicUsize,
}

impl Work {
    fn new() -> Work {
        Work {
            slots: Vec::new(),
            claim: AtomicUsize::new(0),
        }
    }

    /// Make ready for `batch`: a slot per chunk, none claimed.
    fn reset(&mut self, batch: &[State]) {
        let chunks = batch.len().div_ceil(CHUNK_STATES);
        while self.slots.len() < chunks {
            self.slots.push(Mutex::new(Expanded::default()));
        }
        self.claim = AtomicUsize::new(0);
    }

    /// Claim and expand chunks of `batch` until none is left.
    fn help(
        &self,
        m: &MoveModel,
        props: &[Property],
        live: &[usize],
        open: &[bool],
        measured: bool,
        batch: &[State],
    ) {
        let chunks = batch.len().div_ceil(CHUNK_STATES);
        loop {
            let k = self.claim.fetch_add(1, Ordering::Relaxed);
            if k >= chunks {
                return;
            }
            let lo = k * CHUNK_STATES;
            let hi = (lo + CHUNK_STATES).min(batch.len());
            let mut out = self.slots[k]
                .lock()
                .expect("invariant broken: a chunk's slot poisoned by a panicking worker");
            expand(
                m,
                props,
                live,
                open,
                measured,
                &batch[lo..hi],
                lo as u32,
                &mut out,
            );
        }
    }

    /// The expanded chunks of a batch of `n` states, in order.
    fn done(&mut self, n: usize) -> impl Iterator<Item = &mut Expanded> {
        self.slots[..n.div_ceil(CHUNK_STATES)]
            .iter_mut()
            .map(|slot| {
                slot.get_mut()
                    .expect("invariant broken: a chunk's slot poisoned by a panicking worker")
            })
    }
}

/// Expand all of `batch` into `work` on `workers` threads (this one and
/// `workers - 1` others).
#[allow(clippy::too_many_arguments)]
fn expand_all(
    m: &MoveModel,
    props: &[Property],
    live: &[usize],
    open: &[bool],
    measured: bool,
    batch: &[State],
    work: &mut Work,
    workers: usize,
) {
    work.reset(batch);
    let work = &*work;
    std::thread::scope(|scope| {
        for _ in 1..workers.min(batch.len().div_ceil(CHUNK_STATES)) {
            scope.spawn(|| work.help(m, props, live, open, measured, batch));
        }
        work.help(m, props, live, open, measured, batch);
    });
}

/// The search runs in batches of consecutive frontier states, in index
/// order. Workers expand a batch in chunks, each claimed by whichever
/// thread is free (successors, fingerprints, the state properties of the
/// expanded states, edge and terminal properties); then one thread inserts
/// the successors in order, so every state gets the index, parent and depth
/// a one-state-at-a-time search gives it. With more than one worker the two
/// overlap: while one thread inserts batch k's successors (and writes the
/// frontier, the records and the edges), the others expand batch k + 1,
/// and the inserting thread joins them when it is done. Batch k + 1 is
/// taken from the frontier before batch k's new states join it; it is the
/// next states in index order all the same, since the frontier is first
/// in, first out and new states join at its back (a batch comes out short,
/// or empty, while the frontier is shallow). Each property keeps its first
/// decision in index order, whatever the number of workers: counts,
/// verdicts and paths do not depend on it.
pub(super) fn search(m: &MoveModel, props: &[Property], opts: &mut Options<'_>) -> Report {
    let start = Instant::now();
    let live = !super::live_props(props).is_empty();
    let why = match opts.acyclicity {
        AcyclicityCheck::Edges => "asked for".to_string(),
        AcyclicityCheck::Auto if m.cfg.net => {
            "messages in flight: a delivery that changes nothing leaves the measure unchanged, \
             and not every one is counted"
                .to_string()
        }
        _ if live => match search_with(m, props, opts, By::Measure, start) {
            Ok(report) => return report,
            Err(why) => why,
        },
        _ => String::new(),
    };
    search_with(m, props, opts, By::Edges(why), start)
        .unwrap_or_else(|why| panic!("invariant broken: the search by every edge gave up: {why}"))
}

/// How a search checks acyclicity: by the progress measure, or by every
/// edge (and why not by the measure).
enum By {
    Measure,
    Edges(String),
}

/// Flat edges kept at most (16 bytes each) before the measure is given up
/// for the whole adjacency.
const FLAT_EDGES_MAX: usize = 1 << 25;

/// Whether the flat edges (source and target fingerprints) hold a cycle.
fn flat_cycle(flat: &[(u64, u64)]) -> bool {
    let mut ids: std::collections::HashMap<u64, u32> =
        std::collections::HashMap::with_capacity(flat.len());
    let mut id = |fp: u64| {
        let n = ids.len() as u32;
        *ids.entry(fp).or_insert(n)
    };
    let mut edges: Vec<(u32, u32)> = flat.iter().map(|&(a, b)| (id(a), id(b))).collect();
    edges.sort_unstable();
    let mut g = liveness::Graph {
        targets: edges.iter().map(|&(_, b)| b).collect(),
        ends: Vec::with_capacity(ids.len()),
    };
    let mut at = 0;
    for i in 0..ids.len() as u32 {
        while at < edges.len() && edges[at].0 == i {
            at += 1;
        }
        g.ends.push(at);
    }
    liveness::find_cycle(&g).is_some()
}

/// The search, with acyclicity checked by the progress measure (the flat
/// edges only) or by every edge. With the measure it
/// gives up, saying why, when an edge lowers the measure, when the flat
/// edges hold a cycle (the whole adjacency then finds and reports it as
/// it always does) or when there are too many of them.
fn search_with(
    m: &MoveModel,
    props: &[Property],
    opts: &mut Options<'_>,
    by: By,
    start: Instant,
) -> Result<Report, String> {
    let measured = matches!(by, By::Measure);
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
    let mut stream = (!live.is_empty() && !measured).then(EdgeStream::new);
    let mut flat: Vec<(u64, u64)> = Vec::new();
    let mut per_live = vec![Terminals::default(); props.len()];
    let mut terminal_states = 0usize;
    let mut after_faults = 0usize;
    let mut next = 0usize;
    let mut total = 1usize;
    let mut edges = 0usize;
    let mut depth = 0usize;
    let mut layer_end = 1usize;
    let mut complete = true;
    let mut new_bits: Vec<u32> = Vec::new();
    let mut seen: Vec<u64> = Vec::new();
    let (mut work, mut work_next) = (Work::new(), Work::new());
    let (mut batch, mut batch_next): (Vec<State>, Vec<State>) = (Vec::new(), Vec::new());
    let open_of = |found: &Found| -> Vec<bool> { found.iter().map(|f| f.is_none()).collect() };
    // At least a whole chunk of the frontier, which is then moved into the
    // batch rather than copied.
    let batch_states = BATCH_PER_WORKER * workers.max(2);
    'search: loop {
        if batch.is_empty() {
            // The first batch, one worker, or the frontier was empty before
            // the last batch's new states joined it (the first layers, or
            // the search's end).
            frontier.pop_into(&mut batch, batch_states);
            if batch.is_empty() {
                break;
            }
            // One worker expands each chunk just before inserting it (below),
            // while its successors are still in cache.
            if workers > 1 {
                expand_all(
                    m,
                    props,
                    &live,
                    &open_of(&found),
                    measured,
                    &batch,
                    &mut work,
                    workers,
                );
            }
        }
        batch_next.clear();
        if workers > 1 {
            frontier.pop_into(&mut batch_next, batch_states);
        }
        let open = open_of(&found);
        work_next.reset(&batch_next);
        // Insert batch k in order while the other workers expand batch
        // k + 1; this thread joins them once it is done. `cut` is the last
        // position of batch k expanded.
        let first = next as u32;
        let mut cut = batch.len() as u32;
        // Insert an expanded chunk's successors in order; the position of
        // the state at which `--max-states` stopped the search, if it did.
        let mut merge = |out: &Expanded| -> Option<u32> {
            let mut from = 0;
            for &end in &out.ends {
                let pos = next as u32 - first;
                if next == layer_end {
                    depth += 1;
                    layer_end = v.len();
                }
                let i = next as u32;
                next += 1;
                // This state's part of the adjacency: which successors
                // are new, and the others' fingerprints.
                new_bits.clear();
                new_bits.resize((end - from).div_ceil(32), 0);
                seen.clear();
                for (j, fp) in out.fps[from..end].iter().enumerate() {
                    if let Some(ahead) = out.fps.get(from + j + PREFETCH_AHEAD) {
                        v.prefetch(*ahead);
                    }
                    edges += 1;
                    total += 1;
                    if v.insert(*fp) {
                        records.push(*fp, i);
                        let held = v.bytes()
                            + records.bytes().0
                            + stream.as_ref().map_or(0, |e| e.bytes().0)
                            + flat.capacity() * 16;
                        frontier.push(out.succ[from + j], held);
                        new_bits[j / 32] |= 1 << (j % 32);
                    } else {
                        seen.push(*fp);
                    }
                }
                if let Some(e) = stream.as_mut() {
                    e.push_state((end - from) as u32, &new_bits, &seen);
                }
                from = end;
                // Reading the clock costs as much as a successor: not
                // every state.
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
                        return Some(pos);
                    }
                }
            }
            None
        };
        if workers == 1 {
            // Expand a chunk, then insert it while its successors are in
            // cache. Past a cut the chunks are still expanded, for the state
            // properties of every state of the batch (as with more workers).
            let open = open_of(&found);
            work.reset(&batch);
            let mut stopped = false;
            for (k, slot) in work.slots[..batch.len().div_ceil(CHUNK_STATES)]
                .iter_mut()
                .enumerate()
            {
                let out = slot
                    .get_mut()
                    .expect("invariant broken: a chunk's slot poisoned by a panicking worker");
                let lo = k * CHUNK_STATES;
                let hi = (lo + CHUNK_STATES).min(batch.len());
                expand(
                    m,
                    props,
                    &live,
                    &open,
                    measured,
                    &batch[lo..hi],
                    lo as u32,
                    out,
                );
                if !stopped {
                    if let Some(pos) = merge(out) {
                        cut = pos;
                        stopped = true;
                    }
                }
            }
        }
        std::thread::scope(|scope| {
            let (next_batch, next_work, open, live) = (&batch_next, &work_next, &open, &live);
            let helpers = (workers - 1).min(next_batch.len().div_ceil(CHUNK_STATES));
            for _ in 0..helpers {
                scope.spawn(move || next_work.help(m, props, live, open, measured, next_batch));
            }
            if workers > 1 {
                for out in work.done(batch.len()) {
                    if let Some(pos) = merge(out) {
                        cut = pos;
                        break;
                    }
                }
            }
            next_work.help(m, props, live, open, measured, next_batch);
        });
        for out in work.done(batch.len()) {
            if let Some((_, a)) = out.fell {
                return Err(format!("the measure fell along a `{}` edge", a.name()));
            }
            flat.extend_from_slice(&out.flat);
            if flat.len() > FLAT_EDGES_MAX {
                return Err(format!("more than {FLAT_EDGES_MAX} flat edges"));
            }
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
                    // Every state of the batch was discovered, so its state
                    // properties count whether or not it was expanded.
                    found[p] = out.state[p].map(|pos| (first + pos, None)).or_else(|| {
                        out.edge[p]
                            .filter(|&(pos, _)| pos <= cut)
                            .map(|(pos, a)| (first + pos, Some(a)))
                    });
                }
            }
        }
        if !complete {
            // The states discovered and never expanded: the rest of this
            // batch was, and their state properties are in; the next batch
            // and what is left in the frontier are evaluated here, in index
            // order, as the other states were where they were expanded.
            let checks = state_checks(props, &open_of(&found));
            let mut hits = vec![None; props.len()];
            let mut at = first + batch.len() as u32;
            let mut rest = std::mem::take(&mut batch_next);
            loop {
                for st in &rest {
                    eval_at(m, &checks, &mut hits, st, at);
                    at += 1;
                }
                rest.clear();
                frontier.pop_into(&mut rest, BATCH_PER_WORKER);
                if rest.is_empty() {
                    break;
                }
            }
            for (p, hit) in hits.into_iter().enumerate() {
                if found[p].is_none() {
                    found[p] = hit.map(|i| (i, None));
                }
            }
            break 'search;
        }
        std::mem::swap(&mut batch, &mut batch_next);
        std::mem::swap(&mut work, &mut work_next);
    }
    let unique_states = v.len();
    let mut footprint = Footprint {
        visited_bytes: v.bytes() + records.bytes().0,
        frontier_bytes: frontier.max_in_memory * size_of::<State>(),
        frontier_disk_bytes: frontier.max_disk_bytes(),
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
    let mut acyclicity = None;
    if measured && complete && !live.is_empty() {
        // Every edge kept or raised the measure, so a cycle lies within the
        // flat edges.
        footprint.liveness_bytes = flat.capacity() * 16;
        if flat_cycle(&flat) {
            return Err("the flat edges hold a cycle".to_string());
        }
        for &k in &live {
            found[k] = per_live[k].first_violation.map(|t| (t, None));
            in_scope[k] = Some(per_live[k].in_scope);
        }
        acyclicity = Some(Acyclicity::Measure {
            flat_edges: flat.len(),
        });
    }
    drop(flat);
    let mut table = Some(v);
    if let (Some(mut by_fp), true) = (stream.take(), complete) {
        // Turn the edges' fingerprints into indices, then free the numbering
        // before the check takes its 4 bytes per state.
        let numbering = table
            .take()
            .expect("the table is still there")
            .into_indices(workers, |f| records.scan(f))
            .unwrap_or_else(|err| {
                panic!("reading back the visited-state records to number them failed: {err}")
            });
        let mut e = by_fp
            .numbered(&numbering, 1, workers)
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
        if let By::Edges(why) = by {
            acyclicity = Some(Acyclicity::Edges { why });
        }
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
    Ok(Report {
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
        acyclicity,
        terminal_states,
        terminal_states_after_faults: after_faults,
        results,
    })
}
