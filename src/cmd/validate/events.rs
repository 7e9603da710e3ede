//! Reading a runtime trace (NDJSON, docs/traces.md) into the TLA+ module
//! `TraceData` that tla/TraceLiveMove.tla validates: events as records,
//! node names as numbers, storage instances as `<<node, disk>>`, entries as
//! `<<epoch, msg>>`, no entry as `<<0, 0>>`, as Network.tla writes its
//! messages. The spec numbers messages in the order they are published: a
//! message's id is its key's rank among the keys the trace's `Publish`
//! events name, in order of their first `Publish` (the simulator publishes
//! keys 1, 2, 3, ..., whose ids are the keys themselves; a client whose
//! publish was lost moves on to the next key, and its key is never in the
//! trace). A key published twice keeps its first id, which the spec's
//! `Publish` refuses. A settle (`Settle` event, a `Delete` entry) names
//! the message it deletes by that id; its entry is `<<epoch,
//! TraceSettleBit + id>>`, the spec's `SettleEntry`. A producer's retry
//! (`RetryPublish`) names its message by the same id; one whose key no
//! earlier event named (its first attempt reached no owner) gets the next
//! id, and is the spec's `Publish` (TraceLiveMove.tla, `RetryPublishStep`):
//! the trace's messages (`TracePublishes`) are its `Publish` events and
//! those retries.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One event of a trace file: its line (1-based) and text, and its TLA+ value.
pub struct Event {
    pub line: usize,
    pub action: String,
    pub text: String,
    pub tla: String,
    /// A `RetryPublish` of a key no earlier event named: a new message.
    pub first_retry: bool,
}

/// A trace file read into events, with the highest node it names.
pub struct Trace {
    pub events: Vec<Event>,
    pub max_node: u64,
}

impl Trace {
    /// Events named `action`.
    pub fn count(&self, action: &str) -> usize {
        self.events.iter().filter(|e| e.action == action).count()
    }

    /// The messages the trace publishes: its `Publish` events and the
    /// retries whose first attempt reached no owner.
    pub fn messages(&self) -> usize {
        self.count("Publish") + self.events.iter().filter(|e| e.first_retry).count()
    }
}

const ACTIONS: [&str; 27] = [
    "Publish",
    "RetryPublish",
    "Settle",
    "Replicate",
    "Deliver",
    "Drop",
    "Duplicate",
    "Confirm",
    "Crash",
    "Restart",
    "Rejoin",
    "NoticeRejoin",
    "NoticeReadmission",
    "CloseAdmission",
    "ReportFinalBoundary",
    "CommitHandoff",
    "ActivateOwner",
    "AddLearner",
    "AdmitLearner",
    "Swap",
    "OwnerSwitch",
    "RemoveLeaving",
    "SwapBack",
    "OpenRecovery",
    "Seal",
    "InstallRecovered",
    "ActivateRecovery",
];

/// Read `path`; an error names the file, the line and the field. Node
/// numbers are renamed through `rename` (a node it does not name keeps its
/// number), so that a partition whose first owner is not n1 is read as the
/// spec's initial state has it.
pub fn read(path: &Path, rename: &BTreeMap<u64, u64>) -> Result<Trace, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut events = Vec::new();
    let mut max_node = 0;
    let mut ids: BTreeMap<u64, u64> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let at = |msg: String| format!("{}:{line}: {msg}", path.display());
        let v: Value = serde_json::from_str(raw).map_err(|e| at(format!("not JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| at("an event is a JSON object".into()))?;
        let mut conv = Converter {
            max_node: 0,
            rename,
            ids: &mut ids,
            first_retry: false,
        };
        let tla = conv.event(obj).map_err(at)?;
        let action = obj["action"].as_str().unwrap_or_default().to_string();
        max_node = max_node.max(conv.max_node);
        events.push(Event {
            line,
            action,
            text: raw.to_string(),
            tla,
            first_retry: conv.first_retry,
        });
    }
    if events.is_empty() {
        return Err(format!(
            "{}: no events: nothing to validate",
            path.display()
        ));
    }
    Ok(Trace { events, max_node })
}

struct Converter<'a> {
    max_node: u64,
    rename: &'a BTreeMap<u64, u64>,
    /// Message key to id, in order of first publication.
    ids: &'a mut BTreeMap<u64, u64>,
    /// The event is a `RetryPublish` whose key was new to the trace.
    first_retry: bool,
}

impl Converter<'_> {
    fn renamed(&mut self, n: u64) -> u64 {
        let n = self.rename.get(&n).copied().unwrap_or(n);
        self.max_node = self.max_node.max(n);
        n
    }

    fn event(&mut self, obj: &Map<String, Value>) -> Result<String, String> {
        let action = obj
            .get("action")
            .and_then(Value::as_str)
            .ok_or("no `action` string")?;
        if !ACTIONS.contains(&action) {
            return Err(format!(
                "`action` {action:?} is not in the shared vocabulary"
            ));
        }
        let mut fields = vec![format!("action |-> {}", quote(action))];
        for (k, v) in obj {
            if k == "action" || k == "t_ms" {
                continue;
            }
            let tla = match (k.as_str(), v) {
                ("node" | "from" | "to" | "target" | "leaving" | "back", Value::String(s)) => {
                    self.node_name(s, k)?.to_string()
                }
                ("msg", Value::Object(m)) => self.message(m).map_err(|e| format!("`msg`: {e}"))?,
                ("key", Value::Number(n)) => {
                    let key = n
                        .as_u64()
                        .ok_or_else(|| format!("`key` {n} is not a message key"))?;
                    if !["Publish", "RetryPublish", "Settle"].contains(&action) {
                        return Err(format!("`key` on a {action} event"));
                    }
                    // A settle names the message it deletes by its id, a
                    // retry the message it sends again.
                    let next = self.ids.len() as u64 + 1;
                    self.first_retry = action == "RetryPublish" && !self.ids.contains_key(&key);
                    self.ids.entry(key).or_insert(next).to_string()
                }
                (
                    "pos" | "epoch" | "tail" | "inc" | "len" | "boundary" | "to_disk",
                    Value::Number(n),
                ) => n.to_string(),
                ("suspended" | "fresh_disk" | "held", Value::Bool(b)) => tla_bool(*b).to_string(),
                ("copies", Value::Array(a)) => {
                    let mut set = Vec::new();
                    for (i, x) in a.iter().enumerate() {
                        let o = x
                            .as_object()
                            .filter(|o| o.contains_key("node"))
                            .ok_or_else(|| {
                                format!("`copies[{i}]` = {x} is not a storage instance")
                            })?;
                        set.push(self.instance(o, &format!("copies[{i}]"))?);
                    }
                    format!("{{{}}}", set.join(", "))
                }
                _ => return Err(format!("field `{k}` = {v} is not one this reader knows")),
            };
            fields.push(format!("{k} |-> {tla}"));
        }
        Ok(format!("[{}]", fields.join(", ")))
    }

    fn node_name(&mut self, s: &str, field: &str) -> Result<u64, String> {
        let n = s
            .strip_prefix('n')
            .and_then(|d| d.parse::<u64>().ok())
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("`{field}` {s:?} is not a node name (`n1`, `n2`, ...)"))?;
        Ok(self.renamed(n))
    }

    fn node_number(&mut self, v: &Value, field: &str) -> Result<u64, String> {
        let n = v
            .as_u64()
            .ok_or_else(|| format!("`{field}` {v} is not a node number"))?;
        Ok(self.renamed(n))
    }

    /// A wire message: the implementation's `Msg` as serde writes it.
    fn message(&mut self, m: &Map<String, Value>) -> Result<String, String> {
        let mut fields = Vec::new();
        for (k, v) in m {
            let tla = match v {
                Value::String(s) if k == "kind" => quote(s),
                Value::Object(o) if o.contains_key("node") => self.instance(o, k)?,
                Value::Object(o) if o.contains_key("op") => self.entry(o, k)?,
                Value::Null if k == "prev" => "<<0, 0>>".to_string(),
                Value::Number(_) if k == "from" || k == "to" => self.node_number(v, k)?.to_string(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => tla_bool(*b).to_string(),
                _ => return Err(format!("field `{k}` = {v} is not one this reader knows")),
            };
            fields.push(format!("{k} |-> {tla}"));
        }
        Ok(format!("[{}]", fields.join(", ")))
    }

    /// An entry `{"epoch": e, "op": {"Put": {"key": k, ...}}}` as `<<e, id>>`,
    /// the id of the published key `k`; a settle `{"Delete": {"key": k}}`
    /// as `<<e, TraceSettleBit + id>>`, as the spec writes a settle entry
    /// (`SettleEntry`).
    fn entry(&mut self, o: &Map<String, Value>, field: &str) -> Result<String, String> {
        let epoch = o
            .get("epoch")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("`{field}.epoch` is missing or not a number"))?;
        let op = o
            .get("op")
            .and_then(Value::as_object)
            .ok_or_else(|| format!("`{field}.op` is missing or not an object"))?;
        let (kind, body) = op
            .iter()
            .next()
            .ok_or_else(|| format!("`{field}.op` is empty"))?;
        let key = body
            .get("key")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("`{field}.op` has no numeric `key`"))?;
        // A key no Publish named yet (a message never sent) gets an id of
        // its own, which the spec then finds in flight nowhere.
        let next = self.ids.len() as u64 + 1;
        let id = *self.ids.entry(key).or_insert(next);
        match kind.as_str() {
            "Put" => Ok(format!("<<{epoch}, {id}>>")),
            "Delete" => Ok(format!("<<{epoch}, TraceSettleBit + {id}>>")),
            other => Err(format!("`{field}.op` {other:?} is no publish or settle")),
        }
    }

    fn instance(&mut self, o: &Map<String, Value>, field: &str) -> Result<String, String> {
        let node = self.node_number(&o["node"], field)?;
        let disk = o
            .get("disk")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("`{field}.disk` is missing or not a number"))?;
        Ok(format!("<<{node}, {disk}>>"))
    }
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn tla_bool(b: bool) -> &'static str {
    if b {
        "TRUE"
    } else {
        "FALSE"
    }
}

/// The module `TraceData`: the events, the nodes and the replication factor.
pub fn module(trace: &Trace, nodes: u64, rf: u64) -> String {
    let mut out = String::new();
    out.push_str("---- MODULE TraceData ----\n");
    out.push_str("(* Written by `livemove trace validate`: one record per event. *)\n");
    // A settle entry is written as TraceSettleBit + id.
    out.push_str("EXTENDS Naturals\n");
    let _ = writeln!(out, "TraceNodes == {nodes}");
    let _ = writeln!(out, "TraceRF == {rf}");
    // The budgets the spec is run with: as many of each as the trace has.
    let _ = writeln!(out, "TracePublishes == {}", trace.messages());
    for (name, action) in [
        ("TraceRetries", "RetryPublish"),
        ("TraceCrashes", "Crash"),
        ("TraceSuspicions", "OpenRecovery"),
        ("TraceRestarts", "Restart"),
        ("TraceDrops", "Drop"),
        ("TraceDups", "Duplicate"),
        ("TraceHandoffs", "CloseAdmission"),
        ("TraceMoves", "AddLearner"),
        ("TraceSettles", "Settle"),
    ] {
        let _ = writeln!(out, "{name} == {}", trace.count(action));
    }
    // Settle entries are written as TraceSettleBit + id: above every
    // publish's id, as LiveMove.tla's SettleBit for MESSAGES publishes
    // (TraceLiveMove.tla checks the two agree).
    let publishes = trace.messages();
    let settle_bit = if publishes < 8 { 8 } else { publishes + 1 };
    let _ = writeln!(out, "TraceSettleBit == {settle_bit}");
    let fresh = trace
        .events
        .iter()
        .filter(|e| e.action == "Restart" && e.tla.contains("fresh_disk |-> TRUE"))
        .count();
    let _ = writeln!(out, "TraceDiskLosses == {fresh}");
    out.push_str("Trace == <<\n");
    for (i, e) in trace.events.iter().enumerate() {
        let sep = if i + 1 == trace.events.len() { "" } else { "," };
        let _ = writeln!(out, "  {}{sep}", e.tla);
    }
    out.push_str(">>\n====\n");
    out
}
