//! A divergence report: the config, the implementation mutant, the seed of
//! a random walk, the index of the first step that disagrees, its action,
//! the field-path diff of model vs implementation (only the differing
//! fields), the K steps before it, the failing trace saved as a model trace
//! file, and the one command that replays it.

use crate::check::{FieldDiff, Kind, Mismatch};
use livemove_model::trace::{file_name, TraceFile, TraceStep, SCHEMA};
use livemove_model::view::view;
use livemove_model::{Action, MoveModel, Mutant};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Steps shown before the one that disagrees, unless told otherwise.
pub const CONTEXT_STEPS_DEFAULT: usize = 8;

/// One disagreement between the model and the implementation.
#[derive(Clone, Debug, Serialize)]
pub struct Divergence {
    pub config: String,
    /// The implementation mutant (the model is the correct protocol unless
    /// the trace says otherwise).
    pub mutant: Option<String>,
    pub seed: Option<u64>,
    pub kind: Kind,
    /// 0-based index of the first step that disagrees; for a refusal, the
    /// number of steps taken before the probed action.
    pub step: usize,
    pub action: String,
    pub model: String,
    pub implementation: String,
    /// Only the fields that differ, model vs implementation.
    pub changes: Vec<FieldDiff>,
    /// The K steps before it, as `index: action`.
    pub before: Vec<String>,
    /// The failing trace (model trace schema), once saved.
    pub trace: Option<String>,
    /// The one command that replays it.
    pub replay: String,
    /// The model steps of the trace (the disagreeing one included when the
    /// model enables it).
    #[serde(skip)]
    pub steps: Vec<Action>,
}

impl Divergence {
    /// A report for `mismatch` after the model steps `prefix`, at `action`
    /// (`None` for the initial state).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        m: &MoveModel,
        mutant: Option<Mutant>,
        seed: Option<u64>,
        prefix: &[Action],
        action: Option<Action>,
        mismatch: Mismatch,
        context: usize,
    ) -> Divergence {
        let mut steps = prefix.to_vec();
        if matches!(mismatch.kind, Kind::Outcome | Kind::State) {
            steps.extend(action);
        }
        let from = prefix.len().saturating_sub(context);
        let before = prefix[from..]
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}: {a}", from + i))
            .collect();
        let mut replay = format!("livemove conform --config {}", m.cfg.name);
        if let Some(mu) = mutant {
            let _ = write!(replay, " --mutant {mu}");
        }
        if let Some(s) = seed {
            let _ = write!(replay, " --walks 1 --seed {s} --depth {}", prefix.len() + 1);
        }
        Divergence {
            config: m.cfg.name.clone(),
            mutant: mutant.map(|x| x.name().to_string()),
            seed,
            kind: mismatch.kind,
            step: prefix.len(),
            action: match (action, mismatch.kind) {
                (Some(a), _) => a.to_string(),
                (None, Kind::Resume) => "(resume from the persisted record)".into(),
                (None, _) => "(initial state)".into(),
            },
            model: mismatch.model,
            implementation: mismatch.implementation,
            changes: mismatch.changes,
            before,
            trace: None,
            replay,
            steps,
        }
    }

    /// The failing trace as a model trace file.
    pub fn trace_file(&self, m: &MoveModel) -> TraceFile {
        let mut s = m.init();
        let init = view(m, &s);
        let mut steps = Vec::new();
        for a in &self.steps {
            s = m
                .apply(&s, *a)
                .expect("a divergence's trace is a model trace");
            steps.push(TraceStep {
                action: *a,
                state: view(m, &s),
            });
        }
        TraceFile {
            schema: SCHEMA.into(),
            config: m.cfg.name.clone(),
            params: serde_json::to_value(&m.cfg).expect("config serializes"),
            mutant: m.cfg.mutant,
            kind: "divergence".into(),
            property: Some(format!(
                "{} at step {}: {}",
                self.kind, self.step, self.action
            )),
            seed: self.seed,
            init,
            steps,
        }
    }

    /// Save the failing trace under `dir` and point the replay command at it.
    pub fn save(&mut self, m: &MoveModel, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let t = self.trace_file(m);
        let tag = self.mutant.as_deref().unwrap_or("correct");
        let name = file_name(&t).replace(".json", &format!("--{tag}.json"));
        let path = dir.join(name);
        let text = serde_json::to_string_pretty(&t).expect("trace serializes");
        std::fs::write(&path, text + "\n")?;
        let mut replay = format!("livemove conform --traces {}", path.display());
        if let Some(mu) = &self.mutant {
            if m.cfg.mutant.map(|x| x.name()) != Some(mu.as_str()) {
                let _ = write!(replay, " --mutant {mu}");
            }
        }
        self.trace = Some(path.display().to_string());
        self.replay = replay;
        Ok(path)
    }

    /// The report as text.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "DIVERGENCE ({}) config {}, implementation mutant {}, seed {}",
            self.kind,
            self.config,
            self.mutant.as_deref().unwrap_or("none"),
            self.seed.map_or("-".into(), |s| s.to_string())
        );
        let _ = writeln!(o, "  step {}: {}", self.step, self.action);
        let _ = writeln!(o, "  model: {}", self.model);
        let _ = writeln!(o, "  implementation: {}", self.implementation);
        if !self.changes.is_empty() {
            let _ = writeln!(o, "  differs:");
            for c in &self.changes {
                let _ = writeln!(o, "    {c}");
            }
        }
        if !self.before.is_empty() {
            let _ = writeln!(o, "  the {} steps before it:", self.before.len());
            for b in &self.before {
                let _ = writeln!(o, "    {b}");
            }
        }
        if let Some(t) = &self.trace {
            let _ = writeln!(o, "  trace: {t}");
        }
        let _ = writeln!(o, "  replay: {}", self.replay);
        o
    }

    /// What makes two divergences the same finding: kind, action name and
    /// the differing paths.
    pub fn key(&self) -> (Kind, String, Vec<String>) {
        let name = self
            .action
            .split([' ', '{'])
            .next()
            .unwrap_or_default()
            .to_string();
        let mut paths: Vec<String> = self.changes.iter().map(|c| c.path.clone()).collect();
        paths.sort();
        (self.kind, name, paths)
    }
}
