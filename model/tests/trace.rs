//! Trace files: exported traces replay; damaged ones are rejected with an
//! error that names the file, the step or field, and what was expected.

use livemove_model::checker::{check, Options};
use livemove_model::trace::{discoveries, random_walk, TraceError, TraceFile};
use livemove_model::{Action, Cfg, MoveModel};
use std::path::PathBuf;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("livemove-trace-test-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn write(d: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = d.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

fn sample() -> TraceFile {
    let m = MoveModel::new(Cfg::named("join-and-move"));
    let r = check(&m, Options::default());
    discoveries(&m, &r)
        .into_iter()
        .next()
        .expect("join-and-move has discoveries")
}

#[test]
fn exported_discoveries_and_walks_replay() {
    let m = MoveModel::new(Cfg::named("handoff"));
    let r = check(&m, Options::default());
    let d = dir("ok");
    let mut files = discoveries(&m, &r);
    files.push(random_walk(&m, 7, 40));
    assert!(files.len() >= 3);
    for (i, t) in files.iter().enumerate() {
        let p = write(&d, &format!("{i}.json"), &serde_json::to_string(t).unwrap());
        let back = TraceFile::read(&p).expect("reads");
        assert_eq!(&back, t);
        assert_eq!(back.replay(&p).expect("replays"), t.steps.len());
    }
}

#[test]
fn a_step_the_model_forbids_is_named() {
    let mut t = sample();
    t.steps[0].action = Action::RemoveLeaving;
    let d = dir("disabled");
    let p = write(&d, "bad.json", &serde_json::to_string(&t).unwrap());
    let e = TraceFile::read(&p).unwrap().replay(&p).unwrap_err();
    assert!(matches!(e, TraceError::Disabled { step: 0, .. }), "{e}");
    assert!(
        e.to_string().contains("bad.json") && e.to_string().contains("steps[0]"),
        "{e}"
    );
}

#[test]
fn a_wrong_recorded_state_is_named_by_field() {
    let mut t = sample();
    t.steps[0].state["record"]["epoch"] = serde_json::json!(7);
    let d = dir("mismatch");
    let p = write(&d, "bad.json", &serde_json::to_string(&t).unwrap());
    let e = TraceFile::read(&p).unwrap().replay(&p).unwrap_err();
    assert!(matches!(e, TraceError::Mismatch { step: 0, .. }), "{e}");
    assert!(e.to_string().contains("record.epoch: 7 -> 1"), "{e}");
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let d = dir("malformed");
    let p = write(
        &d,
        "broken.json",
        "{\n  \"schema\": \"livemove-trace/1\",\n  \"config\": \n",
    );
    let e = TraceFile::read(&p).unwrap_err();
    assert!(matches!(e, TraceError::Parse { .. }));
    let msg = e.to_string();
    assert!(msg.contains("broken.json") && msg.contains("line"), "{msg}");
}

#[test]
fn a_missing_field_is_named() {
    let d = dir("missing");
    let mut v = serde_json::to_value(sample()).unwrap();
    v.as_object_mut().unwrap().remove("steps");
    let p = write(&d, "nosteps.json", &v.to_string());
    let msg = TraceFile::read(&p).unwrap_err().to_string();
    assert!(msg.contains("missing field `steps`"), "{msg}");
}

#[test]
fn unknown_schema_config_and_stale_params_are_refused() {
    let d = dir("refused");
    let mut t = sample();
    t.schema = "livemove-trace/0".into();
    let p = write(&d, "schema.json", &serde_json::to_string(&t).unwrap());
    assert!(matches!(
        TraceFile::read(&p).unwrap_err(),
        TraceError::Schema { .. }
    ));

    let mut t = sample();
    t.config = "no-such-config".into();
    let p = write(&d, "config.json", &serde_json::to_string(&t).unwrap());
    let e = TraceFile::read(&p).unwrap().replay(&p).unwrap_err();
    assert!(
        e.to_string().contains("unknown config `no-such-config`"),
        "{e}"
    );

    let mut t = sample();
    t.params["messages"] = serde_json::json!(3);
    let p = write(&d, "stale.json", &serde_json::to_string(&t).unwrap());
    let e = TraceFile::read(&p).unwrap().replay(&p).unwrap_err();
    assert!(matches!(e, TraceError::StaleParams { .. }), "{e}");
}
