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
use crate::replay::{init_agrees, not_in_flight, Stop};
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
    let mut rep = RunReport {
        config: cfg.name.clone(),
        mutant: mutant.map(|x| x.name().to_string()),
        mode: "lockstep".into(),
        ..RunReport::default()
    };
    let init = m.init();
    let c0 = cluster_for(cfg, mutant);
    let mut states: Vec<State> = vec![init];
    let mut parents: Vec<(u32, Action)> = vec![(ROOT, Action::OwnerSwitch)];
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
    let path = |parents: &[(u32, Action)], mut i: u32| {
        let mut v = Vec::new();
        while parents[i as usize].0 != ROOT {
            let (p, a) = parents[i as usize];
            v.push(a);
            i = p;
        }
        v.reverse();
        v
    };
    let mut go = true;
    let mut next = 0usize;
    while next < states.len() && go {
        let i = next;
        next += 1;
        let s = states[i];
        let mut c = clones[i].take();
        if let Some(c) = &c {
            match check::resume::agrees(&m, &s, c) {
                Ok(Resumed::Enabled) => rep.resume_enabled += 1,
                Ok(Resumed::Waits) => rep.resume_waits += 1,
                Ok(Resumed::Idle) => rep.resume_idle += 1,
                Err(mismatch) => {
                    let prefix = path(&parents, i as u32);
                    let d = diverge(&m, mutant, opts, &prefix, None, mismatch);
                    go &= rep.push(d, &m, opts);
                    if !go {
                        break;
                    }
                }
            }
        }
        let neg = if opts.negative {
            c.as_ref().map(check::Before::of)
        } else {
            None
        };
        // The alphabet, the network's actions on each message in flight,
        // and (for negative conformance) those on messages the parent had
        // in flight that are gone now.
        let parent = parents[i].0;
        let gone = if parent == ROOT {
            Vec::new()
        } else {
            not_in_flight(&s, &states[parent as usize])
        };
        let actions: Vec<Action> = m.actions(&s).chain(gone).collect();
        for a in actions {
            match m.apply(&s, a) {
                Ok(t) => {
                    rep.edges_reachable += 1;
                    let mut agreed = None;
                    if let Some(c) = &c {
                        let mut ci = c.clone();
                        rep.edges_replayed += 1;
                        match check::edge(&m, a, &t, &mut ci) {
                            Ok(()) => agreed = Some(ci),
                            Err(mismatch) => {
                                let prefix = path(&parents, i as u32);
                                let d = diverge(&m, mutant, opts, &prefix, Some(a), mismatch);
                                go &= rep.push(d, &m, opts);
                            }
                        }
                    }
                    match index.entry(t) {
                        Entry::Vacant(v) => {
                            let j = u32::try_from(states.len()).expect("state index fits u32");
                            v.insert(j);
                            states.push(t);
                            parents.push((i as u32, a));
                            clones.push(agreed);
                        }
                        Entry::Occupied(o) => {
                            let j = *o.get() as usize;
                            if j >= next && clones[j].is_none() && agreed.is_some() {
                                clones[j] = agreed;
                            }
                        }
                    }
                }
                Err(g) => {
                    let (Some(c), Some(before)) = (c.as_mut(), neg.as_ref()) else {
                        continue;
                    };
                    match check::disabled(&m, &rel, &s, a, g.0, c, before) {
                        Negative::Skipped => rep.negative_skipped += 1,
                        Negative::Refused => rep.negative_checks += 1,
                        Negative::Mismatch(mismatch) => {
                            rep.negative_checks += 1;
                            let prefix = path(&parents, i as u32);
                            let d = diverge(&m, mutant, opts, &prefix, Some(a), mismatch);
                            go &= rep.push(d, &m, opts);
                        }
                    }
                }
            }
            if !go {
                break;
            }
        }
    }
    rep.states = states.len();
    rep.finish(start.elapsed().as_secs_f64());
    rep
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
