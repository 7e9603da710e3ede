//! TLC's `-dump` file read into the canonical text of `livemove_model::canon`,
//! and compared with the Rust model's reachable states.
//!
//! A dump is a sequence of blocks `State k:` followed by one `/\ var = value`
//! conjunct per variable (a long value may continue on further lines),
//! separated by blank lines.

use livemove_model::canon::{self, Value};
use livemove_model::view::view;
use livemove_model::MoveModel;
use std::collections::HashSet;
use std::path::Path;

/// One state of a dump: its canonical text and the block TLC printed.
pub struct DumpState {
    pub canonical: String,
    pub raw: String,
}

/// Read every state of a dump file.
pub fn read(path: &Path) -> Result<Vec<DumpState>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read TLC dump {}: {e}", path.display()))?;
    let mut states = Vec::new();
    let mut block: Vec<&str> = Vec::new();
    let flush = |block: &mut Vec<&str>, states: &mut Vec<DumpState>| -> Result<(), String> {
        if block.is_empty() {
            return Ok(());
        }
        let raw = block.join("\n");
        states.push(DumpState {
            canonical: canonical_block(&raw)?,
            raw,
        });
        block.clear();
        Ok(())
    };
    for line in text.lines() {
        if line.starts_with("State ") && line.trim_end().ends_with(':') {
            flush(&mut block, &mut states)?;
        } else if !line.trim().is_empty() {
            block.push(line);
        }
    }
    flush(&mut block, &mut states)?;
    Ok(states)
}

/// The canonical text of one block of `/\ var = value` conjuncts.
pub fn canonical_block(raw: &str) -> Result<String, String> {
    let mut conjuncts: Vec<String> = Vec::new();
    for line in raw.lines() {
        match line.strip_prefix("/\\ ") {
            Some(rest) => conjuncts.push(rest.to_string()),
            None => match conjuncts.last_mut() {
                Some(last) => {
                    last.push(' ');
                    last.push_str(line.trim());
                }
                None => return Err(format!("unexpected line in TLC dump: `{line}`")),
            },
        }
    }
    let mut vars = Vec::new();
    for c in conjuncts {
        let (name, value) = c
            .split_once(" = ")
            .ok_or_else(|| format!("expected `var = value` in TLC dump, got `{c}`"))?;
        vars.push((name.trim().to_string(), parse_value(value)?));
    }
    Ok(canon::canonical_vars(&vars))
}

/// Parse one TLA+ value as TLC prints it.
pub fn parse_value(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("end of value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, tok: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(tok.as_bytes()) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }
    fn err(&self, what: &str) -> String {
        let end = (self.i + 40).min(self.s.len());
        format!(
            "TLC dump: expected {what} at `{}`",
            String::from_utf8_lossy(&self.s[self.i..end])
        )
    }
    /// Comma-separated items up to `close`.
    fn items<T>(
        &mut self,
        close: &str,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(item(self)?);
            if self.eat(close) {
                return Ok(v);
            }
            if !self.eat(",") {
                return Err(self.err(&format!("`,` or `{close}`")));
            }
        }
    }
    fn ident(&mut self) -> Result<String, String> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        if start == self.i {
            return Err(self.err("a name"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }
    /// A function TLC prints as `(k1 :> v1 @@ k2 :> v2)` (a bag), after
    /// its `(`.
    fn function(&mut self) -> Result<Value, String> {
        let mut pairs = Vec::new();
        loop {
            let k = self.value()?;
            if !self.eat(":>") {
                return Err(self.err("`:>`"));
            }
            pairs.push((k, self.value()?));
            if self.eat(")") {
                return Ok(Value::Fun(pairs));
            }
            if !self.eat("@@") {
                return Err(self.err("`@@` or `)`"));
            }
        }
    }
    fn value(&mut self) -> Result<Value, String> {
        if self.eat("<<") {
            return Ok(Value::Seq(self.items(">>", Self::value)?));
        }
        if self.eat("{") {
            return Ok(Value::Set(self.items("}", Self::value)?));
        }
        if self.eat("(") {
            return self.function();
        }
        if self.eat("[") {
            return Ok(Value::Rec(self.items("]", |p| {
                let name = p.ident()?;
                if !p.eat("|->") {
                    return Err(p.err("`|->`"));
                }
                Ok((name, p.value()?))
            })?));
        }
        if self.eat("\"") {
            let start = self.i;
            while self.i < self.s.len() && self.s[self.i] != b'"' {
                self.i += 1;
            }
            let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
            if !self.eat("\"") {
                return Err(self.err("closing `\"`"));
            }
            return Ok(Value::Str(s));
        }
        if self.eat("TRUE") {
            return Ok(Value::Bool(true));
        }
        if self.eat("FALSE") {
            return Ok(Value::Bool(false));
        }
        self.ws();
        let start = self.i;
        if self.i < self.s.len() && self.s[self.i] == b'-' {
            self.i += 1;
        }
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .map(Value::Int)
            .ok_or_else(|| self.err("a sequence, set, record, string, boolean or integer"))
    }
}

/// The two reachable-state sets side by side.
pub struct Comparison {
    pub tlc_states: usize,
    pub model_states: usize,
    pub only_tlc: usize,
    pub only_model: usize,
    /// The first TLC state (dump order) the model lacks: canonical, raw.
    pub first_only_tlc: Option<(String, String)>,
    /// The first model state (breadth-first order) TLC lacks: canonical,
    /// the model's own view.
    pub first_only_model: Option<(String, String)>,
}

impl Comparison {
    pub fn equal(&self) -> bool {
        self.only_tlc == 0 && self.only_model == 0
    }

    /// A report of the first difference each way, in both forms.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "state sets differ: TLC {} states ({} not in the model), model {} states ({} not in TLC)\n",
            self.tlc_states, self.only_tlc, self.model_states, self.only_model
        );
        if let Some((c, raw)) = &self.first_only_tlc {
            s.push_str(&format!(
                "first TLC state the model lacks:\n  canonical: {c}\n  as TLC printed it:\n{raw}\n"
            ));
        }
        if let Some((c, v)) = &self.first_only_model {
            s.push_str(&format!(
                "first model state TLC lacks:\n  canonical: {c}\n  as the model shows it:\n{v}\n"
            ));
        }
        s
    }
}

/// Compare a TLC dump with the reachable states of `m` (at most `cap`).
pub fn compare(m: &MoveModel, dump: &Path, cap: usize) -> Result<Comparison, String> {
    let tlc = read(dump)?;
    let model = canon::reachable(m, cap)
        .map_err(|cap| format!("the model has more than {cap} states: too many to compare"))?;
    let model_texts: Vec<String> = model.iter().map(|s| canon::canonical_state(m, s)).collect();
    let model_set: HashSet<&str> = model_texts.iter().map(String::as_str).collect();
    let tlc_set: HashSet<&str> = tlc.iter().map(|d| d.canonical.as_str()).collect();
    let mut c = Comparison {
        // With a temporal property TLC writes some states twice.
        tlc_states: tlc_set.len(),
        model_states: model.len(),
        only_tlc: 0,
        only_model: 0,
        first_only_tlc: None,
        first_only_model: None,
    };
    let mut counted: HashSet<&str> = HashSet::new();
    for d in &tlc {
        if !model_set.contains(d.canonical.as_str()) && counted.insert(d.canonical.as_str()) {
            c.only_tlc += 1;
            c.first_only_tlc
                .get_or_insert_with(|| (d.canonical.clone(), d.raw.clone()));
        }
    }
    for (s, text) in model.iter().zip(&model_texts) {
        if !tlc_set.contains(text.as_str()) {
            c.only_model += 1;
            c.first_only_model.get_or_insert_with(|| {
                let v = serde_json::to_string_pretty(&view(m, s)).expect("view serializes");
                (text.clone(), v)
            });
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tlc_print_order_does_not_matter() {
        let a =
            canonical_block("/\\ x = [b |-> {<<2, 0>>, <<1, 0>>}, a |-> \"None\"]\n/\\ y = <<>>")
                .expect("parses");
        let b = canonical_block(
            "/\\ y = <<>>\n/\\ x = [a |-> \"None\",\n  b |-> {<<1, 0>>, <<2, 0>>}]",
        )
        .expect("parses");
        assert_eq!(a, b);
        assert_eq!(
            a,
            "/\\ x = [a |-> \"None\", b |-> {<<1, 0>>, <<2, 0>>}] /\\ y = <<>>"
        );
    }

    #[test]
    fn a_bag_reads_the_same_in_any_key_order() {
        let refuse = "[kind |-> \"Refuse\", to |-> 1, epoch |-> 2]";
        let suspend = "[kind |-> \"Suspend\", to |-> 1, from |-> <<2, 0>>, inc |-> 1]";
        let a = canonical_block(&format!("/\\ net = ({refuse} :> 2 @@ {suspend} :> 1)"))
            .expect("parses");
        let b = canonical_block(&format!("/\\ net = ({suspend} :> 1 @@\n  {refuse} :> 2)"))
            .expect("parses");
        assert_eq!(a, b);
        assert!(a.contains(":> 2"), "{a}");
        assert_eq!(
            canonical_block("/\\ net = <<>>").expect("parses"),
            "/\\ net = <<>>",
            "TLC prints the empty bag as the empty sequence"
        );
        assert!(canonical_block(&format!("/\\ net = ({refuse} 2)")).is_err());
    }

    /// A dump written from the model's own canonical texts, `edit` applied.
    fn fake_dump(
        m: &MoveModel,
        edit: impl Fn(usize, String) -> Option<String>,
    ) -> std::path::PathBuf {
        let states = canon::reachable(m, 10_000).expect("small config");
        let mut text = String::new();
        for (k, s) in states.iter().enumerate() {
            let canonical = canon::canonical_state(m, s);
            if let Some(c) = edit(k, canonical) {
                let block = c.replace(" /\\ ", "\n/\\ ");
                text.push_str(&format!("State {}:\n{block}\n\n", k + 1));
            }
        }
        let path = std::env::temp_dir().join(format!(
            "livemove-dump-test-{}-{}.dump",
            std::process::id(),
            text.len()
        ));
        std::fs::write(&path, text).expect("writes");
        path
    }

    #[test]
    fn a_progress_report_and_the_controllers_knowledge_read_as_the_model_prints_them() {
        use livemove_model::net::Msg;
        use livemove_model::state::Known;
        use livemove_model::types::{Acks, Slot};
        let m = MoveModel::new(livemove_model::Cfg::named("disk-lost-replaced-net"));
        let mut s = m.init();
        s.known = Known {
            epoch: 1,
            confirmed: 1,
            acks: Acks::default()
                .set(Slot::new(1, 1), 1)
                .set(Slot::new(2, 0), 2),
        };
        s.net.add(Msg::Progress {
            from: Slot::new(0, 0),
            epoch: 1,
            of: Slot::new(1, 1),
            pos: 1,
            confirmed: 1,
        });
        // The idle state as TLC would print it, with the two variables in
        // TLC's own field and member order.
        let idle = canon::canonical_state(&m, &m.init());
        let tlc = idle
            .replace(
                "known = [acks |-> {}, confirmed |-> 0, epoch |-> 0]",
                "known = [epoch |-> 1, confirmed |-> 1, acks |-> {<<<<3, 0>>, 2>>, <<<<2, 1>>, 1>>}]",
            )
            .replace(
                "net = <<>>",
                "net = ([kind |-> \"Progress\", from |-> <<1, 0>>, epoch |-> 1, of |-> <<2, 1>>, pos |-> 1, confirmed |-> 1] :> 1)",
            )
            .replace(" /\\ ", "\n/\\ ");
        assert_ne!(tlc.replace('\n', " "), idle, "both variables replaced");
        assert_eq!(
            canonical_block(&tlc).expect("parses"),
            canon::canonical_state(&m, &s)
        );
    }

    #[test]
    fn a_client_request_reads_as_the_model_prints_it() {
        use livemove_model::state::{Client, ReqPhase};
        let m = MoveModel::new(livemove_model::Cfg::named("client-handoff"));
        let mut s = m.init();
        s.clients[0] = Client {
            route_node: 1,
            route_epoch: 2,
            phase: ReqPhase::Accepted,
            at: 1,
            epoch: 2,
            asking: true,
            hops: 1,
            msg: 2,
            acked: 0b1,
        };
        // The idle state with the client as TLC would print it, in the
        // spec's field order: nodes 1-based, the acknowledged set.
        let idle = canon::canonical_state(&m, &m.init());
        let start = idle.find("/\\ clients = ").expect("a clients variable");
        let end = idle
            .find(" /\\ confirmed = ")
            .expect("confirmed after clients");
        let tlc = format!(
            "{}/\\ clients = <<[route |-> <<2, 2>>, phase |-> \"Accepted\", at |-> 2, epoch |-> 2, \
             asking |-> TRUE, hops |-> 1, msg |-> 2, acked |-> {{1}}]>>{}",
            &idle[..start],
            &idle[end..]
        )
        .replace(" /\\ ", "\n/\\ ");
        assert_ne!(canon::canonical_state(&m, &s), idle, "the client changed");
        assert_eq!(
            canonical_block(&tlc).expect("parses"),
            canon::canonical_state(&m, &s)
        );
    }

    #[test]
    fn a_settle_a_gap_and_the_settled_set_read_as_the_model_prints_them() {
        use livemove_model::types::Entry;
        let m = MoveModel::new(livemove_model::Cfg::named("settle-retention"));
        let mut s = m.init();
        // A gap (an empty position, only under replay_accepts_gap), then the
        // settle of message 1 at epoch 1: msg = SETTLE_BIT + 1.
        s.nodes[0].log.push(Entry(0));
        s.nodes[0].log.push(Entry::settle(1, 1));
        s.note_settled(1);
        let idle = canon::canonical_state(&m, &m.init());
        assert_eq!(idle.matches("settled = {}").count(), 1, "{idle}");
        let tlc = idle
            .replacen("log |-> <<>>", "log |-> <<<<0, 0>>, <<1, 9>>>>", 1)
            .replace("settled = {}", "settled = {1}")
            .replace(" /\\ ", "\n/\\ ");
        assert_eq!(
            canonical_block(&tlc).expect("parses"),
            canon::canonical_state(&m, &s)
        );
    }

    #[test]
    fn equal_sets_compare_equal() {
        let m = MoveModel::new(livemove_model::Cfg::named("handoff"));
        let path = fake_dump(&m, |_, c| Some(c));
        let c = compare(&m, &path, 10_000).expect("compares");
        let _ = std::fs::remove_file(&path);
        assert!(c.equal(), "{}", c.describe());
        assert_eq!(c.tlc_states, c.model_states);
    }

    #[test]
    fn a_state_one_side_lacks_is_shown_in_both_forms() {
        let m = MoveModel::new(livemove_model::Cfg::named("handoff"));
        // State 5 is missing from TLC's side and a changed copy is in its place.
        let path = fake_dump(&m, |k, c| {
            (k == 5)
                .then(|| c.replace("forked = FALSE", "forked = TRUE"))
                .or(Some(c))
        });
        let c = compare(&m, &path, 10_000).expect("compares");
        let _ = std::fs::remove_file(&path);
        assert!(!c.equal());
        assert_eq!((c.only_tlc, c.only_model), (1, 1));
        let report = c.describe();
        assert!(
            report.contains("first TLC state the model lacks"),
            "{report}"
        );
        assert!(report.contains("forked = TRUE"), "{report}");
        assert!(report.contains("first model state TLC lacks"), "{report}");
        assert!(
            report.contains("\"nodes\""),
            "the model's own view: {report}"
        );
    }

    #[test]
    fn the_initial_state_reads_the_same_from_both_sides() {
        use livemove_model::Cfg;
        let m = MoveModel::new(Cfg::named("handoff"));
        let tlc = "/\\ forked = FALSE\n\
/\\ nodes = <<[log |-> <<>>, gen |-> 0, alive |-> TRUE, seen |-> 1, sealed_at |-> 0, serving |-> [confirmed |-> 0, active |-> TRUE, epoch |-> 1, counted |-> {<<2, 0>>, <<3, 0>>}, w |-> 2, open |-> TRUE, via_handoff |-> FALSE, acks |-> {}, floor |-> <<0, 0, 0>>, muted |-> {}], inc |-> 0, suspended |-> FALSE, wiped_unbound |-> FALSE, base |-> 0], [log |-> <<>>, gen |-> 0, alive |-> TRUE, seen |-> 1, sealed_at |-> 0, serving |-> [confirmed |-> 0, active |-> FALSE, epoch |-> 0, counted |-> {}, w |-> 0, open |-> FALSE, via_handoff |-> FALSE, acks |-> {}, floor |-> <<0, 0, 0>>, muted |-> {}], inc |-> 0, suspended |-> FALSE, wiped_unbound |-> FALSE, base |-> 0], [log |-> <<>>, gen |-> 0, alive |-> TRUE, seen |-> 1, sealed_at |-> 0, serving |-> [confirmed |-> 0, active |-> FALSE, epoch |-> 0, counted |-> {}, w |-> 0, open |-> FALSE, via_handoff |-> FALSE, acks |-> {}, floor |-> <<0, 0, 0>>, muted |-> {}], inc |-> 0, suspended |-> FALSE, wiped_unbound |-> FALSE, base |-> 0]>>\n\
/\\ confirmed = <<>>\n\
/\\ record = [rf |-> 3, epoch |-> 1, owner |-> <<1, 0>>, followers |-> {<<2, 0>>, <<3, 0>>}, learners |-> {}, leaving |-> {}, eligible |-> {<<1, 0>>, <<2, 0>>, <<3, 0>>}, suspended |-> {}, rf_served |-> 3, adopted |-> TRUE, recovery |-> [pending |-> FALSE, sealed |-> {}, installed |-> {}, chosen |-> FALSE, tail |-> <<>>], mv |-> [phase |-> \"None\", target |-> <<0, 0>>, boundary |-> 0, replaces |-> {}], handoff |-> [phase |-> \"None\", from |-> 0, to |-> 0, fin |-> 0, fin_entry |-> <<0, 0>>], start |-> 0, start_entry |-> <<0, 0>>]\n\
/\\ budget = [published |-> 0, crashes |-> 0, suspicions |-> 0, restarts |-> 0, disk_losses |-> 0, learner_adds |-> 0, handoffs |-> 0, cancels |-> 0, retries |-> 0, drops |-> 0, dups |-> 0, truncations |-> 0, publish_retries |-> 0, settles |-> 0]\n\
/\\ net = <<>>\n\
/\\ known = [epoch |-> 0, confirmed |-> 0, acks |-> {}]\n\
/\\ clients = <<[route |-> <<0, 0>>, phase |-> \"Idle\", at |-> 0, epoch |-> 0, asking |-> FALSE, hops |-> 0, msg |-> 0, acked |-> {}]>>\n\
/\\ settled = {}";
        assert_eq!(
            canonical_block(tlc).expect("parses"),
            canon::canonical_state(&m, &m.init())
        );
    }
}
