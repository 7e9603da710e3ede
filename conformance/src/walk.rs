//! Random deep walks, for configs too large for lockstep: seeded walks over
//! the model, each step driven in lockstep, negative conformance in every
//! visited state. A divergence is shrunk before it is reported: steps are
//! dropped while the model still accepts the trace and the same divergence
//! (kind and action) remains.

use crate::check::{Kind, Mismatch};
use crate::divergence::Divergence;
use crate::driver::cluster_for;
use crate::env::relaxed;
use crate::replay::{self, negatives, Stop};
use crate::report::{Options, RunReport};
use livemove_model::state::State;
use livemove_model::{Action, Cfg, MoveModel, Mutant};
use std::time::Instant;

/// Shrink passes at most (each pass tries dropping every chunk of the
/// current size once).
const SHRINK_PASSES_MAX: usize = 64;

/// SplitMix64: small, seedable, stable across versions (the model's trace
/// export uses the same generator).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Run `walks` seeded walks of at most `depth` steps (seeds `seed`,
/// `seed + 1`, ...).
pub fn run(
    cfg: &Cfg,
    mutant: Option<Mutant>,
    walks: u32,
    depth: usize,
    seed: u64,
    opts: &Options,
) -> RunReport {
    let start = Instant::now();
    let m = MoveModel::new(cfg.clone());
    let rel = relaxed(&m);
    let mut rep = RunReport {
        config: cfg.name.clone(),
        mutant: mutant.map(|x| x.name().to_string()),
        mode: "walks".into(),
        ..RunReport::default()
    };
    let mut succ = Vec::new();
    for k in 0..walks {
        let walk_seed = seed.wrapping_add(u64::from(k));
        let mut rng = Rng(walk_seed);
        let mut c = cluster_for(cfg, mutant);
        let mut s = m.init();
        let mut steps: Vec<Action> = Vec::new();
        let mut parent: Option<State> = None;
        let mut failed: Option<(Option<Action>, Mismatch)> = None;
        if let Err(Stop::Diverged {
            action, mismatch, ..
        }) = replay::init_agrees(&m, &c, &s)
        {
            failed = Some((action, mismatch));
        }
        rep.states += 1;
        while failed.is_none() && steps.len() < depth {
            if opts.negative {
                match negatives(&m, &rel, &s, parent.as_ref(), &mut c) {
                    Ok(n) => {
                        rep.negative_checks += n.negative_checks;
                        rep.negative_skipped += n.negative_skipped;
                    }
                    Err((a, x)) => {
                        failed = Some((Some(a), x));
                        break;
                    }
                }
            }
            succ.clear();
            m.successors(&s, &mut succ);
            if succ.is_empty() {
                break;
            }
            rep.edges_reachable += succ.len();
            let (a, t) = succ[(rng.next() % succ.len() as u64) as usize];
            rep.edges_replayed += 1;
            if let Err(x) = crate::check::edge(&m, a, &t, &mut c) {
                failed = Some((Some(a), x));
                break;
            }
            steps.push(a);
            rep.states += 1;
            parent = Some(s);
            s = t;
        }
        if let Some((action, mismatch)) = failed {
            let (prefix, action, mismatch) = shrink(&m, &rel, mutant, steps, action, mismatch);
            let d = Divergence::new(
                &m,
                mutant,
                Some(walk_seed),
                &prefix,
                action,
                mismatch,
                opts.context_steps,
            );
            if !rep.push(d, &m, opts) {
                break;
            }
        }
    }
    rep.finish(start.elapsed().as_secs_f64());
    rep
}

/// Drop steps while the model accepts the rest and the same divergence
/// (kind and action name) remains. `prefix` is the steps before the
/// disagreeing `action`. Chunks are dropped first (half the trace, then a
/// quarter, down to single steps, as in delta debugging), so a long walk
/// shrinks in a few dozen replays rather than one per step per pass; the
/// result is 1-minimal: no single step can be dropped.
pub fn shrink(
    m: &MoveModel,
    rel: &MoveModel,
    mutant: Option<Mutant>,
    prefix: Vec<Action>,
    action: Option<Action>,
    mismatch: Mismatch,
) -> (Vec<Action>, Option<Action>, Mismatch) {
    let Some(probe) = action else {
        return (prefix, action, mismatch);
    };
    let kind = mismatch.kind;
    let name = probe.name();
    let mut best = (prefix, probe, mismatch);
    let mut chunk = (best.0.len() / 2).max(1);
    for _ in 0..SHRINK_PASSES_MAX {
        let mut changed = false;
        let mut i = 0;
        while i < best.0.len() {
            let mut cand = best.0.clone();
            cand.drain(i..(i + chunk).min(cand.len()));
            match attempt(m, rel, mutant, &cand, probe, kind) {
                Some((p, a, x)) if a.name() == name => {
                    best = (p, a, x);
                    changed = true;
                }
                _ => i += chunk,
            }
        }
        if chunk == 1 && !changed {
            break;
        }
        chunk = (chunk / 2).max(1).min(best.0.len().max(1));
    }
    (best.0, Some(best.1), best.2)
}

/// Replay `prefix` and the probe; the divergence found, if it is of `kind`.
fn attempt(
    m: &MoveModel,
    rel: &MoveModel,
    mutant: Option<Mutant>,
    prefix: &[Action],
    probe: Action,
    kind: Kind,
) -> Option<(Vec<Action>, Action, Mismatch)> {
    match kind {
        // An enabled action that disagrees: replay prefix + probe; the first
        // disagreement must be of the same kind (at the probe or earlier).
        Kind::Outcome | Kind::State => {
            let mut steps = prefix.to_vec();
            steps.push(probe);
            match replay::actions(m, rel, mutant, &steps, false) {
                Err(Stop::Diverged {
                    prefix,
                    action: Some(a),
                    mismatch,
                }) if mismatch.kind == kind => Some((prefix, a, mismatch)),
                _ => None,
            }
        }
        // A disabled action the implementation does not refuse: the prefix
        // must agree, and the probe must still be disabled and mishandled.
        Kind::Refusal | Kind::Unchanged => {
            replay::actions(m, rel, mutant, prefix, false).ok()?;
            let mut c = cluster_for(&m.cfg, mutant);
            let mut s = m.init();
            for a in prefix {
                s = m.apply(&s, *a).ok()?;
                let _ = crate::driver::step(&mut c, *a);
            }
            let g = m.apply(&s, probe).err()?;
            let before = crate::check::Before::of(&c);
            match crate::check::disabled(m, rel, &s, probe, g.0, &mut c, &before) {
                crate::check::Negative::Mismatch(x) if x.kind == kind => {
                    Some((prefix.to_vec(), probe, x))
                }
                _ => None,
            }
        }
        // Walks check neither the initial state nor resume.
        Kind::Init | Kind::Resume => None,
    }
}
