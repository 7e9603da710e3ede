//! A state drawn as a picture of the partition: the coordination record on
//! top (epoch, owner, the counted, learning, leaving, eligible and suspended
//! sets, the move and handoff phase), one box per node below it (role,
//! liveness, disk, log, fences, what it serves), and the confirmed history.
//!
//! It is drawn from the readable view (`view.rs`), so the picture and the
//! text name the same things in the same words.

use crate::protocol::MoveModel;
use crate::state::State;
use crate::view::view;
use serde_json::Value;
use std::fmt::Write as _;

const NODE_W: usize = 200;
const GAP: usize = 12;
const TOP: usize = 128;

/// Escape text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A JSON value as short text: lists as `[a, b]`, null as `-`.
fn short(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(short).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => o
            .iter()
            .map(|(k, x)| format!("{k} {}", short(x)))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

fn role_colour(role: &str) -> &'static str {
    match role {
        "owner" => "#f6d365",
        "follower" => "#b5e3b5",
        "learner" => "#b9d7f7",
        "leaving" => "#f7c9a8",
        "suspended" => "#e0b8e8",
        _ => "#e8e8e8",
    }
}

fn text(out: &mut String, x: usize, y: usize, size: usize, bold: bool, s: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{x}" y="{y}" font-size="{size}" font-family="monospace"{}>{}</text>"#,
        if bold { r#" font-weight="bold""# } else { "" },
        esc(s)
    );
}

/// The SVG picture of state `s`.
pub fn draw(m: &MoveModel, s: &State) -> String {
    let v = view(m, s);
    let nodes = v["nodes"].as_object().cloned().unwrap_or_default();
    let width = (nodes.len() * (NODE_W + GAP) + GAP).max(640);
    let height = TOP + 250 + 40;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" class="partition">"#
    );
    let _ = writeln!(
        out,
        r##"<rect x="4" y="4" width="{}" height="{}" rx="6" fill="#fafafa" stroke="#555"/>"##,
        width - 8,
        TOP - 16
    );
    let r = &v["record"];
    text(
        &mut out,
        14,
        24,
        14,
        true,
        &format!(
            "record: epoch {}, owner {}, rf {} (served {})",
            short(&r["epoch"]),
            short(&r["owner"]),
            short(&r["rf"]),
            short(&r["rf_served"])
        ),
    );
    let lines = [
        format!(
            "followers {}   learners {}   leaving {}",
            short(&r["followers"]),
            short(&r["learners"]),
            short(&r["leaving"])
        ),
        format!(
            "eligible {}   suspended {}",
            short(&r["eligible"]),
            short(&r["suspended"])
        ),
        format!(
            "move: {}   handoff: {}",
            short(&r["move"]),
            short(&r["handoff"])
        ),
        format!("recovery: {}", short(&r["recovery"])),
    ];
    for (i, l) in lines.iter().enumerate() {
        text(&mut out, 14, 46 + 20 * i, 12, false, l);
    }
    for (i, (name, n)) in nodes.iter().enumerate() {
        let x = GAP + i * (NODE_W + GAP);
        let role = n["role"].as_str().unwrap_or("none");
        let alive = n["alive"].as_bool().unwrap_or(false);
        let _ = writeln!(
            out,
            r##"<g class="node" data-node="{}"><rect x="{x}" y="{TOP}" width="{NODE_W}" height="240" rx="6" fill="{}" stroke="{}" stroke-width="{}"{}/>"##,
            esc(name),
            role_colour(role),
            if alive { "#333" } else { "#c00" },
            if alive { 1 } else { 3 },
            if alive {
                ""
            } else {
                r#" stroke-dasharray="6 4""#
            }
        );
        text(
            &mut out,
            x + 8,
            TOP + 20,
            15,
            true,
            &format!("{name} {role}{}", if alive { "" } else { " (down)" }),
        );
        text(
            &mut out,
            x + 8,
            TOP + 40,
            12,
            false,
            &format!("disk {}", short(&n["disk"])),
        );
        text(
            &mut out,
            x + 8,
            TOP + 58,
            12,
            false,
            &format!(
                "seen e{}  sealed at {}",
                short(&n["seen_epoch"]),
                short(&n["sealed_at"])
            ),
        );
        text(&mut out, x + 8, TOP + 78, 12, true, "log");
        let log: Vec<String> = n["log"]
            .as_array()
            .map(|a| a.iter().map(short).collect())
            .unwrap_or_default();
        for (k, e) in log.iter().enumerate() {
            let (col, row) = (k % 3, k / 3);
            let (ex, ey) = (x + 8 + col * 62, TOP + 86 + row * 24);
            let _ = writeln!(
                out,
                r##"<rect x="{ex}" y="{ey}" width="58" height="20" rx="3" fill="#fff" stroke="#777"/>"##
            );
            text(&mut out, ex + 5, ey + 14, 12, false, e);
        }
        let sv = &n["serving"];
        let serving = if sv.is_null() {
            "not serving".to_string()
        } else {
            format!(
                "serves e{} w{} confirmed {}{}",
                short(&sv["epoch"]),
                short(&sv["w"]),
                short(&sv["confirmed"]),
                if sv["open"].as_bool() == Some(false) {
                    " closed"
                } else {
                    ""
                }
            )
        };
        text(&mut out, x + 8, TOP + 200, 11, false, &serving);
        if !sv.is_null() {
            text(
                &mut out,
                x + 8,
                TOP + 218,
                11,
                false,
                &format!("counts {}", short(&sv["counted"])),
            );
        }
        out.push_str("</g>\n");
    }
    text(
        &mut out,
        14,
        TOP + 270,
        13,
        true,
        &format!(
            "confirmed {}{}",
            short(&v["confirmed"]),
            if v["forked"].as_bool() == Some(true) {
                "  FORKED"
            } else {
                ""
            }
        ),
    );
    out.push_str("</svg>\n");
    out
}
