//! A live cluster in one process: TCP nodes on 127.0.0.1 ports, each
//! partition's log on disk, the records in the file control plane or etcd,
//! a controller with its failure detector, one client per partition that
//! publishes and consumes (settles the oldest delivered message); a
//! node joins and copies move onto it (followers first, then ownership
//! handoffs), a node is killed in the middle of the moves and brought back
//! on its data directory. The report says what was published, confirmed
//! and acknowledged, whether any acknowledged message was lost or any
//! message confirmed twice, what was settled and whether any settle told
//! done is missing from the final history, the confirm latency before,
//! during and after the moves, and the handoffs' write pause.
//!
//! Every node, the controller and the clients run in one process on a
//! multi-threaded tokio runtime. Each partition has a step lock that every
//! node holds through each of its steps of that partition (a message, a
//! tick, a batch of publishes, a join or a handoff request; no await
//! inside), and the controller through its write: the steps of one
//! partition never interleave, so its trace, written by every node that
//! hosts it, is one order of all their steps, which `livemove demo`
//! validates against the spec; steps of different partitions run in
//! parallel. What is real: the sockets, the disks and their fsyncs, the
//! record store, the kill (every task of the node aborted at once, its
//! volatile state gone, its data directory kept). What is not: the nodes
//! share a process, and one partition's steps on different nodes wait for
//! each other (a partition's fsyncs on two nodes are never concurrent).
//!
//! The moves are the rebalance planner's (`plan`, `planner`): once the
//! new node is up, each settled state of the cluster is one planner round,
//! carried out to its end, until a round proposes nothing. Its first
//! round is a function of the placement alone; the node killed is chosen
//! by the seed. The timing is the machine's, so two runs with one seed
//! differ in timing (and, after the kill, possibly in which copy a
//! recovery makes owner and so in the later rounds), not in what they
//! check.

mod clients;
mod plan;
pub mod planner;
mod report;

pub use plan::ROUNDS_MAX;
pub use report::{DemoReport, Latency, PlacementOf, PlanStep, Progress, ShowProgress, TrackedMove};

use crate::control::ControlError;
use crate::controller::{Controller, ControllerConfig, ControllerError};
use crate::disk_log::{DiskLog, DiskLogError};
use crate::partition::{Partition, Records};
use crate::tcp::{PartitionConfig, StepLock, TcpError, TcpNode, TcpNodeConfig};
use crate::trace::{SharedTracer, Tracer};
use clients::{ClientStats, Phase};
use livemove_impl::store::Record;
use livemove_impl::{Mutants, NodeId, StorageId};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a demo runs.
#[derive(Clone, Debug)]
pub struct DemoConfig {
    /// Nodes in all, the last one joining during the run (at least rf + 1).
    pub nodes: u8,
    /// Partitions, each with rf copies on the first `nodes - 1` nodes.
    pub partitions: u32,
    /// The replication factor.
    pub rf: u8,
    /// Seconds of traffic before the moves, and again after them.
    pub steady_seconds: f64,
    /// Publishes per second of each partition's client.
    pub rate: f64,
    /// Chooses the node killed during the moves.
    pub seed: u64,
    /// Where the records live.
    pub records: Records,
    /// Data directories (`<root>/n<k>`) and traces (`<root>/traces`).
    pub root: PathBuf,
    /// The nodes' resend timer.
    pub tick: Duration,
    /// The controller's lease on a node.
    pub lease: Duration,
    /// How long the killed node stays down.
    pub down: Duration,
    /// Moves in flight at once: the demo starts no more, and the planner's
    /// policy takes it as its cluster and per-node incoming limit.
    pub moves_in_flight: usize,
    /// How long the moves, and the healing after the traffic, may take.
    pub deadline: Duration,
    /// Mutants switched on in the nodes, the records and the plan
    /// (`no_replacement`: a move started while a follower is down does not
    /// replace it).
    pub mutants: Mutants,
}

/// The demo could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A bad setting.
    #[error("demo: {0}")]
    Config(String),
    /// A node failed to start or stopped.
    #[error("demo: {0}")]
    Node(#[from] TcpError),
    /// A record could not be created or read.
    #[error("demo: {partition}: {source}")]
    Control {
        /// The partition.
        partition: Partition,
        /// What failed.
        #[source]
        source: ControlError,
    },
    /// The controller stopped.
    #[error("demo: {0}")]
    Controller(#[from] ControllerError),
    /// The planner refused the view it was given.
    #[error("demo: planner: {0}")]
    Plan(#[from] livemove_impl::planner::PlanError),
    /// A trace file could not be created.
    #[error("demo: trace {}: {source}", path.display())]
    Trace {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A disk could not be read back at the end.
    #[error("demo: reading {} back: {source}", path.display())]
    ReadBack {
        /// The data directory.
        path: PathBuf,
        /// What failed.
        #[source]
        source: DiskLogError,
    },
    /// Something did not happen in time; the cluster's state is named.
    #[error("demo: {what} did not happen within {secs:.0} s: {state}")]
    Stuck {
        /// What was waited for.
        what: &'static str,
        /// The deadline.
        secs: f64,
        /// What was pending.
        state: String,
    },
}

/// The placement of partition `p` before the run: rf consecutive nodes of
/// the first `holders`, the owner first, turning with `p`.
pub fn placement(p: Partition, holders: u8, rf: u8) -> (NodeId, Vec<NodeId>) {
    let at = |i: u32| NodeId(((p.0 + i) % u32::from(holders)) as u8 + 1);
    (at(0), (1..u32::from(rf)).map(at).collect())
}

/// The trace file of partition `p` under `root`.
pub fn trace_path(root: &std::path::Path, p: Partition) -> PathBuf {
    root.join("traces").join(format!("{p}.ndjson"))
}

struct Cluster {
    cfg: DemoConfig,
    addrs: BTreeMap<NodeId, SocketAddr>,
    traces: BTreeMap<Partition, SharedTracer>,
    steps: BTreeMap<Partition, StepLock>,
    nodes: BTreeMap<NodeId, TcpNode>,
    clock: Instant,
}

impl Cluster {
    fn partitions(&self) -> impl Iterator<Item = Partition> {
        (0..self.cfg.partitions).map(Partition)
    }

    fn node_config(&self, n: NodeId) -> Result<TcpNodeConfig, DemoError> {
        let mut partitions = Vec::new();
        for p in self.partitions() {
            partitions.push(PartitionConfig {
                partition: p,
                control: self.open(p)?,
                trace: Some(self.traces[&p].clone()),
                step: Some(self.steps[&p].clone()),
            });
        }
        Ok(TcpNodeConfig {
            id: n,
            data: self.cfg.root.join(n.to_string()),
            mutants: self.cfg.mutants,
            listen: self.addrs[&n],
            peers: self.addrs.clone(),
            partitions,
            tick: self.cfg.tick,
            clock: self.clock,
            fault_requests: false,
            crash: None,
        })
    }

    async fn start(&mut self, n: NodeId) -> Result<(), DemoError> {
        // A port the killed node listened on may take a moment to be free
        // again; nothing else is retried.
        for _ in 0..50 {
            match TcpNode::start(self.node_config(n)?).await {
                Ok(node) => {
                    self.nodes.insert(n, node);
                    return Ok(());
                }
                Err(TcpError::Listen { source, .. })
                    if source.kind() == std::io::ErrorKind::AddrInUse =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(DemoError::Stuck {
            what: "a restarted node binding its port",
            secs: 5.0,
            state: format!("{n}'s port {} stayed in use", self.addrs[&n]),
        })
    }

    /// Write `event` into every partition's trace (a kill is in all of
    /// them: the node hosts every partition).
    fn trace_all(&self, event: &crate::trace::Event) {
        let t_ms = self.clock.elapsed().as_millis() as u64;
        for t in self.traces.values() {
            if let Err(e) = crate::trace::emit_shared(t, t_ms, event) {
                tracing::error!(error = %e, "trace write failed");
            }
        }
    }

    fn open(&self, p: Partition) -> Result<Box<dyn crate::control::ControlPlane>, DemoError> {
        self.cfg
            .records
            .open_with(p, self.cfg.mutants)
            .map_err(|source| DemoError::Control {
                partition: p,
                source,
            })
    }

    fn read(&self, p: Partition) -> Result<Record, DemoError> {
        self.open(p)?.read().map_err(|source| DemoError::Control {
            partition: p,
            source,
        })
    }
}

fn free_ports(n: u8) -> Result<BTreeMap<NodeId, SocketAddr>, DemoError> {
    let bind = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| Ok((l.local_addr()?, l)))
            .map_err(|e| DemoError::Config(format!("no free port on 127.0.0.1: {e}")))
    };
    // Bound together and released together: the nodes bind them again.
    let held: Vec<_> = (0..n).map(|_| bind()).collect::<Result<_, _>>()?;
    Ok(held
        .iter()
        .enumerate()
        .map(|(i, (a, _))| (NodeId(i as u8 + 1), *a))
        .collect())
}

/// Threads of the demo's tokio runtime: the nodes' disk writes and fsyncs
/// block the thread they run on, so there are more threads than cores.
pub const DEMO_THREADS: usize = 8;

/// Run the demo on a tokio runtime of its own (`DEMO_THREADS` threads);
/// `progress` is called with a snapshot about every second.
pub fn run_blocking(
    cfg: DemoConfig,
    progress: Option<ShowProgress>,
) -> Result<DemoReport, DemoError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(DEMO_THREADS)
        .enable_all()
        .build()
        .map_err(|e| DemoError::Config(format!("tokio runtime: {e}")))?;
    rt.block_on(run(cfg, progress))
}

/// Run the demo.
pub async fn run(cfg: DemoConfig, progress: Option<ShowProgress>) -> Result<DemoReport, DemoError> {
    if cfg.nodes < cfg.rf + 1 || cfg.rf < 2 {
        return Err(DemoError::Config(format!(
            "{} nodes with rf {}: the demo needs rf >= 2 and at least rf + 1 nodes (one joins)",
            cfg.nodes, cfg.rf
        )));
    }
    if cfg.partitions == 0 || cfg.partitions > 2_000 {
        return Err(DemoError::Config(format!(
            "{} partitions: from 1 to 2,000 (message keys stay below 2^31 for the trace validator)",
            cfg.partitions
        )));
    }
    let holders = cfg.nodes - 1;
    let newcomer = NodeId(cfg.nodes);
    let clock = Instant::now();
    let trace_dir = cfg.root.join("traces");
    std::fs::create_dir_all(&trace_dir).map_err(|source| DemoError::Trace {
        path: trace_dir.clone(),
        source,
    })?;
    let mut traces = BTreeMap::new();
    for p in (0..cfg.partitions).map(Partition) {
        let path = trace_path(&cfg.root, p);
        let t = Tracer::append_to(&path).map_err(|source| DemoError::Trace { path, source })?;
        traces.insert(p, t.shared());
    }
    let steps = traces.keys().map(|&p| (p, StepLock::default())).collect();
    let mut cluster = Cluster {
        addrs: free_ports(cfg.nodes)?,
        traces,
        steps,
        nodes: BTreeMap::new(),
        clock,
        cfg: cfg.clone(),
    };
    for p in cluster.partitions().collect::<Vec<_>>() {
        let (owner, followers) = placement(p, holders, cfg.rf);
        let r = Record::initial(
            StorageId::first(owner),
            followers.into_iter().map(StorageId::first),
            cfg.rf,
        );
        cluster
            .open(p)?
            .create(&r)
            .map_err(|source| DemoError::Control {
                partition: p,
                source,
            })?;
    }
    for n in 1..=holders {
        cluster.start(NodeId(n)).await?;
    }
    let controller = Controller::new(ControllerConfig {
        records: cfg.records.clone(),
        partitions: cluster.partitions().collect(),
        nodes: cluster.addrs.clone(),
        lease: cfg.lease,
        poll: cfg.lease / 4,
        traces: cluster.traces.clone(),
        steps: cluster.steps.clone(),
        clock,
        crash: None,
    })?;
    let controller_task = tokio::spawn(controller.run());

    let stats = Arc::new(Mutex::new(ClientStats::default()));
    let phase = Arc::new(Mutex::new(Phase::Before));
    let mut client_tasks = Vec::new();
    for p in cluster.partitions() {
        client_tasks.push(tokio::spawn(clients::run(
            p,
            cluster.addrs.clone(),
            cfg.rate,
            stats.clone(),
            phase.clone(),
        )));
    }
    let mut reporter = report::Reporter::new(progress, stats.clone(), phase.clone(), clock);

    // Before: steady traffic.
    reporter
        .sleep(&cluster, Duration::from_secs_f64(cfg.steady_seconds))
        .await?;

    // During: the new node joins, copies move onto it, a node is killed in
    // the middle and comes back.
    *phase.lock().expect("no client panics") = Phase::During;
    cluster.start(newcomer).await?;
    let victim = NodeId((cfg.seed % u64::from(holders)) as u8 + 1);
    let outcome = plan::run(&mut cluster, &mut reporter, victim).await?;

    // After: steady traffic again, then the clients stop.
    *phase.lock().expect("no client panics") = Phase::After;
    reporter
        .sleep(&cluster, Duration::from_secs_f64(cfg.steady_seconds))
        .await?;
    *phase.lock().expect("no client panics") = Phase::Stopped;
    for t in client_tasks {
        let _ = t.await;
    }
    let statuses = plan::heal(&mut cluster, &mut reporter).await?;
    controller_task.abort();
    let _ = controller_task.await;
    for (_, node) in std::mem::take(&mut cluster.nodes) {
        node.kill().await;
    }
    for t in cluster.traces.values() {
        if let Ok(mut t) = t.lock() {
            let _ = t.flush();
        }
    }
    let disks = read_back(&cluster)?;
    let stats = stats.lock().expect("no client panics").clone();
    Ok(report::build(
        &cfg, &cluster, stats, outcome, statuses, disks, clock,
    ))
}

/// Every partition's disks, read back with the nodes stopped.
type Disks = BTreeMap<Partition, BTreeMap<NodeId, livemove_impl::replica::DurableLog>>;

fn read_back(cluster: &Cluster) -> Result<Disks, DemoError> {
    let mut out = Disks::new();
    for p in cluster.partitions() {
        for &n in cluster.addrs.keys() {
            let dir = p.data_dir(&cluster.cfg.root.join(n.to_string()));
            if !dir.join(crate::disk_log::SEGMENT_FILE).exists() {
                continue;
            }
            let (_, recovered) = DiskLog::open(&dir).map_err(|source| DemoError::ReadBack {
                path: dir.clone(),
                source,
            })?;
            out.entry(p).or_default().insert(n, recovered.state);
        }
    }
    Ok(out)
}
