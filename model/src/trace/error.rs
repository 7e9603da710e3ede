//! Why a trace file was rejected, and the cutting of quoted values to a
//! readable length.

use super::SCHEMA;
use super::SIZE_MAX;
use crate::view::Change;
use serde_json::Value;
use std::path::PathBuf;

/// Why a trace file was rejected. Every message names the file, and the
/// step or field; values quoted from the file are cut to [`QUOTE_MAX`]
/// characters.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    /// The file is larger than any trace this version writes.
    #[error("{file}: {bytes} bytes: larger than the {SIZE_MAX} bytes a trace file may have")]
    TooLarge { file: PathBuf, bytes: u64 },
    /// The file starts with a UTF-8 byte-order mark.
    #[error("{file}: byte 0: starts with a UTF-8 byte-order mark (EF BB BF); trace files are UTF-8 without one")]
    Bom { file: PathBuf },
    /// The file is not UTF-8.
    #[error(
        "{file}: byte {offset}: not valid UTF-8 (byte 0x{byte:02x}); trace files are UTF-8 JSON"
    )]
    NotUtf8 {
        file: PathBuf,
        offset: usize,
        byte: u8,
    },
    /// The JSON is malformed, or a field is missing, unknown or of the wrong type.
    #[error("{file}: malformed trace{}: {msg}", at_path(.path))]
    Parse {
        file: PathBuf,
        /// Where in the document, e.g. `steps[3].action.target`.
        path: String,
        msg: String,
    },
    /// The schema tag is not one this version reads.
    #[error("{file}: field `schema`: expected \"{SCHEMA}\", found \"{found}\"")]
    Schema { file: PathBuf, found: String },
    /// A field has a value this version does not accept.
    #[error("{file}: field `{field}`: {msg}")]
    Field {
        file: PathBuf,
        field: &'static str,
        msg: String,
    },
    /// The config named in the file does not exist.
    #[error("{file}: field `config`: {msg}")]
    Config { file: PathBuf, msg: String },
    /// The config exists but its parameters changed since the trace was written.
    #[error("{file}: field `params`: the trace was written for different parameters of `{config}` (stale trace): {changes}")]
    StaleParams {
        file: PathBuf,
        config: String,
        changes: String,
    },
    /// A recorded state or the parameters have a field the model's view
    /// lacks, or lack one it has.
    #[error("{file}: {at}: {msg}")]
    Shape {
        file: PathBuf,
        at: String,
        msg: String,
    },
    /// The initial state differs from the model's.
    #[error("{file}: field `init` differs from the model's initial state: {changes}")]
    Init { file: PathBuf, changes: String },
    /// A step names a node the config does not have.
    #[error("{file}: steps[{step}].action: `{action}` names a node outside config `{config}` (nodes n1..n{nodes})")]
    NodeOutside {
        file: PathBuf,
        step: usize,
        action: String,
        config: String,
        nodes: u8,
    },
    /// A step's action is not enabled in the model.
    #[error("{file}: steps[{step}]: action `{action}` is not allowed by the model: guard `{guard}` fails")]
    Disabled {
        file: PathBuf,
        step: usize,
        action: String,
        guard: String,
    },
    /// A step lands on a different state than recorded.
    #[error("{file}: steps[{step}].state differs after `{action}`: {changes}")]
    Mismatch {
        file: PathBuf,
        step: usize,
        action: String,
        changes: String,
    },
    /// A discovery trace does not end where its property is witnessed.
    #[error(
        "{file}: field `property`: the trace ends after {steps} steps without {what} `{property}`"
    )]
    NotWitnessed {
        file: PathBuf,
        steps: usize,
        what: &'static str,
        property: String,
    },
}

fn at_path(p: &str) -> String {
    if p.is_empty() || p == "." {
        String::new()
    } else {
        format!(" at `{p}`")
    }
}

/// The longest quotation of a value from a file in an error message.
pub const QUOTE_MAX: usize = 80;

/// `s` cut to `max` characters, saying how much was left out.
pub fn cut(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max * 2 / 3).collect();
    let tail: String = s.chars().skip(n - max / 3).collect();
    format!(
        "{head}…[{} characters left out]…{tail}",
        n - head.chars().count() - tail.chars().count()
    )
}

/// A parser message with every quoted run (between backticks or double
/// quotes) cut to [`QUOTE_MAX`], and the whole cut to a few lines.
pub(super) fn cut_message(msg: &str) -> String {
    let mut out = String::new();
    let mut rest = msg;
    while let Some(i) = rest.find(['`', '"']) {
        let q = rest[i..].chars().next().expect("found a quote");
        out.push_str(&rest[..=i]);
        let after = &rest[i + 1..];
        match after.find(q) {
            Some(j) => {
                out.push_str(&cut(&after[..j], QUOTE_MAX));
                out.push(q);
                rest = &after[j + 1..];
            }
            None => {
                out.push_str(&cut(after, QUOTE_MAX));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    cut(&out, 12 * QUOTE_MAX)
}

pub(super) fn changes_text(cs: &[Change]) -> String {
    let shown: Vec<String> = cs
        .iter()
        .take(8)
        .map(|c| cut(&c.to_string(), 2 * QUOTE_MAX))
        .collect();
    let more = cs.len().saturating_sub(shown.len());
    let mut t = shown.join("; ");
    if more > 0 {
        t.push_str(&format!("; and {more} more changed fields"));
    }
    t
}

/// The first key that one object tree has and the other lacks, as a
/// message (`recorded` is the file's, `model` the model's view).
pub(super) fn shape(recorded: &Value, model: &Value, at: &str) -> Option<String> {
    let (Value::Object(a), Value::Object(b)) = (recorded, model) else {
        return None;
    };
    if let Some(k) = a.keys().find(|k| !b.contains_key(*k)) {
        return Some(format!("unknown field `{at}.{}`", cut(k, QUOTE_MAX)));
    }
    if let Some(k) = b.keys().find(|k| !a.contains_key(*k)) {
        return Some(format!("missing field `{at}.{k}`"));
    }
    a.iter()
        .find_map(|(k, x)| shape(x, &b[k], &format!("{at}.{k}")))
}
