//! One canonical text for a state, shared with the TLA+ spec (`tla/`).
//!
//! The spec mirrors `State` as TLA+ values: nodes are `1..N`, a storage
//! instance is `<<node, gen>>`, an entry is `<<epoch, msg>>` (`<<0, 0>>` for
//! none), a log is a sequence, a slot set is a set, enums are their variant
//! names as strings, a message is a record with a `kind` field and the
//! messages in flight are a bag (a function from message to copies). [`state_value`] builds exactly that value from a Rust
//! state; a parser of TLC's `-dump` output builds the same [`Value`] from a
//! TLC state; [`Value::canonical`] prints either one with record fields and
//! set members sorted, so two reachable-state sets can be compared line by
//! line. Everything here only reads the model.

use crate::net::{Msg, Net};
use crate::protocol::MoveModel;
use crate::state::*;
use crate::types::*;
use std::collections::HashSet;
use std::fmt::Write;

/// A TLA+ value, as much of TLA+ as the spec's state uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    /// A sequence (a function with domain `1..n`, printed `<<a, b>>`).
    Seq(Vec<Value>),
    /// A finite set; member order does not matter.
    Set(Vec<Value>),
    /// A record; field order does not matter.
    Rec(Vec<(String, Value)>),
    /// A function whose domain is not `1..n`, as TLC prints it:
    /// `(k1 :> v1 @@ k2 :> v2)`; key order does not matter. The empty
    /// function prints `<<>>`, as TLC prints it.
    Fun(Vec<(Value, Value)>),
}

impl Value {
    /// TLA+ syntax with record fields sorted by name and set members sorted
    /// by their own canonical text (TLC's print order is not canonical).
    pub fn canonical(&self) -> String {
        let mut out = String::new();
        self.write_canonical(&mut out);
        out
    }

    fn write_canonical(&self, out: &mut String) {
        match self {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
            Value::Str(s) => {
                let _ = write!(out, "\"{s}\"");
            }
            Value::Seq(items) => {
                out.push_str("<<");
                for (k, v) in items.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    v.write_canonical(out);
                }
                out.push_str(">>");
            }
            Value::Set(items) => {
                let mut texts: Vec<String> = items.iter().map(Value::canonical).collect();
                texts.sort();
                texts.dedup();
                out.push('{');
                out.push_str(&texts.join(", "));
                out.push('}');
            }
            Value::Fun(pairs) if pairs.is_empty() => out.push_str("<<>>"),
            Value::Fun(pairs) => {
                let mut texts: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{} :> {}", k.canonical(), v.canonical()))
                    .collect();
                texts.sort();
                out.push('(');
                out.push_str(&texts.join(" @@ "));
                out.push(')');
            }
            Value::Rec(fields) => {
                let mut sorted: Vec<&(String, Value)> = fields.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                out.push('[');
                for (k, (name, v)) in sorted.into_iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{name} |-> ");
                    v.write_canonical(out);
                }
                out.push(']');
            }
        }
    }
}

/// The canonical text of a whole state: its variables in name order, as
/// `/\ name = value` on one line.
pub fn canonical_vars(vars: &[(String, Value)]) -> String {
    let mut sorted: Vec<&(String, Value)> = vars.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let parts: Vec<String> = sorted
        .into_iter()
        .map(|(n, v)| format!("/\\ {n} = {}", v.canonical()))
        .collect();
    parts.join(" ")
}

fn int(x: u8) -> Value {
    Value::Int(i64::from(x))
}

fn rec(fields: Vec<(&str, Value)>) -> Value {
    Value::Rec(
        fields
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
    )
}

/// A storage instance as `<<node, gen>>`, nodes counted from 1.
pub fn slot_value(s: Slot) -> Value {
    Value::Seq(vec![int(s.node() + 1), int(s.gen())])
}

fn slots_value(s: Slots) -> Value {
    Value::Set(s.iter().map(slot_value).collect())
}

fn entry_value(e: Entry) -> Value {
    Value::Seq(vec![int(e.epoch()), int(e.msg())])
}

fn log_value(l: &Log) -> Value {
    Value::Seq((1..=l.len).map(|p| entry_value(l.at(p))).collect())
}

/// A value no TLA+ state can hold: it makes a state whose idle fields are
/// not at their defaults differ from every TLC state instead of being
/// silently merged with another one.
fn not_idle(what: &str) -> Value {
    Value::Str(format!("unexpected {what} while idle"))
}

fn serving_value(nodes: u8, s: &Serving) -> Value {
    rec(vec![
        ("active", Value::Bool(s.active)),
        ("epoch", int(s.epoch)),
        ("counted", slots_value(s.counted)),
        ("w", int(s.w)),
        ("open", Value::Bool(s.open)),
        ("confirmed", int(s.confirmed)),
        ("via_handoff", Value::Bool(s.via_handoff)),
        // The spec keeps only nonzero acknowledgements, as `<<slot, pos>>`.
        (
            "acks",
            Value::Set(
                s.acks
                    .iter()
                    .map(|(x, p)| Value::Seq(vec![slot_value(x), int(p)]))
                    .collect(),
            ),
        ),
        // Per node 1..N, the oldest incarnation whose acknowledgements count.
        (
            "floor",
            Value::Seq((0..nodes).map(|n| int(s.floor_of(n))).collect()),
        ),
        ("muted", slots_value(s.muted)),
    ])
}

fn node_value(nodes: u8, n: &Node) -> Value {
    rec(vec![
        ("alive", Value::Bool(n.alive)),
        ("gen", int(n.gen)),
        ("log", log_value(&n.log)),
        ("seen", int(n.seen)),
        ("sealed_at", int(n.sealed_at)),
        ("serving", serving_value(nodes, &n.serving)),
        ("inc", int(n.inc)),
        ("suspended", Value::Bool(n.suspended)),
        ("wiped_unbound", Value::Bool(n.wiped_unbound)),
        ("base", int(n.base)),
    ])
}

/// A message as the spec's record (Network.tla), nodes counted from 1.
fn msg_value(m: Msg) -> Value {
    let node = |n: NodeId| int(n + 1);
    let kind = Value::Str(m.kind().to_string());
    match m {
        Msg::None => unreachable!("invariant broken: the empty cell is not a message"),
        Msg::Append {
            from,
            to,
            epoch,
            pos,
            prev,
            entry,
        } => rec(vec![
            ("kind", kind),
            ("from", node(from)),
            ("to", slot_value(to)),
            ("epoch", int(epoch)),
            ("pos", int(pos)),
            ("prev", entry_value(prev)),
            ("entry", entry_value(entry)),
        ]),
        Msg::Ack {
            to,
            epoch,
            from,
            inc,
            pos,
            entry,
            admitted,
        } => rec(vec![
            ("kind", kind),
            ("to", node(to)),
            ("epoch", int(epoch)),
            ("from", slot_value(from)),
            ("inc", int(inc)),
            ("pos", int(pos)),
            ("entry", entry_value(entry)),
            ("admitted", Value::Bool(admitted)),
        ]),
        Msg::Refuse { to, epoch } => rec(vec![
            ("kind", kind),
            ("to", node(to)),
            ("epoch", int(epoch)),
        ]),
        Msg::Suspend { to, from, inc } => rec(vec![
            ("kind", kind),
            ("to", node(to)),
            ("from", slot_value(from)),
            ("inc", int(inc)),
        ]),
        Msg::Progress {
            from,
            epoch,
            of,
            pos,
            confirmed,
        } => rec(vec![
            ("kind", kind),
            ("from", slot_value(from)),
            ("epoch", int(epoch)),
            ("of", slot_value(of)),
            ("pos", int(pos)),
            ("confirmed", int(confirmed)),
        ]),
    }
}

/// The controller's knowledge of progress; acknowledgements as the
/// serving state's (`<<slot, pos>>`, nonzero only).
fn known_value(k: &Known) -> Value {
    rec(vec![
        ("epoch", int(k.epoch)),
        ("confirmed", int(k.confirmed)),
        (
            "acks",
            Value::Set(
                k.acks
                    .iter()
                    .map(|(x, p)| Value::Seq(vec![slot_value(x), int(p)]))
                    .collect(),
            ),
        ),
    ])
}

/// The client: its stable route as `<<node, epoch>>` (`<<0, 0>>` without
/// a client), the request's node (0 while idle), and the acknowledged
/// messages as a set.
fn client_value(c: &Client) -> Value {
    let route = if c.route_epoch > 0 {
        Value::Seq(vec![int(c.route_node + 1), int(c.route_epoch)])
    } else if c.route_node == 0 {
        Value::Seq(vec![int(0), int(0)])
    } else {
        not_idle("client route")
    };
    let idle = c.phase == ReqPhase::Idle;
    let at = if !idle {
        int(c.at + 1)
    } else if c.at == 0 && c.epoch == 0 && !c.asking && c.hops == 0 {
        int(0)
    } else {
        not_idle("client request")
    };
    let phase = match c.phase {
        ReqPhase::Idle => "Idle",
        ReqPhase::Sent => "Sent",
        ReqPhase::Accepted => "Accepted",
    };
    rec(vec![
        ("route", route),
        ("phase", Value::Str(phase.into())),
        ("at", at),
        ("epoch", int(c.epoch)),
        ("asking", Value::Bool(c.asking)),
        ("hops", int(c.hops)),
        ("msg", int(c.msg)),
        (
            "acked",
            Value::Set((1..=8).filter(|m| c.is_acked(*m)).map(int).collect()),
        ),
    ])
}

/// The messages in flight as the spec's bag: each distinct message to its
/// number of copies.
fn net_value(n: &Net) -> Value {
    Value::Fun(
        n.distinct()
            .map(|m| (msg_value(m), Value::Int(n.count(m) as i64)))
            .collect(),
    )
}

fn move_value(m: &Move) -> Value {
    // An idle move names no target in the spec (NoSlot = <<0, 0>>); the
    // model leaves the default slot (n1) there.
    let target = if m.phase != MovePhase::None {
        slot_value(m.target)
    } else if m.target == Slot::default() {
        Value::Seq(vec![Value::Int(0), Value::Int(0)])
    } else {
        not_idle("move target")
    };
    // An idle move replaces nothing, on both sides.
    let replaces = if m.phase != MovePhase::None || m.replaces.is_empty() {
        slots_value(m.replaces)
    } else {
        not_idle("move replacement")
    };
    rec(vec![
        ("phase", Value::Str(format!("{:?}", m.phase))),
        ("target", target),
        ("boundary", int(m.boundary)),
        ("replaces", replaces),
    ])
}

fn handoff_value(h: &Handoff) -> Value {
    // An idle handoff names no nodes in the spec (0); the model leaves the
    // default node index (n1) there.
    let node = |n: NodeId| {
        if h.phase != HandoffPhase::None {
            int(n + 1)
        } else if n == 0 {
            Value::Int(0)
        } else {
            not_idle("handoff node")
        }
    };
    rec(vec![
        ("phase", Value::Str(format!("{:?}", h.phase))),
        ("from", node(h.from)),
        ("to", node(h.to)),
        ("fin", int(h.fin)),
        ("fin_entry", entry_value(h.fin_entry)),
    ])
}

fn recovery_value(r: &Recovery) -> Value {
    rec(vec![
        ("pending", Value::Bool(r.pending)),
        ("sealed", slots_value(r.sealed)),
        ("installed", slots_value(r.installed)),
        ("chosen", Value::Bool(r.chosen)),
        ("tail", log_value(&r.tail)),
    ])
}

fn record_value(r: &Record) -> Value {
    rec(vec![
        ("epoch", int(r.epoch)),
        ("owner", slot_value(r.owner)),
        ("followers", slots_value(r.followers)),
        ("learners", slots_value(r.learners)),
        ("leaving", slots_value(r.leaving)),
        ("eligible", slots_value(r.eligible)),
        ("suspended", slots_value(r.suspended)),
        ("rf", int(r.rf)),
        ("rf_served", int(r.rf_served)),
        ("adopted", Value::Bool(r.adopted)),
        ("recovery", recovery_value(&r.recovery)),
        ("mv", move_value(&r.mv)),
        ("handoff", handoff_value(&r.handoff)),
        ("start", int(r.start)),
        ("start_entry", entry_value(r.start_entry)),
    ])
}

fn budget_value(b: &Budget) -> Value {
    rec(vec![
        ("published", int(b.published)),
        ("crashes", int(b.crashes)),
        ("suspicions", int(b.suspicions)),
        ("restarts", int(b.restarts)),
        ("disk_losses", int(b.disk_losses)),
        ("learner_adds", int(b.learner_adds)),
        ("handoffs", int(b.handoffs)),
        ("cancels", int(b.cancels)),
        ("retries", int(b.retries)),
        ("drops", int(b.drops)),
        ("dups", int(b.dups)),
        ("truncations", int(b.truncations)),
        ("publish_retries", int(b.publish_retries)),
        ("settles", int(b.settles)),
    ])
}

/// The spec's variables for state `s` of a model with `nodes` nodes and
/// `clients` clients (the nodes and clients past the configuration's
/// counts never change and are left out).
pub fn state_value(nodes: u8, clients: u8, s: &State) -> Vec<(String, Value)> {
    let ns = s.nodes[..nodes as usize]
        .iter()
        .map(|n| node_value(nodes, n))
        .collect();
    vec![
        ("nodes".to_string(), Value::Seq(ns)),
        ("record".to_string(), record_value(&s.record)),
        ("budget".to_string(), budget_value(&s.budget)),
        ("net".to_string(), net_value(&s.net)),
        ("known".to_string(), known_value(&s.known)),
        (
            "clients".to_string(),
            Value::Seq(
                s.clients[..clients as usize]
                    .iter()
                    .map(client_value)
                    .collect(),
            ),
        ),
        ("confirmed".to_string(), log_value(&s.confirmed)),
        ("forked".to_string(), Value::Bool(s.forked)),
        (
            "settled".to_string(),
            Value::Set(
                (1..crate::types::SETTLE_BIT)
                    .filter(|m| s.is_settled(*m))
                    .map(int)
                    .collect(),
            ),
        ),
    ]
}

/// The canonical text of state `s` of model `m`.
pub fn canonical_state(m: &MoveModel, s: &State) -> String {
    canonical_vars(&state_value(m.cfg.nodes, m.cfg.clients, s))
}

/// Every reachable state of `m`, in breadth-first order, or `Err(cap)` if
/// there are more than `cap`.
pub fn reachable(m: &MoveModel, cap: usize) -> Result<Vec<State>, usize> {
    let init = m.init();
    let mut seen: HashSet<State> = HashSet::from([init]);
    let mut order = vec![init];
    let mut succ = Vec::new();
    let mut next = 0;
    while next < order.len() {
        succ.clear();
        m.successors(&order[next], &mut succ);
        next += 1;
        for (_, t) in &succ {
            if seen.insert(*t) {
                if order.len() >= cap {
                    return Err(cap);
                }
                order.push(*t);
            }
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Cfg;

    #[test]
    fn canonical_text_sorts_fields_and_members() {
        let v = Value::Rec(vec![
            ("b".into(), Value::Set(vec![Value::Int(2), Value::Int(1)])),
            ("a".into(), Value::Seq(vec![Value::Bool(true)])),
        ]);
        assert_eq!(v.canonical(), "[a |-> <<TRUE>>, b |-> {1, 2}]");
    }

    #[test]
    fn initial_state_prints_as_the_spec_writes_it() {
        let m = MoveModel::new(Cfg::named("handoff"));
        let text = canonical_state(&m, &m.init());
        assert!(
            text.starts_with("/\\ budget = [cancels |-> 0, crashes |-> 0,"),
            "{text}"
        );
        assert!(text.contains("replaces |-> {}"), "{text}");
        assert!(text.contains("owner |-> <<1, 0>>"), "{text}");
        assert!(text.contains("target |-> <<0, 0>>"), "{text}");
        assert!(
            text.contains("followers |-> {<<2, 0>>, <<3, 0>>}"),
            "{text}"
        );
    }

    #[test]
    fn messages_in_flight_print_as_a_bag_of_records() {
        let m = MoveModel::new(Cfg::named("handoff-net"));
        let mut s = m.init();
        let refuse = Msg::Refuse { to: 0, epoch: 2 };
        s.net.add(refuse);
        s.net.add(refuse);
        s.net.add(Msg::Suspend {
            to: 0,
            from: Slot::new(1, 0),
            inc: 1,
        });
        let text = canonical_state(&m, &s);
        assert!(
            text.contains(
                "/\\ net = ([epoch |-> 2, kind |-> \"Refuse\", to |-> 1] :> 2 @@ \
                 [from |-> <<2, 0>>, inc |-> 1, kind |-> \"Suspend\", to |-> 1] :> 1)"
            ),
            "{text}"
        );
        let idle = canonical_state(&m, &m.init());
        assert!(idle.contains("/\\ net = <<>>"), "{idle}");
        assert!(idle.contains("floor |-> <<0, 0, 0>>"), "{idle}");
        assert!(idle.contains("inc |-> 0"), "{idle}");
        assert!(idle.contains("drops |-> 0, dups |-> 0"), "{idle}");
    }

    #[test]
    fn distinct_states_print_distinct_texts() {
        let m = MoveModel::new(Cfg::named("handoff"));
        let states = reachable(&m, 10_000).expect("handoff is small");
        let texts: HashSet<String> = states.iter().map(|s| canonical_state(&m, s)).collect();
        assert_eq!(texts.len(), states.len());
    }

    #[test]
    fn retention_prints_the_checkpoint_and_its_budget() {
        // The spec names the checkpoint position `base` on every node and
        // the used truncations `truncations` in the budget, also where the
        // configuration allows none, so every configuration's states carry
        // both fields on both sides of the comparison.
        let atomic = MoveModel::new(Cfg::named("handoff"));
        let idle = canonical_state(&atomic, &atomic.init());
        assert!(idle.contains("base |-> 0"), "{idle}");
        assert!(
            idle.contains("suspicions |-> 0, truncations |-> 0]"),
            "{idle}"
        );
        let m = MoveModel::new(Cfg::named("retention"));
        let states = reachable(&m, 10_000).expect("retention is small");
        let texts: HashSet<String> = states.iter().map(|s| canonical_state(&m, s)).collect();
        assert_eq!(texts.len(), states.len());
        assert!(texts.iter().any(|t| t.contains("base |-> 2")));
        assert!(texts.iter().any(|t| t.contains("truncations |-> 2]")));
    }

    #[test]
    fn distinct_states_with_messages_print_distinct_texts() {
        // Progress reports and the controller's knowledge included.
        let m = MoveModel::new(Cfg::named("disk-lost-replaced-net"));
        let states = reachable(&m, 200_000).expect("disk-lost-replaced-net is small");
        let texts: HashSet<String> = states.iter().map(|s| canonical_state(&m, s)).collect();
        assert_eq!(texts.len(), states.len());
        assert_eq!(
            states.len(),
            162_498,
            "disk-lost-replaced-net's reachable states"
        );
    }
}
