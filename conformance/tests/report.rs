//! The shape of a divergence report: config, mutant, the first disagreeing
//! step and its action, a field-path diff of only the differing fields, the
//! K steps before it, the failing trace (a model trace file the model
//! accepts) and the command that replays it; replaying the trace finds the
//! same divergence. Also the `--json` run object's keys.

use livemove_conformance::check::Kind;
use livemove_conformance::replay::{self, Stop};
use livemove_conformance::report::Options;
use livemove_conformance::{env, lockstep, walk};
use livemove_model::{Cfg, Mutant};

fn out_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("livemove-conform-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn a_divergence_names_its_step_diffs_only_differing_fields_and_replays_from_its_trace() {
    let dir = out_dir("report");
    let opts = Options {
        stop_at_first: true,
        out_dir: Some(dir.clone()),
        context_steps: 2,
        ..Options::default()
    };
    let cfg = Cfg::named("join-and-move");
    let r = lockstep::run(&cfg, Some(Mutant::LearnerCounts), &opts);
    assert!(!r.passed());
    let d = &r.divergences[0];
    assert_eq!(d.config, "join-and-move");
    assert_eq!(d.mutant.as_deref(), Some("learner_counts"));
    assert_eq!(d.kind, Kind::Refusal);
    assert_eq!(d.action, "Confirm { node: n1 }");
    assert_eq!(d.step, 3);
    assert_eq!(d.before.len(), 2, "K = 2 steps before it");
    assert_eq!(d.before[0], "1: AddLearner { target: n4 }");
    // Only the differing field: the learner's copy was counted.
    let paths: Vec<&str> = d.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["nodes[n1].serving.confirmed"]);
    assert_eq!(
        d.changes[0].to_string(),
        "nodes[n1].serving.confirmed: model 0 != impl 1"
    );
    // The trace is a model trace file, and the command replays it.
    let trace = d.trace.as_ref().expect("trace saved");
    assert_eq!(
        d.replay,
        format!("livemove conform --traces {trace} --mutant learner_counts")
    );
    let (t, m) = replay::read_trace(std::path::Path::new(trace)).expect("the model accepts it");
    assert_eq!(
        t.steps.len(),
        d.step,
        "a refusal's trace stops before the probe"
    );
    let steps: Vec<_> = t.steps.iter().map(|s| s.action).collect();
    match replay::actions(
        &m,
        &env::relaxed(&m),
        Some(Mutant::LearnerCounts),
        &steps,
        true,
    ) {
        Err(Stop::Diverged {
            prefix, mismatch, ..
        }) => {
            assert_eq!(prefix.len(), d.step);
            assert_eq!(mismatch.changes, d.changes);
        }
        other => panic!("replay did not reproduce the divergence: {other:?}"),
    }
    let text = d.text();
    assert!(text.contains("step 3: Confirm { node: n1 }"), "{text}");
    assert!(text.contains("replay: livemove conform --traces"), "{text}");
}

#[test]
fn a_walk_divergence_is_shrunk_and_carries_its_seed() {
    let opts = Options {
        stop_at_first: true,
        ..Options::default()
    };
    let cfg = Cfg::named("join-and-move");
    let r = walk::run(&cfg, Some(Mutant::RemoveBeforeBoundary), 20, 40, 7, &opts);
    let d = r.divergences.first().expect("some walk finds the mutant");
    assert!(d.seed.is_some());
    assert_eq!(d.action, "RemoveLeaving");
    // Shrunk: no step can be dropped; the shortest story is 7 steps
    // (publish, replicate, add, admit, swap, confirm, switch).
    assert!(d.step <= 8, "not shrunk: {}", d.text());
}

#[test]
fn the_run_object_has_the_documented_keys() {
    let r = lockstep::run(&Cfg::named("handoff"), None, &Options::default());
    let v = serde_json::to_value(&r).unwrap();
    for k in [
        "config",
        "mutant",
        "edges_reachable",
        "edges_replayed",
        "negative_checks",
        "traces_replayed",
        "divergences",
        "steps_per_second",
        "seconds",
    ] {
        assert!(v.get(k).is_some(), "missing `{k}` in {v}");
    }
    assert_eq!(v["divergences"], serde_json::json!([]));
}
