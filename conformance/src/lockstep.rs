//! Lockstep over every edge: a breadth-first search of the model in which
//! each reachable state is visited once with its own implementation clone;
//! every enabled action is applied to both and the results compared, and
//! (with `negative`) every disabled action is offered to the implementation,
//! which must refuse it. In every visited state (each reached by an agreeing
//! step), the step resume computes from the implementation's persisted
//! record is checked against the model (`check::resume`).
//!
//! Memory: a state's clone is made from its parent's when the state is
//! first reached and dropped once the state is expanded, so only the BFS
//! frontier holds clones. A state first reached over a diverging edge gets
//! its clone from the next agreeing edge into it, if any; its own edges
//! count as reachable but not replayed.

use crate::check::resume::Resumed;
use crate::check::{self, Negative};
use crate::divergence::Divergence;
use crate::driver::cluster_for;
use crate::env::relaxed;
use crate::replay::{init_agrees, Stop};
use crate::report::{Options, RunReport};
use livemove_impl::Cluster;
use livemove_model::state::State;
use livemove_model::{Action, Cfg, MoveModel, Mutant};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::time::Instant;

const ROOT: u32 = u32::MAX;

/// Run lockstep (and negative conformance) on the model of `cfg` against the
/// implementation with `mutant` switched on.
pub fn run(cfg: &Cfg, mutant: Option<Mutant>, opts: &Options) -> RunReport {
    let start = Instant::now();
    let m = MoveModel::new(cfg.clone());
    let rel = relaxed(&m);
    let alphabet: Vec<Action> = m.alphabet().to_vec();
    let mut rep = RunReport {
        config: cfg.name.clone(),
        mutant: mutant.map(|x| x.name().to_string()),
        mode: "lockstep".into(),
        ..RunReport::default()
    };
    let init = m.init();
    let c0 = cluster_for(cfg, mutant);
    let mut states: Vec<State> = vec![init];
    let mut parents: Vec<(u32, u16)> = vec![(ROOT, 0)];
    let mut index: FxHashMap<State, u32> = FxHashMap::default();
    index.insert(init, 0);
    let mut clones: Vec<Option<Cluster>> = vec![None];
    match init_agrees(&m, &c0, &init) {
        Ok(()) => clones[0] = Some(c0),
        Err(Stop::Diverged {
            prefix,
            action,
            mismatch,
        }) => {
            let d = diverge(&m, mutant, opts, &prefix, action, mismatch);
            rep.push(d, &m, opts);
        }
        Err(other) => unreachable!("init check stops only on a divergence: {other:?}"),
    }
    if opts.negative {
        if let Some(c) = clones[0].as_mut() {
            out_of_range(&m, &rel, mutant, opts, c, &mut rep);
        }
    }
    let path = |parents: &[(u32, u16)], mut i: u32| {
        let mut v = Vec::new();
        while parents[i as usize].0 != ROOT {
            let (p, a) = parents[i as usize];
            v.push(alphabet[a as usize]);
            i = p;
        }
        v.reverse();
        v
    };
    let threads = opts.threads.max(1);
    let mut go = true;
    let mut next = 0usize;
    while next < states.len() && go {
        // One batch of the frontier is expanded in parallel; the results are
        // merged in state order, so states are numbered, counted and
        // reported exactly as one thread would (a state first reached over
        // a diverging edge can get a clone only from an edge expanded in a
        // later batch).
        let end = (next + BATCH * threads).min(states.len());
        let batch: Vec<(State, Option<Cluster>)> =
            (next..end).map(|i| (states[i], clones[i].take())).collect();
        let expanded = expand_all(&m, &rel, opts.negative, batch, threads);
        for (k, ex) in expanded.into_iter().enumerate() {
            let i = next + k;
            match ex.resume {
                None => {}
                Some(Ok(Resumed::Enabled)) => rep.resume_enabled += 1,
                Some(Ok(Resumed::Waits)) => rep.resume_waits += 1,
                Some(Ok(Resumed::Idle)) => rep.resume_idle += 1,
                Some(Err(mismatch)) => {
                    let prefix = path(&parents, i as u32);
                    let d = diverge(&m, mutant, opts, &prefix, None, mismatch);
                    go &= rep.push(d, &m, opts);
                }
            }
            for item in ex.items {
                if !go {
                    break;
                }
                match item {
                    Item::Edge {
                        ai,
                        t,
                        replayed,
                        agreed,
                        mismatch,
                    } => {
                        rep.edges_reachable += 1;
                        rep.edges_replayed += usize::from(replayed);
                        if let Some(mismatch) = mismatch {
                            let prefix = path(&parents, i as u32);
                            let d =
                                diverge(&m, mutant, opts, &prefix, Some(alphabet[ai]), mismatch);
                            go &= rep.push(d, &m, opts);
                        }
                        match index.entry(t) {
                            Entry::Vacant(v) => {
                                let j = u32::try_from(states.len()).expect("state index fits u32");
                                v.insert(j);
                                states.push(t);
                                parents.push((i as u32, ai as u16));
                                clones.push(agreed);
                            }
                            Entry::Occupied(o) => {
                                let j = *o.get() as usize;
                                if j >= end && clones[j].is_none() && agreed.is_some() {
                                    clones[j] = agreed;
                                }
                            }
                        }
                    }
                    Item::Negative { ai, verdict } => match verdict {
                        Negative::Skipped => rep.negative_skipped += 1,
                        Negative::Refused => rep.negative_checks += 1,
                        Negative::Mismatch(mismatch) => {
                            rep.negative_checks += 1;
                            let prefix = path(&parents, i as u32);
                            let d =
                                diverge(&m, mutant, opts, &prefix, Some(alphabet[ai]), mismatch);
                            go &= rep.push(d, &m, opts);
                        }
                    },
                }
            }
            if !go {
                break;
            }
        }
        next = end;
    }
    rep.states = states.len();
    rep.finish(start.elapsed().as_secs_f64());
    rep
}

/// States each thread expands per batch.
const BATCH: usize = 256;

/// What expanding one state found, in alphabet order. Items live for one
/// batch; boxing the clone would cost an allocation per edge.
#[allow(clippy::large_enum_variant)]
enum Item {
    /// An action the model enables, leading to `t`; `agreed` is the
    /// implementation after it when both sides agreed.
    Edge {
        ai: usize,
        t: State,
        replayed: bool,
        agreed: Option<Cluster>,
        mismatch: Option<check::Mismatch>,
    },
    /// An action the model disables, offered to the implementation.
    Negative { ai: usize, verdict: Negative },
}

/// One state expanded: the resume verdict (with a clone only) and its items.
struct Expanded {
    resume: Option<Result<Resumed, check::Mismatch>>,
    items: Vec<Item>,
}

/// Expand `batch` on up to `threads` threads; results in batch order.
fn expand_all(
    m: &MoveModel,
    rel: &MoveModel,
    negative: bool,
    batch: Vec<(State, Option<Cluster>)>,
    threads: usize,
) -> Vec<Expanded> {
    if threads == 1 || batch.len() < 2 {
        return batch
            .into_iter()
            .map(|(s, c)| expand(m, rel, negative, s, c))
            .collect();
    }
    let per = batch.len().div_ceil(threads);
    let mut chunks: Vec<Vec<(State, Option<Cluster>)>> = Vec::new();
    let mut it = batch.into_iter().peekable();
    while it.peek().is_some() {
        chunks.push(it.by_ref().take(per).collect());
    }
    std::thread::scope(|sc| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                sc.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|(s, c)| expand(m, rel, negative, s, c))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a lockstep thread panicked"))
            .collect()
    })
}

/// Every action of the alphabet in state `s`, against the implementation
/// clone `c` when there is one.
fn expand(
    m: &MoveModel,
    rel: &MoveModel,
    negative: bool,
    s: State,
    c: Option<Cluster>,
) -> Expanded {
    let Some(mut c) = c else {
        let items = m
            .alphabet()
            .iter()
            .enumerate()
            .filter_map(|(ai, &a)| {
                m.apply(&s, a).ok().map(|t| Item::Edge {
                    ai,
                    t,
                    replayed: false,
                    agreed: None,
                    mismatch: None,
                })
            })
            .collect();
        return Expanded {
            resume: None,
            items,
        };
    };
    let resume = Some(check::resume::agrees(m, &s, &c));
    let before = negative.then(|| check::Before::of(&c));
    let mut items = Vec::new();
    for (ai, &a) in m.alphabet().iter().enumerate() {
        match m.apply(&s, a) {
            Ok(t) => {
                let mut ci = c.clone();
                let (agreed, mismatch) = match check::edge(m, a, &t, &mut ci) {
                    Ok(()) => (Some(ci), None),
                    Err(x) => (None, Some(x)),
                };
                items.push(Item::Edge {
                    ai,
                    t,
                    replayed: true,
                    agreed,
                    mismatch,
                });
            }
            Err(g) => {
                if let Some(before) = &before {
                    let verdict = check::disabled(m, rel, &s, a, g.0, &mut c, before);
                    items.push(Item::Negative { ai, verdict });
                }
            }
        }
    }
    Expanded { resume, items }
}

fn diverge(
    m: &MoveModel,
    mutant: Option<Mutant>,
    opts: &Options,
    prefix: &[Action],
    action: Option<Action>,
    mismatch: check::Mismatch,
) -> Divergence {
    Divergence::new(
        m,
        mutant,
        None,
        prefix,
        action,
        mismatch,
        opts.context_steps,
    )
}

/// Bad input: every action that names a node one beyond the configuration
/// (when the model's bounds allow naming it) must be refused with a typed
/// error and change nothing. The check does not depend on the state, so it
/// runs once, in the initial state.
fn out_of_range(
    m: &MoveModel,
    rel: &MoveModel,
    mutant: Option<Mutant>,
    opts: &Options,
    c: &mut Cluster,
    rep: &mut RunReport,
) {
    let n = m.cfg.nodes;
    if usize::from(n) >= livemove_model::types::NODES_MAX {
        return;
    }
    let s = m.init();
    let before = check::Before::of(c);
    for a in Action::alphabet(n + 1) {
        if !livemove_model::protocol::nodes_of(a)
            .into_iter()
            .flatten()
            .any(|x| x == n)
        {
            continue;
        }
        let g = m.apply(&s, a).expect_err(
            "invariant broken: the model enabled an action naming a node beyond the config",
        );
        match check::disabled(m, rel, &s, a, g.0, c, &before) {
            Negative::Skipped => rep.negative_skipped += 1,
            Negative::Refused => rep.negative_checks += 1,
            Negative::Mismatch(mismatch) => {
                rep.negative_checks += 1;
                let d = diverge(m, mutant, opts, &[], Some(a), mismatch);
                if !rep.push(d, m, opts) {
                    return;
                }
            }
        }
    }
}
