//! Trace files: one JSON object per trace, versioned (`docs/traces.md`).
//! A trace is a config, the initial state and the steps `{action, state}`;
//! `replay` checks that every step is allowed by the model and lands on the
//! recorded state.

use crate::action::Action;
use crate::checker::{Path, Report};
use crate::config::Cfg;
use crate::mutant::Mutant;
use crate::properties::{self, Check, Kind, Property};
use crate::protocol::{nodes_of, MoveModel};
use crate::state::State;
use crate::view::{diff, view, Change};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path as FsPath, PathBuf};

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

/// Why a trace file was rejected. Every message names the file, and the
/// step or field; values quoted from the file are cut to [`QUOTE_MAX`]
/// characters.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    /// The file is larger than any trace this version writes.
    #[error("{file}: {bytes} bytes: larger than the {SIZE_MAX} bytes a trace file may have")]
    TooLarge { file: PathBuf, bytes: u64 },
    /// The file starts with a UTF-8 byte-order mark.
    #[error("{file}: byte 0: starts with a UTF-8 byte-order mark (EF BB BF); trace files are UTF-8 without one")]
    Bom { file: PathBuf },
    /// The file is not UTF-8.
    #[error(
        "{file}: byte {offset}: not valid UTF-8 (byte 0x{byte:02x}); trace files are UTF-8 JSON"
    )]
    NotUtf8 {
        file: PathBuf,
        offset: usize,
        byte: u8,
    },
    /// The JSON is malformed, or a field is missing, unknown or of the wrong type.
    #[error("{file}: malformed trace{}: {msg}", at_path(.path))]
    Parse {
        file: PathBuf,
        /// Where in the document, e.g. `steps[3].action.target`.
        path: String,
        msg: String,
    },
    /// The schema tag is not one this version reads.
    #[error("{file}: field `schema`: expected \"{SCHEMA}\", found \"{found}\"")]
    Schema { file: PathBuf, found: String },
    /// A field has a value this version does not accept.
    #[error("{file}: field `{field}`: {msg}")]
    Field {
        file: PathBuf,
        field: &'static str,
        msg: String,
    },
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
    /// A recorded state or the parameters have a field the model's view
    /// lacks, or lack one it has.
    #[error("{file}: {at}: {msg}")]
    Shape {
        file: PathBuf,
        at: String,
        msg: String,
    },
    /// The initial state differs from the model's.
    #[error("{file}: field `init` differs from the model's initial state: {changes}")]
    Init { file: PathBuf, changes: String },
    /// A step names a node the config does not have.
    #[error("{file}: steps[{step}].action: `{action}` names a node outside config `{config}` (nodes n1..n{nodes})")]
    NodeOutside {
        file: PathBuf,
        step: usize,
        action: String,
        config: String,
        nodes: u8,
    },
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
    /// A discovery trace does not end where its property is witnessed.
    #[error(
        "{file}: field `property`: the trace ends after {steps} steps without {what} `{property}`"
    )]
    NotWitnessed {
        file: PathBuf,
        steps: usize,
        what: &'static str,
        property: String,
    },
}

fn at_path(p: &str) -> String {
    if p.is_empty() || p == "." {
        String::new()
    } else {
        format!(" at `{p}`")
    }
}

/// The longest quotation of a value from a file in an error message.
pub const QUOTE_MAX: usize = 80;

/// `s` cut to `max` characters, saying how much was left out.
pub fn cut(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max * 2 / 3).collect();
    let tail: String = s.chars().skip(n - max / 3).collect();
    format!(
        "{head}…[{} characters left out]…{tail}",
        n - head.chars().count() - tail.chars().count()
    )
}

/// A parser message with every quoted run (between backticks or double
/// quotes) cut to [`QUOTE_MAX`], and the whole cut to a few lines.
fn cut_message(msg: &str) -> String {
    let mut out = String::new();
    let mut rest = msg;
    while let Some(i) = rest.find(['`', '"']) {
        let q = rest[i..].chars().next().expect("found a quote");
        out.push_str(&rest[..=i]);
        let after = &rest[i + 1..];
        match after.find(q) {
            Some(j) => {
                out.push_str(&cut(&after[..j], QUOTE_MAX));
                out.push(q);
                rest = &after[j + 1..];
            }
            None => {
                out.push_str(&cut(after, QUOTE_MAX));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    cut(&out, 12 * QUOTE_MAX)
}

fn changes_text(cs: &[Change]) -> String {
    let shown: Vec<String> = cs
        .iter()
        .take(8)
        .map(|c| cut(&c.to_string(), 2 * QUOTE_MAX))
        .collect();
    let more = cs.len().saturating_sub(shown.len());
    let mut t = shown.join("; ");
    if more > 0 {
        t.push_str(&format!("; and {more} more changed fields"));
    }
    t
}

/// The first key that one object tree has and the other lacks, as a
/// message (`recorded` is the file's, `model` the model's view).
fn shape(recorded: &Value, model: &Value, at: &str) -> Option<String> {
    let (Value::Object(a), Value::Object(b)) = (recorded, model) else {
        return None;
    };
    if let Some(k) = a.keys().find(|k| !b.contains_key(*k)) {
        return Some(format!("unknown field `{at}.{}`", cut(k, QUOTE_MAX)));
    }
    if let Some(k) = b.keys().find(|k| !a.contains_key(*k)) {
        return Some(format!("missing field `{at}.{k}`"));
    }
    a.iter()
        .find_map(|(k, x)| shape(x, &b[k], &format!("{at}.{k}")))
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

/// Whether a path ending in `s` (entered from `last`) witnesses `p`: an
/// example of a `sometimes` property, a counterexample of an `always`
/// property, and for `eventually` a terminal state where it fails or a
/// state on a cycle.
fn witnessed(m: &MoveModel, p: &Property, last: Option<(&State, &Action)>, s: &State) -> bool {
    let hit = |holds: bool| {
        if p.kind == Kind::Sometimes {
            holds
        } else {
            !holds
        }
    };
    match p.check {
        Check::State(f) => hit(f(m, s)),
        Check::Edge(f) => last.is_some_and(|(from, a)| hit(f(m, from, a, s))),
        Check::Terminal(f) => {
            let mut succ = Vec::new();
            m.successors(s, &mut succ);
            if succ.is_empty() {
                !f(m, s)
            } else {
                on_cycle(m, s)
            }
        }
    }
}

/// Whether `s` can reach itself (a search of what is reachable from it).
fn on_cycle(m: &MoveModel, s: &State) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![*s];
    let mut succ = Vec::new();
    while let Some(x) = todo.pop() {
        succ.clear();
        m.successors(&x, &mut succ);
        for (_, t) in &succ {
            if t == s {
                return true;
            }
            if seen.insert(*t) {
                todo.push(*t);
            }
        }
    }
    false
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
