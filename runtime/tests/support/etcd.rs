//! A private etcd server for one test: `etcd` from Debian's `etcd-server`,
//! on free 127.0.0.1 ports of its own with a temporary data directory,
//! killed when dropped.
//!
//! Without the binary the etcd tests are skipped with a message, unless
//! `LIVEMOVE_REQUIRE_ETCD=1` (set by `.ci/run`, which installs it): then a
//! missing binary fails them.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long etcd may take to answer its health check after starting.
const HEALTH_WAIT_MS_MAX: u64 = 20_000;
/// Pause between two health probes.
const HEALTH_POLL_MS: u64 = 50;

/// A running etcd, killed on drop.
pub struct Etcd {
    child: Option<Child>,
    data: tempfile::TempDir,
    client_port: u16,
    peer_port: u16,
}

/// Whether the `etcd` binary is on PATH.
fn etcd_on_path() -> bool {
    Command::new("etcd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("no free port on 127.0.0.1")
        .port()
}

impl Etcd {
    /// Start etcd, or `None` (with a message) when it is not installed and
    /// not required.
    pub fn start(test: &str) -> Option<Etcd> {
        if !etcd_on_path() {
            assert!(
                std::env::var("LIVEMOVE_REQUIRE_ETCD").as_deref() != Ok("1"),
                "LIVEMOVE_REQUIRE_ETCD=1 but no etcd on PATH (apt-get install etcd-server)"
            );
            eprintln!("{test}: skipped: no etcd on PATH (apt-get install etcd-server)");
            return None;
        }
        let mut etcd = Etcd {
            child: None,
            data: tempfile::tempdir().expect("temporary directory for etcd"),
            client_port: free_port(),
            peer_port: free_port(),
        };
        etcd.launch();
        Some(etcd)
    }

    /// The client URL.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    /// The client address, for a proxy in front of it.
    pub fn client_addr(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.client_port))
    }

    /// Kill etcd (`SIGKILL`) and start it again on the same data directory
    /// and ports.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    /// Kill etcd (`SIGKILL`) and leave it down until `start_again`.
    pub fn stop(&mut self) {
        self.kill();
    }

    /// Start etcd again after `stop`, on the same data directory and
    /// ports, and wait until it is healthy.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "etcd is running: stop it first");
        self.launch();
    }

    fn launch(&mut self) {
        let client = self.endpoint();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let data: PathBuf = self.data.path().join("member");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data.path().join("etcd.log"))
            .expect("etcd log file");
        let child = Command::new("etcd")
            .args(["--name", "test"])
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("test={peer}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn etcd");
        self.child = Some(child);
        self.wait_healthy();
    }

    fn wait_healthy(&mut self) {
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_millis(500))
            .build();
        let url = format!("{}/health", self.endpoint());
        let start = Instant::now();
        loop {
            if let Ok(r) = agent.get(&url).call() {
                if r.into_string().unwrap_or_default().contains("\"true\"") {
                    return;
                }
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "etcd exited with {status} before it was healthy; log: {}",
                    self.log_tail()
                );
            }
            assert!(
                start.elapsed() < Duration::from_millis(HEALTH_WAIT_MS_MAX),
                "etcd not healthy within {HEALTH_WAIT_MS_MAX} ms; log: {}",
                self.log_tail()
            );
            sleep(Duration::from_millis(HEALTH_POLL_MS));
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.data.path().join("etcd.log")).unwrap_or_default();
        let mut start = log.len().saturating_sub(2_000);
        while !log.is_char_boundary(start) {
            start += 1;
        }
        log[start..].to_string()
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.kill();
    }
}
