//! The processes of one run: `livemove node` processes n1..nN and a
//! `livemove controller` (process 0), each started on its own data
//! directory, killed with SIGKILL, started again on the same directory;
//! every process still running is killed when the run ends, passed or not.

use livemove_impl::store::Record;
use livemove_runtime::partition::{Partition, Records};
use livemove_runtime::tcp::{client, Status};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The controller, among process numbers.
pub const CONTROLLER: u8 = 0;
/// The controller's lease on a node.
const LEASE_MS: &str = "1000";

/// A process's name: `n2`, `controller`.
pub fn name(n: u8) -> String {
    if n == CONTROLLER {
        "controller".into()
    } else {
        format!("n{n}")
    }
}

/// A process that exited without being killed by the run.
pub struct Exit {
    pub status: ExitStatus,
    /// Its stderr.
    pub log: String,
}

pub struct Cluster {
    pub root: PathBuf,
    /// `--store DIR` or `--etcd URL --etcd-prefix P`, and `--partitions N`.
    store: Vec<String>,
    pub records: Records,
    addrs: Vec<SocketAddr>,
    pub partitions: Vec<Partition>,
    procs: BTreeMap<u8, Child>,
    /// The stderr file of each process's latest start.
    logs: BTreeMap<u8, PathBuf>,
    starts: usize,
    /// SIGKILLs the run sent, per process.
    pub kills: BTreeMap<u8, usize>,
    /// Processes started with a crash point, and its value.
    armed: BTreeMap<u8, String>,
    /// Whether a process that died at its crash point is started again at
    /// once (unarmed) instead of failing the run.
    pub restart_crashed: bool,
    /// Deaths at a crash point inside a batch, per process.
    pub batch_kills: BTreeMap<u8, usize>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in self.procs.values_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Cluster {
    /// The epoch-1 records of `partitions` partitions (rf 3 over `nodes`
    /// nodes, `livemove client init`) and nothing running. `store` names
    /// the records as `livemove` takes them.
    pub fn new(
        root: PathBuf,
        store: Vec<String>,
        records: Records,
        nodes: u8,
        partitions: u32,
    ) -> Cluster {
        std::fs::create_dir_all(root.join("logs")).unwrap();
        let mut store = store;
        store.extend(["--partitions".to_string(), partitions.to_string()]);
        let nodes_arg = nodes.to_string();
        let mut init = vec!["client", "init", "--rf", "3", "--nodes", &nodes_arg];
        init.extend(store.iter().map(String::as_str));
        let o = crate::common::livemove(&init);
        assert!(o.status.success(), "{}", crate::common::stderr(&o));
        Cluster {
            root,
            store,
            records,
            addrs: crate::common::free_ports(usize::from(nodes)),
            partitions: (0..partitions).map(Partition).collect(),
            procs: BTreeMap::new(),
            logs: BTreeMap::new(),
            starts: 0,
            kills: BTreeMap::new(),
            armed: BTreeMap::new(),
            restart_crashed: false,
            batch_kills: BTreeMap::new(),
        }
    }

    /// The nodes, n1 first.
    pub fn nodes(&self) -> Vec<u8> {
        (1..=self.addrs.len() as u8).collect()
    }

    pub fn addr(&self, n: u8) -> SocketAddr {
        self.addrs[usize::from(n) - 1]
    }

    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.addrs.clone()
    }

    /// Node `n`'s data directory.
    pub fn data(&self, n: u8) -> PathBuf {
        self.root.join(name(n))
    }

    pub fn running(&self, n: u8) -> bool {
        self.procs.contains_key(&n)
    }

    /// Start process `n` (a node on its data directory, or the
    /// controller), with `--crash-at` when `crash_at` is given.
    pub fn start(&mut self, n: u8, crash_at: Option<&str>) {
        self.starts += 1;
        let log = self
            .root
            .join("logs")
            .join(format!("{}-{}.log", name(n), self.starts));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_livemove"));
        if n == CONTROLLER {
            cmd.arg("controller")
                .args(&self.store)
                .args(["--lease-ms", LEASE_MS]);
        } else {
            cmd.args(["node", "--id", &n.to_string()])
                .arg("--data")
                .arg(self.data(n))
                .arg("--listen")
                .arg(self.addr(n).to_string())
                .args(&self.store);
        }
        cmd.arg("--trace").arg(self.root.join("traces"));
        for (i, a) in self.addrs.iter().enumerate() {
            if i + 1 != usize::from(n) {
                cmd.arg("--peer").arg(format!("n{}={a}", i + 1));
            }
        }
        if let Some(c) = crash_at {
            cmd.args(["--crash-at", c]);
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the process starts");
        assert!(self.procs.insert(n, child).is_none(), "{} ran", name(n));
        self.logs.insert(n, log);
        match crash_at {
            Some(c) => self.armed.insert(n, c.to_string()),
            None => self.armed.remove(&n),
        };
    }

    /// SIGKILL: no shutdown code runs in the process.
    pub fn kill(&mut self, n: u8) {
        let mut c = self.procs.remove(&n).expect("running");
        c.kill().expect("SIGKILL");
        c.wait().expect("reaped");
        *self.kills.entry(n).or_default() += 1;
    }

    /// Process `n`, if it exited by itself (it is then no longer running).
    pub fn exited(&mut self, n: u8) -> Option<Exit> {
        let status = self.procs.get_mut(&n)?.try_wait().unwrap()?;
        self.procs.remove(&n);
        Some(Exit {
            status,
            log: self.log(n),
        })
    }

    /// The stderr of process `n`'s latest start.
    pub fn log(&self, n: u8) -> String {
        self.logs
            .get(&n)
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    }

    /// Fail if a process exited that the run did not kill, unless it died
    /// at its crash point inside a batch and `restart_crashed` is set: it
    /// is then started again at once on its data directory, unarmed.
    pub fn alive(&mut self) {
        let ns: Vec<u8> = self.procs.keys().copied().collect();
        for n in ns {
            let Some(e) = self.exited(n) else {
                continue;
            };
            let at_point = self.armed.contains_key(&n)
                && e.log.lines().any(|l| {
                    l.starts_with(&format!("crash-point {}: SIGKILL inside batch ", name(n)))
                });
            if !(self.restart_crashed && at_point) {
                panic!("{} exited ({}):\n{}", name(n), e.status, e.log);
            }
            *self.batch_kills.entry(n).or_default() += 1;
            self.start(n, None);
        }
    }

    /// Stop every running process (SIGKILL, not counted as a kill).
    pub fn stop_all(&mut self) {
        self.alive();
        for (_, mut c) in std::mem::take(&mut self.procs) {
            c.kill().expect("SIGKILL");
            c.wait().expect("reaped");
        }
    }

    pub fn record(&self, p: Partition) -> Record {
        self.records
            .open(p)
            .and_then(|mut c| c.read())
            .expect("the record reads")
    }

    pub fn status(&self, n: u8, p: Partition) -> Option<Status> {
        client::status_blocking(self.addr(n), p).ok()
    }

    /// Whether `p`'s record has nothing pending and no copy suspended, and
    /// its owner serves at the record's epoch with admission open.
    pub fn settled(&self, p: Partition) -> bool {
        let r = self.record(p);
        let suspended = r.suspended.iter().any(|s| !r.lost.contains(s));
        r.recovery.is_none()
            && r.handoff.is_none()
            && r.move_task.is_none()
            && !suspended
            && self
                .status(r.owner.node.0, p)
                .is_some_and(|s| s.serving == Some(r.epoch) && s.admitting)
    }

    /// Wait until `done`, at most `wait`, failing (with the records) if a
    /// process exits by itself meanwhile.
    pub fn until(&mut self, what: &str, wait: Duration, done: impl Fn(&Cluster) -> bool) {
        let start = Instant::now();
        loop {
            self.alive();
            if done(self) {
                return;
            }
            if start.elapsed() > wait {
                let records: Vec<Record> =
                    self.partitions.iter().map(|&p| self.record(p)).collect();
                panic!("waited {wait:?} for {what}; records {records:#?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
