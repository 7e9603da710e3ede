//! The node over tokio TCP: one task runs the node (`crate::node`) and its
//! resend timer; a listener task accepts peers and a reader task per
//! connection decodes frames (`crate::wire`) into the node's inbox; one
//! writer task per peer connects on demand and frames what the node sends.
//!
//! A message that cannot be sent (the peer is down, the connection broke,
//! the peer's outbox is full) is dropped, as the network may drop any
//! message; the resend timer repairs it. The node's disk and control-plane
//! calls are blocking and run on the node's task: one partition per node,
//! so nothing else waits on that task.
//!
//! `kill` aborts every task at once: the volatile state goes, the sockets
//! close, the data directory stays, as with `kill -9` of a process.
//!
//! The same port takes clients (`client.rs`): a `Frame::Publish` or
//! `Frame::Status` is answered on its connection (`Reply`).

pub mod client;
mod frame;
mod io;

pub use frame::{Frame, Reply};

use crate::control::ControlPlane;
use crate::node::{Node, NodeConfig, NodeError};
use crate::trace::Tracer;
use io::{accept, write_to_peer, TcpEnv};
use livemove_impl::{Msg, NodeId, Position};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Messages waiting for the node's task.
pub const INBOX_MAX: usize = 1024;
/// Messages waiting for one peer's connection; more are dropped.
pub const OUTBOX_MAX: usize = 256;
/// Requests waiting for the node's task.
pub const COMMANDS_MAX: usize = 64;
/// Callers waiting at once for a position to be confirmed.
pub const WAITERS_MAX: usize = 1024;

/// How a TCP node is started.
pub struct TcpNodeConfig {
    /// The node and its data directory.
    pub node: NodeConfig,
    /// Where it listens.
    pub listen: SocketAddr,
    /// Where every other node listens.
    pub peers: BTreeMap<NodeId, SocketAddr>,
    /// The control plane holding the record.
    pub control: Box<dyn ControlPlane>,
    /// The resend timer's period.
    pub tick: Duration,
    /// Where to append NDJSON trace events; `None`: no trace.
    pub trace: Option<PathBuf>,
}

/// A TCP node could not start or answer.
#[derive(Debug, thiserror::Error)]
pub enum TcpError {
    /// The node failed to boot or stopped on an error.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// The listening socket could not be bound.
    #[error("node {node}: listen on {addr}: {source}")]
    Listen {
        /// The node.
        node: NodeId,
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The trace file could not be opened.
    #[error("node {node}: trace file {}: {source}", path.display())]
    Trace {
        /// The node.
        node: NodeId,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The tokio runtime of a node process could not start.
    #[error("node {node}: tokio runtime: {source}")]
    Runtime {
        /// The node.
        node: NodeId,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A wait for a confirm was refused.
    #[error("node {node}: cannot wait for position {pos} to be confirmed: {reason}")]
    NotConfirmable {
        /// The node.
        node: NodeId,
        /// The position.
        pos: Position,
        /// Why.
        reason: &'static str,
    },
    /// The node's task is gone (killed, or stopped on an error it logged).
    #[error("node {node} is not running")]
    Stopped {
        /// The node.
        node: NodeId,
    },
}

/// What a node reports about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The process incarnation.
    pub inc: u32,
    /// The last position of its log.
    pub log_len: Position,
    /// Its confirmed tail, while it serves.
    pub confirmed: Option<Position>,
    /// Whether it believes it is a suspended follower.
    pub suspended: bool,
    /// Whether its restart waits for its suspension to commit.
    pub restarting: bool,
}

enum Command {
    Publish {
        key: u64,
        reply: oneshot::Sender<Result<Position, NodeError>>,
    },
    Status {
        reply: oneshot::Sender<Status>,
    },
    WaitConfirmed {
        pos: Position,
        reply: oneshot::Sender<Result<(), &'static str>>,
    },
}

/// A running TCP node.
pub struct TcpNode {
    id: NodeId,
    commands: mpsc::Sender<Command>,
    tasks: Vec<JoinHandle<()>>,
    node_task: JoinHandle<Result<(), NodeError>>,
}

impl TcpNode {
    /// Boot the node on its data directory and start its tasks.
    pub async fn start(cfg: TcpNodeConfig) -> Result<TcpNode, TcpError> {
        let id = cfg.node.id;
        let listener = TcpListener::bind(cfg.listen)
            .await
            .map_err(|source| TcpError::Listen {
                node: id,
                addr: cfg.listen,
                source,
            })?;
        let trace = match &cfg.trace {
            None => None,
            Some(path) => {
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| TcpError::Trace {
                        node: id,
                        path: path.clone(),
                        source,
                    })?;
                Some(Tracer::new(Box::new(std::io::LineWriter::new(f))))
            }
        };
        let mut tasks = Vec::new();
        let mut outboxes = BTreeMap::new();
        for (&peer, &addr) in &cfg.peers {
            if peer == id {
                continue;
            }
            let (tx, rx) = mpsc::channel(OUTBOX_MAX);
            outboxes.insert(peer, tx);
            tasks.push(tokio::spawn(write_to_peer(addr, rx)));
        }
        let mut env = TcpEnv {
            start: Instant::now(),
            outboxes,
            trace,
        };
        let node = Node::boot(cfg.node, cfg.control, &mut env)?;
        let (inbox_tx, inbox) = mpsc::channel(INBOX_MAX);
        let (commands, command_rx) = mpsc::channel(COMMANDS_MAX);
        tasks.push(tokio::spawn(accept(listener, inbox_tx, commands.clone())));
        let node_task = tokio::spawn(run(node, env, inbox, command_rx, cfg.tick));
        Ok(TcpNode {
            id,
            commands,
            tasks,
            node_task,
        })
    }

    /// Publish message `key` on this node (it must be serving).
    pub async fn publish(&self, key: u64) -> Result<Position, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::Publish { key, reply }).await?;
        Ok(rx.await.map_err(|_| self.stopped())??)
    }

    /// The node's status.
    pub async fn status(&self) -> Result<Status, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::Status { reply }).await?;
        rx.await.map_err(|_| self.stopped())
    }

    /// Wait until this node, serving, has confirmed `pos`.
    pub async fn wait_confirmed(&self, pos: Position) -> Result<(), TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::WaitConfirmed { pos, reply }).await?;
        rx.await
            .map_err(|_| self.stopped())?
            .map_err(|reason| TcpError::NotConfirmable {
                node: self.id,
                pos,
                reason,
            })
    }

    /// Abort every task of the node and wait until they are gone: its
    /// listening socket and connections are closed on return.
    pub async fn kill(self) {
        self.node_task.abort();
        for t in &self.tasks {
            t.abort();
        }
        let _ = self.node_task.await;
        for t in self.tasks {
            // A cancelled task is what was asked for; a panic in one would
            // have been reported by tokio already.
            let _ = t.await;
        }
    }

    /// Run until the node stops: it stops only on an error of its disk
    /// or control plane, which is returned.
    pub async fn wait(self) -> Result<(), TcpError> {
        let id = self.id;
        let ended = self.node_task.await;
        for t in &self.tasks {
            t.abort();
        }
        match ended {
            Ok(Ok(())) => Err(TcpError::Stopped { node: id }),
            Ok(Err(e)) => Err(e.into()),
            Err(_) => Err(TcpError::Stopped { node: id }),
        }
    }

    async fn call(&self, c: Command) -> Result<(), TcpError> {
        self.commands.send(c).await.map_err(|_| self.stopped())
    }

    fn stopped(&self) -> TcpError {
        TcpError::Stopped { node: self.id }
    }
}

/// Publishes written to the disk together at most (group commit).
const PUBLISH_BATCH_MAX: usize = 256;

type Waiters = Vec<(Position, oneshot::Sender<Result<(), &'static str>>)>;

/// A request other than a publish: answer it, or queue the wait.
fn command(c: Command, node: &Node, waiters: &mut Waiters) {
    match c {
        Command::Publish { .. } => unreachable!("publishes are batched by the caller"),
        Command::Status { reply } => {
            let _ = reply.send(Status {
                inc: node.inc(),
                log_len: node.replica().len(),
                confirmed: node.serving().map(|s| s.confirmed_tail()),
                suspended: node.is_suspended(),
                restarting: node.is_restarting(),
            });
        }
        Command::WaitConfirmed { pos, reply } => {
            if node.serving().is_none() {
                let _ = reply.send(Err("not serving"));
            } else if waiters.len() >= WAITERS_MAX {
                let _ = reply.send(Err("too many waiting"));
            } else {
                waiters.push((pos, reply));
            }
        }
    }
}

/// The node's task: messages, the timer and requests, one at a time
/// (queued publishes together).
async fn run(
    mut node: Node,
    mut env: TcpEnv,
    mut inbox: mpsc::Receiver<Msg>,
    mut commands: mpsc::Receiver<Command>,
    tick: Duration,
) -> Result<(), NodeError> {
    let mut timer = tokio::time::interval(tick);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut waiters: Waiters = Vec::new();
    loop {
        let step = tokio::select! {
            Some(msg) = inbox.recv() => node.on_msg(msg, &mut env),
            _ = timer.tick() => node.on_tick(&mut env),
            Some(c) = commands.recv() => {
                // Group commit: the publishes queued behind this one go to
                // the disk with it, in one write (at most PUBLISH_BATCH_MAX).
                let mut keys = Vec::new();
                let mut replies = Vec::new();
                let mut next = Some(c);
                while let Some(c) = next.take() {
                    match c {
                        Command::Publish { key, reply } => {
                            keys.push(key);
                            replies.push(reply);
                            if keys.len() < PUBLISH_BATCH_MAX {
                                next = commands.try_recv().ok();
                            }
                        }
                        other => {
                            // Everything queued before it is handled first.
                            if !keys.is_empty() {
                                next = Some(other);
                            } else {
                                command(other, &node, &mut waiters);
                            }
                            break;
                        }
                    }
                }
                let published = if keys.is_empty() {
                    Ok(())
                } else {
                    node.publish_batch(&keys, &mut env).map(|answers| {
                        for (reply, a) in replies.into_iter().zip(answers) {
                            let _ = reply.send(a);
                        }
                    })
                };
                if let Some(c) = next {
                    command(c, &node, &mut waiters);
                }
                published
            }
            else => return Ok(()),
        };
        if let Err(e) = step {
            tracing::error!(node = %node.id(), error = %e, "node stops");
            return Err(e);
        }
        if !waiters.is_empty() {
            // Answer every wait whose position is confirmed now, and every
            // wait if the node stopped serving.
            let tail = node.serving().map(|s| s.confirmed_tail());
            let (done, pending): (Vec<_>, Vec<_>) = std::mem::take(&mut waiters)
                .into_iter()
                .partition(|(pos, _)| match tail {
                    None => true,
                    Some(t) => t >= *pos,
                });
            waiters = pending;
            for (_, reply) in done {
                let _ = reply.send(tail.map(|_| ()).ok_or("stopped serving"));
            }
        }
    }
}

/// Start a node on a single-threaded tokio runtime of its own and run it
/// until it stops (on an error of its disk or control plane) or the
/// process is killed: the body of `livemove node`.
pub fn serve_blocking(cfg: TcpNodeConfig) -> Result<(), TcpError> {
    let id = cfg.node.id;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| TcpError::Runtime { node: id, source })?;
    rt.block_on(async {
        let node = TcpNode::start(cfg).await?;
        node.wait().await
    })
}
