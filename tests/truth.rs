//! Every command tells the truth: a check that checks nothing fails, bad
//! usage exits 2 with a message on stderr, and trace files are read
//! strictly, each rejection naming the file, the step or field, and a value
//! cut to a readable length.

mod common;
use common::{livemove, stderr, stdout};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

fn tmp(name: &str) -> PathBuf {
    common::tmp("truth", name)
}

/// Exit status and stderr must match; stdout carries no error.
fn fails_with(args: &[&str], code: i32, needle: &str) -> Output {
    let o = livemove(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{args:?}: stdout {} stderr {}",
        stdout(&o),
        stderr(&o)
    );
    assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    o
}

/// The exported traces of `config` in a fresh directory.
fn exported(config: &str, tag: &str) -> PathBuf {
    let d = tmp(tag);
    let o = livemove(&[
        "trace",
        "export",
        "--config",
        config,
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    d
}

// ---- checks that would check nothing ------------------------------------

#[test]
fn conform_over_an_empty_directory_fails_with_exit_2() {
    let d = tmp("empty");
    fails_with(
        &["conform", "--traces", d.to_str().unwrap()],
        2,
        "no trace files (`*.json`) found: nothing to replay",
    );
}

#[test]
fn conform_over_a_directory_without_json_fails_with_exit_2() {
    let d = tmp("nojson");
    std::fs::write(d.join("notes.txt"), "not a trace").unwrap();
    fails_with(
        &["conform", "--traces", d.to_str().unwrap()],
        2,
        "no trace files (`*.json`) found",
    );
}

#[test]
fn conform_traces_with_an_unknown_config_exits_2_as_without_traces() {
    let d = exported("handoff", "unknown-config");
    fails_with(
        &[
            "conform",
            "--traces",
            d.to_str().unwrap(),
            "--config",
            "nope",
        ],
        2,
        "unknown config `nope`",
    );
}

#[test]
fn conform_traces_none_of_which_match_the_config_fail() {
    let d = exported("handoff", "nomatch");
    fails_with(
        &[
            "conform",
            "--traces",
            d.to_str().unwrap(),
            "--config",
            "join-and-move",
        ],
        1,
        "none is for config `join-and-move`",
    );
}

#[test]
fn conform_traces_that_match_say_how_many_were_replayed() {
    let d = exported("handoff", "match");
    let o = livemove(&[
        "conform",
        "--traces",
        d.to_str().unwrap(),
        "--config",
        "handoff",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let n = std::fs::read_dir(&d).unwrap().count();
    assert!(n >= 1);
    assert!(
        stdout(&o).contains(&format!("traces {n}")),
        "{}",
        stdout(&o)
    );
}

#[test]
fn zero_walks_or_depth_are_refused() {
    fails_with(
        &["conform", "--config", "handoff", "--walks", "0"],
        2,
        "must be at least 1",
    );
    fails_with(
        &[
            "conform", "--config", "handoff", "--walks", "2", "--depth", "0",
        ],
        2,
        "must be at least 1",
    );
}

#[test]
fn a_consume_of_zero_messages_is_refused() {
    fails_with(
        &["client", "consume", "--node", "127.0.0.1:1", "--count", "0"],
        2,
        "`0`: must be at least 1",
    );
}

#[test]
fn a_publish_with_no_attempts_or_no_time_is_refused() {
    let publish = |flag: &str, value: &str| {
        vec![
            "client".to_string(),
            "publish".into(),
            "--node".into(),
            "127.0.0.1:1".into(),
            "--key".into(),
            "1".into(),
            format!("{flag}={value}"),
        ]
    };
    for (flag, value, says) in [
        ("--attempts", "0", "`0`: from 1 to 1000 attempts"),
        ("--attempts", "1001", "`1001`: from 1 to 1000 attempts"),
        ("--attempts", "two", "`two` is not a whole number"),
        (
            "--attempt-timeout-ms",
            "0",
            "`0`: from 1 to 86400000 milliseconds",
        ),
        (
            "--timeout-ms",
            "-5",
            "`-5`: from 1 to 86400000 milliseconds",
        ),
        (
            "--timeout-ms",
            "1s",
            "`1s` is not a whole number of milliseconds",
        ),
    ] {
        let args = publish(flag, value);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_with(&args, 2, says);
        fails_with(&args, 2, flag);
    }
}

#[test]
fn walks_beside_traces_are_refused_not_ignored() {
    let d = exported("handoff", "walks-traces");
    fails_with(
        &["conform", "--traces", d.to_str().unwrap(), "--walks", "3"],
        2,
        "cannot be used with",
    );
    fails_with(
        &["conform", "--config", "handoff", "--depth", "5"],
        2,
        "--walks",
    );
}

#[test]
fn a_state_cap_of_zero_or_below_is_refused() {
    fails_with(
        &["check", "--config", "join-and-move", "--max-states", "0"],
        2,
        "`0`: must be at least 1",
    );
    fails_with(
        &["check", "--config", "join-and-move", "--max-states", "-1"],
        2,
        "`-1`: must be at least 1",
    );
    fails_with(
        &["bench", "--config", "handoff", "--runs", "0"],
        2,
        "must be at least 1",
    );
}

#[test]
fn a_capped_check_says_how_much_it_checked_and_fails() {
    let o = livemove(&["check", "--config", "join-and-move", "--max-states", "10"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let summary = out
        .lines()
        .find(|l| l.contains("summary:"))
        .expect("a summary line");
    let n: usize = summary
        .split("unique states ")
        .nth(1)
        .and_then(|x| x.split(',').next())
        .and_then(|x| x.parse().ok())
        .expect("the summary counts unique states");
    assert!(n >= 10, "{summary}");
    assert!(summary.contains("INCOMPLETE"), "{summary}");
    // An `always` property is neither proven nor "not reached" by a partial search.
    assert!(
        out.contains("always     UNPROVEN    no confirmed entry is lost"),
        "{out}"
    );
    assert!(out.contains("result: FAIL"), "{out}");
}

#[test]
fn every_flag_has_help_text() {
    for cmd in [
        vec!["check"],
        vec!["conform"],
        vec!["explore"],
        vec!["zoo"],
        vec!["bench"],
        vec!["tlc"],
        vec!["trace", "export"],
        vec!["trace", "check"],
    ] {
        let mut args = cmd.clone();
        args.push("--help");
        let o = livemove(&args);
        assert_eq!(o.status.code(), Some(0), "{cmd:?}");
        let out = stdout(&o);
        let mut in_options = false;
        let lines: Vec<&str> = out.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if l.starts_with("Options:") || l.starts_with("Arguments:") {
                in_options = true;
                continue;
            }
            let flag = l.trim_start();
            if in_options && (flag.starts_with("--") || flag.starts_with('<')) {
                // Help is on the same line after two spaces, or on the next line.
                let same = flag
                    .split_once("  ")
                    .is_some_and(|(_, h)| !h.trim().is_empty());
                let next = lines
                    .get(i + 1)
                    .is_some_and(|n| n.starts_with("          ") && !n.trim().is_empty());
                assert!(same || next, "{cmd:?}: `{flag}` has no help text\n{out}");
            }
        }
    }
}

// ---- explore's address --------------------------------------------------

#[test]
fn explore_refuses_a_malformed_address_with_exit_2_before_announcing() {
    for addr in ["nope", ":3921", "127.0.0.1:99999"] {
        let o = fails_with(
            &["explore", "--config", "handoff", "--addr", addr],
            2,
            "not an address of the form IP:PORT",
        );
        assert!(!stderr(&o).contains("http://"), "{}", stderr(&o));
    }
    let o = livemove(&[
        "explore",
        "--config",
        "handoff",
        "--addr",
        "127.0.0.1:99999",
    ]);
    assert!(stderr(&o).contains("port 99999 is not in 0..65535"));
}

#[test]
fn explore_on_a_busy_port_exits_2_and_says_how_to_pick_another() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let o = fails_with(
        &["explore", "--config", "handoff", "--addr", &addr],
        2,
        "cannot listen there",
    );
    assert!(stderr(&o).contains("pick another port with --addr"));
    assert!(!stderr(&o).contains("http://"), "{}", stderr(&o));
}

// ---- strict trace files ---------------------------------------------------

/// A discovery trace of join-and-move as JSON, and where to write variants.
fn discovery(tag: &str) -> (Value, PathBuf) {
    let d = exported("join-and-move", tag);
    let f = d.join("join-and-move--a-move-completes-past-a-confirmed-boundary.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    (v, d)
}

fn write(d: &Path, name: &str, bytes: &[u8]) -> String {
    let p = d.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

/// `trace check` on one variant: exit 1, the error on stderr naming the
/// file and containing `needle`, nothing but the summary on stdout.
fn rejected(d: &Path, name: &str, bytes: &[u8], needle: &str) -> String {
    let f = write(d, name, bytes);
    let o = fails_with(&["trace", "check", &f], 1, needle);
    let err = stderr(&o);
    assert!(err.contains(name), "{err}");
    assert!(
        stdout(&o).contains("0 ok (0 steps replayed), 1 rejected"),
        "{}",
        stdout(&o)
    );
    err
}

fn edited(v: &Value, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v = v.clone();
    f(&mut v);
    serde_json::to_vec(&v).unwrap()
}

#[test]
fn the_exported_trace_itself_passes() {
    let (v, d) = discovery("the_exported_trace_itself_passes");
    let f = write(&d, "good.json", &serde_json::to_vec(&v).unwrap());
    let o = livemove(&["trace", "check", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("checked 1 trace file(s): 1 ok"));
}

#[test]
fn unknown_fields_are_refused_everywhere() {
    let (v, d) = discovery("unknown_fields_are_refused_everywhere");
    rejected(
        &d,
        "top.json",
        &edited(&v, |v| v["extra"] = json!(1)),
        "malformed trace at `extra`: unknown field `extra`",
    );
    rejected(
        &d,
        "action.json",
        &edited(&v, |v| v["steps"][2]["action"]["bogus"] = json!(1)),
        "at `steps[2].action`: unknown field `bogus`",
    );
    rejected(
        &d,
        "state.json",
        &edited(&v, |v| {
            v["steps"][2]["state"]["record"]["bogus"] = Value::Null
        }),
        "steps[2]: unknown field `steps[2].state.record.bogus`",
    );
    rejected(
        &d,
        "init.json",
        &edited(&v, |v| v["init"]["nodes"]["n1"]["extra"] = Value::Null),
        "unknown field `init.nodes.n1.extra`",
    );
}

#[test]
fn a_missing_or_misspelled_nullable_key_is_refused() {
    let (v, d) = discovery("a_missing_or_misspelled_nullable_key_is_refused");
    rejected(
        &d,
        "missing.json",
        &edited(&v, |v| {
            v.as_object_mut().unwrap().remove("mutant");
        }),
        "missing field `mutant`",
    );
    rejected(
        &d,
        "misspelled.json",
        &edited(&v, |v| {
            v.as_object_mut().unwrap().remove("mutant");
            v["mutnat"] = Value::Null;
        }),
        "unknown field `mutnat`",
    );
    rejected(
        &d,
        "state-key.json",
        &edited(&v, |v| {
            v["steps"][0]["state"]["record"]
                .as_object_mut()
                .unwrap()
                .remove("handoff");
        }),
        "missing field `steps[0].state.record.handoff`",
    );
}

#[test]
fn kind_and_property_are_validated() {
    let (v, d) = discovery("kind_and_property_are_validated");
    rejected(
        &d,
        "kind.json",
        &edited(&v, |v| v["kind"] = json!("discover")),
        "field `kind`: expected one of `discovery`, `walk`, `divergence`, found `discover`",
    );
    rejected(
        &d,
        "property.json",
        &edited(&v, |v| v["property"] = json!("no such property")),
        "`no such property` is not a property of config `join-and-move`",
    );
    rejected(
        &d,
        "noproperty.json",
        &edited(&v, |v| v["property"] = Value::Null),
        "a discovery trace names the property it reaches",
    );
}

#[test]
fn a_discovery_cut_short_no_longer_reaches_its_property() {
    let (v, d) = discovery("a_discovery_cut_short_no_longer_reaches_its_property");
    rejected(
        &d,
        "short.json",
        &edited(&v, |v| {
            v["steps"].as_array_mut().unwrap().pop();
        }),
        "without reaching `a move completes past a confirmed boundary`",
    );
}

#[test]
fn node_names_are_canonical_and_within_the_config() {
    let (v, d) = discovery("node_names_are_canonical_and_within_the_config");
    rejected(
        &d,
        "n01.json",
        &edited(&v, |v| v["steps"][0]["action"]["node"] = json!("n01")),
        "got `n01`",
    );
    rejected(
        &d,
        "n5.json",
        &edited(&v, |v| v["steps"][0]["action"]["node"] = json!("n5")),
        "steps[0].action: `Publish { node: n5 }` names a node outside config `join-and-move` (nodes n1..n4)",
    );
}

#[test]
fn a_byte_order_mark_and_non_utf8_get_their_own_messages_with_an_offset() {
    let (v, d) = discovery("a_byte_order_mark_and_non_utf8_get_their_own_messages_with_an_offset");
    let text = serde_json::to_vec(&v).unwrap();
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&text);
    rejected(
        &d,
        "bom.json",
        &bom,
        "byte 0: starts with a UTF-8 byte-order mark",
    );
    let mut latin1 = text.clone();
    latin1.insert(500, 0xE9);
    rejected(
        &d,
        "latin1.json",
        &latin1,
        "byte 500: not valid UTF-8 (byte 0xe9)",
    );
}

#[test]
fn an_offending_value_is_cut_to_a_readable_length() {
    let (v, d) = discovery("an_offending_value_is_cut_to_a_readable_length");
    let long = "y".repeat(100_000);
    let err = rejected(
        &d,
        "long-kind.json",
        &edited(&v, |v| v["kind"] = json!(long)),
        "characters left out",
    );
    assert!(err.len() < 600, "{} bytes: {err}", err.len());
    let err = rejected(
        &d,
        "long-node.json",
        &edited(&v, |v| {
            v["steps"][0]["action"]["node"] = json!(format!("n{long}"))
        }),
        "characters left out",
    );
    assert!(err.len() < 600, "{} bytes: {err}", err.len());
    let err = rejected(
        &d,
        "long-state.json",
        &edited(&v, |v| v["steps"][1]["state"]["confirmed"] = json!([long])),
        "characters left out",
    );
    assert!(err.len() < 600, "{} bytes: {err}", err.len());
}

#[test]
fn a_file_beyond_the_size_cap_is_refused_before_it_is_parsed() {
    let d = tmp("huge");
    let f = d.join("huge.json");
    let file = std::fs::File::create(&f).unwrap();
    file.set_len(17 << 20).unwrap();
    let o = fails_with(
        &["trace", "check", f.to_str().unwrap()],
        1,
        "larger than the 16777216 bytes a trace file may have",
    );
    assert!(stderr(&o).contains("huge.json"));
}

#[test]
fn conform_traces_report_a_rejected_file_on_stderr() {
    let (v, d) = discovery("conform_traces_report_a_rejected_file_on_stderr");
    write(
        &d,
        "zz-bad.json",
        &edited(&v, |v| v["kind"] = json!("nope")),
    );
    let o = livemove(&["conform", "--traces", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("zz-bad.json: field `kind`"),
        "{}",
        stderr(&o)
    );
}
