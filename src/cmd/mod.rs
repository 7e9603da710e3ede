//! Subcommands. Exit codes: 0 success, 1 a property or check failed, 2 bad usage.

pub mod bench;
pub mod check;
pub mod conform;
pub mod plan;
pub mod tlc;
pub mod trace;
pub mod zoo;

use livemove_model::{Cfg, MoveModel, Mutant};

pub const EXIT_OK: u8 = 0;
pub const EXIT_FAIL: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// Resolve `--config` (a config or a group) and `--mutant`, or print why not.
pub fn resolve(config: &str, mutant: Option<&str>) -> Result<Vec<Cfg>, u8> {
    let m = match mutant.map(str::parse::<Mutant>).transpose() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: --mutant: {e}");
            return Err(EXIT_USAGE);
        }
    };
    match Cfg::resolve(config) {
        Ok(v) => Ok(v.into_iter().map(|c| c.with_mutant(m)).collect()),
        Err(e) => {
            eprintln!("error: --config: {e}");
            Err(EXIT_USAGE)
        }
    }
}

pub fn explore(config: &str, addr: &str, mutant: Option<&str>) -> u8 {
    let cfgs = match resolve(config, mutant) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cfgs.len() != 1 {
        eprintln!("error: --config: `{config}` is a group; explore takes one config");
        return EXIT_USAGE;
    }
    use stateright::Model;
    let m = MoveModel::new(cfgs[0].clone());
    eprintln!(
        "Explorer for `{}` on http://{addr}/ (Ctrl-C to stop)",
        m.cfg.name
    );
    // `serve` runs the web server on its own threads; keep this one alive.
    let _checker = m.checker().serve(addr);
    loop {
        std::thread::park();
    }
}
