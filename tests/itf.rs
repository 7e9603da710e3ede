//! ITF output: `check --itf` and `trace export --format` write traces that
//! the `itf` crate (the Informal Trace Format's Rust reader) parses into the
//! spec's variables, one state per step plus the initial state.

mod common;

use common::{livemove, stderr, tmp};
use serde::Deserialize;
use std::collections::BTreeSet;

type Slot = (i64, i64);

#[derive(Deserialize, Debug)]
struct Serving {
    active: bool,
    epoch: i64,
    counted: BTreeSet<Slot>,
    acks: BTreeSet<(Slot, i64)>,
}

#[derive(Deserialize, Debug)]
struct Node {
    alive: bool,
    log: Vec<(i64, i64)>,
    serving: Serving,
}

#[derive(Deserialize, Debug)]
struct Record {
    epoch: i64,
    owner: Slot,
    followers: BTreeSet<Slot>,
    eligible: BTreeSet<Slot>,
}

#[derive(Deserialize, Debug)]
struct Budget {
    published: i64,
    learner_adds: i64,
}

/// A message in flight, as far as these tests read it.
#[derive(Deserialize, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Msg {
    kind: String,
    epoch: i64,
}

/// The spec's variables (tla/LiveMove.tla), as far as these tests read them.
#[derive(Deserialize, Debug)]
struct State {
    nodes: Vec<Node>,
    record: Record,
    budget: Budget,
    /// The bag of messages in flight: each message to its copies.
    net: std::collections::BTreeMap<Msg, i64>,
    confirmed: Vec<(i64, i64)>,
    forked: bool,
}

fn read(file: &std::path::Path) -> itf::Trace<State> {
    let text = std::fs::read_to_string(file).expect("ITF file written");
    itf::trace_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

#[test]
fn check_writes_the_counterexample_as_itf() {
    let dir = tmp("itf", "check");
    let file = dir.join("cx.itf.json");
    let o = livemove(&[
        "check",
        "--config",
        "join-and-move",
        "--mutant",
        "remove_before_boundary",
        "--itf",
        file.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = read(&file);
    assert_eq!(
        t.vars,
        [
            "nodes",
            "record",
            "budget",
            "net",
            "known",
            "clients",
            "confirmed",
            "forked",
            "settled"
        ],
        "the spec's variables"
    );
    // The shortest counterexample has 8 steps (model/tests/zoo.rs).
    assert_eq!(t.states.len(), 8 + 1);
    for (i, s) in t.states.iter().enumerate() {
        assert_eq!(s.meta.index, Some(i as u64));
    }
    assert_eq!(
        t.meta.other.get("property").map(String::as_str),
        Some("no confirmed entry is lost")
    );
    assert_eq!(
        t.states[8].meta.other.get("action").map(String::as_str),
        Some("RemoveLeaving")
    );
    let first = &t.states[0].value;
    assert_eq!(first.record.owner, (1, 0));
    assert_eq!(first.record.followers, BTreeSet::from([(2, 0), (3, 0)]));
    assert!(first.nodes[0].serving.active && first.nodes[0].alive);
    assert_eq!(first.nodes[0].serving.epoch, first.record.epoch);
    let last = &t.states[8].value;
    // Confirmed on n1 and the leaving n2, which is then removed: n4 lacks it.
    assert_eq!(last.confirmed, vec![(1, 1)]);
    assert_eq!(
        last.record.eligible,
        BTreeSet::from([(1, 0), (3, 0), (4, 0)])
    );
    assert!(last.nodes[3].log.is_empty());
    assert_eq!(
        last.nodes[0].serving.counted,
        BTreeSet::from([(3, 0), (4, 0)])
    );
    assert_eq!(last.nodes[0].serving.acks, BTreeSet::from([((2, 0), 1)]));
    assert_eq!((last.budget.published, last.budget.learner_adds), (1, 1));
    assert!(!last.forked);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_without_a_violation_writes_no_itf_file() {
    let dir = tmp("itf", "pass");
    let file = dir.join("none.itf.json");
    let o = livemove(&[
        "check",
        "--config",
        "handoff",
        "--itf",
        file.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!file.exists());
    assert!(
        stderr(&o).contains("no property was violated"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exported_traces_have_an_itf_twin_of_the_same_length() {
    let dir = tmp("itf", "export");
    let o = livemove(&[
        "trace",
        "export",
        "--config",
        "handoff",
        "--out",
        dir.to_str().expect("utf-8"),
        "--walks",
        "3",
        "--format",
        "both",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut twins = 0;
    for e in std::fs::read_dir(&dir).expect("dir") {
        let p = e.expect("entry").path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_string();
        if name.ends_with(".itf.json") {
            continue;
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("JSON");
        let steps = json["steps"].as_array().expect("steps").len();
        let itf = read(&dir.join(name.replace(".json", ".itf.json")));
        assert_eq!(itf.states.len(), steps + 1, "{name}");
        twins += 1;
    }
    // The two discoveries of `handoff` (its `sometimes` examples) and the
    // three walks.
    assert_eq!(twins, 2 + 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn messages_in_flight_are_written_as_an_itf_map() {
    let dir = tmp("itf", "net");
    let o = livemove(&[
        "trace",
        "export",
        "--config",
        "handoff-net",
        "--out",
        dir.to_str().expect("utf-8"),
        "--walks",
        "4",
        "--format",
        "itf",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut in_flight = 0;
    let mut files = 0;
    for e in std::fs::read_dir(&dir).expect("dir") {
        let t = read(&e.expect("entry").path());
        files += 1;
        for s in &t.states {
            assert!(s.value.net.values().all(|&n| n >= 1));
            in_flight += s.value.net.len();
        }
    }
    assert!(files >= 4, "{files} files");
    assert!(
        in_flight > 0,
        "no trace of handoff-net has a message in flight"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
