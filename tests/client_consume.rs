//! `livemove client publish` and `livemove client consume` against three
//! `livemove node` processes on 127.0.0.1 ports of their own: both are
//! routed (note 2's MOVED, `tcp::routed`), so any node's address will do;
//! a consume prints each settle once it is confirmed, and fails, naming
//! why, when nothing is left to settle; after a handoff the old owner's
//! address still reaches the new owner. A publish whose answers are lost
//! is retried up to `--attempts` and fails naming what the last attempt
//! got; sent again with `--retry`, it is answered from the owner's
//! history.

mod common;
use common::{free_ports, livemove, stderr, stdout};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a condition may take on loopback before the test gives up.
const WAIT_MAX: Duration = Duration::from_secs(30);

/// Node processes, killed when the test ends, passed or not.
struct Nodes {
    root: PathBuf,
    addrs: Vec<SocketAddr>,
    children: Vec<Child>,
}

impl Nodes {
    fn start(root: PathBuf) -> Nodes {
        Nodes::start_with(root, false)
    }

    /// Three nodes, taking fault requests on their ports when
    /// `allow_faults`.
    fn start_with(root: PathBuf, allow_faults: bool) -> Nodes {
        let records = root.join("records").display().to_string();
        let o = livemove(&["client", "init", "--rf", "3", "--store", &records]);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut nodes = Nodes {
            root,
            addrs: free_ports(3),
            children: Vec::new(),
        };
        for n in 1..=3 {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_livemove"));
            cmd.args(["node", "--id", &n.to_string()])
                .arg("--data")
                .arg(nodes.root.join(format!("n{n}")))
                .arg("--listen")
                .arg(nodes.addr(n))
                .args(["--store", &records]);
            if allow_faults {
                cmd.arg("--allow-faults");
            }
            for (i, a) in nodes.addrs.iter().enumerate() {
                if i + 1 != n {
                    cmd.arg("--peer").arg(format!("n{}={a}", i + 1));
                }
            }
            let child = cmd
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("the node starts");
            nodes.children.push(child);
        }
        nodes
    }

    fn addr(&self, n: usize) -> String {
        self.addrs[n - 1].to_string()
    }

    fn status(&self, n: usize) -> Option<Value> {
        let o = livemove(&["client", "status", "--node", &self.addr(n)]);
        o.status
            .success()
            .then(|| serde_json::from_str(stdout(&o).trim()).expect("one JSON object"))
    }

    fn wait_for(&self, n: usize, what: &str, ok: impl Fn(&Value) -> bool) {
        let start = Instant::now();
        loop {
            let s = self.status(n);
            if s.as_ref().is_some_and(&ok) {
                return;
            }
            assert!(
                start.elapsed() < WAIT_MAX,
                "waited for {what}; last status {s:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn client_publish_and_consume_are_routed_from_any_node_and_a_consume_prints_confirmed_settles() {
    let nodes = Nodes::start(common::tmp("client", "consume"));
    for n in 1..=3 {
        nodes.wait_for(n, &format!("n{n} up"), |_| true);
    }
    nodes.wait_for(1, "n1 serves", |s| s["admitting"] == true);

    // Published through n3, which does not own p0: its MOVED names n1.
    for k in 1..=4u64 {
        let o = livemove(&[
            "client",
            "publish",
            "--node",
            &nodes.addr(3),
            "--key",
            &k.to_string(),
        ]);
        assert!(o.status.success(), "publish {k}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), k.to_string(), "one position per message");
    }
    let o = livemove(&[
        "client",
        "publish",
        "--node",
        &nodes.addr(2),
        "--key",
        "5",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (&v["pos"], &v["node"], &v["epoch"], &v["answer"]),
        (&5.into(), &"n1".into(), &1.into(), &"appended".into()),
        "{v}"
    );
    let attempts = v["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{v}");
    assert_eq!(
        (&attempts[0]["outcome"], &attempts[0]["retry"]),
        (&"confirmed".into(), &false.into()),
        "{v}"
    );
    let hops = attempts[0]["hops"].as_array().unwrap();
    assert_eq!(hops.len(), 1, "{v}");
    assert_eq!(hops[0]["kind"], "Learned", "{v}");
    assert_eq!(hops[0]["at"], nodes.addr(2), "{v}");
    assert_eq!(hops[0]["to"], "n1", "{v}");
    nodes.wait_for(1, "5 confirmed", |s| s["confirmed"] == 5);

    // Consumed through n2: the two oldest messages, each printed once the
    // owner confirmed its settle.
    let o = livemove(&[
        "client",
        "consume",
        "--node",
        &nodes.addr(2),
        "--count",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let settled = json_lines(&stdout(&o));
    let got: Vec<(u64, u64)> = settled
        .iter()
        .map(|s| (s["key"].as_u64().unwrap(), s["pos"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, vec![(1, 6), (2, 7)], "{settled:?}");
    assert!(settled
        .iter()
        .all(|s| s["node"] == "n1" && s["partition"] == 0));
    let st = nodes.status(1).unwrap();
    assert!(st["confirmed"].as_u64().unwrap() >= 7, "{st}");

    // Three left to settle; asked for five, it settles three and fails on
    // the fourth, saying why.
    let o = livemove(&[
        "client",
        "consume",
        "--node",
        &nodes.addr(1),
        "--nodes",
        &format!("{},{}", nodes.addr(2), nodes.addr(3)),
        "--count",
        "5",
    ]);
    assert!(!o.status.success());
    let keys: Vec<u64> = json_lines(&stdout(&o))
        .iter()
        .map(|s| s["key"].as_u64().unwrap())
        .collect();
    assert_eq!(keys, vec![3, 4, 5]);
    let err = stderr(&o);
    assert!(err.contains("after 3 of 5 settles"), "{err}");
    assert!(err.contains("no delivered message to settle"), "{err}");
    nodes.wait_for(1, "10 confirmed", |s| s["confirmed"] == 10);

    // Hand p0 over to n2: the old owner's address still reaches it.
    let o = livemove(&[
        "client",
        "hand-off",
        "--node",
        &nodes.addr(1),
        "--partition",
        "0",
        "--to",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    nodes.wait_for(2, "n2 serves at epoch 2", |s| {
        s["serving"] == 2 && s["admitting"] == true
    });
    // Within its hop limit a request may still meet the handoff's
    // try-agains; the client then sends it again as a retry.
    let o = livemove(&[
        "client",
        "publish",
        "--node",
        &nodes.addr(1),
        "--key",
        "6",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = serde_json::from_str::<Value>(stdout(&o).trim()).unwrap();
    assert_eq!(
        (&v["node"], &v["epoch"], &v["pos"]),
        (&"n2".into(), &2.into(), &11.into()),
        "{v}"
    );
    let hops: Vec<&Value> = v["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["hops"].as_array().unwrap())
        .collect();
    let last = (*hops.last().unwrap()).clone();
    assert_eq!(
        (&last["to"], &last["epoch"]),
        (&"n2".into(), &2.into()),
        "{v}"
    );
    let o = livemove(&["client", "consume", "--node", &nodes.addr(3)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = &json_lines(&stdout(&o))[0];
    assert_eq!(
        (&s["key"], &s["node"], &s["pos"]),
        (&6.into(), &"n2".into(), &12.into()),
        "{s}"
    );
}

/// Note 2's producer on the command line. n1's client link is cut: it
/// appends message 2 and the answer is lost, and so is the answer to the
/// retry (held: n1's history has it); after two attempts the publish
/// fails, exit 1, its JSON and its error naming what each attempt got.
/// With the link healed, the same key sent again with `--retry` is
/// answered from n1's history at the same position, nothing appended,
/// once n1 confirmed it.
#[test]
fn a_publish_whose_answers_are_lost_fails_after_its_attempts_and_a_retry_is_answered_from_the_history(
) {
    let nodes = Nodes::start_with(common::tmp("client", "retry"), true);
    for n in 1..=3 {
        nodes.wait_for(n, &format!("n{n} up"), |_| true);
    }
    nodes.wait_for(1, "n1 serves", |s| s["admitting"] == true);
    let (n1, others) = (
        nodes.addr(1),
        format!("{},{}", nodes.addr(2), nodes.addr(3)),
    );
    let publish = |key: &str, extra: &[&str]| {
        let mut args = vec![
            "client", "publish", "--node", &n1, "--nodes", &others, "--key", key, "--json",
        ];
        args.extend_from_slice(extra);
        livemove(&args)
    };
    let o = publish("1", &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    let cut = ["client", "fault", "--node", &n1, "--cut", "clients"];
    let o = livemove(&cut);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = publish("2", &["--attempts", "2", "--attempt-timeout-ms", "500"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("p0: message 2: not confirmed after 2 attempt(s) (last: no answer: ")
            && err.contains("closed without an answer"),
        "{err}"
    );
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let attempts = v["attempts"].as_array().unwrap();
    let got: Vec<(&Value, &Value)> = attempts
        .iter()
        .map(|a| (&a["retry"], &a["outcome"]))
        .collect();
    let no_answer = Value::from("no_answer");
    assert_eq!(
        got,
        vec![(&false.into(), &no_answer), (&true.into(), &no_answer)],
        "{v}"
    );
    nodes.wait_for(1, "m2 appended and confirmed on n1", |s| {
        s["confirmed"] == 2
    });

    let heal = ["client", "fault", "--node", &n1, "--heal", "clients"];
    assert!(livemove(&heal).status.success());
    let o = publish("2", &["--retry"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (
            &v["pos"],
            &v["node"],
            &v["epoch"],
            &v["answer"],
            &v["entry_epoch"]
        ),
        (
            &2.into(),
            &"n1".into(),
            &1.into(),
            &"held".into(),
            &1.into()
        ),
        "{v}"
    );
    let attempts = v["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{v}");
    assert_eq!(attempts[0]["retry"], true, "{v}");
    assert_eq!(attempts[0]["outcome"], "confirmed", "{v}");
    let st = nodes.status(1).unwrap();
    assert_eq!(st["log_len"], 2, "nothing appended: {st}");
}
