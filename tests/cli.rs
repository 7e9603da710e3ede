//! End-to-end tests of the `livemove` command line: exit codes, the JSON
//! shape, unknown configs, trace export and check, malformed trace files.

mod common;
use common::{livemove, stderr, stdout};
use serde_json::{json, Value};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    common::tmp("cli", name)
}

#[test]
fn check_passes_with_exit_0_and_prints_params_properties_and_summary() {
    let o = livemove(&["check", "--config", "join-and-move"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("nodes=4 rf=3 messages=2"), "{out}");
    assert!(
        out.contains("always     holds       no confirmed entry is lost"),
        "{out}"
    );
    assert!(
        out.contains("sometimes  reached     a move completes past a confirmed boundary"),
        "{out}"
    );
    assert!(out.contains("unique states 877"), "{out}");
    assert!(out.contains("search complete"), "{out}");
    assert!(out.contains("result: PASS"), "{out}");
}

#[test]
fn a_violation_exits_1_with_a_numbered_counterexample_of_changed_fields() {
    let o = livemove(&[
        "check",
        "--config",
        "join-and-move",
        "--mutant",
        "learner_counts",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("VIOLATED    no confirmed entry is lost  (shortest counterexample: 4 steps)"),
        "{out}"
    );
    assert!(out.contains(" 1. "), "{out}");
    assert!(out.contains("nodes[n4].role: none -> learner"), "{out}");
    assert!(out.contains("result: FAIL"), "{out}");
}

#[test]
fn json_has_the_documented_shape() {
    let o = livemove(&["check", "--config", "handoff", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    for k in [
        "config",
        "complete",
        "unique_states",
        "total_states",
        "max_depth",
        "seconds",
        "properties",
    ] {
        assert!(v.get(k).is_some(), "missing `{k}`");
    }
    assert_eq!(v["complete"], true);
    assert_eq!(v["unique_states"], 304);
    let props = v["properties"].as_array().unwrap();
    assert!(props
        .iter()
        .all(|p| ["always", "sometimes", "eventually"].contains(&p["kind"].as_str().unwrap())));
    assert!(props
        .iter()
        .all(|p| ["holds", "violated", "reached", "unreached"]
            .contains(&p["status"].as_str().unwrap())));
    let reached = props
        .iter()
        .find(|p| p["status"] == "reached")
        .expect("a reached property");
    let step = &reached["counterexample"][0];
    assert!(
        step["action"]["action"].is_string() && step["changed"].is_object(),
        "{step}"
    );
}

/// The report says how acyclicity was checked: by the progress measure on
/// an atomic config, by every edge when asked or with messages in flight,
/// and the JSON carries the same; an unknown way is refused by name.
#[test]
fn the_report_says_how_acyclicity_was_checked() {
    let out = stdout(&livemove(&["check", "--config", "handoff"]));
    assert!(
        out.contains(
            "acyclicity: by the progress measure, which no edge lowers (0 flat edges checked)"
        ),
        "{out}"
    );
    let o = livemove(&[
        "check",
        "--config",
        "handoff",
        "--acyclicity",
        "edges",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["acyclicity"], json!({"by": "edges", "why": "asked for"}));
    assert_eq!(v["acyclic"], true);
    let o = livemove(&["check", "--config", "handoff-net", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["acyclicity"]["by"], "edges", "{}", v["acyclicity"]);
    let o = livemove(&[
        "check",
        "--config",
        "handoff-net",
        "--acyclicity",
        "measure",
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(
        v["acyclicity"],
        json!({"by": "measure", "flat_edges": 428382}),
        "deliveries that change nothing are flat"
    );
    let o = livemove(&["check", "--config", "handoff", "--acyclicity", "sometimes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--acyclicity"), "{}", stderr(&o));
}

#[test]
fn a_group_prints_runs() {
    let o = livemove(&["check", "--config", "ci", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["runs"].as_array().unwrap().len() >= 9);
}

#[test]
fn an_unknown_config_exits_2_and_lists_the_known_ones() {
    let o = livemove(&["check", "--config", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("unknown config `nope`")
            && err.contains("join-and-move")
            && err.contains("ci (group)"),
        "{err}"
    );
}

#[test]
fn an_unknown_mutant_and_bad_usage_exit_2() {
    assert_eq!(
        livemove(&["check", "--config", "handoff", "--mutant", "nope"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(livemove(&["check"]).status.code(), Some(2));
    assert_eq!(livemove(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn list_shows_every_config_with_parameters() {
    let o = livemove(&["check", "--list"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for c in [
        "join-and-move",
        "recovery-during-move",
        "handoff",
        "restart-rejoin",
        "lost-follower-replaced",
        "rf-increase",
        "drain",
        "full",
        "full-net",
        "handoff-net",
        "ci",
    ] {
        assert!(out.contains(c), "missing {c}");
    }
    assert!(out.contains("nodes=4 rf=3"));
    assert!(out.contains("net window=1 drops=1 dups=1"));
}

#[test]
fn exported_traces_check_and_a_malformed_file_is_named() {
    let d = tmp("traces");
    let o = livemove(&[
        "trace",
        "export",
        "--config",
        "handoff",
        "--out",
        d.to_str().unwrap(),
        "--walks",
        "2",
        "--seed",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    assert!(files.len() >= 4, "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("handoff--walk-5.json")));
    let mut args = vec!["trace", "check"];
    args.extend(files.iter().map(String::as_str));
    let o = livemove(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    let bad = d.join("bad.json");
    std::fs::write(&bad, "{ \"schema\": \"livemove-trace/1\", \"steps\": [ }").unwrap();
    let o = livemove(&["trace", "check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("bad.json") && err.contains("malformed trace") && err.contains("line 1"),
        "{err}"
    );
    assert!(
        stdout(&o).contains("checked 1 trace file(s): 0 ok (0 steps replayed), 1 rejected"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn conform_runs_lockstep_and_reports_json() {
    let o = livemove(&["conform", "--config", "handoff", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["edges_reachable"], v["edges_replayed"]);
    assert_eq!(v["edges_reachable"], 742);
    assert!(v["negative_checks"].as_u64().unwrap() > 0);
    assert_eq!(v["divergences"].as_array().unwrap().len(), 0);
}

#[test]
fn conform_catches_a_mutant_implementation_with_exit_1() {
    let o = livemove(&[
        "conform",
        "--config",
        "join-and-move",
        "--mutant",
        "learner_counts",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("replay"), "{}", stdout(&o));
}

#[test]
fn check_uses_every_core_by_default_with_the_one_worker_result() {
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--config", "handoff-faults", "--json"];
        args.extend(extra);
        let o = livemove(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let mut v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let workers = v["workers"].as_u64().expect("workers");
        v.as_object_mut().expect("object").remove("seconds");
        v.as_object_mut().expect("object").remove("workers");
        (workers, v)
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let (w, default) = run(&[]);
    assert_eq!(w, cores);
    let (w1, one) = run(&["--workers", "1"]);
    assert_eq!(w1, 1);
    assert_eq!(
        default, one,
        "counts, verdicts and paths follow from the config alone"
    );
}
