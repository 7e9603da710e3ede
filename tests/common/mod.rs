//! Helpers shared by the command-line tests: run the `livemove` binary,
//! read its output, make a scratch directory. Each test binary uses a
//! subset of them, hence the allowance for unused ones.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Run `livemove` with `args` and wait for it.
pub fn livemove(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_livemove"))
        .args(args)
        .output()
        .expect("runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch directory named after the test binary's `kind` and the
/// test's `name`, unique per process.
pub fn tmp(kind: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("livemove-{kind}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// `n` loopback addresses with ports that were free a moment ago.
pub fn free_ports(n: usize) -> Vec<std::net::SocketAddr> {
    let ls: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    ls.iter().map(|l| l.local_addr().unwrap()).collect()
}
