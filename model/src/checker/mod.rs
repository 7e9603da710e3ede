//! Explicit-state breadth-first checkers over `MoveModel`.
//!
//! Why not Stateright's own checker for the report: the report must give the
//! shortest counterexample for every property, count edges for liveness, and
//! never call a truncated run complete. Stateright's BFS is still used as an
//! independent cross-check of the state count (see the tests) and for the
//! Explorer.
//!
//! Two storage modes explore the same graph in the same order:
//! - [`Mode::Compact`] (the default, `compact.rs`) keeps a 64-bit fingerprint
//!   per visited state in memory (`fptable.rs`, about 10 bytes a state) and
//!   its parent index on disk (`records.rs`); whole states live only in the
//!   frontier. A path is rebuilt by replaying actions from the initial state
//!   along parent links, matching fingerprints. A fingerprint collision could
//!   hide a state, so the report carries the estimated probability of one.
//! - [`Mode::Exact`] (`exact.rs`) keeps every state whole in an arena: no
//!   collision is possible, at about twenty times the memory.
//!
//! [`swarm`] is not a search of the whole graph: seeded random walks of
//! bounded depth for what stays beyond exhaustive reach.

mod codec;
mod compact;
mod edges;
mod exact;
mod fingerprint;
mod fptable;
mod frontier;
mod liveness;
mod records;
mod scratch;
pub mod swarm;

use crate::action::Action;
use crate::properties::{self, Check, Class, Kind, Property};
use crate::protocol::MoveModel;
use crate::state::State;
use serde::Serialize;
use std::time::Duration;

pub use fingerprint::collision_probability;

/// How visited states are stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// 64-bit fingerprints (parent indices on disk); whole states only in
    /// the frontier.
    #[default]
    Compact,
    /// Every state whole, in an arena.
    Exact,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Compact => "compact",
            Mode::Exact => "exact",
        })
    }
}

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

/// Where the checker's own memory went, from the capacities of its
/// structures at their largest (not the process's resident set).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Footprint {
    /// The visited set: arena and index table, or fingerprints (parent
    /// links and the fingerprints in index order go to disk).
    pub visited_bytes: usize,
    /// Whole states waiting to be expanded and held in memory, at most.
    pub frontier_bytes: usize,
    /// Frontier states written to disk past the memory budget, at most.
    pub frontier_disk_bytes: usize,
    /// The adjacency kept for the acyclicity check, in memory.
    pub edges_bytes: usize,
    /// The adjacency written to a temporary file instead.
    pub edges_disk_bytes: usize,
    /// The acyclicity check, after the search: the sorted fingerprints that
    /// renumber the adjacency, then 4 bytes of in-degree per state.
    pub liveness_bytes: usize,
}

#[derive(Clone, Debug)]
pub struct Report {
    /// How visited states were stored.
    pub mode: Mode,
    /// Threads that expanded states.
    pub workers: usize,
    /// Compact mode: the estimated probability that a fingerprint collision
    /// hid a state ([`collision_probability`]). None in exact mode.
    pub collision_probability: Option<f64>,
    pub footprint: Footprint,
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
    /// How acyclicity was checked (when it was).
    pub acyclicity: Option<Acyclicity>,
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

/// How the acyclicity behind the `eventually` properties may be checked
/// (compact mode; the exact mode always keeps every edge).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum AcyclicityCheck {
    /// By the progress measure ([`crate::protocol::Measure`]) where the
    /// protocol is meant to keep it (every step atomic: `net` off), and by
    /// every edge otherwise.
    #[default]
    Auto,
    /// By the progress measure, falling back to every edge if it falls.
    Measure,
    /// By every edge, numbered after the search.
    Edges,
}

/// How acyclicity was checked.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Acyclicity {
    /// The progress measure never fell along an edge, so every cycle would
    /// lie within the flat edges (the measure unchanged); those were
    /// checked and hold none.
    Measure { flat_edges: usize },
    /// Every edge was kept and checked; `why` says why not by the measure.
    Edges { why: String },
}

impl std::fmt::Display for Acyclicity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Acyclicity::Measure { flat_edges } => write!(
                f,
                "by the progress measure, which no edge lowers ({flat_edges} flat edges checked)"
            ),
            Acyclicity::Edges { why } => write!(f, "by every edge ({why})"),
        }
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
    pub mode: Mode,
    /// Compact mode: bytes the search may hold in memory before frontier
    /// states go to disk (the visited set itself always stays in memory).
    /// None: the frontier stays in memory.
    pub memory: Option<usize>,
    /// Compact mode: threads expanding states. Counts, verdicts and paths
    /// are the same for any number.
    pub workers: usize,
    /// Compact mode: how acyclicity may be checked. Verdicts and paths are
    /// the same either way.
    pub acyclicity: AcyclicityCheck,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            max_states: None,
            progress: None,
            progress_every: Duration::from_secs(1),
            mode: Mode::default(),
            memory: None,
            workers: 1,
            acyclicity: AcyclicityCheck::Auto,
        }
    }
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

/// Run a swarm of random walks over `m` against its properties (see
/// [`swarm`]).
pub fn check_swarm(m: &MoveModel, opts: swarm::SwarmOptions) -> swarm::SwarmReport {
    swarm::swarm(m, &properties::for_cfg(&m.cfg), opts)
}

/// [`check_swarm`] with a progress report about once a second.
pub fn check_swarm_with_progress(
    m: &MoveModel,
    opts: swarm::SwarmOptions,
    progress: &mut dyn FnMut(swarm::SwarmProgress),
) -> swarm::SwarmReport {
    swarm::swarm_with_progress(m, &properties::for_cfg(&m.cfg), opts, Some(progress))
}

pub(crate) fn check_props(m: &MoveModel, props: &[Property], opts: &mut Options<'_>) -> Report {
    match opts.mode {
        Mode::Exact => exact::search(m, props, opts),
        Mode::Compact => compact::search(m, props, opts),
    }
}

const ROOT: u32 = u32::MAX;

/// Per property, where it was first decided: a state index, or an edge
/// (source index, action).
type Found = Vec<Option<(u32, Option<Action>)>>;

/// The indices of the terminal (`eventually`) properties.
fn live_props(props: &[Property]) -> Vec<usize> {
    (0..props.len())
        .filter(|k| matches!(props[*k].check, Check::Terminal { .. }))
        .collect()
}

/// Evaluate the state properties on a newly discovered state.
fn eval_state(m: &MoveModel, props: &[Property], found: &mut Found, s: &State, i: u32) {
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

/// Evaluate the edge properties on the step `s --a--> t`, `s` at index `i`.
fn eval_edge(
    m: &MoveModel,
    props: &[Property],
    found: &mut Found,
    (s, i): (&State, u32),
    a: &Action,
    t: &State,
) {
    for (k, p) in props.iter().enumerate() {
        if found[k].is_some() {
            continue;
        }
        if let Check::Edge(f) = p.check {
            let hit = match p.kind {
                Kind::Always => !f(m, s, a, t),
                _ => f(m, s, a, t),
            };
            if hit {
                found[k] = Some((i, Some(*a)));
            }
        }
    }
}

/// A terminal state reached through a fault, within the tolerated number of
/// copies down.
fn after_fault_within_tolerance(m: &MoveModel, st: &State) -> bool {
    let b = &st.budget;
    b.crashes + b.suspicions + b.disk_losses > 0 && properties::within_tolerance(m, st)
}

/// Whether `path` ends where property `p` is decided: the state or the last
/// edge that violates (or, for `sometimes`, satisfies) it, or a state in
/// scope that misses the goal and is terminal (or, on a cyclic graph, may
/// lie on a cycle of such states). In compact mode this is what would catch
/// a fingerprint collision on a reported path.
fn decides(m: &MoveModel, p: &Property, path: &Path, cyclic: bool) -> bool {
    let last = path.steps.last().map_or(path.init, |(_, s)| *s);
    let verdict = |hit: bool| if p.kind == Kind::Always { !hit } else { hit };
    match p.check {
        Check::State(f) => verdict(f(m, &last)),
        Check::Edge(f) => {
            let n = path.steps.len();
            let before = if n >= 2 {
                path.steps[n - 2].1
            } else {
                path.init
            };
            path.steps
                .last()
                .is_some_and(|(a, t)| verdict(f(m, &before, a, t)))
        }
        Check::Terminal { scope, goal } => {
            let mut succ = Vec::new();
            m.successors(&last, &mut succ);
            (cyclic || succ.is_empty()) && scope(m, &last) && !goal(m, &last)
        }
    }
}

/// Turn the discoveries into results; `path_to` rebuilds the path to a
/// state index.
fn results(
    m: &MoveModel,
    props: &[Property],
    found: &Found,
    in_scope: &[Option<usize>],
    complete: bool,
    cyclic: bool,
    path_to: impl Fn(u32) -> Path,
) -> Vec<PropResult> {
    props
        .iter()
        .zip(found.iter())
        .zip(in_scope.iter().copied())
        .map(|((p, f), terminals_checked)| {
            let path = f.map(|(i, a)| {
                let mut path = path_to(i);
                if let Some(a) = a {
                    let from = path.steps.last().map_or(path.init, |(_, s)| *s);
                    let to = m.apply(&from, a).expect("recorded edge is enabled");
                    path.steps.push((a, to));
                }
                assert!(
                    decides(m, p, &path, cyclic),
                    "the path rebuilt for `{}` does not end where it was decided: two states \
                     share a fingerprint (a collision; check again with --exact)",
                    p.name
                );
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
        .collect()
}
