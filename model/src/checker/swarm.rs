//! Swarm mode: many independent, seeded random walks of bounded depth, for
//! state spaces beyond exhaustive reach (after Holzmann's swarm
//! verification). Each walk starts at the initial state and takes a
//! randomly chosen successor (as [`MoveModel::successors`] gives them) at
//! each step until it reaches a terminal state or the depth bound; each walk
//! weighs the kinds of action by its own random weights, so different walks
//! favour different behaviours. Every `always` property is evaluated on
//! every state and step along the walk, every `eventually` property on the
//! terminal state a walk ends in; a `sometimes` property is noted when a
//! walk reaches it.
//!
//! A walk's seed is derived from the swarm's seed and the walk's index only,
//! so the result does not depend on the number of workers or on which
//! worker ran which walk: for each property the violation kept is the one
//! of the lowest-numbered walk. Machines and CI jobs extend a swarm by
//! running the same config with different seeds.
//!
//! A violation is shrunk before it is reported: chunks of steps, then
//! single steps, are dropped while the remaining actions still replay
//! through [`MoveModel::apply`] and still violate the property.

use super::fingerprint::fingerprint;
use super::Path;
use crate::action::Action;
use crate::properties::{Check, Class, Kind, Property};
use crate::protocol::MoveModel;
use crate::state::State;
use rustc_hash::FxHashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Options of one swarm run.
#[derive(Clone, Copy, Debug)]
pub struct SwarmOptions {
    /// Independent walks.
    pub searches: usize,
    /// The most steps one walk takes.
    pub depth: usize,
    /// The swarm's seed; walk `k` uses [`search_seed`]`(seed, k)`.
    pub seed: u64,
    /// Threads running walks.
    pub workers: usize,
}

/// One property a swarm found violated.
#[derive(Clone, Debug)]
pub struct SwarmViolation {
    pub name: &'static str,
    pub kind: Kind,
    pub class: Class,
    /// The lowest-numbered walk that violated it, and that walk's seed.
    pub search: usize,
    pub search_seed: u64,
    /// How many walks violated it.
    pub searches_hit: usize,
    /// Steps to the violation in the walk, before shrinking.
    pub found_len: usize,
    /// The shrunk counterexample: it replays through the model and ends
    /// where the property is violated.
    pub path: Path,
}

/// A `sometimes` property some walk reached, and how many did.
#[derive(Clone, Debug)]
pub struct SwarmReached {
    pub name: &'static str,
    pub searches_hit: usize,
}

#[derive(Clone, Debug)]
pub struct SwarmReport {
    pub options: SwarmOptions,
    /// States along all walks, each walk's initial state included.
    pub states_visited: usize,
    /// Distinct fingerprints among the visited states.
    pub distinct_fingerprints: usize,
    /// Walks that ended in a terminal state (before the depth bound).
    pub terminal_walks: usize,
    pub seconds: f64,
    /// Violated properties, in report order.
    pub violations: Vec<SwarmViolation>,
    /// Reached `sometimes` properties, in report order.
    pub reached: Vec<SwarmReached>,
    /// The `sometimes` properties that apply and no walk reached.
    pub unreached: Vec<&'static str>,
}

impl SwarmReport {
    /// No walk violated a property. (A swarm proves nothing holds: it
    /// passes when it found no violation.)
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
    /// States visited per second, all workers together.
    pub fn states_per_second(&self) -> f64 {
        self.states_visited as f64 / self.seconds.max(1e-9)
    }
}

/// SplitMix64's output function: a bijection that scatters nearby inputs.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of walk `k` of a swarm seeded `seed`.
pub fn search_seed(seed: u64, k: usize) -> u64 {
    mix(seed ^ mix((k as u64).wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// A SplitMix64 stream: small, seedable and stable across versions.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        // Multiply-shift: unbiased enough for choosing among a few dozen actions.
        ((u128::from(mix(self.0)) * n as u128) >> 64) as usize
    }
}

/// Whether property `p` is decided on arriving at `t` by `step` (the
/// previous state and the action), or at the initial state `t` when there
/// is no step: violated for `always`, reached for `sometimes`. Terminal
/// properties are decided elsewhere.
fn hit_on(m: &MoveModel, p: &Property, step: Option<(&State, Action)>, t: &State) -> bool {
    let verdict = |holds: bool| {
        if p.kind == Kind::Always {
            !holds
        } else {
            holds
        }
    };
    match p.check {
        Check::State(f) => verdict(f(m, t)),
        Check::Edge(f) => step.is_some_and(|(s, a)| verdict(f(m, s, &a, t))),
        Check::Terminal { .. } => false,
    }
}

/// Whether terminal property `p` is violated at terminal state `t`.
fn terminal_hit(m: &MoveModel, p: &Property, t: &State) -> bool {
    match p.check {
        Check::Terminal { scope, goal } => scope(m, t) && !goal(m, t),
        _ => false,
    }
}

/// Per property, what the walks of one worker found.
#[derive(Clone, Default)]
struct Finding {
    /// Lowest walk index and its actions up to the decision.
    first: Option<(usize, Vec<Action>)>,
    hits: usize,
}

struct WorkerOut {
    visited: usize,
    terminal_walks: usize,
    fps: FxHashSet<u64>,
    findings: Vec<Finding>,
}

/// Per walk, the weight of each kind of action (its name), drawn from the
/// walk's seed when the kind is first met: 1 to 64, powers of two. Walk 0
/// weighs every kind alike.
struct Weights {
    seed: u64,
    uniform: bool,
    known: Vec<(&'static str, u64)>,
}

impl Weights {
    fn of(&mut self, name: &'static str) -> u64 {
        if self.uniform {
            return 1;
        }
        if let Some(&(_, w)) = self.known.iter().find(|(n, _)| *n == name) {
            return w;
        }
        // The name's own bytes pick the weight, so it does not depend on
        // which kinds the walk met first.
        let h = name.bytes().fold(self.seed, |h, b| mix(h ^ u64::from(b)));
        let w = 1 << (h % 7);
        self.known.push((name, w));
        w
    }
}

/// Run walk `k`, recording each property's first decision in it.
fn walk(
    m: &MoveModel,
    props: &[Property],
    opts: &SwarmOptions,
    k: usize,
    out: &mut WorkerOut,
    succ: &mut Vec<(Action, State)>,
) {
    let mut rng = Rng(search_seed(opts.seed, k));
    // Each walk favours some kinds of action over others: walks differ in
    // what they try first, as the members of a swarm differ in their
    // search order.
    let mut weights = Weights {
        seed: mix(search_seed(opts.seed, k) ^ 0x5eed),
        uniform: k == 0,
        known: Vec::new(),
    };
    let mut cumulative: Vec<u64> = Vec::new();
    let mut decided = vec![false; props.len()];
    let mut actions: Vec<Action> = Vec::with_capacity(opts.depth);
    let note = |decided: &mut [bool], p: usize, actions: &[Action], out: &mut WorkerOut| {
        decided[p] = true;
        let f = &mut out.findings[p];
        f.hits += 1;
        if f.first.as_ref().is_none_or(|(j, _)| k < *j) {
            f.first = Some((k, actions.to_vec()));
        }
    };
    let mut s = m.init();
    out.visited += 1;
    out.fps.insert(fingerprint(&s));
    for (p, prop) in props.iter().enumerate() {
        if hit_on(m, prop, None, &s) {
            note(&mut decided, p, &actions, out);
        }
    }
    loop {
        succ.clear();
        m.successors(&s, succ);
        cumulative.clear();
        let mut total = 0;
        for (a, _) in succ.iter() {
            total += weights.of(a.name());
            cumulative.push(total);
        }
        if succ.is_empty() {
            out.terminal_walks += 1;
            for (p, prop) in props.iter().enumerate() {
                if !decided[p] && terminal_hit(m, prop, &s) {
                    note(&mut decided, p, &actions, out);
                }
            }
            return;
        }
        if actions.len() >= opts.depth {
            return;
        }
        let pick = rng.below(total as usize) as u64;
        let (a, t) = succ[cumulative.partition_point(|&c| c <= pick)];
        actions.push(a);
        out.visited += 1;
        out.fps.insert(fingerprint(&t));
        for (p, prop) in props.iter().enumerate() {
            if !decided[p] && hit_on(m, prop, Some((&s, a)), &t) {
                note(&mut decided, p, &actions, out);
            }
        }
        s = t;
    }
}

/// Replay `actions` from the initial state; if every one is enabled and
/// property `p` is decided along the way, the number of steps to the first
/// decision.
fn reproduces(m: &MoveModel, p: &Property, actions: &[Action]) -> Option<usize> {
    let mut s = m.init();
    if hit_on(m, p, None, &s) {
        return Some(0);
    }
    for (i, &a) in actions.iter().enumerate() {
        let t = m.apply(&s, a).ok()?;
        if hit_on(m, p, Some((&s, a)), &t) {
            return Some(i + 1);
        }
        s = t;
    }
    let mut succ = Vec::new();
    m.successors(&s, &mut succ);
    (succ.is_empty() && terminal_hit(m, p, &s)).then_some(actions.len())
}

/// Drop chunks of steps, halving the chunk size down to one step, while
/// the rest still replays and decides `p`; cut at the first decision each
/// time. Deterministic, and the result is at most as long as `actions`.
pub fn shrink(m: &MoveModel, p: &Property, actions: &[Action]) -> Vec<Action> {
    let n = reproduces(m, p, actions).expect("a swarm finding replays: walk bookkeeping broken");
    let mut cur = actions[..n].to_vec();
    let mut chunk = (cur.len() / 2).max(1);
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < cur.len() {
            let mut cand = cur[..i].to_vec();
            cand.extend_from_slice(&cur[(i + chunk).min(cur.len())..]);
            match reproduces(m, p, &cand) {
                Some(n) => {
                    cand.truncate(n);
                    cur = cand;
                    changed = true;
                }
                None => i += chunk,
            }
        }
        if !changed {
            if chunk == 1 {
                return cur;
            }
            chunk /= 2;
        }
    }
}

/// The path `actions` take from the initial state (all enabled).
fn path_of(m: &MoveModel, actions: &[Action]) -> Path {
    let init = m.init();
    let mut s = init;
    let steps = actions
        .iter()
        .map(|&a| {
            s = m.apply(&s, a).expect("a shrunk trace replays");
            (a, s)
        })
        .collect();
    Path { init, steps }
}

/// How far a running swarm has got, reported about once a second.
#[derive(Clone, Copy, Debug)]
pub struct SwarmProgress {
    /// Walks finished.
    pub walks: usize,
    /// States visited by the finished walks.
    pub states_visited: usize,
    pub seconds: f64,
}

/// Run the swarm on `m` for the given properties.
pub fn swarm(m: &MoveModel, props: &[Property], opts: SwarmOptions) -> SwarmReport {
    swarm_with_progress(m, props, opts, None)
}

/// [`swarm`], calling `progress` about once a second from this thread
/// while the workers walk.
pub fn swarm_with_progress(
    m: &MoveModel,
    props: &[Property],
    opts: SwarmOptions,
    progress: Option<&mut dyn FnMut(SwarmProgress)>,
) -> SwarmReport {
    let start = Instant::now();
    let workers = opts.workers.max(1).min(opts.searches.max(1));
    let next = AtomicUsize::new(0);
    let walks_done = AtomicUsize::new(0);
    let states_done = AtomicUsize::new(0);
    let outs: Mutex<Vec<WorkerOut>> = Mutex::new(Vec::new());
    let finished = || outs.lock().expect("a swarm worker panicked").len() == workers;
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut out = WorkerOut {
                    visited: 0,
                    terminal_walks: 0,
                    fps: FxHashSet::default(),
                    findings: vec![Finding::default(); props.len()],
                };
                let mut succ = Vec::new();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= opts.searches {
                        break;
                    }
                    let before = out.visited;
                    walk(m, props, &opts, k, &mut out, &mut succ);
                    walks_done.fetch_add(1, Ordering::Relaxed);
                    states_done.fetch_add(out.visited - before, Ordering::Relaxed);
                }
                outs.lock().expect("a swarm worker panicked").push(out);
            });
        }
        if let Some(cb) = progress {
            let mut last = Instant::now();
            while !finished() {
                std::thread::sleep(Duration::from_millis(50));
                if last.elapsed() >= Duration::from_secs(1) {
                    last = Instant::now();
                    cb(SwarmProgress {
                        walks: walks_done.load(Ordering::Relaxed),
                        states_visited: states_done.load(Ordering::Relaxed),
                        seconds: start.elapsed().as_secs_f64(),
                    });
                }
            }
        }
    });
    let outs = outs.into_inner().expect("a swarm worker panicked");

    let mut visited = 0;
    let mut terminal_walks = 0;
    let mut findings = vec![Finding::default(); props.len()];
    let mut fps = FxHashSet::default();
    for out in outs {
        visited += out.visited;
        terminal_walks += out.terminal_walks;
        // Merge the smaller set into the larger.
        let mut other = out.fps;
        if other.len() > fps.len() {
            std::mem::swap(&mut fps, &mut other);
        }
        fps.extend(other);
        for (f, g) in findings.iter_mut().zip(out.findings) {
            f.hits += g.hits;
            if let Some((k, a)) = g.first {
                if f.first.as_ref().is_none_or(|(j, _)| k < *j) {
                    f.first = Some((k, a));
                }
            }
        }
    }

    let mut violations = Vec::new();
    let mut reached = Vec::new();
    let mut unreached = Vec::new();
    for (p, f) in props.iter().zip(findings) {
        match (p.kind, f.first) {
            (Kind::Sometimes, Some(_)) => reached.push(SwarmReached {
                name: p.name,
                searches_hit: f.hits,
            }),
            (Kind::Sometimes, None) => unreached.push(p.name),
            (_, Some((k, actions))) => violations.push(SwarmViolation {
                name: p.name,
                kind: p.kind,
                class: p.class,
                search: k,
                search_seed: search_seed(opts.seed, k),
                searches_hit: f.hits,
                found_len: actions.len(),
                path: path_of(m, &shrink(m, p, &actions)),
            }),
            (_, None) => {}
        }
    }
    SwarmReport {
        options: SwarmOptions { workers, ..opts },
        states_visited: visited,
        distinct_fingerprints: fps.len(),
        terminal_walks,
        seconds: start.elapsed().as_secs_f64(),
        violations,
        reached,
        unreached,
    }
}
