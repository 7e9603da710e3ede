//! End-to-end tests of `livemove plan`: the scenario table and its JSON
//! shape, synthetic clusters, scores and moves, the operator commands over
//! a record file, and clear errors on bad input.

mod common;
use common::{livemove, stderr, stdout};
use serde_json::Value;
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    common::tmp("plan", name)
}

const KEYS: [&str; 13] = [
    "name",
    "moves",
    "moves_lower_bound",
    "bytes_moved",
    "bytes_lower_bound",
    "handoffs",
    "max_over_mean",
    "rounds",
    "peak_transfers",
    "reversals",
    "moved_twice",
    "plan_ms_p50",
    "plan_ms_p99",
];

#[test]
fn plan_json_runs_every_scenario_with_exactly_the_documented_keys() {
    let o = livemove(&["plan", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["scenarios"]
    );
    let rows = v["scenarios"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add-one-node",
            "add-20-percent",
            "drain-node",
            "mixed-capacities",
            "hot-partition",
            "just-received",
            "recovery-pending",
            "steady-noise",
            "failure-domains"
        ]
    );
    for r in rows {
        let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut want = KEYS.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want);
        for k in &KEYS[1..] {
            assert!(r[k].is_number(), "{k} in {r}");
        }
    }
    let one = &rows[0];
    assert_eq!(
        (one["moves"].as_u64(), one["moves_lower_bound"].as_u64()),
        (Some(362), Some(362))
    );
    assert_eq!(
        (one["handoffs"].as_u64(), one["reversals"].as_u64()),
        (Some(90), Some(0))
    );
    assert_eq!(rows[6]["moves"].as_u64(), Some(0), "recovery pending");
    assert_eq!(rows[7]["moves"].as_u64(), Some(0), "steady noise");
}

#[test]
fn plan_prints_a_table_with_the_bound_and_ratio_of_one_scenario() {
    let o = livemove(&["plan", "--scenario", "add-20-percent"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("add-20-percent"), "{out}");
    assert!(out.contains("666    664 1.003"), "{out}");
    assert!(out.contains("166/166"), "{out}");
    assert!(!out.contains("add-one-node"), "{out}");
}

#[test]
fn plan_runs_a_synthetic_cluster_from_nodes_partitions_and_seed() {
    let o = livemove(&[
        "plan",
        "--nodes",
        "30",
        "--partitions",
        "300",
        "--seed",
        "4",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let r = &v["scenarios"][0];
    assert_eq!(r["name"], "synthetic");
    assert!(r["moves"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["reversals"].as_u64(), Some(0));
}

#[test]
fn plan_refuses_an_unknown_scenario_and_a_bad_synthetic_cluster_with_exit_2() {
    let o = livemove(&["plan", "--scenario", "add-two-nodes"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("unknown scenario `add-two-nodes`") && e.contains("drain-node"),
        "{e}"
    );
    let o = livemove(&["plan", "--nodes", "2", "--partitions", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--nodes 2"), "{}", stderr(&o));
    let o = livemove(&["plan", "--nodes", "20"]);
    assert_eq!(o.status.code(), Some(2), "--nodes needs --partitions");
}

#[test]
fn scores_show_the_vector_per_node_with_the_new_node_far_below_the_mean() {
    let o = livemove(&["plan", "scores", "--scenario", "add-one-node", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 11);
    for k in ["owned", "followed", "history", "traffic", "sync", "total"] {
        assert!(nodes[0]["score"][k].is_number(), "{k}");
    }
    assert_eq!(nodes[10]["score"]["total"].as_f64(), Some(0.0));
    assert!(nodes[0]["score"]["owned"].as_f64().unwrap() > 1.0);
    let o = livemove(&[
        "plan",
        "scores",
        "--scenario",
        "add-one-node",
        "--round",
        "400",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("after 400 rounds"), "{}", stdout(&o));
}

#[test]
fn moves_of_a_scenario_show_phase_bytes_remaining_and_blocking_reason() {
    let o = livemove(&[
        "plan",
        "moves",
        "--scenario",
        "add-one-node",
        "--round",
        "1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let moves = v["moves"].as_array().unwrap();
    // The new node takes two transfers at a time.
    assert_eq!(moves.len(), 2, "{v}");
    assert_eq!(moves[0]["target"].as_u64(), Some(10));
    assert_eq!(moves[0]["phase"], "learner");
    assert_eq!(moves[0]["blocking"], "catching_up");
    assert_eq!(moves[0]["bytes_remaining"].as_u64(), Some(1 << 30));
}

#[test]
fn operator_commands_pause_request_list_cancel_and_resume_over_a_record_file() {
    let d = tmp("operator");
    let rec = d.join("record.jsonl");
    let r = rec.to_str().unwrap();
    let o = livemove(&[
        "plan",
        "init",
        "--record",
        r,
        "--owner",
        "n1",
        "--followers",
        "n2,n3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = livemove(&["plan", "pause", "--record", r]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("paused true"), "{}", stdout(&o));
    // A paused record refuses a new move.
    let o = livemove(&[
        "plan",
        "request",
        "--record",
        r,
        "--target",
        "n4",
        "--leaving",
        "n3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("refused"), "{}", stderr(&o));
    let o = livemove(&["plan", "resume", "--record", r]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = livemove(&[
        "plan",
        "request",
        "--record",
        r,
        "--target",
        "n4",
        "--leaving",
        "n3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = livemove(&[
        "plan",
        "moves",
        "--record",
        r,
        "--owner-tail",
        "10",
        "--owner-confirmed",
        "8",
        "--target-durable",
        "2",
        "--entry-bytes",
        "100",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let m = &v["moves"][0];
    assert_eq!(m["phase"], "learner");
    assert_eq!(m["bytes_remaining"].as_u64(), Some(800));
    assert_eq!(
        m["blocking"]["CatchingUp"]["required"].as_u64(),
        Some(8),
        "{m}"
    );
    let o = livemove(&["plan", "cancel", "--record", r]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("move none"), "{}", stdout(&o));
}

#[test]
fn operator_commands_name_a_missing_record_and_a_malformed_node() {
    let d = tmp("errors");
    let rec = d.join("none.jsonl");
    let o = livemove(&["plan", "pause", "--record", rec.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no such file") && stderr(&o).contains("plan init"),
        "{}",
        stderr(&o)
    );
    let o = livemove(&[
        "plan",
        "init",
        "--record",
        rec.to_str().unwrap(),
        "--owner",
        "4",
        "--followers",
        "n2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--owner: `4` is not a node"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn weights_from_the_command_line_change_the_plan_and_bad_ones_are_refused() {
    let args = [
        "plan",
        "--nodes",
        "30",
        "--partitions",
        "600",
        "--seed",
        "2",
        "--json",
    ];
    let run = |extra: &[&str]| {
        let o = livemove(&[&args[..], extra].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
        v["scenarios"][0]["bytes_moved"].as_u64().unwrap()
    };
    assert_ne!(
        run(&[]),
        run(&["--history-weight", "0", "--traffic-weight", "0"])
    );
    let o = livemove(&["plan", "--history-weight=-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--history-weight -1"), "{}", stderr(&o));
}
