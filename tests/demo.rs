//! `livemove demo`: a live cluster in one process. The rebalance planner
//! moves copies of four partitions (eight on etcd) onto a new node, then
//! ownership, while the owner of one of them is killed and comes back,
//! and the clients publish and consume (settle) on every partition:
//! nothing acknowledged is lost, nothing is confirmed twice, no settle
//! told done is missing from the final history, every confirmed position
//! is on W copies, each partition's trace validates against the spec
//! (where TLC can run), every move the planner proposed is carried out and
//! the last round proposes nothing. Under `no_replacement` a move started
//! while a follower is down does not replace it, and the validator rejects
//! the run (finding 30).

mod common;
#[path = "../runtime/tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use common::{livemove, stderr, stdout, tmp};
use serde_json::Value;

/// Seed 0 kills n1, the first owner of p0, once the moves have started.
/// Four partitions: fewer on five nodes are inside the planner's
/// detection band (two: share 1.2 copies, band 2 items), and it proposes
/// nothing. The etcd run has eight: it stalled at five on a loaded 2-core
/// machine while every node read every record on every tick through
/// etcd's gateway, and runs in about 10 s since the nodes read a record
/// only when its watch reports a change.
/// One demo at a time: each runs five nodes, a controller and its clients
/// (and, for one, an etcd) in a process of its own, and three at once on a
/// 2-core machine starved the etcd run's nodes until its moves stalled.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn demo(name: &str, extra: &[&str]) -> (Value, bool, String) {
    demo_with(name, 4, extra)
}

fn demo_with(name: &str, partitions: u32, extra: &[&str]) -> (Value, bool, String) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tmp("demo", name);
    let d = dir.to_str().unwrap();
    let partitions = partitions.to_string();
    let mut args = vec![
        "demo",
        "--partitions",
        &partitions,
        "--seconds",
        "2",
        "--seed",
        "0",
        "--quiet",
        "--json",
        // n1 stays down long enough for the recovery (a 1 s lease) and
        // the move asked for again while it is down, on a loaded machine.
        "--down-ms",
        "6000",
        "--dir",
        d,
    ];
    args.extend_from_slice(extra);
    let o = livemove(&args);
    let err = stderr(&o);
    let out = stdout(&o);
    let report = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
    (report, o.status.success(), err)
}

fn tlc_missing(err: &str) -> bool {
    err.contains("java not found") || err.contains("TLC not found")
}

fn assert_nothing_lost(r: &Value, partitions: u32) {
    assert_eq!(r["lost_confirmed"], 0, "{r}");
    assert_eq!(r["duplicates"], 0, "{r}");
    assert_eq!(r["under_replicated"], 0, "{r}");
    assert!(r["acknowledged"].as_u64().unwrap() > 0, "{r}");
    // The consumers settle on every partition: each settle told done is
    // a Delete in its partition's final confirmed history, none twice.
    assert_eq!(r["settled_lost"], 0, "{r}");
    assert_eq!(r["settled_twice"], 0, "{r}");
    let settled = r["settled"].as_u64().unwrap();
    assert!(
        settled >= u64::from(partitions),
        "at least one settle per partition: {r}"
    );
    assert!(
        r["settles_confirmed"].as_u64().unwrap() >= settled,
        "every settle told done is confirmed: {r}"
    );
    assert!(r["settles_sent"].as_u64().unwrap() >= settled, "{r}");
    assert!(
        r["confirmed"].as_u64().unwrap() >= r["acknowledged"].as_u64().unwrap(),
        "every acknowledged message is confirmed: {r}"
    );
    // n1 owned p0: its kill opened a recovery, which aborted p0's move,
    // asked for again as a replacement of n1's copy.
    assert!(r["recoveries"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["moves_restarted"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["trace_events"].as_u64().unwrap() > 100, "{r}");
    // p0's client retried through the kill of its owner (the routed
    // producer sends the same key again along a refreshed route), and no
    // retry made a duplicate (above).
    assert!(r["retries_during_moves"].as_u64().unwrap() >= 1, "{r}");
    assert_the_plan_carried_out(r, partitions);
}

fn steps(r: &Value) -> Vec<(u64, String, String, String, String)> {
    r["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_str().unwrap().to_string();
            (
                s["round"].as_u64().unwrap(),
                f("partition"),
                f("kind"),
                f("from"),
                f("to"),
            )
        })
        .collect()
}

fn counted(placement: &Value) -> Vec<String> {
    let mut c = vec![placement["owner"].as_str().unwrap().to_string()];
    c.extend(
        placement["followers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string()),
    );
    c.sort();
    c
}

/// The planner's proposal, carried out: its first round is a function of
/// the placement alone (pinned: with four partitions a copy off n1 and
/// one off n2 onto n5, as the runtime's `four_partitions_...` test plans
/// it; with eight, one off each of n1 to n4); later rounds follow what the
/// kill and its recovery left: the recovery gives p0 to one of its
/// followers, which then owns more partitions than n5, so a later round
/// hands one over. Every step proposed is done, the last round proposed
/// nothing, and the planner's balance is reached: 3 copies a partition,
/// spread within one of each other over the five nodes. A partition the
/// planner never names keeps its counted copies (its owner too, unless it
/// was n1's, which the recovery replaced) and gets none on n5.
fn assert_the_plan_carried_out(r: &Value, partitions: u32) {
    let steps = steps(r);
    let first: Vec<_> = steps
        .iter()
        .filter(|s| s.0 == 1)
        .map(|s| format!("{} {} {}->{}", s.1, s.2, s.3, s.4))
        .collect();
    let pinned: &[&str] = match partitions {
        4 => &["p2 move n1->n5", "p0 move n2->n5"],
        8 => &[
            "p2 move n1->n5",
            "p0 move n2->n5",
            "p1 move n3->n5",
            "p5 move n4->n5",
        ],
        other => panic!("no first round pinned for {other} partitions"),
    };
    assert_eq!(first, pinned, "{r}");
    assert!(
        r["plan"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["done"] == true),
        "every proposed step carried out: {r}"
    );
    assert_eq!(r["moves"], r["planned_moves"], "{r}");
    assert_eq!(r["handoffs"], r["planned_handoffs"], "{r}");
    assert!(r["handoffs"].as_u64().unwrap() >= 1, "{r}");
    assert_eq!(r["converged"], true, "{r}");
    assert_eq!(
        r["planner_rounds"].as_u64().unwrap(),
        steps.iter().map(|s| s.0).max().unwrap(),
        "{r}"
    );
    let copies = 3 * u64::from(partitions);
    let (fewest, most) = (copies / 5, copies.div_ceil(5));
    for n in 1..=5 {
        let c = r["copies_per_node"][format!("n{n}")].as_u64().unwrap();
        assert!((fewest..=most).contains(&c), "n{n}: {r}");
    }
    let (before, after) = (&r["placement_before"], &r["placement_after"]);
    // A move whose partition no later step names, started once and not a
    // replacement (no copy of n1's): the planner's leaving copy left, its
    // target counts.
    for (i, s) in steps.iter().enumerate() {
        let last = steps[i + 1..].iter().all(|t| t.1 != s.1);
        let once = r["plan"][i]["attempts"] == 1;
        let n1_held = counted(&before[&s.1]).contains(&"n1".to_string());
        if s.2 == "move" && last && once && !n1_held {
            let c = counted(&after[&s.1]);
            assert!(c.contains(&s.4) && !c.contains(&s.3), "{s:?}: {r}");
        }
    }
    let untouched: Vec<String> = (0..partitions)
        .map(|p| format!("p{p}"))
        .filter(|p| steps.iter().all(|s| &s.1 != p))
        .collect();
    assert!(!untouched.is_empty(), "{r}");
    for p in &untouched {
        assert_eq!(counted(&after[p]), counted(&before[p]), "{p}: {r}");
        if before[p]["owner"] != "n1" {
            assert_eq!(after[p], before[p], "{p}: {r}");
        }
    }
}

#[test]
fn copies_and_ownership_move_onto_a_new_node_through_a_kill_and_the_traces_validate() {
    let (r, ok, err) = demo("moves", &[]);
    if tlc_missing(&err) {
        eprintln!("TLC cannot run here: the traces are not validated ({err})");
        let (r, ok, err) = demo("moves-unvalidated", &["--no-validate"]);
        assert!(ok, "{err}");
        assert_nothing_lost(&r, 4);
        assert_eq!(r["trace_valid"], Value::Null);
        return;
    }
    assert!(ok, "{err}\n{r}");
    assert_nothing_lost(&r, 4);
    assert_eq!(r["trace_valid"], true, "{r}");
    assert_eq!(r["store"], "file");
}

#[test]
fn a_move_that_keeps_a_down_follower_is_rejected_by_the_trace_validator() {
    let (r, ok, err) = demo("no-replacement", &["--mutant", "no_replacement"]);
    if tlc_missing(&err) {
        eprintln!("skipped: TLC cannot run here ({err})");
        return;
    }
    assert!(!ok, "the run must fail: {r}");
    assert_eq!(r["trace_valid"], false, "{r}\n{err}");
    // The mutant loses nothing: what it breaks is the model's choice of
    // the copy that leaves, which only the trace shows.
    assert_eq!(r["lost_confirmed"], 0, "{r}");
    assert!(
        err.contains("p0: trace invalid at event") && err.contains("the move is in phase Admitted"),
        "{err}"
    );
}

#[test]
fn with_etcd_as_the_control_plane_nothing_acknowledged_is_lost() {
    if etcd::Etcd::start("demo-etcd").is_none() {
        return;
    }
    let (r, ok, err) = demo_with("etcd", 8, &["--store", "etcd", "--no-validate"]);
    assert!(ok, "{err}\n{r}");
    assert_eq!(r["store"], "etcd");
    assert_nothing_lost(&r, 8);
}

#[test]
fn bad_settings_are_refused_by_name() {
    for (args, needle) in [
        (vec!["demo", "--nodes", "3"], "--nodes 3 --rf 3"),
        (vec!["demo", "--mutant", "nonsense"], "--mutant"),
        (vec!["demo", "--seconds", "0"], "--seconds"),
    ] {
        let o = livemove(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}
