//! `livemove node`: one node process hosting one partition's copy over TCP
//! (`livemove_runtime::tcp`), until it is killed or its disk or control
//! plane fails (exit 1). `livemove client`: make the epoch-1 record,
//! publish on a node, read a node's status.

use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use clap::{Args, Parser, Subcommand};
use livemove_impl::store::Record;
use livemove_impl::{Mutants, NodeId, StorageId};
use livemove_runtime::control::{ControlPlane, EtcdConfig, EtcdControlPlane, FileControlPlane};
use livemove_runtime::node::NodeConfig;
use livemove_runtime::tcp::{self, client, TcpNodeConfig};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
pub struct NodeArgs {
    /// This node's number (`--id 2` is n2).
    #[arg(long, value_parser = parse_node_number)]
    id: u8,
    /// Data directory: the replica's disk log and the incarnation file.
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
    /// Append NDJSON trace events to this file.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// The resend timer's period, in milliseconds.
    #[arg(long, default_value_t = 20, value_parser = super::positive_count)]
    tick_ms: usize,
}

/// Where the record lives: a file (the default control plane) or etcd.
#[derive(Args)]
pub struct StoreArgs {
    /// The file control plane's record file.
    #[arg(long, required_unless_present = "etcd")]
    store: Option<PathBuf>,
    /// An etcd client URL (`http://127.0.0.1:2379`) holding the record.
    #[arg(long, conflicts_with = "store")]
    etcd: Option<String>,
    /// The etcd key of the record [default: livemove/record].
    #[arg(long, requires = "etcd")]
    etcd_key: Option<String>,
}

impl StoreArgs {
    fn open(&self) -> Result<Box<dyn ControlPlane>, String> {
        match (&self.store, &self.etcd) {
            (Some(_), _) if self.etcd_key.is_some() => {
                Err("--etcd-key names a key in etcd; it goes with --etcd, not --store".into())
            }
            (Some(path), _) => FileControlPlane::open(path)
                .map(|c| Box::new(c) as Box<dyn ControlPlane>)
                .map_err(|e| format!("--store: {e}")),
            (None, Some(endpoint)) => Ok(Box::new(EtcdControlPlane::new(EtcdConfig {
                endpoint: endpoint.clone(),
                key: self
                    .etcd_key
                    .clone()
                    .unwrap_or_else(|| "livemove/record".into()),
            }))),
            (None, None) => unreachable!("clap requires --store or --etcd"),
        }
    }
}

#[derive(Subcommand)]
pub enum ClientCmd {
    /// Make the epoch-1 record: n1 owns, n2..n<rf> follow (kept if one exists).
    Init {
        #[command(flatten)]
        store: StoreArgs,
        /// The replication factor.
        #[arg(long, value_parser = parse_node_number)]
        rf: u8,
    },
    /// Publish message KEY on the node at ADDR (the owner); prints its position.
    Publish {
        /// The node's address.
        #[arg(long)]
        node: SocketAddr,
        /// The message key.
        #[arg(long)]
        key: u64,
    },
    /// Print the status of the node at ADDR as one JSON object.
    Status {
        /// The node's address.
        #[arg(long)]
        node: SocketAddr,
    },
}

fn parse_node_number(s: &str) -> Result<u8, String> {
    match s.parse::<u8>() {
        Ok(n) if (1..=16).contains(&n) => Ok(n),
        _ => Err(format!("`{s}`: a node number from 1 to 16")),
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

pub fn run_node(args: NodeArgs) -> u8 {
    let id = NodeId(args.id);
    let mut peers: BTreeMap<NodeId, SocketAddr> = args.peers.into_iter().collect();
    peers.insert(id, args.listen);
    let control = match args.store.open() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let cfg = TcpNodeConfig {
        node: NodeConfig {
            id,
            data: args.data,
            mutants: Mutants::NONE,
        },
        listen: args.listen,
        peers,
        control,
        tick: Duration::from_millis(args.tick_ms as u64),
        trace: args.trace,
    };
    match tcp::serve_blocking(cfg) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAIL
        }
    }
}

pub fn run_client(cmd: ClientCmd) -> u8 {
    match cmd {
        ClientCmd::Init { store, rf } => {
            let owner = StorageId::first(NodeId(1));
            let followers = (2..=rf).map(|n| StorageId::first(NodeId(n)));
            let mut control = match store.open() {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            match control.create(&Record::initial(owner, followers, rf)) {
                Ok(r) => {
                    println!(
                        "record {} at epoch {}, owner {}",
                        r.version, r.epoch, r.owner
                    );
                    EXIT_OK
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_FAIL
                }
            }
        }
        ClientCmd::Publish { node, key } => match client::publish_blocking(node, key) {
            Ok(pos) => {
                println!("{pos}");
                EXIT_OK
            }
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_FAIL
            }
        },
        ClientCmd::Status { node } => match client::status_blocking(node) {
            Ok(s) => {
                println!(
                    "{}",
                    serde_json::to_string(&s).expect("a status is plain data")
                );
                EXIT_OK
            }
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_FAIL
            }
        },
    }
}
