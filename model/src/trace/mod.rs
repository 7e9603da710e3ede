//! Trace files: one JSON object per trace, versioned (`docs/traces.md`).
//! A trace is a config, the initial state and the steps `{action, state}`;
//! `replay` checks that every step is allowed by the model and lands on the
//! recorded state.

use crate::action::Action;
use crate::checker::{Path, Report};
use crate::config::Cfg;
use crate::mutant::Mutant;
use crate::properties::{self, Kind};
use crate::protocol::{nodes_of, MoveModel};
use crate::view::{diff, view};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path as FsPath;

mod error;
pub mod itf;
mod witness;

use error::{changes_text, cut_message, shape};
pub use error::{cut, TraceError, QUOTE_MAX};
use witness::witnessed;

/// The schema tag every trace file carries.
pub const SCHEMA: &str = "livemove-trace/1";

/// The largest trace file read. Exported traces are a few hundred KiB at
/// most; the cap keeps the memory of reading one (the text plus its JSON
/// tree, about ten times the file) bounded.
pub const SIZE_MAX: u64 = 16 << 20;

/// The kinds of trace: a property's shortest example or counterexample, a
/// seeded random walk, and a conformance divergence.
pub const KINDS: [&str; 3] = ["discovery", "walk", "divergence"];

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceStep {
    pub action: Action,
    pub state: Value,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    pub schema: String,
    /// Config name, as `livemove check --list` shows it.
    pub config: String,
    /// The config's parameters when the trace was written (stale-check).
    pub params: Value,
    /// Written as `null` for the correct protocol; the key itself is required.
    #[serde(deserialize_with = "required")]
    pub mutant: Option<Mutant>,
    /// One of [`KINDS`].
    pub kind: String,
    /// The property a discovery belongs to (`null` for a walk).
    #[serde(deserialize_with = "required")]
    pub property: Option<String>,
    /// The seed of a walk (`null` for a discovery).
    #[serde(deserialize_with = "required")]
    pub seed: Option<u64>,
    pub init: Value,
    pub steps: Vec<TraceStep>,
}

/// A nullable field whose key must be present: a misspelled or dropped key
/// is an error, not a silent `null`.
fn required<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
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
        let io = |source| TraceError::Io {
            file: file.into(),
            source,
        };
        let bytes = std::fs::metadata(file).map_err(io)?.len();
        if bytes > SIZE_MAX {
            return Err(TraceError::TooLarge {
                file: file.into(),
                bytes,
            });
        }
        let data = std::fs::read(file).map_err(io)?;
        TraceFile::parse(file, &data)
    }

    /// Parse the bytes of a trace file strictly: UTF-8 without a byte-order
    /// mark, no unknown fields, every nullable key present, a known schema
    /// and kind, and the fields a kind needs. `file` names it in errors.
    pub fn parse(file: &FsPath, data: &[u8]) -> Result<TraceFile, TraceError> {
        let f = || file.to_path_buf();
        if data.len() as u64 > SIZE_MAX {
            return Err(TraceError::TooLarge {
                file: f(),
                bytes: data.len() as u64,
            });
        }
        if data.starts_with(b"\xEF\xBB\xBF") {
            return Err(TraceError::Bom { file: f() });
        }
        let text = std::str::from_utf8(data).map_err(|e| TraceError::NotUtf8 {
            file: f(),
            offset: e.valid_up_to(),
            byte: data[e.valid_up_to()],
        })?;
        let parse_err = |path: String, e: serde_json::Error| TraceError::Parse {
            file: f(),
            path,
            msg: cut_message(&e.to_string()),
        };
        let mut de = serde_json::Deserializer::from_str(text);
        let t: TraceFile = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| parse_err(e.path().to_string(), e.into_inner()))?;
        de.end().map_err(|e| parse_err(String::new(), e))?;
        if t.schema != SCHEMA {
            return Err(TraceError::Schema {
                file: f(),
                found: cut(&t.schema, QUOTE_MAX),
            });
        }
        let field = |field, msg| TraceError::Field {
            file: f(),
            field,
            msg,
        };
        match t.kind.as_str() {
            "discovery" if t.property.is_none() => {
                return Err(field(
                    "property",
                    "a discovery trace names the property it reaches".into(),
                ))
            }
            "discovery" if t.seed.is_some() => {
                return Err(field(
                    "seed",
                    "a discovery trace has no seed: expected null".into(),
                ))
            }
            "walk" if t.seed.is_none() => {
                return Err(field("seed", "a walk trace names its seed".into()))
            }
            "walk" if t.property.is_some() => {
                return Err(field(
                    "property",
                    "a walk trace belongs to no property: expected null".into(),
                ))
            }
            k if !KINDS.contains(&k) => {
                return Err(field(
                    "kind",
                    format!(
                        "expected one of `discovery`, `walk`, `divergence`, found `{}`",
                        cut(k, QUOTE_MAX)
                    ),
                ))
            }
            _ => {}
        }
        Ok(t)
    }

    /// Replay through the model: every step must name nodes of the config,
    /// be enabled and land on the recorded state (field for field), and a
    /// discovery must end where its property is witnessed. Returns the
    /// number of steps checked.
    pub fn replay(&self, file: &FsPath) -> Result<usize, TraceError> {
        let f = || file.to_path_buf();
        let cfg = Cfg::named_checked(&self.config)
            .map_err(|msg| TraceError::Config {
                file: f(),
                msg: cut_message(&msg),
            })?
            .with_mutant(self.mutant);
        let params = serde_json::to_value(&cfg).expect("config serializes");
        if let Some(msg) = shape(&self.params, &params, "params") {
            return Err(TraceError::Shape {
                file: f(),
                at: "field `params`".into(),
                msg,
            });
        }
        let cs = diff(&self.params, &params);
        if !cs.is_empty() {
            return Err(TraceError::StaleParams {
                file: f(),
                config: cfg.name,
                changes: changes_text(&cs),
            });
        }
        let prop = match (self.kind.as_str(), &self.property) {
            ("discovery", Some(name)) => Some(
                properties::for_cfg(&cfg)
                    .into_iter()
                    .find(|p| p.name == name)
                    .ok_or_else(|| TraceError::Field {
                        file: f(),
                        field: "property",
                        msg: format!(
                            "`{}` is not a property of config `{}` (`livemove check --config {}` lists them)",
                            cut(name, QUOTE_MAX),
                            cfg.name,
                            cfg.name
                        ),
                    })?,
            ),
            _ => None,
        };
        let m = MoveModel::new(cfg);
        let mut s = m.init();
        let here = view(&m, &s);
        if let Some(msg) = shape(&self.init, &here, "init") {
            return Err(TraceError::Shape {
                file: f(),
                at: "field `init`".into(),
                msg,
            });
        }
        let cs = diff(&self.init, &here);
        if !cs.is_empty() {
            return Err(TraceError::Init {
                file: f(),
                changes: changes_text(&cs),
            });
        }
        let mut last = None;
        for (i, step) in self.steps.iter().enumerate() {
            if nodes_of(step.action)
                .into_iter()
                .flatten()
                .any(|n| n >= m.cfg.nodes)
            {
                return Err(TraceError::NodeOutside {
                    file: f(),
                    step: i,
                    action: step.action.to_string(),
                    config: m.cfg.name.clone(),
                    nodes: m.cfg.nodes,
                });
            }
            let next = m.apply(&s, step.action).map_err(|g| TraceError::Disabled {
                file: f(),
                step: i,
                action: step.action.to_string(),
                guard: g.0.into(),
            })?;
            let after = view(&m, &next);
            if let Some(msg) = shape(&step.state, &after, &format!("steps[{i}].state")) {
                return Err(TraceError::Shape {
                    file: f(),
                    at: format!("steps[{i}]"),
                    msg,
                });
            }
            let cs = diff(&step.state, &after);
            if !cs.is_empty() {
                return Err(TraceError::Mismatch {
                    file: f(),
                    step: i,
                    action: step.action.to_string(),
                    changes: changes_text(&cs),
                });
            }
            last = Some((s, step.action));
            s = next;
        }
        if let Some(p) = prop {
            if !witnessed(&m, &p, last.as_ref().map(|(x, a)| (x, a)), &s) {
                return Err(TraceError::NotWitnessed {
                    file: f(),
                    steps: self.steps.len(),
                    what: match p.kind {
                        Kind::Sometimes => "reaching",
                        _ => "violating",
                    },
                    property: p.name.into(),
                });
            }
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
    TraceFile::new(
        m,
        "walk",
        None,
        Some(seed),
        &random_walk_path(m, seed, steps_max),
    )
}

/// The path of [`random_walk`].
pub fn random_walk_path(m: &MoveModel, seed: u64, steps_max: usize) -> Path {
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
    path
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
