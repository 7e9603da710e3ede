//! The Explorer's JSON: the config and its properties, one state reached by
//! a path of actions, and the whole-config search run by the project's
//! checker (the same search, and so the same shortest counterexamples, as
//! `livemove check`).

use crate::cmd::check::path_json;
use livemove_model::checker::{self, Options, Progress, Report, Status};
use livemove_model::properties::{self, Check, Kind};
use livemove_model::view::{diff, pending, view};
use livemove_model::{Action, MoveModel, State};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// The config, the mutant and every property that speaks to the config.
pub fn info(m: &MoveModel) -> Value {
    let props: Vec<Value> = properties::for_cfg(&m.cfg)
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "kind": p.kind,
                "class": p.class,
                "judged_on": match p.check {
                    Check::State(_) => "every state",
                    Check::Edge(_) => "every step",
                    Check::Terminal { .. } => "every terminal state in its scope",
                },
            })
        })
        .collect();
    json!({
        "config": m.cfg.name,
        "about": m.cfg.about,
        "params": m.cfg.params(),
        "mutant": m.cfg.mutant.map(|x| x.name()),
        "properties": props,
    })
}

/// Parse `/3/12/5` (indices into the config's action alphabet) and replay it.
fn replay(m: &MoveModel, path: &str) -> Result<(State, Vec<(Action, State)>), String> {
    let mut s = m.init();
    let mut steps = Vec::new();
    for (k, part) in path.split('/').filter(|p| !p.is_empty()).enumerate() {
        let i: usize = part
            .parse()
            .map_err(|_| format!("step {}: `{part}` is not an action index", k + 1))?;
        let a = *m.alphabet().get(i).ok_or_else(|| {
            format!(
                "step {}: action index {i} is beyond the {} actions of this config",
                k + 1,
                m.alphabet().len()
            )
        })?;
        let t = m.apply(&s, a).map_err(|g| {
            format!(
                "step {}: `{a}` is not enabled here: guard `{}` fails",
                k + 1,
                g.0
            )
        })?;
        steps.push((a, t));
        s = t;
    }
    Ok((m.init(), steps))
}

fn index_of(m: &MoveModel, a: &Action) -> usize {
    m.alphabet()
        .iter()
        .position(|x| x == a)
        .expect("every enabled action is in the config's alphabet")
}

/// What each property says of this state (or of the step into it).
fn here(m: &MoveModel, prev: Option<(&State, &Action)>, s: &State, terminal: bool) -> Vec<Value> {
    properties::for_cfg(&m.cfg)
        .iter()
        .map(|p| {
            let (word, note) = match (p.check, p.kind) {
                (Check::State(f), Kind::Always) => {
                    if f(m, s) {
                        ("holds", "in this state")
                    } else {
                        ("VIOLATED", "in this state")
                    }
                }
                (Check::State(f), _) => {
                    if f(m, s) {
                        ("reached", "in this state")
                    } else {
                        ("not here", "not in this state")
                    }
                }
                (Check::Edge(f), kind) => match prev {
                    None => ("-", "judged on steps; this is the initial state"),
                    Some((from, a)) => match (f(m, from, a, s), kind) {
                        (true, Kind::Always) => ("holds", "on the step into this state"),
                        (false, Kind::Always) => ("VIOLATED", "on the step into this state"),
                        (true, _) => ("reached", "on the step into this state"),
                        (false, _) => ("not here", "not on the step into this state"),
                    },
                },
                (Check::Terminal { scope, goal }, _) => {
                    if !terminal {
                        ("-", "judged on terminal states; this state has successors")
                    } else if !scope(m, s) {
                        (
                            "-",
                            "out of its scope here (more copies down than tolerated, or what it needs is absent)",
                        )
                    } else if goal(m, s) {
                        ("holds", "in this terminal state")
                    } else {
                        (
                            "VIOLATED",
                            "in this terminal state: a state the partition can never leave",
                        )
                    }
                }
            };
            json!({ "name": p.name, "kind": p.kind, "here": word, "note": note })
        })
        .collect()
}

/// The state at the end of `path`: its view, picture, the steps that led
/// there (changed fields, as `check` prints them), what each property says
/// of it, and the enabled actions with where each leads.
pub fn state(m: &MoveModel, path: &str) -> Result<Value, String> {
    let (init, steps) = replay(m, path)?;
    let s = steps.last().map_or(init, |(_, t)| *t);
    let prev = match steps.len() {
        0 => None,
        1 => Some((&init, &steps[0].0)),
        n => Some((&steps[n - 2].1, &steps[n - 1].0)),
    };
    let mut succ = Vec::new();
    m.successors(&s, &mut succ);
    let here_view = view(m, &s);
    let next: Vec<Value> = succ
        .iter()
        .map(|(a, t)| {
            json!({
                "index": index_of(m, a),
                "action": a.to_string(),
                "changes": diff(&here_view, &view(m, t)).iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let walked = checker::Path {
        init,
        steps: steps.clone(),
    };
    let stepped: Vec<Value> = path_json(m, &walked)
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .zip(&steps)
        .map(|(mut j, (a, _))| {
            j["index"] = json!(index_of(m, a));
            j["text"] = json!(a.to_string());
            j
        })
        .collect();
    use stateright::Model as _;
    let sr_path = stateright::Path::from_actions(m, init, steps.iter().map(|(a, _)| a))
        .ok_or_else(|| "the path is not a path of the model (Stateright disagrees)".to_string())?;
    Ok(json!({
        "steps": stepped,
        "view": here_view,
        "svg": m.as_svg(sr_path),
        "properties": here(m, prev, &s, succ.is_empty()),
        "next": next,
        "terminal": succ.is_empty(),
        "pending": pending(m, &s),
    }))
}

/// The whole-config search: idle, running with progress, or its report.
#[derive(Clone, Default)]
pub struct Search(Arc<Mutex<Value>>);

impl Search {
    /// Start the search on its own thread unless it has already started.
    pub fn start(&self, m: Arc<MoveModel>) {
        {
            let mut g = self.0.lock().expect("search status lock");
            if !g.is_null() {
                return;
            }
            *g = json!({ "state": "running", "unique_states": 0, "depth": 0, "seconds": 0.0 });
        }
        let me = self.clone();
        std::thread::spawn(move || {
            let mut progress = |p: Progress| {
                *me.0.lock().expect("search status lock") = json!({
                    "state": "running",
                    "unique_states": p.unique_states,
                    "depth": p.depth,
                    "seconds": p.seconds,
                });
            };
            let r = checker::check(
                &m,
                Options {
                    progress: Some(&mut progress),
                    ..Options::default()
                },
            );
            *me.0.lock().expect("search status lock") = done(&m, &r);
        });
    }

    pub fn status(&self) -> Value {
        let g = self.0.lock().expect("search status lock");
        if g.is_null() {
            json!({ "state": "idle" })
        } else {
            g.clone()
        }
    }
}

fn done(m: &MoveModel, r: &Report) -> Value {
    let props: Vec<Value> = r
        .results
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "kind": p.kind,
                "status": match p.status {
                    Status::Holds => "holds",
                    Status::Violated => "VIOLATED",
                    Status::Reached => "reached",
                    Status::Unreached => "NOT REACHED",
                },
                "ok": p.ok(),
                "terminals_checked": p.terminals_checked,
                "path": p.path.as_ref().map(|x| x.steps.iter().map(|(a, _)| index_of(m, a)).collect::<Vec<_>>()),
            })
        })
        .collect();
    json!({
        "state": "done",
        "unique_states": r.unique_states,
        "total_states": r.total_states,
        "depth": r.max_depth,
        "seconds": r.seconds,
        "complete": r.complete,
        "passed": r.passed(),
        "properties": props,
    })
}
