//! `livemove node`: one node process over TCP hosting every partition of
//! the store (`livemove_runtime::tcp`), until it is killed or a disk or
//! control plane fails (exit 1). `livemove controller`: the controller
//! process: its failure detector, and the replacement of lost followers and
//! swap back of moves whose target is gone (`livemove_runtime::controller`).
//! `livemove client`: make the epoch-1 records, publish and consume
//! (settle) routed from any node (note 2's MOVED and ASK, `tcp::routed`), read a partition's status, ask a node to join a partition,
//! hand one over or swap a move back, cut and heal a node's links.

use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use clap::{Args, Parser, Subcommand};
use livemove_impl::routing::HOPS_MAX_DEFAULT;
use livemove_impl::store::Record;
use livemove_impl::{Mutants, NodeId, StorageId};
use livemove_runtime::control::{CrashAt, CrashPoint};
use livemove_runtime::controller::{self, ControllerConfig};
use livemove_runtime::demo::placement;
use livemove_runtime::partition::{Partition, Records};
use livemove_runtime::tcp::{
    self, client, routed, FaultChange, Link, PartitionConfig, Rates, TcpNodeConfig,
};
use livemove_runtime::trace::Tracer;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
pub struct NodeArgs {
    /// This node's number (`--id 2` is n2).
    #[arg(long, value_parser = parse_node_number)]
    id: u8,
    /// Data directory: each partition's disk log and incarnation file in
    /// `DIR/p<N>`.
    #[arg(long)]
    data: PathBuf,
    /// Address to listen on, for peers and clients.
    #[arg(long)]
    listen: SocketAddr,
    /// Another node's address, `n3=127.0.0.1:7003`; once per peer.
    #[arg(long = "peer", value_parser = parse_peer)]
    peers: Vec<(NodeId, SocketAddr)>,
    #[command(flatten)]
    store: StoreArgs,
    /// Append each partition's NDJSON trace events to `DIR/n<id>-p<N>.ndjson`.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    /// The resend timer's period, in milliseconds.
    #[arg(long, default_value_t = 20, value_parser = super::positive_count)]
    tick_ms: usize,
    /// Take fault requests on the port (`livemove client fault`: cut and
    /// heal this node's links, drop and delay its sends); without it they
    /// are refused, so no stray request partitions a node that serves.
    #[arg(long)]
    allow_faults: bool,
    /// Tests only: kill this process with SIGKILL right before (`before:K`)
    /// or right after (`after:K`) the K-th guarded write the store commits,
    /// counted across its partitions, or inside the K-th `Persist` batch of
    /// more than S steps (1 unless given) after its first S steps
    /// (`persist:K[:S]`); `count` names each write on stderr and never
    /// kills (runtime/README.md, "Crash points").
    #[arg(long, hide = true, value_name = "before:K|after:K|persist:K[:S]|count")]
    crash_at: Option<CrashAt>,
}

#[derive(Parser)]
pub struct ControllerArgs {
    /// A node's address, `n1=127.0.0.1:7001`; once per node.
    #[arg(long = "peer", value_parser = parse_peer, required = true)]
    peers: Vec<(NodeId, SocketAddr)>,
    #[command(flatten)]
    store: StoreArgs,
    /// How long a node may go without answering before every partition it
    /// owns is recovered, in milliseconds.
    #[arg(long, default_value_t = 1000, value_parser = super::positive_count)]
    lease_ms: usize,
    /// Append each partition's `OpenRecovery` events to
    /// `DIR/controller-p<N>.ndjson`.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    /// Tests only: as `livemove node --crash-at`, on the controller's
    /// guarded writes (`persist:K` is refused: it has no disk log).
    #[arg(long, hide = true, value_name = "before:K|after:K|count")]
    crash_at: Option<CrashAt>,
}

/// Where the records live: a directory of files (the default control
/// plane) or etcd, and how many partitions there are.
#[derive(Args)]
pub struct StoreArgs {
    /// The file control plane: a directory with one record file per
    /// partition (`p0.json`, ...).
    #[arg(long, value_name = "DIR", required_unless_present = "etcd")]
    store: Option<PathBuf>,
    /// An etcd client URL (`http://127.0.0.1:2379`) holding the records.
    #[arg(long, conflicts_with = "store")]
    etcd: Option<String>,
    /// The etcd key prefix of the records (`<prefix>/p<N>`) [default: livemove].
    #[arg(long, requires = "etcd")]
    etcd_prefix: Option<String>,
    /// Partitions p0 .. p<N-1>.
    #[arg(long, default_value_t = 1, value_parser = super::positive_count)]
    partitions: usize,
}

impl StoreArgs {
    fn records(&self) -> Result<Records, String> {
        match (&self.store, &self.etcd) {
            (Some(_), _) if self.etcd_prefix.is_some() => {
                Err("--etcd-prefix names keys in etcd; it goes with --etcd, not --store".into())
            }
            (Some(dir), _) => {
                if dir.is_file() {
                    return Err(format!(
                        "--store {}: a file; the store is a directory of record files (one per partition)",
                        dir.display()
                    ));
                }
                Ok(Records::Files { dir: dir.clone() })
            }
            (None, Some(endpoint)) => Ok(Records::Etcd {
                endpoint: endpoint.clone(),
                prefix: self
                    .etcd_prefix
                    .clone()
                    .unwrap_or_else(|| "livemove".into()),
            }),
            (None, None) => unreachable!("clap requires --store or --etcd"),
        }
    }

    fn partitions(&self) -> Result<Vec<Partition>, String> {
        let n = u32::try_from(self.partitions)
            .map_err(|_| format!("--partitions {}: too many", self.partitions))?;
        Ok((0..n).map(Partition).collect())
    }
}

#[derive(Subcommand)]
pub enum ClientCmd {
    /// Make the epoch-1 records (kept where one exists): partition p's
    /// owner and followers are rf consecutive nodes of n1..n<nodes>,
    /// turning with p.
    Init {
        #[command(flatten)]
        store: StoreArgs,
        /// The replication factor.
        #[arg(long, value_parser = parse_node_number)]
        rf: u8,
        /// Nodes the copies are placed on [default: rf].
        #[arg(long, value_parser = parse_node_number)]
        nodes: Option<u8>,
    },
    /// Publish message KEY on a partition, routed from the node at ADDR
    /// (any node: a node that does not own the partition answers MOVED to
    /// the owner, followed up to --hops-max), and wait until the owner that
    /// answered confirms it; prints its position. A publish whose answer
    /// or confirm never comes (the node unreachable, the connection reset,
    /// the owner fenced or no longer serving, no answer within
    /// --attempt-timeout-ms) is sent again with the same key, after the
    /// route is refreshed from the other nodes: an owner whose history
    /// holds the key answers with its position and appends nothing.
    Publish {
        #[command(flatten)]
        route: RouteArgs,
        /// The message key (the producer's sequence: a retry sends it
        /// again).
        #[arg(long)]
        key: u64,
        /// Attempts at most, the first included (1 sends it once).
        #[arg(long, default_value_t = 10, value_parser = parse_attempts)]
        attempts: u32,
        /// How long one exchange of an attempt (the routed request with its
        /// redirects, then the wait for the confirm) may take, in
        /// milliseconds.
        #[arg(long, default_value_t = 2_000, value_parser = parse_ms)]
        attempt_timeout_ms: u64,
        /// How long the whole publish may take, retries included, in
        /// milliseconds.
        #[arg(long, default_value_t = 10_000, value_parser = parse_ms)]
        timeout_ms: u64,
        /// Send the first attempt as a retry too: for a key an earlier
        /// publish may have appended (one that failed after its first
        /// attempt, or was killed), which is then answered from the
        /// owner's history instead of appended again.
        #[arg(long)]
        retry: bool,
        /// Print one JSON object (the position, the node and epoch that
        /// answered and confirmed it, whether it appended the message or
        /// its history held it, every attempt with the routes refreshed
        /// and redirects followed) instead of the position; on failure,
        /// the error and the attempts.
        #[arg(long)]
        json: bool,
    },
    /// Consume: settle the oldest message the partition's owner delivers,
    /// COUNT times, routed from the node at ADDR like `publish`; each
    /// settle is a `Delete` entry under the publish's confirm rule, and is
    /// printed (one JSON object per line) once the owner confirmed it.
    Consume {
        #[command(flatten)]
        route: RouteArgs,
        /// Messages to settle, one after the other (at least 1).
        #[arg(long, default_value_t = 1, value_parser = super::positive_count)]
        count: usize,
        /// How long to wait for each settle's confirm, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        wait_ms: u64,
    },
    /// Print the status of a partition on the node at ADDR as one JSON object.
    Status {
        /// The node's address.
        #[arg(long)]
        node: SocketAddr,
        /// The partition.
        #[arg(long, default_value_t = 0)]
        partition: u32,
    },
    /// Ask the node at ADDR to join a partition as a planned move's learner.
    Join {
        /// The node's address.
        #[arg(long)]
        node: SocketAddr,
        /// The partition.
        #[arg(long)]
        partition: u32,
        /// The follower the move replaces (one that is down), by number.
        #[arg(long, value_parser = parse_node_number)]
        replaces: Option<u8>,
    },
    /// Ask the node at ADDR, the partition's owner, to hand it over.
    HandOff {
        /// The owner's address.
        #[arg(long)]
        node: SocketAddr,
        /// The partition.
        #[arg(long)]
        partition: u32,
        /// The new owner's number (a follower).
        #[arg(long, value_parser = parse_node_number)]
        to: u8,
    },
    /// Ask the node at ADDR, the partition's owner, to swap its swapped
    /// move's leaving copy back in, the move's target being down or lost
    /// (what the controller asks once its lease on the target lapsed).
    SwapBack {
        /// The owner's address.
        #[arg(long)]
        node: SocketAddr,
        /// The partition.
        #[arg(long)]
        partition: u32,
    },
    /// Cut or heal links of the node at ADDR (started with
    /// `--allow-faults`), or set drop and delay rates on its sends to its
    /// peers; prints the faults set after the changes as one JSON object
    /// (with no change, the faults set). Heals go first, then cuts, then
    /// rates.
    Fault(FaultArgs),
}

#[derive(Args)]
pub struct FaultArgs {
    /// The node's address.
    #[arg(long)]
    node: SocketAddr,
    /// Cut a link: `controller` (its probes go unanswered, so its lease on
    /// the node lapses), `clients` (their requests are carried out and
    /// the answers lost) or a peer `nN` (their messages, both ways).
    #[arg(long, value_name = "controller|clients|nN")]
    cut: Vec<Link>,
    /// Heal a link.
    #[arg(long, value_name = "controller|clients|nN")]
    heal: Vec<Link>,
    /// Heal every link and clear the rates.
    #[arg(long)]
    heal_all: bool,
    /// Percent of the node's messages to its peers dropped.
    #[arg(long, value_name = "PCT")]
    drop_pct: Option<u8>,
    /// Percent of the others held back (overtaken by later ones).
    #[arg(long, value_name = "PCT", requires = "delay_ms_max")]
    delay_pct: Option<u8>,
    /// The longest a held-back message waits, in milliseconds.
    #[arg(long, value_name = "MS")]
    delay_ms_max: Option<u32>,
    /// The seed of the drops and delays [default: 1].
    #[arg(long)]
    seed: Option<u64>,
    /// Stop dropping and delaying.
    #[arg(long, conflicts_with_all = ["drop_pct", "delay_pct", "delay_ms_max", "seed"])]
    clear_rates: bool,
}

impl FaultArgs {
    /// The changes asked for, in the order they are made.
    fn changes(&self) -> Result<Vec<FaultChange>, String> {
        let mut out = Vec::new();
        if self.heal_all {
            out.push(FaultChange::HealAll);
        }
        out.extend(self.heal.iter().map(|&l| FaultChange::Heal(l)));
        out.extend(self.cut.iter().map(|&l| FaultChange::Cut(l)));
        if self.clear_rates {
            out.push(FaultChange::ClearRates);
        }
        let rated = self.drop_pct.is_some()
            || self.delay_pct.is_some()
            || self.delay_ms_max.is_some()
            || self.seed.is_some();
        if rated {
            let rates = Rates {
                drop_pct: self.drop_pct.unwrap_or(0),
                delay_pct: self.delay_pct.unwrap_or(0),
                delay_ms_max: self.delay_ms_max.unwrap_or(0),
                seed: self.seed.unwrap_or(1),
            }
            .check()
            .map_err(|e| format!("rates: {e}"))?;
            out.push(FaultChange::SetRates(rates));
        }
        Ok(out)
    }
}

fn parse_node_number(s: &str) -> Result<u8, String> {
    match s.parse::<u8>() {
        Ok(n) if (1..=16).contains(&n) => Ok(n),
        _ => Err(format!("`{s}`: a node number from 1 to 16")),
    }
}

fn parse_attempts(s: &str) -> Result<u32, String> {
    let max = routed::ATTEMPTS_MAX;
    match s.parse::<i64>() {
        Ok(n) if (1..=i64::from(max)).contains(&n) => Ok(n as u32),
        Ok(_) => Err(format!("`{s}`: from 1 to {max} attempts")),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

/// A wait in milliseconds: at least 1 (nothing is answered in no time),
/// at most a day.
fn parse_ms(s: &str) -> Result<u64, String> {
    const DAY_MS: i64 = 24 * 3_600_000;
    match s.parse::<i64>() {
        Ok(n) if (1..=DAY_MS).contains(&n) => Ok(n as u64),
        Ok(_) => Err(format!("`{s}`: from 1 to {DAY_MS} milliseconds")),
        Err(_) => Err(format!("`{s}` is not a whole number of milliseconds")),
    }
}

fn parse_peer(s: &str) -> Result<(NodeId, SocketAddr), String> {
    let (name, addr) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected `n<number>=<address>`"))?;
    let n = name
        .strip_prefix('n')
        .ok_or_else(|| format!("`{s}`: `{name}` is not a node name like `n2`"))?;
    let n = parse_node_number(n).map_err(|e| format!("`{s}`: {e}"))?;
    let addr = addr
        .parse()
        .map_err(|e| format!("`{s}`: `{addr}` is not an address: {e}"))?;
    Ok((NodeId(n), addr))
}

fn usage(e: String) -> u8 {
    eprintln!("error: {e}");
    EXIT_USAGE
}

pub fn run_node(args: NodeArgs) -> u8 {
    let id = NodeId(args.id);
    let mut peers: BTreeMap<NodeId, SocketAddr> = args.peers.into_iter().collect();
    peers.insert(id, args.listen);
    let (records, partitions) = match (args.store.records(), args.store.partitions()) {
        (Ok(r), Ok(p)) => (r, p),
        (Err(e), _) | (_, Err(e)) => return usage(e),
    };
    if let Some(dir) = &args.trace {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return usage(format!("--trace {}: {e}", dir.display()));
        }
    }
    let crash = args.crash_at.map(|at| CrashPoint::new(at, id.to_string()));
    let mut hosted = Vec::new();
    for p in partitions {
        let control = match records.open(p) {
            Ok(c) => c,
            Err(e) => return usage(format!("--store: {e}")),
        };
        let control = match &crash {
            Some(c) => c.wrap(p.to_string(), control, Mutants::NONE),
            None => control,
        };
        let trace = match &args.trace {
            None => None,
            Some(dir) => {
                let path = dir.join(format!("{id}-{p}.ndjson"));
                match Tracer::append_to(&path) {
                    Ok(t) => Some(t.shared()),
                    Err(e) => return usage(format!("--trace {}: {e}", path.display())),
                }
            }
        };
        hosted.push(PartitionConfig {
            partition: p,
            control,
            trace,
            step: None,
        });
    }
    let cfg = TcpNodeConfig {
        id,
        data: args.data,
        mutants: Mutants::NONE,
        listen: args.listen,
        peers,
        partitions: hosted,
        tick: Duration::from_millis(args.tick_ms as u64),
        clock: Instant::now(),
        fault_requests: args.allow_faults,
        crash,
    };
    match tcp::serve_blocking(cfg) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAIL
        }
    }
}

pub fn run_controller(args: ControllerArgs) -> u8 {
    if let Some(at @ CrashAt::Persist { .. }) = args.crash_at {
        return usage(format!(
            "--crash-at {at}: the controller keeps no disk log; `persist` points are a node's"
        ));
    }
    let (records, partitions) = match (args.store.records(), args.store.partitions()) {
        (Ok(r), Ok(p)) => (r, p),
        (Err(e), _) | (_, Err(e)) => return usage(e),
    };
    let mut traces = BTreeMap::new();
    if let Some(dir) = &args.trace {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return usage(format!("--trace {}: {e}", dir.display()));
        }
        for &p in &partitions {
            let path = dir.join(format!("controller-{p}.ndjson"));
            match Tracer::append_to(&path) {
                Ok(t) => traces.insert(p, t.shared()),
                Err(e) => return usage(format!("--trace {}: {e}", path.display())),
            };
        }
    }
    let lease = Duration::from_millis(args.lease_ms as u64);
    let cfg = ControllerConfig {
        records,
        partitions,
        nodes: args.peers.into_iter().collect(),
        lease,
        poll: lease / 4,
        traces,
        steps: BTreeMap::new(),
        clock: Instant::now(),
        crash: args.crash_at.map(|at| CrashPoint::new(at, "controller")),
    };
    let ended = controller::run_blocking(cfg);
    match ended {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAIL
        }
    }
}

fn answer<T>(r: Result<T, client::ClientError>, show: impl FnOnce(T) -> String) -> u8 {
    match r {
        Ok(v) => {
            println!("{}", show(v));
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAIL
        }
    }
}

/// How long one routed request may take, redirects included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a routed request starts and how far it may be redirected (the
/// client's publish and consume).
#[derive(Args)]
pub struct RouteArgs {
    /// A node's address (any node of the cluster).
    #[arg(long)]
    node: SocketAddr,
    /// More nodes to start from, tried in turn when one does not answer.
    #[arg(long, value_delimiter = ',')]
    nodes: Vec<SocketAddr>,
    /// The partition.
    #[arg(long, default_value_t = 0)]
    partition: u32,
    /// Redirects and try-agains one request follows at most.
    #[arg(long, default_value_t = HOPS_MAX_DEFAULT)]
    hops_max: u8,
}

impl RouteArgs {
    /// The nodes a routed request starts from: `--node` first, then
    /// `--nodes`.
    fn entries(&self) -> Vec<SocketAddr> {
        let mut out = vec![self.node];
        out.extend(self.nodes.iter().copied().filter(|&a| a != self.node));
        out
    }
}

pub fn run_client(cmd: ClientCmd) -> u8 {
    match cmd {
        ClientCmd::Init { store, rf, nodes } => {
            let nodes = nodes.unwrap_or(rf);
            if nodes < rf {
                return usage(format!("--nodes {nodes} is fewer than --rf {rf}"));
            }
            let (records, partitions) = match (store.records(), store.partitions()) {
                (Ok(r), Ok(p)) => (r, p),
                (Err(e), _) | (_, Err(e)) => return usage(e),
            };
            for p in partitions {
                let (owner, followers) = placement(p, nodes, rf);
                let initial = Record::initial(
                    StorageId::first(owner),
                    followers.into_iter().map(StorageId::first),
                    rf,
                );
                let created = records.open(p).and_then(|mut c| c.create(&initial));
                match created {
                    Ok(r) => println!(
                        "{p}: record {} at epoch {}, owner {}",
                        r.version, r.epoch, r.owner
                    ),
                    Err(e) => {
                        eprintln!("error: {p}: {e}");
                        return EXIT_FAIL;
                    }
                }
            }
            EXIT_OK
        }
        ClientCmd::Publish {
            route,
            key,
            attempts,
            attempt_timeout_ms,
            timeout_ms,
            retry,
            json,
        } => {
            let policy = match routed::RetryPolicy::new(
                attempts,
                Duration::from_millis(attempt_timeout_ms),
                Duration::from_millis(timeout_ms),
            ) {
                Ok(p) => p,
                Err(e) => return usage(e.to_string()),
            };
            match routed::publish_confirmed_blocking(
                route.entries(),
                Partition(route.partition),
                key,
                route.hops_max,
                policy,
                retry,
            ) {
                Ok(p) if json => {
                    println!(
                        "{}",
                        serde_json::to_string(&p).expect("a publish is plain data")
                    );
                    EXIT_OK
                }
                Ok(p) => {
                    println!("{}", p.pos);
                    EXIT_OK
                }
                Err(e) => {
                    if json {
                        let v = serde_json::json!({
                            "error": e.to_string(),
                            "attempts": e.attempts(),
                        });
                        println!("{v}");
                    }
                    eprintln!("error: {e}");
                    EXIT_FAIL
                }
            }
        }
        ClientCmd::Consume {
            route,
            count,
            wait_ms,
        } => {
            let mut settled = 0;
            let r = routed::consume_blocking(
                route.entries(),
                Partition(route.partition),
                count as u64,
                route.hops_max,
                REQUEST_TIMEOUT,
                Duration::from_millis(wait_ms),
                |s| {
                    settled += 1;
                    println!(
                        "{}",
                        serde_json::to_string(s).expect("a settle is plain data")
                    );
                },
            );
            match r {
                Ok(()) => EXIT_OK,
                Err(e) => {
                    eprintln!("error: after {settled} of {count} settles: {e}");
                    EXIT_FAIL
                }
            }
        }
        ClientCmd::Status { node, partition } => {
            answer(client::status_blocking(node, Partition(partition)), |s| {
                serde_json::to_string(&s).expect("a status is plain data")
            })
        }
        ClientCmd::Join {
            node,
            partition,
            replaces,
        } => answer(
            client::join_blocking(node, Partition(partition), replaces.map(NodeId)),
            |started| if started { "started" } else { "refused" }.to_string(),
        ),
        ClientCmd::HandOff {
            node,
            partition,
            to,
        } => answer(
            client::hand_off_blocking(node, Partition(partition), NodeId(to)),
            |started| if started { "started" } else { "refused" }.to_string(),
        ),
        ClientCmd::SwapBack { node, partition } => answer(
            client::swap_back_blocking(node, Partition(partition)),
            |done| if done { "swapped back" } else { "refused" }.to_string(),
        ),
        ClientCmd::Fault(args) => match args.changes() {
            Ok(changes) => answer(client::fault_blocking(args.node, &changes), |s| {
                serde_json::to_string(&s).expect("the faults are plain data")
            }),
            Err(e) => usage(e),
        },
    }
}
