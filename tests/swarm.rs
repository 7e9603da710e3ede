//! `livemove check --swarm`: the report's shape, its exit codes, and that
//! the same seed prints the same result.

mod common;

use common::{livemove, stderr, stdout};
use serde_json::Value;

const MUTANT: [&str; 10] = [
    "check",
    "--config",
    "join-and-move",
    "--mutant",
    "remove_before_boundary",
    "--swarm",
    "2000",
    "--depth",
    "60",
    "--seed",
];

#[test]
fn swarm_reports_a_shrunk_counterexample_and_exits_1() {
    let mut args = MUTANT.to_vec();
    args.push("1");
    let o = livemove(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "VIOLATED    no confirmed entry is lost  (shrunk counterexample: 8 steps, from 11 in walk 87"
        ),
        "{out}"
    );
    assert!(out.contains(" 8. RemoveLeaving"), "{out}");
    assert!(out.contains("summary: swarm of 2000 walks"), "{out}");
    assert!(
        out.contains("24510 states visited, 785 distinct fingerprints"),
        "{out}"
    );
    assert!(out.contains("result: FAIL"), "{out}");
}

#[test]
fn swarm_json_is_the_same_for_the_same_seed_and_names_its_walk() {
    let mut args = MUTANT.to_vec();
    args.extend(["1", "--json"]);
    let run = |workers: &str| {
        let mut a = args.clone();
        a.extend(["--workers", workers]);
        let o = livemove(&a);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let mut v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
        for k in ["seconds", "states_per_second", "workers"] {
            v.as_object_mut().expect("object").remove(k);
        }
        v
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert_eq!(one["mode"], "swarm");
    let lost = &one["properties"][0];
    assert_eq!(lost["name"], "no confirmed entry is lost");
    assert_eq!(lost["counterexample"].as_array().map(Vec::len), Some(8));
    assert_eq!(lost["search"], 87);
    assert_eq!(lost["found_steps"], 11);
}

#[test]
fn swarm_on_the_correct_protocol_exits_0() {
    let o = livemove(&[
        "check", "--config", "handoff", "--swarm", "300", "--seed", "5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("result: no violation found"));
}

#[test]
fn swarm_refuses_zero_walks_and_a_depth_without_swarm() {
    for args in [
        &["check", "--config", "handoff", "--swarm", "0"][..],
        &["check", "--config", "handoff", "--depth", "5"][..],
        &["check", "--config", "handoff", "--swarm", "5", "--exact"][..],
    ] {
        let o = livemove(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
    }
}
