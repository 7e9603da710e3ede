//! The Explorer in a real browser (headless Chromium): it loads, names the
//! config and mutant, lists every property with its kind, and a violation's
//! link leads to the same shortest counterexample `livemove check` prints,
//! drawn and judged on the state it reaches. A screenshot of that state is
//! saved as `target/explorer/violation.png`.
//!
//! Without Chromium the test is skipped with a note, unless
//! `LIVEMOVE_REQUIRE_BROWSER=1` (set by `.ci/run`, which installs it).

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const CONFIG: &str = "join-and-move";
const MUTANT: &str = "learner_counts";
const PROPERTY: &str = "no confirmed entry is lost";

/// The browser, or `None` (skip) where it is missing and not required.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            let o = Command::new("sh")
                .args(["-c", &format!("command -v {b}")])
                .output()
                .ok()?;
            o.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        });
    if found.is_none() {
        assert!(
            std::env::var("LIVEMOVE_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "LIVEMOVE_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)"
        );
        eprintln!("skipped: no chromium on PATH (apt-get install chromium)");
    }
    found
}

/// A running `livemove explore`, stopped when dropped.
struct Explorer {
    child: Child,
    url: String,
}

impl Drop for Explorer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn explore(config: &str, mutant: &str) -> Explorer {
    let mut child = Command::new(env!("CARGO_BIN_EXE_livemove"))
        .args([
            "explore",
            "--config",
            config,
            "--mutant",
            mutant,
            "--addr",
            "127.0.0.1:0",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("livemove explore starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr piped"))
        .read_line(&mut line)
        .expect("an announcement");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in `{line}`"))
        .trim_end_matches('/')
        .to_string();
    Explorer { child, url }
}

/// What the page's "Check every property" button does: POST /api/check,
/// then wait until the search is done.
fn run_search(url: &str) {
    let host = url.trim_start_matches("http://");
    let request = |method: &str| {
        let mut s = TcpStream::connect(host).expect("connects");
        write!(
            s,
            "{method} /api/check HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).unwrap();
        body
    };
    request("POST");
    for _ in 0..600 {
        if request("GET").contains("\"state\":\"done\"") {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the search did not finish in a minute");
}

fn browser(bin: &Path, profile: &Path, extra: &[&str], url: &str) -> String {
    let o = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The `<tr>` of one property in the page.
fn row<'a>(dom: &'a str, name: &str) -> &'a str {
    let start = dom
        .find(&format!("<tr data-property=\"{name}\">"))
        .unwrap_or_else(|| panic!("no row for `{name}`"));
    let end = dom[start..].find("</tr>").expect("row ends") + start;
    &dom[start..end]
}

/// The text of the first element with `class="<class>"` inside `html`.
fn cell<'a>(html: &'a str, class: &str) -> &'a str {
    let at = html
        .find(&format!("class=\"{class}"))
        .unwrap_or_else(|| panic!("no `{class}` in {html}"));
    let open = html[at..].find('>').unwrap() + at + 1;
    let close = html[open..].find("</td>").unwrap() + open;
    &html[open..close]
}

fn checked() -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_livemove"))
        .args(["check", "--config", CONFIG, "--mutant", MUTANT, "--json"])
        .output()
        .expect("check runs");
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn the_explorer_leads_to_the_shortest_counterexample_check_prints() {
    let Some(bin) = chromium() else {
        return;
    };
    let report = checked();
    let props = report["properties"].as_array().unwrap();
    let ce = props
        .iter()
        .find(|p| p["name"] == PROPERTY)
        .expect("the property is checked")["counterexample"]
        .as_array()
        .expect("check finds a counterexample")
        .clone();
    let actions: Vec<String> = ce
        .iter()
        .map(|s| s["action"]["action"].as_str().unwrap().to_string())
        .collect();

    let ex = explore(CONFIG, MUTANT);
    let profile = std::env::temp_dir().join(format!("livemove-chromium-{}", std::process::id()));
    run_search(&ex.url);

    // The first page: the header and every property with its kind and the
    // whole-config result.
    let dom = browser(&bin, &profile, &["--dump-dom"], &format!("{}/", ex.url));
    assert!(
        dom.contains(&format!(
            "livemove Explorer: config {CONFIG} with mutant {MUTANT}"
        )),
        "{dom}"
    );
    for p in props {
        let r = row(&dom, p["name"].as_str().unwrap());
        assert!(
            r.contains(&format!("<td>{}</td>", p["kind"].as_str().unwrap())),
            "{r}"
        );
    }
    assert_eq!(dom.matches("<tr data-property=").count(), props.len());
    let r = row(&dom, PROPERTY);
    assert!(cell(r, "whole").contains("VIOLATED"), "{r}");
    let link = format!("shortest counterexample: {} steps", actions.len());
    assert!(r.contains(&link), "{r}");
    let href_at = r.find("href=\"").expect("a link") + 6;
    let href = &r[href_at..href_at + r[href_at..].find('"').unwrap()];

    // Follow the link: the path is check's counterexample, step for step.
    let dom = browser(
        &bin,
        &profile,
        &["--dump-dom"],
        &format!("{}/{href}", ex.url),
    );
    assert_eq!(
        dom.matches("<li class=\"step\">").count(),
        actions.len(),
        "{dom}"
    );
    let mut at = 0;
    for a in &actions {
        let i = dom[at..]
            .find("<li class=\"step\">")
            .unwrap_or_else(|| panic!("no step for {a}"))
            + at;
        let link_at = dom[i..].find("<a href=").unwrap() + i;
        let text_at = dom[link_at..].find("\">").unwrap() + link_at + 2;
        assert!(
            dom[text_at..].starts_with(a.as_str()),
            "step {a}: {}",
            &dom[i..i + 120]
        );
        at = text_at;
    }
    // Each step's changed fields, as check prints them.
    for step in &ce {
        for (path, c) in step["changed"].as_object().unwrap() {
            if path == "nodes[n4].role" {
                assert_eq!(c["before"], "none");
                assert!(dom.contains("nodes[n4].role: none -&gt; learner"), "{dom}");
            }
        }
    }
    let here = cell(row(&dom, PROPERTY), "here");
    assert_eq!(here, "VIOLATED", "{}", row(&dom, PROPERTY));
    // The picture: one box per node, named, with its role; logs as m1@e1.
    assert!(dom.contains("<svg"), "{dom}");
    for n in ["n1 owner", "n2 follower", "n3 follower", "n4 learner"] {
        assert!(dom.contains(n), "{n}: {dom}");
    }
    assert_eq!(dom.matches("class=\"node\"").count(), 4);
    assert!(dom.contains("m1@e1"), "{dom}");
    assert!(!dom.contains("Slots(") && !dom.contains("Acks("), "{dom}");

    // One step earlier the property still holds in the state shown.
    let parent = &href[..href.rfind('/').unwrap()];
    let dom = browser(
        &bin,
        &profile,
        &["--dump-dom"],
        &format!("{}/{parent}", ex.url),
    );
    assert_eq!(cell(row(&dom, PROPERTY), "here"), "holds");

    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/explorer/violation.png");
    std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&shot);
    browser(
        &bin,
        &profile,
        &[
            "--window-size=1400,1300",
            &format!("--screenshot={}", shot.display()),
        ],
        &format!("{}/{href}", ex.url),
    );
    assert!(
        std::fs::metadata(&shot)
            .map(|m| m.len() > 10_000)
            .unwrap_or(false),
        "no screenshot at {}",
        shot.display()
    );
    let _ = std::fs::remove_dir_all(&profile);
}

/// A wedge shown as what it is: under `no_swap_back` the shortest
/// counterexample of "a started move completes or is cancelled" ends in a
/// terminal state, and the page says what that state holds pending.
#[test]
fn the_explorer_shows_what_a_wedge_holds() {
    let Some(bin) = chromium() else {
        return;
    };
    let property = "a started move completes or is cancelled";
    let ex = explore("target-lost-after-swap", "no_swap_back");
    let profile =
        std::env::temp_dir().join(format!("livemove-chromium-wedge-{}", std::process::id()));
    run_search(&ex.url);
    let dom = browser(&bin, &profile, &["--dump-dom"], &format!("{}/", ex.url));
    let r = row(&dom, property);
    assert!(cell(r, "whole").contains("VIOLATED"), "{r}");
    assert!(r.contains("shortest counterexample: 11 steps"), "{r}");
    let href_at = r.find("href=\"").expect("a link") + 6;
    let href = &r[href_at..href_at + r[href_at..].find('"').unwrap()];
    let dom = browser(
        &bin,
        &profile,
        &["--dump-dom"],
        &format!("{}/{href}", ex.url),
    );
    assert_eq!(cell(row(&dom, property), "here"), "VIOLATED");
    assert!(dom.contains("none: this state is terminal"), "{dom}");
    assert!(
        dom.contains("holds: move swapped (target n4, leaving n2, B 1)"),
        "{dom}"
    );
    assert!(
        dom.contains("holds: copies down: n4 down (tolerated: 1)"),
        "{dom}"
    );
    let _ = std::fs::remove_dir_all(&profile);
}
