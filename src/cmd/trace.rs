//! `livemove trace export` and `livemove trace check`.

use super::{resolve, EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use livemove_model::checker::{self, Options};
use livemove_model::checker::{Path as ModelPath, Status};
use livemove_model::trace::itf::{to_itf, ItfMeta};
use livemove_model::trace::{discoveries, file_name, random_walk, random_walk_path, TraceFile};
use livemove_model::MoveModel;
use std::path::{Path, PathBuf};

/// Which files `trace export` writes for each trace.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The project's own schema (`livemove-trace/1`), which `trace check` reads.
    Json,
    /// The Informal Trace Format (`.itf.json`), for Apalache and Quint tools.
    Itf,
    /// Both, side by side.
    Both,
}

/// Write `path` as an ITF file, or say why not.
pub fn write_itf(
    file: &Path,
    m: &MoveModel,
    path: &ModelPath,
    what: &ItfMeta<'_>,
) -> Result<(), String> {
    let text = serde_json::to_string_pretty(&to_itf(m, path, what)).expect("ITF serializes");
    std::fs::write(file, text + "\n").map_err(|e| format!("{}: cannot write: {e}", file.display()))
}

/// What an exported path is, for its ITF `#meta`.
fn itf_kind(status: Status) -> &'static str {
    match status {
        Status::Violated => "counterexample",
        _ => "example",
    }
}

#[allow(clippy::too_many_arguments)]
pub fn export(
    config: &str,
    out: &Path,
    walks: u32,
    seed: u64,
    steps_max: usize,
    mutant: Option<&str>,
    format: Format,
) -> u8 {
    let cfgs = match resolve(config, mutant) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!(
            "error: --out {}: cannot create directory: {e}",
            out.display()
        );
        return EXIT_USAGE;
    }
    let mut written = 0usize;
    for cfg in cfgs {
        let m = MoveModel::new(cfg);
        let report = checker::check(&m, Options::default());
        if format != Format::Itf {
            let mut files = discoveries(&m, &report);
            for k in 0..walks {
                files.push(random_walk(&m, seed.wrapping_add(k as u64), steps_max));
            }
            for t in files {
                let path = out.join(file_name(&t));
                let text = serde_json::to_string_pretty(&t).expect("trace serializes");
                if let Err(e) = std::fs::write(&path, text + "\n") {
                    eprintln!("error: {}: cannot write: {e}", path.display());
                    return EXIT_FAIL;
                }
                written += 1;
            }
        }
        if format != Format::Json {
            // The same paths and the same names, with `.itf.json`.
            let mut itf: Vec<(String, ModelPath, ItfMeta)> = Vec::new();
            // `discoveries` writes one file per result with a path, in order.
            let with_path = report.results.iter().filter(|r| r.path.is_some());
            for (r, t) in with_path.zip(discoveries(&m, &report)) {
                let p = r.path.clone().expect("filtered on a path");
                let what = ItfMeta {
                    kind: itf_kind(r.status),
                    property: Some(r.name),
                    seed: None,
                };
                itf.push((file_name(&t), p, what));
            }
            for k in 0..walks {
                let s = seed.wrapping_add(k as u64);
                let t = random_walk(&m, s, steps_max);
                itf.push((
                    file_name(&t),
                    random_walk_path(&m, s, steps_max),
                    ItfMeta {
                        kind: "walk",
                        property: None,
                        seed: Some(s),
                    },
                ));
            }
            for (name, p, what) in itf {
                let file = out.join(name.trim_end_matches(".json").to_string() + ".itf.json");
                if let Err(e) = write_itf(&file, &m, &p, &what) {
                    eprintln!("error: {e}");
                    return EXIT_FAIL;
                }
                written += 1;
            }
        }
    }
    println!("wrote {written} trace files to {}", out.display());
    EXIT_OK
}

/// Replay each file; a rejection goes to stderr, the summary to stdout.
pub fn check(files: &[PathBuf]) -> u8 {
    let mut bad = 0usize;
    let mut steps = 0usize;
    for f in files {
        match TraceFile::read(f).and_then(|t| t.replay(f)) {
            Ok(n) => {
                steps += n;
                println!("{}: ok, {n} steps allowed by the model", f.display());
            }
            Err(e) => {
                bad += 1;
                eprintln!("error: {e}");
            }
        }
    }
    println!(
        "checked {} trace file(s): {} ok ({steps} steps replayed), {bad} rejected",
        files.len(),
        files.len() - bad
    );
    if bad == 0 {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}
