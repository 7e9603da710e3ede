//! Replay of model action sequences against the implementation: the core of
//! trace replay, random walks and shrinking.

use crate::check::{self, Kind, Mismatch, Negative};
use crate::driver::cluster_for;
use livemove_impl::Cluster;
use livemove_model::state::State;
use livemove_model::trace::TraceFile;
use livemove_model::{Action, MoveModel, Mutant};
use std::path::Path;

/// Counts of one replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Steps driven in lockstep.
    pub steps: usize,
    /// Disabled actions the implementation was asked to refuse.
    pub negative_checks: usize,
    /// Disabled actions skipped (budget or environment).
    pub negative_skipped: usize,
}

impl Counts {
    pub fn add(&mut self, o: Counts) {
        self.steps += o.steps;
        self.negative_checks += o.negative_checks;
        self.negative_skipped += o.negative_skipped;
    }
}

/// Why a replay stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// The model itself refuses step `step`: not a trace of this model.
    ModelRejects {
        step: usize,
        action: Action,
        guard: &'static str,
    },
    /// The first disagreement: the steps before it, the action, what differs.
    Diverged {
        prefix: Vec<Action>,
        action: Option<Action>,
        mismatch: Mismatch,
    },
}

/// The network's actions on messages `parent` had in flight that `s` has
/// not: the model disables them (`message in flight`), and the
/// implementation must refuse them with a typed error.
pub fn not_in_flight(s: &State, parent: &State) -> Vec<Action> {
    parent
        .net
        .distinct()
        .filter(|msg| !s.net.contains(*msg))
        .flat_map(|msg| {
            [
                Action::Deliver { msg },
                Action::Drop { msg },
                Action::Duplicate { msg },
            ]
        })
        .collect()
}

/// Negative conformance in one state: every action the model disables,
/// among the alphabet, the network's actions on each message in flight and
/// those on messages `parent` had in flight. Returns the counts or the
/// first disagreement.
pub fn negatives(
    m: &MoveModel,
    relaxed: &MoveModel,
    s: &State,
    parent: Option<&State>,
    c: &mut Cluster,
) -> Result<Counts, (Action, Mismatch)> {
    let before = check::Before::of(c);
    let mut n = Counts::default();
    let gone = parent.map_or(Vec::new(), |p| not_in_flight(s, p));
    let actions: Vec<Action> = m.actions(s).chain(gone).collect();
    for a in actions {
        let Err(g) = m.apply(s, a) else { continue };
        match check::disabled(m, relaxed, s, a, g.0, c, &before) {
            Negative::Skipped => n.negative_skipped += 1,
            Negative::Refused => n.negative_checks += 1,
            Negative::Mismatch(x) => return Err((a, x)),
        }
    }
    Ok(n)
}

/// Replay `steps` from the initial state in lockstep; with `negative`,
/// check negative conformance in every visited state.
pub fn actions(
    m: &MoveModel,
    relaxed: &MoveModel,
    mutant: Option<Mutant>,
    steps: &[Action],
    negative: bool,
) -> Result<Counts, Stop> {
    let mut c = cluster_for(&m.cfg, mutant);
    let mut s = m.init();
    init_agrees(m, &c, &s)?;
    let mut n = Counts::default();
    let mut parent: Option<State> = None;
    for (i, &a) in steps.iter().enumerate() {
        if negative {
            n.add(at(m, relaxed, &s, parent.as_ref(), &mut c, &steps[..i])?);
        }
        let t = m.apply(&s, a).map_err(|g| Stop::ModelRejects {
            step: i,
            action: a,
            guard: g.0,
        })?;
        check::edge(m, a, &t, &mut c).map_err(|mismatch| Stop::Diverged {
            prefix: steps[..i].to_vec(),
            action: Some(a),
            mismatch,
        })?;
        n.steps += 1;
        parent = Some(s);
        s = t;
    }
    if negative {
        n.add(at(m, relaxed, &s, parent.as_ref(), &mut c, steps)?);
    }
    Ok(n)
}

fn at(
    m: &MoveModel,
    relaxed: &MoveModel,
    s: &State,
    parent: Option<&State>,
    c: &mut Cluster,
    prefix: &[Action],
) -> Result<Counts, Stop> {
    negatives(m, relaxed, s, parent, c).map_err(|(a, mismatch)| Stop::Diverged {
        prefix: prefix.to_vec(),
        action: Some(a),
        mismatch,
    })
}

/// The initial states agree.
pub fn init_agrees(m: &MoveModel, c: &Cluster, s: &State) -> Result<(), Stop> {
    check::state::agrees(m, c, s, Kind::Init, &Ok(livemove_impl::Outcome::Crashed)).map_err(
        |mut mismatch| {
            mismatch.implementation = "initial state".into();
            Stop::Diverged {
                prefix: Vec::new(),
                action: None,
                mismatch,
            }
        },
    )
}

/// A trace file read and checked against the model (every step enabled,
/// every recorded state reached).
pub fn read_trace(file: &Path) -> Result<(TraceFile, MoveModel), String> {
    let t = TraceFile::read(file).map_err(|e| e.to_string())?;
    t.replay(file).map_err(|e| e.to_string())?;
    let cfg = livemove_model::Cfg::named_checked(&t.config)?.with_mutant(t.mutant);
    let m = MoveModel::new(cfg);
    Ok((t, m))
}
