//! `livemove trace export` and `livemove trace check`.

use super::{resolve, EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use livemove_model::checker::{self, Options};
use livemove_model::trace::{discoveries, file_name, random_walk, TraceFile};
use livemove_model::MoveModel;
use std::path::{Path, PathBuf};

pub fn export(
    config: &str,
    out: &Path,
    walks: u32,
    seed: u64,
    steps_max: usize,
    mutant: Option<&str>,
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
