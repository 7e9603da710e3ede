//! A bounded fuzz of trace reading: exported traces damaged byte by byte
//! and field by field must never panic or hang, every rejection is a typed
//! `TraceError` whose message names the file and stays readable, and a
//! damaged file that is still accepted is a valid trace (it reads back to
//! itself). The case counts are fixed, so the run time is bounded; run with
//! `--nocapture` to see how the inputs fared.

use livemove_model::checker::{check, Options};
use livemove_model::trace::{discoveries, random_walk, TraceError, TraceFile};
use livemove_model::{Cfg, MoveModel};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

const FILE: &str = "fuzzed.json";

/// Exported traces of two configs: discoveries and seeded walks, as text.
fn corpus() -> &'static Vec<String> {
    static C: OnceLock<Vec<String>> = OnceLock::new();
    C.get_or_init(|| {
        let mut out = Vec::new();
        for name in ["join-and-move", "handoff"] {
            let m = MoveModel::new(Cfg::named(name));
            let r = check(&m, Options::default());
            let mut ts = discoveries(&m, &r);
            ts.push(random_walk(&m, 3, 24));
            for t in ts {
                out.push(serde_json::to_string(&t).expect("serializes"));
            }
        }
        out
    })
}

/// Outcomes per kind of input: accepted, or the rejecting variant.
fn tally() -> &'static Mutex<BTreeMap<String, usize>> {
    static T: OnceLock<Mutex<BTreeMap<String, usize>>> = OnceLock::new();
    T.get_or_init(|| Mutex::new(BTreeMap::new()))
}

fn variant(e: &TraceError) -> &'static str {
    match e {
        TraceError::Io { .. } => "Io",
        TraceError::TooLarge { .. } => "TooLarge",
        TraceError::Bom { .. } => "Bom",
        TraceError::NotUtf8 { .. } => "NotUtf8",
        TraceError::Parse { .. } => "Parse",
        TraceError::Schema { .. } => "Schema",
        TraceError::Field { .. } => "Field",
        TraceError::Config { .. } => "Config",
        TraceError::StaleParams { .. } => "StaleParams",
        TraceError::Shape { .. } => "Shape",
        TraceError::Init { .. } => "Init",
        TraceError::NodeOutside { .. } => "NodeOutside",
        TraceError::Disabled { .. } => "Disabled",
        TraceError::Mismatch { .. } => "Mismatch",
        TraceError::NotWitnessed { .. } => "NotWitnessed",
    }
}

/// Read `bytes` as a trace file; check what every outcome must satisfy.
fn judge(kind: &str, bytes: &[u8]) -> Result<(), TestCaseError> {
    let file = Path::new(FILE);
    let outcome = TraceFile::parse(file, bytes).and_then(|t| t.replay(file).map(|_| t));
    let key = match &outcome {
        Ok(t) => {
            // Accepted: it must be a trace that reads back to itself.
            let again = serde_json::to_vec(t).expect("serializes");
            let back = TraceFile::parse(file, &again).expect("an accepted trace re-reads");
            prop_assert_eq!(&back, t);
            back.replay(file).expect("an accepted trace replays again");
            format!("{kind}: accepted")
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(msg.starts_with(FILE), "the message names the file: {}", msg);
            prop_assert!(msg.len() <= 2_000, "{} bytes: {}", msg.len(), msg);
            format!("{kind}: {}", variant(e))
        }
    };
    *tally().lock().unwrap().entry(key).or_default() += 1;
    Ok(())
}

fn report(kind: &str) {
    let t = tally().lock().unwrap();
    let total: usize = t
        .iter()
        .filter(|(k, _)| k.starts_with(kind))
        .map(|(_, n)| n)
        .sum();
    eprintln!("{kind}: {total} inputs");
    for (k, n) in t.iter().filter(|(k, _)| k.starts_with(kind)) {
        eprintln!("  {k}: {n}");
    }
}

/// One byte-level damage.
#[derive(Clone, Debug)]
enum ByteEdit {
    Set(usize, u8),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| ByteEdit::Set(i, b)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| ByteEdit::Delete(i, n)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, b)| ByteEdit::Insert(i, b)),
        (any::<usize>(), 1usize..256).prop_map(|(i, n)| ByteEdit::Duplicate(i, n)),
        any::<usize>().prop_map(ByteEdit::Truncate),
    ]
}

fn apply_bytes(mut b: Vec<u8>, e: &ByteEdit) -> Vec<u8> {
    let at = |i: usize, b: &Vec<u8>| if b.is_empty() { 0 } else { i % b.len() };
    match e {
        ByteEdit::Set(i, x) => {
            let i = at(*i, &b);
            if let Some(y) = b.get_mut(i) {
                *y = *x;
            }
        }
        ByteEdit::Delete(i, n) => {
            let i = at(*i, &b);
            let end = (i + n).min(b.len());
            b.drain(i..end);
        }
        ByteEdit::Insert(i, xs) => {
            let i = at(*i, &b);
            b.splice(i..i, xs.iter().copied());
        }
        ByteEdit::Duplicate(i, n) => {
            let i = at(*i, &b);
            let end = (i + n).min(b.len());
            let piece = b[i..end].to_vec();
            b.splice(end..end, piece);
        }
        ByteEdit::Truncate(i) => {
            let i = at(*i, &b);
            b.truncate(i);
        }
    }
    b
}

/// Every path into a JSON tree (object keys and array indices).
fn paths(v: &Value, here: Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(here.clone());
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let mut p = here.clone();
                p.push(json!(k));
                paths(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let mut p = here.clone();
                p.push(json!(i));
                paths(x, p, out);
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    let mut cur = v;
    for k in path {
        cur = match k {
            Value::String(s) => cur.get_mut(s.as_str())?,
            Value::Number(n) => cur.get_mut(n.as_u64()? as usize)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// One structural damage at a chosen place in the tree.
#[derive(Clone, Debug)]
enum TreeEdit {
    Replace(usize, Value),
    Remove(usize),
    AddKey(usize, String, Value),
    CopyStep(usize, usize),
    SwapSteps(usize, usize),
    DropStep(usize),
}

fn a_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|x| json!(x)),
        "[a-z0-9@' ]{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "n0",
            "n1",
            "n4",
            "n5",
            "n01",
            "n255",
            "n1'",
            "m1@e1",
            "discovery",
            "walk",
            "divergence",
            "Publish",
            "Swap",
            "learner",
            "join-and-move",
            "handoff",
        ])
        .prop_map(Value::from),
        (1usize..5_000).prop_map(|n| Value::from("x".repeat(n))),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"action": "Publish", "node": "n1"})),
        Just(json!({"action": "Restart", "node": "n3", "fresh_disk": true})),
    ]
}

fn tree_edit() -> impl Strategy<Value = TreeEdit> {
    prop_oneof![
        (any::<usize>(), a_value()).prop_map(|(i, v)| TreeEdit::Replace(i, v)),
        any::<usize>().prop_map(TreeEdit::Remove),
        (any::<usize>(), "[a-z_]{1,10}", a_value()).prop_map(|(i, k, v)| TreeEdit::AddKey(i, k, v)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| TreeEdit::CopyStep(i, j)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| TreeEdit::SwapSteps(i, j)),
        any::<usize>().prop_map(TreeEdit::DropStep),
    ]
}

fn apply_tree(v: &mut Value, e: &TreeEdit) {
    let mut ps = Vec::new();
    paths(v, Vec::new(), &mut ps);
    let pick = |i: usize| ps[i % ps.len()].clone();
    let steps = v["steps"].as_array().map_or(0, Vec::len);
    match e {
        TreeEdit::Replace(i, x) => {
            if let Some(slot) = at_mut(v, &pick(*i)) {
                *slot = x.clone();
            }
        }
        TreeEdit::Remove(i) => {
            let p = pick(*i);
            if let Some((last, parent)) = p.split_last() {
                match (at_mut(v, parent), last) {
                    (Some(Value::Object(o)), Value::String(k)) => {
                        o.remove(k);
                    }
                    (Some(Value::Array(a)), Value::Number(n)) => {
                        a.remove(n.as_u64().unwrap() as usize);
                    }
                    _ => {}
                }
            }
        }
        TreeEdit::AddKey(i, k, x) => {
            if let Some(Value::Object(o)) = at_mut(v, &pick(*i)) {
                o.insert(k.clone(), x.clone());
            }
        }
        TreeEdit::CopyStep(i, j) if steps > 0 => {
            let a = v["steps"][i % steps].clone();
            v["steps"]
                .as_array_mut()
                .unwrap()
                .insert(j % (steps + 1), a);
        }
        TreeEdit::SwapSteps(i, j) if steps > 0 => {
            v["steps"]
                .as_array_mut()
                .unwrap()
                .swap(i % steps, j % steps);
        }
        TreeEdit::DropStep(i) if steps > 0 => {
            v["steps"].as_array_mut().unwrap().remove(i % steps);
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn damaged_bytes_never_panic_and_every_rejection_is_typed(
        which in any::<usize>(),
        edits in prop::collection::vec(byte_edit(), 1..4),
    ) {
        let c = corpus();
        let mut b = c[which % c.len()].clone().into_bytes();
        for e in &edits {
            b = apply_bytes(b, e);
        }
        judge("bytes", &b)?;
    }

    #[test]
    fn damaged_fields_never_panic_and_every_rejection_is_typed(
        which in any::<usize>(),
        edits in prop::collection::vec(tree_edit(), 1..3),
        pretty in any::<bool>(),
    ) {
        let c = corpus();
        let mut v: Value = serde_json::from_str(&c[which % c.len()]).unwrap();
        for e in &edits {
            apply_tree(&mut v, e);
        }
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            v.to_string()
        };
        judge("fields", text.as_bytes())?;
    }
}

#[test]
fn z_the_undamaged_corpus_is_accepted_and_the_tallies_are_printed() {
    for t in corpus() {
        let file = Path::new(FILE);
        let parsed = TraceFile::parse(file, t.as_bytes()).expect("an exported trace parses");
        parsed.replay(file).expect("an exported trace replays");
    }
    // The tallies of the fuzz tests run in this process (all of them when
    // the tests run together, as in CI).
    report("bytes");
    report("fields");
}
