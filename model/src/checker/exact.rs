//! Exact mode: every visited state stored whole, once, in an arena; a
//! `hashbrown::HashTable` of arena indices is the visited set; each state
//! keeps its parent index, so a path is rebuilt by walking parents and
//! re-deriving each action from the model. No fingerprint can collide here,
//! which is what the compact mode is compared against.

use super::{liveness, Footprint, Found, Mode, Options, Path, Progress, Report, ROOT};
use crate::properties::{Check, Property};
use crate::protocol::MoveModel;
use crate::state::State;
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};
use std::time::Instant;

fn hash_of(s: &State) -> u64 {
    let mut h = FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// The visited set: an arena of states plus an index table.
struct Visited {
    states: Vec<State>,
    parents: Vec<u32>,
    /// Each state's hash, kept so that growing the table rehashes nothing.
    hashes: Vec<u64>,
    table: HashTable<u32>,
}

impl Visited {
    fn new() -> Visited {
        Visited {
            states: Vec::new(),
            parents: Vec::new(),
            hashes: Vec::new(),
            table: HashTable::new(),
        }
    }
    /// The index of `s`, inserting it with `parent` if new.
    fn insert(&mut self, s: &State, parent: u32) -> (u32, bool) {
        let h = hash_of(s);
        let states = &self.states;
        if let Some(&i) = self.table.find(h, |&i| states[i as usize] == *s) {
            return (i, false);
        }
        let i =
            u32::try_from(self.states.len()).expect("more than 2^32 states: state index overflow");
        self.states.push(*s);
        self.parents.push(parent);
        self.hashes.push(h);
        let hashes = &self.hashes;
        self.table.insert_unique(h, i, |&j| hashes[j as usize]);
        (i, true)
    }
    fn bytes(&self) -> usize {
        self.states.len() * size_of::<State>()
            + self.parents.len() * 4
            + self.hashes.len() * 8
            + self.table.allocation_size()
    }
}

/// Rebuild the path to state `i`, re-deriving each action from the model.
fn path_to(m: &MoveModel, v: &Visited, i: u32) -> Path {
    let mut chain = vec![i];
    while v.parents[*chain.last().expect("non-empty") as usize] != ROOT {
        chain.push(v.parents[*chain.last().expect("non-empty") as usize]);
    }
    chain.reverse();
    let init = v.states[chain[0] as usize];
    let mut steps = Vec::new();
    for w in chain.windows(2) {
        let (from, to) = (&v.states[w[0] as usize], &v.states[w[1] as usize]);
        let a = m
            .actions(from)
            .find(|a| m.apply(from, *a).ok().as_ref() == Some(to))
            .expect("parent link without an action: checker bookkeeping broken");
        steps.push((a, *to));
    }
    Path { init, steps }
}

pub(super) fn search(m: &MoveModel, props: &[Property], opts: &mut Options<'_>) -> Report {
    let start = Instant::now();
    let mut last_progress = start;
    let mut v = Visited::new();
    let mut found: Found = vec![None; props.len()];
    let init = m.init();
    let (i0, _) = v.insert(&init, ROOT);
    super::eval_state(m, props, &mut found, &init, i0);

    // Liveness needs the graph's edges for the acyclicity check: keep them
    // as a compressed adjacency list (successor indices, in state order)
    // rather than generating every successor again.
    let live = super::live_props(props);
    let mut graph = (!live.is_empty()).then(liveness::Graph::default);
    let mut succ = Vec::new();
    let mut next = 0usize;
    let mut total = 1usize;
    let mut edges = 0usize;
    let mut depth = 0usize;
    let mut layer_end = 1usize;
    let mut terminals: Vec<u32> = Vec::new();
    let mut complete = true;
    while next < v.states.len() {
        if next == layer_end {
            depth += 1;
            layer_end = v.states.len();
        }
        let i = next as u32;
        let s = v.states[next];
        next += 1;
        succ.clear();
        m.successors(&s, &mut succ);
        if succ.is_empty() {
            terminals.push(i);
        }
        for (a, t) in succ.iter() {
            edges += 1;
            total += 1;
            super::eval_edge(m, props, &mut found, (&s, i), a, t);
            let (j, new) = v.insert(t, i);
            if new {
                super::eval_state(m, props, &mut found, t, j);
            }
            if let Some(g) = graph.as_mut() {
                g.targets.push(j);
            }
        }
        if let Some(g) = graph.as_mut() {
            g.ends.push(g.targets.len());
        }
        if let Some(cb) = opts.progress.as_deref_mut() {
            if last_progress.elapsed() >= opts.progress_every {
                last_progress = Instant::now();
                cb(Progress {
                    unique_states: v.states.len(),
                    total_states: total,
                    depth,
                    seconds: start.elapsed().as_secs_f64(),
                });
            }
        }
        if opts.max_states.is_some_and(|cap| v.states.len() >= cap) {
            complete = next >= v.states.len();
            if !complete {
                break;
            }
        }
    }

    // Liveness: a property fails at a terminal state in its scope that
    // misses its goal (terminals are in breadth-first order, so the first is
    // the shallowest), or on a cycle all of whose states are in its scope
    // and miss its goal (the partition never rests there: TLA+'s leads-to
    // under weak fairness, `tla/LiveMove.tla`), whichever comes first.
    let mut cycle_at = None;
    let mut in_scope: Vec<Option<usize>> = vec![None; props.len()];
    if let (Some(g), true) = (graph.as_ref(), complete) {
        cycle_at = liveness::find_cycle(g);
        let core = cycle_at.map(|_| liveness::core(g));
        for &k in &live {
            let Check::Terminal { scope, goal } = props[k].check else {
                unreachable!("`live` holds only terminal properties")
            };
            let mut checked = 0usize;
            for &t in &terminals {
                let st = &v.states[t as usize];
                if scope(m, st) {
                    checked += 1;
                    if found[k].is_none() && !goal(m, st) {
                        found[k] = Some((t, None));
                    }
                }
            }
            in_scope[k] = Some(checked);
            if let Some(core) = &core {
                let keep: Vec<bool> = core
                    .states
                    .iter()
                    .map(|&i| {
                        let st = &v.states[i as usize];
                        scope(m, st) && !goal(m, st)
                    })
                    .collect();
                if let Some(c) = core.cycle_within(&keep) {
                    found[k] = Some(found[k].map_or((c, None), |(t, a)| (t.min(c), a)));
                }
            }
        }
    }

    let footprint = Footprint {
        visited_bytes: v.bytes(),
        frontier_bytes: 0,
        edges_bytes: graph
            .as_ref()
            .map_or(0, |g| g.targets.len() * 4 + g.ends.len() * 8),
        edges_disk_bytes: 0,
        frontier_disk_bytes: 0,
        liveness_bytes: 0,
    };
    let cyclic = cycle_at.is_some();
    let results = super::results(m, props, &found, &in_scope, complete, cyclic, |i| {
        path_to(m, &v, i)
    });
    Report {
        mode: Mode::Exact,
        workers: 1,
        collision_probability: None,
        footprint,
        unique_states: v.states.len(),
        total_states: total,
        edges,
        max_depth: depth,
        seconds: start.elapsed().as_secs_f64(),
        complete,
        acyclic: (!live.is_empty() && complete).then_some(cycle_at.is_none()),
        acyclicity: (!live.is_empty() && complete).then_some(super::Acyclicity::Edges {
            why: "exact mode".to_string(),
        }),
        terminal_states: terminals.len(),
        terminal_states_after_faults: terminals
            .iter()
            .filter(|&&t| super::after_fault_within_tolerance(m, &v.states[t as usize]))
            .count(),
        results,
    }
}
