//! A readable view of a state (node names, roles, logs as `m1@e1`), used for
//! counterexamples, trace files and field-path diffs.

use crate::protocol::MoveModel;
use crate::state::*;
use crate::types::*;
use serde_json::{json, Map, Value};

fn phase_name<T: std::fmt::Debug>(p: T) -> String {
    format!("{p:?}").to_lowercase()
}

/// The role node `n`'s current instance has in the record.
pub fn role(s: &State, n: NodeId) -> &'static str {
    let r = &s.record;
    let slot = s.slot(n);
    if r.owner == slot {
        "owner"
    } else if r.suspended.contains(slot) {
        "suspended"
    } else if r.leaving.contains(slot) {
        "leaving"
    } else if r.followers.contains(slot) {
        "follower"
    } else if r.learners.contains(slot) {
        "learner"
    } else {
        "none"
    }
}

/// The state as JSON with stable, readable field names.
pub fn view(m: &MoveModel, s: &State) -> Value {
    let r = &s.record;
    let mut nodes = Map::new();
    for n in 0..m.cfg.nodes {
        let nd = &s.nodes[n as usize];
        let sv = &nd.serving;
        let serving = if sv.active {
            json!({
                "epoch": sv.epoch,
                "counted": sv.counted.names(),
                "w": sv.w,
                "open": sv.open,
                "confirmed": sv.confirmed,
                "via_handoff": sv.via_handoff,
                "acks": sv
                    .acks
                    .iter()
                    .map(|(x, p)| (x.to_string(), Value::from(p)))
                    .collect::<Map<String, Value>>(),
            })
        } else {
            Value::Null
        };
        nodes.insert(
            node_name(n),
            json!({
                "alive": nd.alive,
                "disk": s.slot(n).to_string(),
                "role": role(s, n),
                "log": nd.log.names(),
                "seen_epoch": nd.seen,
                "sealed_at": nd.sealed_at,
                "serving": serving,
                "wiped_unbound": nd.wiped_unbound,
            }),
        );
    }
    let rec = &r.recovery;
    let recovery = if rec.pending {
        json!({
            "sealed": rec.sealed.names(),
            "installed": rec.installed.names(),
            "tail": if rec.chosen { json!(rec.tail.names()) } else { Value::Null },
            "best_evidence": if rec.chosen || rec.tail.len == 0 { Value::Null } else { json!(rec.tail.names()) },
        })
    } else {
        Value::Null
    };
    let mv = if r.mv.phase == MovePhase::None {
        Value::Null
    } else {
        let mut v = json!({"phase": phase_name(r.mv.phase), "target": r.mv.target.to_string(), "boundary": r.mv.boundary});
        if !r.mv.replaces.is_empty() {
            v["replaces"] = json!(r.mv.replaces.names());
        }
        v
    };
    let h = &r.handoff;
    let handoff = if h.phase == HandoffPhase::None {
        Value::Null
    } else {
        json!({
            "phase": phase_name(h.phase),
            "from": node_name(h.from),
            "to": node_name(h.to),
            "final_boundary": h.fin,
        })
    };
    let b = &s.budget;
    let mut out = json!({
        "record": {
            "epoch": r.epoch,
            "owner": r.owner.to_string(),
            "followers": r.followers.names(),
            "learners": r.learners.names(),
            "leaving": r.leaving.names(),
            "eligible": r.eligible.names(),
            "suspended": r.suspended.names(),
            "rf": r.rf,
            "rf_served": r.rf_served,
            "adopted": r.adopted,
            "recovery": recovery,
            "move": mv,
            "handoff": handoff,
        },
        "nodes": nodes,
        "used": {
            "published": b.published,
            "crashes": b.crashes,
            "suspicions": b.suspicions,
            "restarts": b.restarts,
            "disk_losses": b.disk_losses,
            "learner_adds": b.learner_adds,
            "handoffs": b.handoffs,
            "cancels": b.cancels,
            "retries_earned": b.retries,
        },
        "confirmed": s.confirmed.names(),
        "forked": s.forked,
    });
    if m.cfg.publish_retries > 0 {
        out["used"]["publish_retries"] = json!(b.publish_retries);
    }
    if m.cfg.settles > 0 {
        out["used"]["settles"] = json!(b.settles);
        out["settled"] = json!((1..crate::types::SETTLE_BIT)
            .filter(|x| s.is_settled(*x))
            .map(|x| format!("m{x}"))
            .collect::<Vec<_>>());
    }
    if m.cfg.client_hops > 0 {
        for (k, c) in s.clients[..m.cfg.clients as usize].iter().enumerate() {
            let request = if c.phase == ReqPhase::Idle {
                Value::Null
            } else {
                json!({
                    "phase": phase_name(c.phase),
                    "at": node_name(c.at),
                    "epoch": c.epoch,
                    "asking": c.asking,
                    "hops": c.hops,
                })
            };
            out["clients"][client_name(k as ClientId)] = json!({
                "route": format!("{}@e{}", node_name(c.route_node), c.route_epoch),
                "request": request,
                "msg": if c.msg > 0 { Value::from(format!("m{}", c.msg)) } else { Value::Null },
                "acked": (1..=8u8).filter(|x| c.is_acked(*x)).map(|x| format!("m{x}")).collect::<Vec<_>>(),
            });
        }
    }
    if m.cfg.net {
        add_network(m, s, &mut out);
    }
    out
}

/// With messages in flight: the messages (as the action log prints them),
/// the network's faults used, what the controller knows of progress, each
/// node's incarnation and each serving owner's incarnation floor and muted
/// copies.
fn add_network(m: &MoveModel, s: &State, out: &mut Value) {
    out["in_flight"] = json!(s.net.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    out["used"]["drops"] = json!(s.budget.drops);
    out["used"]["dups"] = json!(s.budget.dups);
    // What the controller's guards read: the owner's last report taken.
    if s.known.epoch > 0 {
        out["controller_knows"] = json!({
            "epoch": s.known.epoch,
            "confirmed": s.known.confirmed,
            "progress": s.known.acks.iter()
                .map(|(x, p)| (x.to_string(), Value::from(p)))
                .collect::<Map<String, Value>>(),
        });
    }
    for n in 0..m.cfg.nodes {
        let nd = &s.nodes[n as usize];
        let v = &mut out["nodes"][node_name(n)];
        v["incarnation"] = json!(nd.inc);
        v["suspended"] = json!(nd.suspended);
        if nd.serving.active {
            let sv = &nd.serving;
            v["serving"]["muted"] = json!(sv.muted.names());
            v["serving"]["floor"] = (0..m.cfg.nodes)
                .filter(|x| sv.floor_of(*x) > 0)
                .map(|x| (node_name(x), Value::from(sv.floor_of(x))))
                .collect::<Map<String, Value>>()
                .into();
        }
    }
}

/// What a state holds pending, in words: the move (phase, target, leaving
/// copy, boundary, the copy it replaces), the handoff, the recovery, the
/// copies that are down or suspended. Used to say what a state the partition
/// can never leave is stuck with.
pub fn pending(m: &MoveModel, s: &State) -> Vec<String> {
    let r = &s.record;
    let mut out = Vec::new();
    if r.mv.phase != MovePhase::None {
        let mut line = format!("move {} (target {}", phase_name(r.mv.phase), r.mv.target);
        if !r.leaving.is_empty() {
            line.push_str(&format!(", leaving {}", r.leaving.names().join(", ")));
        }
        if r.mv.phase == MovePhase::Swapped {
            if r.adopted {
                line.push_str(&format!(", B {}", r.mv.boundary));
            } else {
                line.push_str(", not yet adopted by the owner");
            }
        }
        if !r.mv.replaces.is_empty() {
            line.push_str(&format!(", replaces {}", r.mv.replaces.names().join(", ")));
        }
        line.push(')');
        out.push(line);
    }
    let h = &r.handoff;
    if h.phase != HandoffPhase::None {
        out.push(format!(
            "handoff {} ({} -> {}, F {})",
            phase_name(h.phase),
            node_name(h.from),
            node_name(h.to),
            h.fin
        ));
    }
    let rec = &r.recovery;
    if rec.pending {
        out.push(format!(
            "recovery pending (sealed [{}], installed [{}], needs {} seals)",
            rec.sealed.names().join(", "),
            rec.installed.names().join(", "),
            m.seal_threshold(s)
        ));
    }
    let down: Vec<String> = r
        .eligible
        .union(r.followers)
        .with(r.owner)
        .iter()
        .filter(|i| !s.current(*i) || !s.nodes[i.node() as usize].alive)
        .map(|i| {
            let how = if s.current(i) { "down" } else { "disk lost" };
            format!("{i} {how}")
        })
        .collect();
    if !down.is_empty() {
        out.push(format!(
            "copies down: {} (tolerated: {})",
            down.join(", "),
            crate::properties::tolerated(s)
        ));
    }
    if !r.suspended.is_empty() {
        out.push(format!("suspended: {}", r.suspended.names().join(", ")));
    }
    if s.current_owner().is_none() {
        out.push("no owner serving at the record's epoch".into());
    }
    out
}

/// Flatten a JSON value into `path -> value` pairs; members of `nodes` and
/// `clients` are written `nodes[n4].role`, `clients[c1].route`.
pub fn flatten(v: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = if path == "nodes" || path == "clients" {
                    format!("{path}[{k}]")
                } else if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                // Objects are walked; null and scalars and arrays are leaves.
                if x.is_object() {
                    walk(x, p, out);
                } else {
                    out.push((p, x.clone()));
                }
            }
        }
        other => out.push((path, other.clone())),
    }
}

/// One changed field: `path: before -> after` (`null` where absent).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Change {
    pub path: String,
    pub before: Value,
    pub after: Value,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} -> {}",
            self.path,
            show(&self.before),
            show(&self.after)
        )
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(", "))
        }
        other => other.to_string(),
    }
}

/// The fields that differ between two views, in path order.
pub fn diff(before: &Value, after: &Value) -> Vec<Change> {
    let a = flatten(before);
    let b = flatten(after);
    let mut out = Vec::new();
    let get = |xs: &[(String, Value)], p: &str| {
        xs.iter()
            .find(|(q, _)| q == p)
            .map(|(_, v)| v.clone())
            .unwrap_or(Value::Null)
    };
    let mut paths: Vec<&String> = a
        .iter()
        .map(|(p, _)| p)
        .chain(b.iter().map(|(p, _)| p))
        .collect();
    paths.sort();
    paths.dedup();
    for p in paths {
        let (x, y) = (get(&a, p), get(&b, p));
        if x != y {
            out.push(Change {
                path: p.clone(),
                before: x,
                after: y,
            });
        }
    }
    out
}
