//! `livemove trace validate FILE...`: each runtime trace (NDJSON) checked
//! against the TLA+ spec with TLC, through tla/TraceLiveMove.tla. A run TLC
//! explains prints `valid: N events`; one it cannot prints the first event
//! no spec step explains (its line and text), the action that event names
//! and the guards of that action that fail.

mod events;

use crate::cmd::tlc::tool::{Request, Tlc};
use clap::Args as ClapArgs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(ClapArgs)]
pub struct Args {
    /// Trace files written by `livemove sim --trace-dir` or a TCP node.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The run's nodes (default: the highest node the trace names).
    #[arg(long)]
    pub nodes: Option<u64>,
    /// The run's replication factor (default: every node holds a copy).
    #[arg(long)]
    pub rf: Option<u64>,
    /// The folder holding LiveMove.tla, Network.tla and TraceLiveMove.tla.
    #[arg(long, default_value = "tla")]
    pub tla_dir: PathBuf,
    /// Read node A as node B (`--rename n3=n1`, repeated; together a
    /// permutation): for a trace whose first owner and followers are not
    /// n1, n2, ..., as the spec's initial state has them.
    #[arg(long, value_parser = parse_rename)]
    pub rename: Vec<(u64, u64)>,
    /// Keep TLC's folder (the generated TraceData.tla, TLC's output in
    /// tlc.out) and print where it is.
    #[arg(long)]
    pub keep: bool,
}

/// What TLC said of one trace.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Valid {
        events: usize,
    },
    /// The first event (1-based position) no step explains, with the failing guards.
    Unexplained {
        position: usize,
        reasons: Vec<String>,
    },
}

pub fn run(args: Args) -> ExitCode {
    let tlc = match Tlc::find() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let (mut valid, mut invalid, mut total_events, mut total_secs) = (0, 0, 0usize, 0.0);
    for f in &args.files {
        let start = Instant::now();
        match validate(&tlc, f, &args) {
            Ok((trace, Verdict::Valid { events })) => {
                let secs = start.elapsed().as_secs_f64();
                println!(
                    "{}: valid: {events} events ({secs:.1} s, {:.0} events/s)",
                    f.display(),
                    events as f64 / secs
                );
                let _ = trace;
                valid += 1;
                total_events += events;
                total_secs += secs;
            }
            Ok((trace, Verdict::Unexplained { position, reasons })) => {
                let e = &trace.events[position - 1];
                println!(
                    "{}: invalid: event {position} of {} (line {}) is explained by no step of the spec:\n  {}",
                    f.display(),
                    trace.events.len(),
                    e.line,
                    e.text
                );
                println!("  candidate: {}, disabled because:", e.action);
                for r in &reasons {
                    println!("    - {r}");
                }
                if let Some(hint) = start_hint(&args, trace.max_node) {
                    println!("  {hint}");
                }
                invalid += 1;
            }
            Err(e) => {
                eprintln!("{e}");
                invalid += 1;
            }
        }
    }
    println!(
        "validated {} trace file(s): {valid} valid ({total_events} events, {:.0} events/s), {invalid} not",
        args.files.len(),
        if total_secs > 0.0 { total_events as f64 / total_secs } else { 0.0 }
    );
    if invalid == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What the run's start was taken to be, when the command line left it to
/// the defaults: an unexplained event is then often a run that started
/// with fewer copies than nodes (a simulator run with `--nodes 4` holds 3).
fn start_hint(args: &Args, max_node: u64) -> Option<String> {
    if args.nodes.is_some() || args.rf.is_some() {
        return None;
    }
    Some(format!(
        "(the run was taken to start with {max_node} nodes, every one a copy: the highest node \
         the trace names, and rf the same; a run that started with fewer copies, such as \
         `livemove sim --nodes 4` at rf 3, needs `--nodes` and `--rf`)"
    ))
}

/// Validate one file with TLC.
pub fn validate(tlc: &Tlc, file: &Path, args: &Args) -> Result<(events::Trace, Verdict), String> {
    let rename = renaming(&args.rename).map_err(|e| format!("--rename: {e}"))?;
    let trace = events::read(file, &rename)?;
    let nodes = args.nodes.unwrap_or(trace.max_node).max(trace.max_node);
    let rf = args.rf.unwrap_or(nodes);
    if !(2..=nodes).contains(&rf) {
        return Err(format!("{}: rf {rf} is not in 2..={nodes}", file.display()));
    }
    let dir = scratch_dir()?;
    for m in [
        "LiveMove.tla",
        "Network.tla",
        "TraceLiveMove.tla",
        "TraceLiveMove.cfg",
    ] {
        std::fs::copy(args.tla_dir.join(m), dir.join(m))
            .map_err(|e| format!("copying {}: {e}", args.tla_dir.join(m).display()))?;
    }
    std::fs::write(dir.join("TraceData.tla"), events::module(&trace, nodes, rf))
        .map_err(|e| format!("writing TraceData.tla: {e}"))?;
    let metadir = dir.join("states");
    let out = tlc.run(&Request {
        library: None,
        tla_dir: &dir,
        module: "TraceLiveMove.tla",
        cfg: &dir.join("TraceLiveMove.cfg"),
        workers: 1,
        dump: None,
        metadir: &metadir,
        time_limit: None,
    });
    if args.keep {
        if let Ok(o) = &out {
            let _ = std::fs::write(dir.join("tlc.out"), &o.output);
        }
        eprintln!("{}: TLC's folder kept: {}", file.display(), dir.display());
    } else {
        // Only the folder this call made is removed.
        let _ = std::fs::remove_dir_all(&dir);
    }
    let out = out?;
    if let Some(err) = &out.error {
        return Err(format!(
            "{}: TLC failed: {err}\n{}",
            file.display(),
            tail(&out.output)
        ));
    }
    let verdict = verdict(&out.output, trace.events.len()).ok_or_else(|| {
        format!(
            "{}: TLC printed no verdict (exit {}):\n{}",
            file.display(),
            out.exit,
            tail(&out.output)
        )
    })?;
    Ok((trace, verdict))
}

fn parse_rename(s: &str) -> Result<(u64, u64), String> {
    let node = |x: &str| {
        x.strip_prefix('n')
            .and_then(|d| d.parse::<u64>().ok())
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("`{x}` is not a node name like `n2`"))
    };
    let (a, b) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected `n<from>=n<to>`"))?;
    Ok((node(a)?, node(b)?))
}

/// The renaming as a map; it must be a permutation of the nodes it names.
pub fn renaming(pairs: &[(u64, u64)]) -> Result<std::collections::BTreeMap<u64, u64>, String> {
    let mut map = std::collections::BTreeMap::new();
    for &(a, b) in pairs {
        if map.insert(a, b).is_some() {
            return Err(format!("n{a} is renamed twice"));
        }
    }
    let from: std::collections::BTreeSet<u64> = map.keys().copied().collect();
    let to: std::collections::BTreeSet<u64> = map.values().copied().collect();
    if from != to {
        return Err(format!(
            "not a permutation: renames {:?} onto {:?}",
            from, to
        ));
    }
    Ok(map)
}

fn scratch_dir() -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "livemove-validate-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).map_err(|e| format!("creating {}: {e}", d.display()))?;
    Ok(d)
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// Read TraceLiveMove's printed verdict: valid when a state got past the
/// last event; else the largest position any state reached, with the guards
/// printed for it; None when TLC printed neither (it failed before checking).
pub fn verdict(output: &str, events: usize) -> Option<Verdict> {
    // TLC prints `<< "trace-at", 17, {...} >>`, over several lines when long.
    if output.contains("\"trace-explained\",") {
        return Some(Verdict::Valid { events });
    }
    let mut best: Option<(usize, Vec<String>)> = None;
    for (i, _) in output.match_indices("\"trace-at\",") {
        let rest = &output[i + "\"trace-at\",".len()..];
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let Ok(pos) = digits.parse::<usize>() else {
            continue;
        };
        let body = &rest[..tuple_end(rest)];
        let reasons = quoted_strings(body);
        match &mut best {
            Some((p, r)) if *p == pos => {
                for x in reasons {
                    if !r.contains(&x) {
                        r.push(x);
                    }
                }
            }
            Some((p, _)) if *p > pos => {}
            _ => best = Some((pos, reasons)),
        }
    }
    best.map(|(position, reasons)| Verdict::Unexplained { position, reasons })
}

/// Where the tuple TLC printed ends: the first `>>` outside a string (a
/// reason may print a set of instances, `{<<2, 0>>}`, inside its text).
fn tuple_end(s: &str) -> usize {
    let (mut in_string, mut escaped) = (false, false);
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        } else if c == b'>' && b.get(i + 1) == Some(&b'>') {
            return i;
        }
    }
    s.len()
}

fn quoted_strings(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut escaped = false;
    for c in s.chars() {
        match (&mut cur, c) {
            (Some(x), _) if escaped => {
                x.push(c);
                escaped = false;
            }
            (Some(_), '\\') => escaped = true,
            (Some(x), '"') => {
                out.push(std::mem::take(x));
                cur = None;
            }
            (Some(x), _) => x.push(c),
            (None, '"') => cur = Some(String::new()),
            (None, _) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{verdict, Verdict};

    #[test]
    fn the_largest_position_printed_is_the_first_unexplained_event() {
        let out = "<< \"trace-at\", 1, {} >>\n<< \"trace-at\",\n   130,\n   { \"the controller knows n2 through 0\" } >>\n<<\"trace-at\", 233, {\"the message is not in flight\", \"a \\\"quoted\\\" word\"}>>\n<<\"trace-at\", 232, {}>>\n";
        assert_eq!(
            verdict(out, 300),
            Some(Verdict::Unexplained {
                position: 233,
                reasons: vec![
                    "the message is not in flight".into(),
                    "a \"quoted\" word".into()
                ],
            })
        );
    }

    #[test]
    fn a_reason_that_prints_a_tuple_is_read_whole() {
        let out = "<<\"trace-at\", 178, {\"the copies are {<<3, 0>>}; the event unmuted {}\", \"second\"}>>\n";
        assert_eq!(
            verdict(out, 595),
            Some(Verdict::Unexplained {
                position: 178,
                reasons: vec![
                    "the copies are {<<3, 0>>}; the event unmuted {}".into(),
                    "second".into()
                ],
            })
        );
    }

    #[test]
    fn a_state_past_the_end_makes_the_run_valid() {
        let out = "<<\"trace-at\", 5, {}>>\n<< \"trace-explained\", 6 >>\n";
        assert_eq!(verdict(out, 6), Some(Verdict::Valid { events: 6 }));
    }

    #[test]
    fn output_without_a_verdict_is_no_verdict() {
        assert_eq!(verdict("Error: parse error", 6), None);
    }
}
