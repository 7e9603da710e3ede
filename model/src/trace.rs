//! Trace files: one JSON object per trace, versioned (`docs/traces.md`).
//! A trace is a config, the initial state and the steps `{action, state}`;
//! `replay` checks that every step is allowed by the model and lands on the
//! recorded state.

use crate::action::Action;
use crate::checker::{Path, Report};
use crate::config::Cfg;
use crate::mutant::Mutant;
use crate::protocol::MoveModel;
use crate::view::{diff, view, Change};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path as FsPath, PathBuf};

/// The schema tag every trace file carries.
pub const SCHEMA: &str = "livemove-trace/1";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TraceStep {
    pub action: Action,
    pub state: Value,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TraceFile {
    pub schema: String,
    /// Config name, as `livemove check --list` shows it.
    pub config: String,
    /// The config's parameters when the trace was written (stale-check).
    pub params: Value,
    pub mutant: Option<Mutant>,
    /// `discovery` (a property's shortest example) or `walk` (seeded random walk).
    pub kind: String,
    pub property: Option<String>,
    pub seed: Option<u64>,
    pub init: Value,
    pub steps: Vec<TraceStep>,
}

/// Why a trace file was rejected.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    /// The JSON is malformed or a field is missing or of the wrong type.
    #[error("{file}: malformed trace: {msg}")]
    Parse { file: PathBuf, msg: String },
    /// The schema tag is not one this version reads.
    #[error("{file}: field `schema`: expected \"{SCHEMA}\", found \"{found}\"")]
    Schema { file: PathBuf, found: String },
    /// The config named in the file does not exist.
    #[error("{file}: field `config`: {msg}")]
    Config { file: PathBuf, msg: String },
    /// The config exists but its parameters changed since the trace was written.
    #[error("{file}: field `params`: the trace was written for different parameters of `{config}` (stale trace): {changes}")]
    StaleParams {
        file: PathBuf,
        config: String,
        changes: String,
    },
    /// The initial state differs from the model's.
    #[error("{file}: field `init` differs from the model's initial state: {changes}")]
    Init { file: PathBuf, changes: String },
    /// A step's action is not enabled in the model.
    #[error("{file}: steps[{step}]: action `{action}` is not allowed by the model: guard `{guard}` fails")]
    Disabled {
        file: PathBuf,
        step: usize,
        action: String,
        guard: String,
    },
    /// A step lands on a different state than recorded.
    #[error("{file}: steps[{step}].state differs after `{action}`: {changes}")]
    Mismatch {
        file: PathBuf,
        step: usize,
        action: String,
        changes: String,
    },
}

fn changes_text(cs: &[Change]) -> String {
    cs.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

impl TraceFile {
    fn new(
        m: &MoveModel,
        kind: &str,
        property: Option<&str>,
        seed: Option<u64>,
        path: &Path,
    ) -> TraceFile {
        TraceFile {
            schema: SCHEMA.into(),
            config: m.cfg.name.clone(),
            params: serde_json::to_value(&m.cfg).expect("config serializes"),
            mutant: m.cfg.mutant,
            kind: kind.into(),
            property: property.map(String::from),
            seed,
            init: view(m, &path.init),
            steps: path
                .steps
                .iter()
                .map(|(a, s)| TraceStep {
                    action: *a,
                    state: view(m, s),
                })
                .collect(),
        }
    }

    /// Read and parse a trace file (structure only; see [`TraceFile::replay`]).
    pub fn read(file: &FsPath) -> Result<TraceFile, TraceError> {
        let text = std::fs::read_to_string(file).map_err(|source| TraceError::Io {
            file: file.into(),
            source,
        })?;
        let t: TraceFile = serde_json::from_str(&text).map_err(|e| TraceError::Parse {
            file: file.into(),
            msg: e.to_string(),
        })?;
        if t.schema != SCHEMA {
            return Err(TraceError::Schema {
                file: file.into(),
                found: t.schema,
            });
        }
        Ok(t)
    }

    /// Replay through the model: every step must be enabled and land on the
    /// recorded state. Returns the number of steps checked.
    pub fn replay(&self, file: &FsPath) -> Result<usize, TraceError> {
        let f = || file.to_path_buf();
        let cfg = Cfg::named_checked(&self.config)
            .map_err(|msg| TraceError::Config { file: f(), msg })?
            .with_mutant(self.mutant);
        let params = serde_json::to_value(&cfg).expect("config serializes");
        let cs = diff(&self.params, &params);
        if !cs.is_empty() {
            return Err(TraceError::StaleParams {
                file: f(),
                config: cfg.name,
                changes: changes_text(&cs),
            });
        }
        let m = MoveModel::new(cfg);
        let mut s = m.init();
        let cs = diff(&self.init, &view(&m, &s));
        if !cs.is_empty() {
            return Err(TraceError::Init {
                file: f(),
                changes: changes_text(&cs),
            });
        }
        for (i, step) in self.steps.iter().enumerate() {
            let next = m.apply(&s, step.action).map_err(|g| TraceError::Disabled {
                file: f(),
                step: i,
                action: step.action.to_string(),
                guard: g.0.into(),
            })?;
            let cs = diff(&step.state, &view(&m, &next));
            if !cs.is_empty() {
                return Err(TraceError::Mismatch {
                    file: f(),
                    step: i,
                    action: step.action.to_string(),
                    changes: changes_text(&cs),
                });
            }
            s = next;
        }
        Ok(self.steps.len())
    }
}

/// One trace per property discovery of a report.
pub fn discoveries(m: &MoveModel, report: &Report) -> Vec<TraceFile> {
    report
        .results
        .iter()
        .filter_map(|r| {
            r.path
                .as_ref()
                .map(|p| TraceFile::new(m, "discovery", Some(r.name), None, p))
        })
        .collect()
}

/// A seeded random walk of at most `steps_max` steps (stops at a terminal state).
pub fn random_walk(m: &MoveModel, seed: u64, steps_max: usize) -> TraceFile {
    // SplitMix64: small, seedable, and stable across versions.
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let init = m.init();
    let mut path = Path {
        init,
        steps: Vec::new(),
    };
    let mut s = init;
    let mut succ = Vec::new();
    for _ in 0..steps_max {
        succ.clear();
        m.successors(&s, &mut succ);
        if succ.is_empty() {
            break;
        }
        let (a, t) = succ[(next() % succ.len() as u64) as usize];
        path.steps.push((a, t));
        s = t;
    }
    TraceFile::new(m, "walk", None, Some(seed), &path)
}

/// A file name for a trace: the property as a slug, or `walk-<seed>`.
pub fn file_name(t: &TraceFile) -> String {
    match (&t.property, t.seed) {
        (Some(p), _) => {
            let slug: String = p
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '-'
                    }
                })
                .collect();
            format!(
                "{}--{}.json",
                t.config,
                slug.split('-')
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("-")
            )
        }
        (None, Some(seed)) => format!("{}--walk-{seed}.json", t.config),
        _ => format!("{}--trace.json", t.config),
    }
}
