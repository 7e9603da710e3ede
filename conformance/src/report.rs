//! One run's numbers, as text and as the `--json` object.

use crate::divergence::Divergence;
use livemove_model::MoveModel;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Options shared by every mode.
#[derive(Clone, Debug)]
pub struct Options {
    /// Check negative conformance in every visited state.
    pub negative: bool,
    /// Stop at the first divergence (the zoo's conformance column).
    pub stop_at_first: bool,
    /// Distinct divergences kept per run (the run goes on after one).
    pub divergences_max: usize,
    /// Where failing traces are written; `None` keeps them in memory.
    pub out_dir: Option<PathBuf>,
    /// Steps shown before the one that disagrees.
    pub context_steps: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            negative: true,
            stop_at_first: false,
            divergences_max: 10,
            out_dir: None,
            context_steps: crate::divergence::CONTEXT_STEPS_DEFAULT,
        }
    }
}

/// The result of one run on one config.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunReport {
    pub config: String,
    /// The implementation mutant; the model is the correct protocol.
    pub mutant: Option<String>,
    /// `lockstep`, `traces` or `walks`.
    pub mode: String,
    /// Model states visited.
    pub states: usize,
    /// Edges of the model's reachable graph (lockstep) or steps offered.
    pub edges_reachable: usize,
    /// Edges driven against the implementation and compared.
    pub edges_replayed: usize,
    pub negative_checks: usize,
    /// Disabled actions not checked: only a budget or the environment disables them.
    pub negative_skipped: usize,
    /// States in which resume's step from the persisted record was checked
    /// (lockstep): the model enables it, it waits on a fact outside the
    /// record, or nothing is in flight.
    pub resume_enabled: usize,
    pub resume_waits: usize,
    pub resume_idle: usize,
    pub traces_replayed: usize,
    pub divergences: Vec<Divergence>,
    /// Every distinct divergence found, including those beyond `divergences_max`.
    pub divergences_found: usize,
    /// Trace files that could not be read or are not model traces.
    pub errors: Vec<String>,
    /// Implementation calls compared (edges plus negative checks) per second.
    pub steps_per_second: f64,
    /// Edges replayed per second.
    pub edges_per_second: f64,
    pub seconds: f64,
}

impl RunReport {
    /// No divergence and no unreadable trace.
    pub fn passed(&self) -> bool {
        self.divergences_found == 0 && self.errors.is_empty()
    }

    /// Fill the rates from `seconds`.
    pub fn finish(&mut self, seconds: f64) {
        self.seconds = seconds;
        let s = seconds.max(1e-9);
        self.steps_per_second = (self.edges_replayed + self.negative_checks) as f64 / s;
        self.edges_per_second = self.edges_replayed as f64 / s;
    }

    /// Keep `d` unless an equal finding is already kept, saving its trace
    /// under `opts.out_dir`; false when the run should stop.
    pub fn push(&mut self, mut d: Divergence, m: &MoveModel, opts: &Options) -> bool {
        let key = d.key();
        if self.divergences.iter().any(|x| x.key() == key) {
            return !opts.stop_at_first;
        }
        self.divergences_found += 1;
        if self.divergences.len() < opts.divergences_max {
            if let Some(dir) = &opts.out_dir {
                if let Err(e) = d.save(m, dir) {
                    self.errors
                        .push(format!("cannot save a trace under {}: {e}", dir.display()));
                }
            }
            self.divergences.push(d);
        }
        !opts.stop_at_first
    }

    /// The run as text.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "conform {} ({}), implementation mutant {}",
            self.config,
            self.mode,
            self.mutant.as_deref().unwrap_or("none")
        );
        let pct = if self.edges_reachable == 0 {
            100.0
        } else {
            100.0 * self.edges_replayed as f64 / self.edges_reachable as f64
        };
        let _ = writeln!(
            o,
            "  states {}, edges replayed {} / reachable {} ({pct:.1}%), negative checks {} (skipped {}), traces {}",
            self.states,
            self.edges_replayed,
            self.edges_reachable,
            self.negative_checks,
            self.negative_skipped,
            self.traces_replayed
        );
        if self.resume_enabled + self.resume_waits + self.resume_idle > 0 {
            let _ = writeln!(
                o,
                "  resume from the record: {} states, step enabled {}, waits on a fact {}, idle {}",
                self.resume_enabled + self.resume_waits + self.resume_idle,
                self.resume_enabled,
                self.resume_waits,
                self.resume_idle
            );
        }
        let _ = writeln!(
            o,
            "  {:.2} s, {:.0} edges/s, {:.0} steps/s",
            self.seconds, self.edges_per_second, self.steps_per_second
        );
        for e in &self.errors {
            let _ = writeln!(o, "  ERROR {e}");
        }
        for d in &self.divergences {
            o.push_str(&d.text());
        }
        if self.divergences_found > self.divergences.len() {
            let _ = writeln!(
                o,
                "  ... {} more distinct divergences not shown",
                self.divergences_found - self.divergences.len()
            );
        }
        let _ = writeln!(
            o,
            "  {}",
            if self.passed() {
                "PASS: 0 divergences"
            } else {
                "FAIL"
            }
        );
        o
    }
}
