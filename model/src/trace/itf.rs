//! Paths in the Informal Trace Format (ITF), which Apalache and Quint
//! tooling read: `#meta`, `vars`, and `states`, each state an object with
//! its own `#meta` (`index`, and the action that led to it) and one field per
//! variable.
//!
//! The variables are those of `tla/LiveMove.tla` (`nodes`, `record`,
//! `budget`, `net`, `confirmed`, `forked`), with the values [`crate::canon`]
//! gives them for the TLC comparison. In ITF: integers as
//! `{"#bigint": "n"}`, sets as `{"#set": [...]}` (members in canonical
//! order), functions that are not sequences as `{"#map": [[key, value],
//! ...]}`, records as objects.
//! TLA+ does not tell a tuple from a sequence; here a sequence holding an
//! integer (a storage instance `<<node, gen>>`, an entry `<<epoch, msg>>`,
//! an acknowledgement `<<instance, pos>>`) is written as a tuple
//! `{"#tup": [...]}`, any other (a log, the nodes) as a JSON array.

use crate::canon::{state_value, Value};
use crate::checker::Path;
use crate::protocol::MoveModel;
use serde_json::{json, Map, Value as Json};

/// What a trace is, for its `#meta`.
pub struct ItfMeta<'a> {
    /// `counterexample`, `example`, `walk`, ...
    pub kind: &'a str,
    /// The property it belongs to, if any.
    pub property: Option<&'a str>,
    /// The seed of a walk, if any.
    pub seed: Option<u64>,
}

fn itf_value(v: &Value) -> Json {
    match v {
        Value::Int(i) => json!({ "#bigint": i.to_string() }),
        Value::Bool(b) => Json::Bool(*b),
        Value::Str(s) => Json::String(s.clone()),
        Value::Seq(items) => {
            let items: Vec<Json> = items.iter().map(itf_value).collect();
            if v_has_int(v) {
                json!({ "#tup": items })
            } else {
                Json::Array(items)
            }
        }
        Value::Set(items) => {
            let mut members: Vec<(String, Json)> = items
                .iter()
                .map(|x| (x.canonical(), itf_value(x)))
                .collect();
            members.sort_by(|a, b| a.0.cmp(&b.0));
            members.dedup_by(|a, b| a.0 == b.0);
            json!({ "#set": members.into_iter().map(|(_, x)| x).collect::<Vec<_>>() })
        }
        Value::Fun(pairs) => {
            let mut pairs: Vec<(String, Json)> = pairs
                .iter()
                .map(|(k, x)| (k.canonical(), json!([itf_value(k), itf_value(x)])))
                .collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            json!({ "#map": pairs.into_iter().map(|(_, x)| x).collect::<Vec<_>>() })
        }
        Value::Rec(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, x)| (k.clone(), itf_value(x)))
                .collect(),
        ),
    }
}

/// Whether a sequence holds an integer directly (then it is a tuple).
fn v_has_int(v: &Value) -> bool {
    matches!(v, Value::Seq(items) if items.iter().any(|x| matches!(x, Value::Int(_))))
}

/// One ITF state: its `#meta` and the spec's variables.
fn itf_state(m: &MoveModel, s: &crate::state::State, index: usize, action: Option<String>) -> Json {
    let mut meta = Map::new();
    meta.insert("index".into(), json!(index));
    if let Some(a) = action {
        meta.insert("action".into(), Json::String(a));
    }
    let mut out = Map::new();
    out.insert("#meta".into(), Json::Object(meta));
    for (name, v) in state_value(m.cfg.nodes, m.cfg.clients, s) {
        out.insert(name, itf_value(&v));
    }
    Json::Object(out)
}

/// The ITF trace of `path`: one state per step, the initial state first
/// (so `states` has `path.steps.len() + 1` entries).
pub fn to_itf(m: &MoveModel, path: &Path, what: &ItfMeta<'_>) -> Json {
    let mut meta = Map::new();
    meta.insert("format".into(), json!("ITF"));
    meta.insert(
        "format-description".into(),
        json!("https://apalache-mc.org/docs/adr/015adr-trace.html"),
    );
    meta.insert("source".into(), json!("tla/LiveMove.tla"));
    let mut about = format!("livemove {} of config {}", what.kind, m.cfg.name);
    if let Some(p) = what.property {
        about += &format!(", property \"{p}\"");
    }
    meta.insert("description".into(), json!(about));
    meta.insert("config".into(), json!(m.cfg.name));
    meta.insert("kind".into(), json!(what.kind));
    if let Some(mu) = m.cfg.mutant {
        meta.insert("mutant".into(), json!(mu.to_string()));
    }
    if let Some(p) = what.property {
        meta.insert("property".into(), json!(p));
    }
    if let Some(s) = what.seed {
        meta.insert("seed".into(), json!(s.to_string()));
    }
    let mut states = vec![itf_state(m, &path.init, 0, None)];
    for (i, (a, s)) in path.steps.iter().enumerate() {
        states.push(itf_state(m, s, i + 1, Some(a.to_string())));
    }
    let vars: Vec<String> = state_value(m.cfg.nodes, m.cfg.clients, &path.init)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    json!({
        "#meta": Json::Object(meta),
        "vars": vars,
        "states": states,
    })
}
