//! An explicit-state breadth-first checker over `MoveModel`.
//!
//! Why not Stateright's own checker for the report: the report must give the
//! shortest counterexample for every property, count edges for liveness, and
//! never call a truncated run complete. Stateright's BFS is still used as an
//! independent cross-check of the state count (see the tests) and for the
//! Explorer.
//!
//! Storage: states live once in an arena; a `hashbrown::HashTable` of arena
//! indices is the visited set; each state keeps its parent index, so a path is
//! rebuilt by walking parents and re-deriving each action from the model.

mod liveness;

use crate::action::Action;
use crate::properties::{self, Check, Class, Kind, Property};
use crate::protocol::MoveModel;
use crate::state::State;
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use serde::Serialize;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// What became of one property.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Holds,
    Violated,
    Reached,
    Unreached,
}

/// A path from the initial state: the initial state, then (action, state) steps.
#[derive(Clone, Debug)]
pub struct Path {
    pub init: State,
    pub steps: Vec<(Action, State)>,
}

#[derive(Clone, Debug)]
pub struct PropResult {
    pub name: &'static str,
    pub kind: Kind,
    pub class: Class,
    pub status: Status,
    /// The shortest counterexample (always/eventually) or example (sometimes).
    pub path: Option<Path>,
    /// For an `eventually` property on a complete, acyclic search: how many
    /// terminal states it spoke to (its scope held there).
    pub terminals_checked: Option<usize>,
}

impl PropResult {
    /// Whether this result is what a correct protocol must produce.
    pub fn ok(&self) -> bool {
        matches!(self.status, Status::Holds | Status::Reached)
    }
}

#[derive(Clone, Debug)]
pub struct Report {
    pub unique_states: usize,
    /// States generated, duplicates included (the initial state counts once).
    pub total_states: usize,
    pub edges: usize,
    pub max_depth: usize,
    pub seconds: f64,
    /// False when the search stopped early (state cap): then nothing "holds".
    pub complete: bool,
    /// Whether the reachable graph is acyclic (checked when a liveness
    /// property applies; a cycle fails every liveness property, with a path
    /// to a state on the cycle).
    pub acyclic: Option<bool>,
    /// Terminal states (no action enabled): where the system rests.
    pub terminal_states: usize,
    /// Terminal states reached through a fault (a crash, a suspicion or a
    /// lost disk) with no more copies down than tolerated: where progress
    /// under faults is really checked.
    pub terminal_states_after_faults: usize,
    pub results: Vec<PropResult>,
}

impl Report {
    /// Every always/eventually holds and every sometimes is reached, on a
    /// complete search.
    pub fn passed(&self) -> bool {
        self.complete && self.results.iter().all(|r| r.ok())
    }
    pub fn result(&self, name: &str) -> &PropResult {
        self.results
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no property named `{name}` in this report"))
    }
}

/// Progress of a running search, reported about once a second.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub unique_states: usize,
    pub total_states: usize,
    pub depth: usize,
    pub seconds: f64,
}

/// Options of one run.
pub struct Options<'a> {
    /// Stop after this many unique states; the report is then incomplete.
    pub max_states: Option<usize>,
    pub progress: Option<&'a mut dyn FnMut(Progress)>,
    pub progress_every: Duration,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            max_states: None,
            progress: None,
            progress_every: Duration::from_secs(1),
        }
    }
}

fn hash_of(s: &State) -> u64 {
    let mut h = FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// The visited set: an arena of states plus an index table.
pub(crate) struct Visited {
    pub states: Vec<State>,
    pub parents: Vec<u32>,
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
}

const ROOT: u32 = u32::MAX;

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
            .alphabet()
            .iter()
            .copied()
            .find(|a| m.apply(from, *a).ok().as_ref() == Some(to))
            .expect("parent link without an action: checker bookkeeping broken");
        steps.push((a, *to));
    }
    Path { init, steps }
}

/// Explore every reachable state of `m` and evaluate its properties.
pub fn check(m: &MoveModel, mut opts: Options<'_>) -> Report {
    let props = properties::for_cfg(&m.cfg);
    check_props(m, &props, &mut opts)
}

/// Explore every reachable state of `m` and evaluate the given properties
/// (for tests that check a property the model does not list, such as a
/// superseded reading kept to show why it was wrong).
pub fn check_properties(m: &MoveModel, props: &[Property], mut opts: Options<'_>) -> Report {
    check_props(m, props, &mut opts)
}

pub(crate) fn check_props(m: &MoveModel, props: &[Property], opts: &mut Options<'_>) -> Report {
    let start = Instant::now();
    let mut last_progress = start;
    let mut v = Visited::new();
    // Discovery per property: a state index, or an edge (source, action).
    let mut found: Vec<Option<(u32, Option<Action>)>> = vec![None; props.len()];
    let init = m.init();
    let (i0, _) = v.insert(&init, ROOT);
    eval_state(m, props, &mut found, &init, i0);

    // Liveness needs the graph's edges for the acyclicity check: keep them
    // as a compressed adjacency list (successor indices, in state order)
    // rather than generating every successor again.
    let live: Vec<usize> = (0..props.len())
        .filter(|k| matches!(props[*k].check, Check::Terminal { .. }))
        .collect();
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
            for (k, p) in props.iter().enumerate() {
                if found[k].is_some() {
                    continue;
                }
                if let Check::Edge(f) = p.check {
                    let hit = match p.kind {
                        Kind::Always => !f(m, &s, a, t),
                        _ => f(m, &s, a, t),
                    };
                    if hit {
                        found[k] = Some((i, Some(*a)));
                    }
                }
            }
            let (j, new) = v.insert(t, i);
            if new {
                eval_state(m, props, &mut found, t, j);
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

    // Liveness: terminal states, on an acyclic graph. Terminals are in
    // breadth-first order, so the first violating one is the shallowest.
    let mut cycle_at = None;
    let mut in_scope: Vec<Option<usize>> = vec![None; props.len()];
    if let (Some(g), true) = (graph.as_ref(), complete) {
        cycle_at = liveness::find_cycle(g);
        for &k in &live {
            let Check::Terminal { scope, goal } = props[k].check else {
                unreachable!("`live` holds only terminal properties")
            };
            if let Some(c) = cycle_at {
                found[k] = Some((c, None));
                continue;
            }
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
        }
    }

    let results = props
        .iter()
        .zip(found.iter())
        .zip(in_scope)
        .map(|((p, f), terminals_checked)| {
            let path = f.map(|(i, a)| {
                let mut path = path_to(m, &v, i);
                if let Some(a) = a {
                    let from = v.states[i as usize];
                    let to = m.apply(&from, a).expect("recorded edge is enabled");
                    path.steps.push((a, to));
                }
                path
            });
            let status = match (p.kind, f.is_some()) {
                (Kind::Sometimes, true) => Status::Reached,
                (Kind::Sometimes, false) => Status::Unreached,
                (_, true) => Status::Violated,
                (_, false) if complete => Status::Holds,
                // An incomplete search proves nothing about always/eventually.
                (_, false) => Status::Unreached,
            };
            PropResult {
                name: p.name,
                kind: p.kind,
                class: p.class,
                status,
                path,
                terminals_checked,
            }
        })
        .collect();
    Report {
        unique_states: v.states.len(),
        total_states: total,
        edges,
        max_depth: depth,
        seconds: start.elapsed().as_secs_f64(),
        complete,
        acyclic: (!live.is_empty() && complete).then_some(cycle_at.is_none()),
        terminal_states: terminals.len(),
        terminal_states_after_faults: terminals
            .iter()
            .filter(|&&t| {
                let st = &v.states[t as usize];
                let b = &st.budget;
                b.crashes + b.suspicions + b.disk_losses > 0 && properties::within_tolerance(m, st)
            })
            .count(),
        results,
    }
}

fn eval_state(
    m: &MoveModel,
    props: &[Property],
    found: &mut [Option<(u32, Option<Action>)>],
    s: &State,
    i: u32,
) {
    for (k, p) in props.iter().enumerate() {
        if found[k].is_some() {
            continue;
        }
        if let Check::State(f) = p.check {
            let hit = match p.kind {
                Kind::Always => !f(m, s),
                _ => f(m, s),
            };
            if hit {
                found[k] = Some((i, None));
            }
        }
    }
}
