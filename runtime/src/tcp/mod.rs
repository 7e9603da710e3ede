//! The node over tokio TCP, hosting any number of partitions: one task
//! runs every partition's `node::Node` and the resend timer; a listener
//! task accepts connections and a reader task per connection decodes frames
//! (`crate::wire`), a peer's message into the node's inbox with the
//! partition it names, a request to the node's task and its answer back;
//! one writer task per peer connects on demand and frames what the
//! partitions send.
//!
//! A message that cannot be sent (the peer is down, the connection broke,
//! the peer's outbox is full) is dropped, as the network may drop any
//! message; the resend timer repairs it. The node's disk and control-plane
//! calls are blocking and run on the node's task, one step of one partition
//! at a time. A partition's step lock (`PartitionConfig::step`), shared by
//! several nodes of one process, is held through each step: their steps of
//! that partition then never interleave, which is what lets `crate::demo`
//! write one trace per partition that orders every node's steps while the
//! nodes run on several threads.
//!
//! Besides the peers' messages, the port takes requests (`Frame`): a
//! client's publish and settle (the consumer's `Node::settle`), unrouted
//! or routed (`routed`: answered by the implementation's
//! `routing::server::answer`, MOVED, ASK or try again), a routed
//! publish's retry (`Node::publish_retry`, answered from the owner's
//! history when it holds the key), waits for a confirm, an operator's or
//! the controller's requests.
//!
//! Readers and writers consult the node's network fault layer (`faults`):
//! links cut and healed while it runs, seeded drop and delay rates; with
//! no fault set it costs one atomic load per frame.
//!
//! `kill` aborts every task at once: the volatile state goes, the sockets
//! close, the data directories stay, as with `kill -9` of a process.

pub mod client;
pub mod faults;
mod frame;
mod io;
pub mod routed;

pub use faults::{Fate, FaultChange, FaultCounts, FaultState, Faults, Link, Rates};
pub use frame::{Frame, Reply, RoutedOp};

use crate::control::{ControlPlane, CrashPoint};
use crate::node::{Node, NodeConfig, NodeError, Retry, Settled};
use crate::partition::Partition;
use crate::trace::SharedTracer;
use io::{accept, write_to_peer, PartitionEnv, Readers};
use livemove_impl::routing::{self, Attempt, ClientReply, Redirect};
use livemove_impl::{Epoch, Msg, Mutants, NodeId, Position};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Messages waiting for the node's task.
pub const INBOX_MAX: usize = 4096;
/// Messages waiting for one peer's connection; more are dropped.
pub const OUTBOX_MAX: usize = 1024;
/// Requests waiting for the node's task.
pub const COMMANDS_MAX: usize = 1024;
/// Callers waiting at once for a position to be confirmed, per partition.
pub const WAITERS_MAX: usize = 1024;

/// One partition a node hosts.
pub struct PartitionConfig {
    /// The partition.
    pub partition: Partition,
    /// The control plane holding its record.
    pub control: Box<dyn ControlPlane>,
    /// Where its NDJSON trace events go; `None`: no trace.
    pub trace: Option<SharedTracer>,
    /// Held through each step of this partition (a message, a tick, a
    /// batch of publishes, a join, a handoff): nodes of one process that
    /// share it and the partition's trace never interleave their steps of
    /// it, so the trace is one order of them. `None`: no lock.
    pub step: Option<StepLock>,
}

/// A partition's step lock, shared by the nodes of one process.
pub type StepLock = std::sync::Arc<std::sync::Mutex<()>>;

/// Hold `lock` (if any) for one step; a step that panicked left nothing
/// half-done the lock protects (it orders steps, it guards no data).
pub fn hold(lock: &Option<StepLock>) -> Option<std::sync::MutexGuard<'_, ()>> {
    lock.as_ref()
        .map(|l| l.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// How a TCP node is started.
pub struct TcpNodeConfig {
    /// The node.
    pub id: NodeId,
    /// Its data directory: each partition's disk log and incarnation file
    /// in `<data>/p<N>`.
    pub data: PathBuf,
    /// Mutants switched on in the implementation's machines.
    pub mutants: Mutants,
    /// Where it listens.
    pub listen: SocketAddr,
    /// Where every other node listens.
    pub peers: BTreeMap<NodeId, SocketAddr>,
    /// The partitions it hosts.
    pub partitions: Vec<PartitionConfig>,
    /// The resend timer's period.
    pub tick: Duration,
    /// The start of the run's clock, for trace times (nodes sharing a
    /// trace share it).
    pub clock: Instant,
    /// Whether the node takes `Frame::Fault` requests on its port (cut and
    /// heal links, drop and delay rates: `faults`). Off, they are refused;
    /// `TcpNode::faults` sets them in process either way.
    pub fault_requests: bool,
    /// Tests only: the process's crash point, for the `Persist` batches of
    /// its partitions' nodes (`persist:K`; the guarded writes' points wrap
    /// the control planes in `partitions`); `None` in operation.
    pub crash: Option<CrashPoint>,
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
    /// A partition's data directory could not be created.
    #[error("node {node}: data directory {}: {source}", path.display())]
    DataDir {
        /// The node.
        node: NodeId,
        /// The directory.
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
    /// A request named a partition this node does not host.
    #[error("node {node} hosts no partition {partition}")]
    UnknownPartition {
        /// The node.
        node: NodeId,
        /// The partition asked for.
        partition: Partition,
    },
    /// A wait for a confirm was refused.
    #[error("node {node}: {partition}: cannot wait for position {pos} to be confirmed: {reason}")]
    NotConfirmable {
        /// The node.
        node: NodeId,
        /// The partition.
        partition: Partition,
        /// The position.
        pos: Position,
        /// Why.
        reason: &'static str,
    },
    /// A fault request came to a node that does not take them.
    #[error("node {node} takes no fault requests (started without --allow-faults)")]
    FaultsDisabled {
        /// The node.
        node: NodeId,
    },
    /// The node's task is gone (killed, or stopped on an error it logged).
    #[error("node {node} is not running")]
    Stopped {
        /// The node.
        node: NodeId,
    },
}

/// What a node reports about its copy of one partition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The partition.
    pub partition: Partition,
    /// The process incarnation (of this partition's copy).
    pub inc: u32,
    /// The last position of its log.
    pub log_len: Position,
    /// The epoch it serves at, while it serves.
    pub serving: Option<Epoch>,
    /// Its confirmed tail, while it serves.
    pub confirmed: Option<Position>,
    /// Whether it admits publishes (serving with admission open).
    pub admitting: bool,
    /// Whether it believes it is a suspended follower.
    pub suspended: bool,
    /// Whether its restart waits for its suspension to commit.
    pub restarting: bool,
}

type Answer<T> = oneshot::Sender<Result<T, TcpError>>;

enum Command {
    Publish {
        partition: Partition,
        key: u64,
        reply: Answer<Position>,
    },
    Status {
        partition: Partition,
        reply: Answer<Status>,
    },
    WaitConfirmed {
        partition: Partition,
        pos: Position,
        /// The epoch the entry at `pos` was appended at, when known: the
        /// wait is answered only by the serving state of that epoch.
        epoch: Option<Epoch>,
        reply: Answer<()>,
    },
    Join {
        partition: Partition,
        replaces: Option<NodeId>,
        leaving: Option<NodeId>,
        reply: Answer<bool>,
    },
    HandOff {
        partition: Partition,
        to: NodeId,
        reply: Answer<bool>,
    },
    SwapBack {
        partition: Partition,
        reply: Answer<bool>,
    },
    Settle {
        partition: Partition,
        reply: Answer<Settled>,
    },
    Routed {
        partition: Partition,
        epoch: Epoch,
        asking: bool,
        op: RoutedOp,
        reply: Answer<Routed>,
    },
}

/// How a node answered a routed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routed {
    /// Served: a publish durable on the owner at this position.
    Published(Position),
    /// Served: a settle durable on the owner.
    Settled(Settled),
    /// Served: a publish retry, answered from the owner's history or
    /// appended, durable on the owner.
    Retried(Retry),
    /// Redirected (`MOVED` or `ASK`).
    Redirect(Redirect),
    /// Not served along this route yet: try it again.
    TryAgain,
}

/// A running TCP node.
pub struct TcpNode {
    id: NodeId,
    commands: mpsc::Sender<Command>,
    faults: Arc<Faults>,
    tasks: Vec<JoinHandle<()>>,
    node_task: JoinHandle<Result<(), NodeError>>,
}

impl TcpNode {
    /// Boot every partition on its data directory and start the tasks.
    pub async fn start(cfg: TcpNodeConfig) -> Result<TcpNode, TcpError> {
        let id = cfg.id;
        let listener = TcpListener::bind(cfg.listen)
            .await
            .map_err(|source| TcpError::Listen {
                node: id,
                addr: cfg.listen,
                source,
            })?;
        let mut tasks = Vec::new();
        let mut outboxes = BTreeMap::new();
        let faults = Arc::new(Faults::new());
        for (&peer, &addr) in &cfg.peers {
            if peer == id {
                continue;
            }
            let (tx, rx) = mpsc::channel(OUTBOX_MAX);
            outboxes.insert(peer, tx);
            tasks.push(tokio::spawn(write_to_peer(
                id,
                peer,
                addr,
                rx,
                faults.clone(),
            )));
        }
        let mut hosted = BTreeMap::new();
        for p in cfg.partitions {
            let mut env = PartitionEnv {
                partition: p.partition,
                start: cfg.clock,
                outboxes: outboxes.clone(),
                trace: p.trace,
            };
            let node_cfg = NodeConfig {
                id,
                data: p.partition.data_dir(&cfg.data),
                mutants: cfg.mutants,
                resend_ms: (cfg.tick * crate::node::RESEND_TICKS).as_millis() as u64,
                reread_ticks: crate::node::REREAD_TICKS,
                crash: cfg
                    .crash
                    .as_ref()
                    .map(|c| c.batches(p.partition.to_string())),
            };
            std::fs::create_dir_all(&node_cfg.data).map_err(|source| TcpError::DataDir {
                node: id,
                path: node_cfg.data.clone(),
                source,
            })?;
            let node = {
                let _step = hold(&p.step);
                Node::boot(node_cfg, p.control, &mut env)?
            };
            hosted.insert(
                p.partition,
                Hosted {
                    node,
                    env,
                    step: p.step,
                    waiters: Vec::new(),
                },
            );
        }
        let mut addrs = cfg.peers.clone();
        addrs.insert(id, listener.local_addr().unwrap_or(cfg.listen));
        let (inbox_tx, inbox) = mpsc::channel(INBOX_MAX);
        let (commands, command_rx) = mpsc::channel(COMMANDS_MAX);
        let readers = Readers {
            node: id,
            inbox: inbox_tx,
            commands: commands.clone(),
            faults: faults.clone(),
            fault_requests: cfg.fault_requests,
            addrs: Arc::new(addrs),
        };
        tasks.push(tokio::spawn(accept(listener, readers)));
        let node_task = tokio::spawn(run(id, hosted, inbox, command_rx, cfg.tick));
        Ok(TcpNode {
            id,
            commands,
            faults,
            tasks,
            node_task,
        })
    }

    /// The node.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The node's network fault layer: cut and heal its links, set drop
    /// and delay rates on its sends.
    pub fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }

    /// Publish message `key` on `partition` (this node must serve it).
    pub async fn publish(&self, partition: Partition, key: u64) -> Result<Position, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::Publish {
            partition,
            key,
            reply,
        })
        .await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// The node's status for `partition`.
    pub async fn status(&self, partition: Partition) -> Result<Status, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::Status { partition, reply }).await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Wait until this node, serving `partition`, has confirmed `pos`.
    pub async fn wait_confirmed(
        &self,
        partition: Partition,
        pos: Position,
    ) -> Result<(), TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::WaitConfirmed {
            partition,
            pos,
            epoch: None,
            reply,
        })
        .await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Wait until this node, serving `partition` at `epoch` (the epoch
    /// the entry at `pos` was appended at), has confirmed `pos`; refused
    /// as soon as it serves at no or another epoch, since the entry at
    /// `pos` may then be another one.
    pub async fn wait_confirmed_at(
        &self,
        partition: Partition,
        pos: Position,
        epoch: Epoch,
    ) -> Result<(), TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::WaitConfirmed {
            partition,
            pos,
            epoch: Some(epoch),
            reply,
        })
        .await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Join `partition` as a planned move's learner, replacing the
    /// follower on `replaces` if one is named.
    pub async fn join(
        &self,
        partition: Partition,
        replaces: Option<NodeId>,
    ) -> Result<bool, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::Join {
            partition,
            replaces,
            leaving: None,
            reply,
        })
        .await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Hand `partition`'s ownership over to the follower on `to`.
    pub async fn hand_off(&self, partition: Partition, to: NodeId) -> Result<bool, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::HandOff {
            partition,
            to,
            reply,
        })
        .await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Swap `partition`'s leaving copy back in, the swapped move's target
    /// being down or lost (this node must own it): `Node::swap_back`.
    pub async fn swap_back(&self, partition: Partition) -> Result<bool, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::SwapBack { partition, reply }).await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// Settle the oldest message this node, owner of `partition`,
    /// delivers: its key, its `Delete`'s position and epoch, durable on
    /// this node, not yet confirmed (`wait_confirmed_at` says when it is).
    pub async fn settle(&self, partition: Partition) -> Result<Settled, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::Settle { partition, reply }).await?;
        rx.await.map_err(|_| self.stopped())?
    }

    /// A routed request for `partition` at the client's route's `epoch`:
    /// served if `routing::server::answer` says so from this node's view,
    /// else its redirect or try-again.
    pub async fn routed(
        &self,
        partition: Partition,
        epoch: Epoch,
        asking: bool,
        op: RoutedOp,
    ) -> Result<Routed, TcpError> {
        let (reply, rx) = oneshot::channel();
        self.call(Command::Routed {
            partition,
            epoch,
            asking,
            op,
            reply,
        })
        .await?;
        rx.await.map_err(|_| self.stopped())?
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

    /// Run until the node stops: it stops only on an error of a disk or
    /// control plane, which is returned.
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

/// Publishes written to one partition's disk together at most (group
/// commit).
const PUBLISH_BATCH_MAX: usize = 256;

/// A caller waiting for a position to be confirmed, by the serving state
/// of one epoch when it names one.
struct Waiter {
    pos: Position,
    epoch: Option<Epoch>,
    reply: Answer<()>,
}

/// One hosted partition: its node, its environment, the callers waiting
/// for confirms.
struct Hosted {
    node: Node,
    env: PartitionEnv,
    step: Option<StepLock>,
    waiters: Vec<Waiter>,
}

impl Hosted {
    /// One step of this partition's node, its step lock held throughout.
    fn step<T>(
        &mut self,
        f: impl FnOnce(&mut Node, &mut PartitionEnv) -> Result<T, NodeError>,
    ) -> Result<T, NodeError> {
        let _step = hold(&self.step);
        f(&mut self.node, &mut self.env)
    }

    fn status(&self, partition: Partition) -> Status {
        let n = &self.node;
        Status {
            partition,
            inc: n.inc(),
            log_len: n.replica().len(),
            serving: n.serving().map(|s| s.epoch()),
            confirmed: n.serving().map(|s| s.confirmed_tail()),
            admitting: n.serving().is_some_and(|s| s.admission_open()),
            suspended: n.is_suspended(),
            restarting: n.is_restarting(),
        }
    }

    /// Answer every wait whose position is confirmed now, and every wait
    /// if the node stopped serving or (for a wait that names one) serves
    /// at another epoch.
    fn answer_waiters(&mut self, id: NodeId, partition: Partition) {
        if self.waiters.is_empty() {
            return;
        }
        let serving = self.node.serving().map(|s| (s.epoch(), s.confirmed_tail()));
        let verdict = |w: &Waiter| match serving {
            None => Some(Err("stopped serving")),
            Some((e, _)) if w.epoch.is_some_and(|we| we != e) => {
                Some(Err("serves at another epoch than the entry's"))
            }
            Some((_, tail)) if tail >= w.pos => Some(Ok(())),
            Some(_) => None,
        };
        let mut pending = Vec::new();
        for w in std::mem::take(&mut self.waiters) {
            match verdict(&w) {
                None => pending.push(w),
                Some(v) => {
                    let pos = w.pos;
                    let _ = w.reply.send(v.map_err(|reason| TcpError::NotConfirmable {
                        node: id,
                        partition,
                        pos,
                        reason,
                    }));
                }
            }
        }
        self.waiters = pending;
    }
}

/// One step of `partition`'s node for a request, answered with its result;
/// `unknown` when this node does not host the partition.
fn request<T>(
    hosted: &mut BTreeMap<Partition, Hosted>,
    partition: Partition,
    reply: Answer<T>,
    unknown: TcpError,
    f: impl FnOnce(&mut Node, &mut PartitionEnv) -> Result<T, NodeError>,
) -> Result<(), NodeError> {
    let Some(h) = hosted.get_mut(&partition) else {
        let _ = reply.send(Err(unknown));
        return Ok(());
    };
    let v = h.step(f)?;
    let _ = reply.send(Ok(v));
    Ok(())
}

/// A request other than a publish: answer it, or queue the wait.
fn command(
    id: NodeId,
    c: Command,
    hosted: &mut BTreeMap<Partition, Hosted>,
) -> Result<(), NodeError> {
    let unknown = |partition| TcpError::UnknownPartition {
        node: id,
        partition,
    };
    match c {
        Command::Publish { .. } => unreachable!("publishes are batched by the caller"),
        Command::Status { partition, reply } => {
            let _ = reply.send(
                hosted
                    .get(&partition)
                    .map(|h| h.status(partition))
                    .ok_or_else(|| unknown(partition)),
            );
        }
        Command::WaitConfirmed {
            partition,
            pos,
            epoch,
            reply,
        } => {
            let Some(h) = hosted.get_mut(&partition) else {
                let _ = reply.send(Err(unknown(partition)));
                return Ok(());
            };
            let refuse = |reason| {
                Err(TcpError::NotConfirmable {
                    node: id,
                    partition,
                    pos,
                    reason,
                })
            };
            if h.node.serving().is_none() {
                let _ = reply.send(refuse("not serving"));
            } else if h.waiters.len() >= WAITERS_MAX {
                let _ = reply.send(refuse("too many waiting"));
            } else {
                h.waiters.push(Waiter { pos, epoch, reply });
                h.answer_waiters(id, partition);
            }
        }
        Command::Join {
            partition,
            replaces,
            leaving,
            reply,
        } => {
            let unknown = unknown(partition);
            request(hosted, partition, reply, unknown, |n, e| {
                n.join_as(replaces, leaving, e)
            })?
        }
        Command::HandOff {
            partition,
            to,
            reply,
        } => {
            let unknown = unknown(partition);
            request(hosted, partition, reply, unknown, |n, e| n.hand_off(to, e))?
        }
        Command::SwapBack { partition, reply } => {
            let unknown = unknown(partition);
            request(hosted, partition, reply, unknown, |n, e| n.swap_back(e))?
        }
        Command::Settle { partition, reply } => {
            let Some(h) = hosted.get_mut(&partition) else {
                let _ = reply.send(Err(unknown(partition)));
                return Ok(());
            };
            let _ = reply.send(refusal(h.step(|n, e| n.settle(e)))?);
            h.answer_waiters(id, partition);
        }
        Command::Routed {
            partition,
            epoch,
            asking,
            op,
            reply,
        } => {
            let Some(h) = hosted.get_mut(&partition) else {
                let _ = reply.send(Err(unknown(partition)));
                return Ok(());
            };
            let attempt = Attempt {
                node: id,
                epoch,
                asking,
            };
            let answered = routing::answer(&h.node.server_view(), &attempt);
            let served = match answered {
                ClientReply::Redirect(r) => Ok(Routed::Redirect(r)),
                ClientReply::TryAgain => Ok(Routed::TryAgain),
                ClientReply::Ok => match op {
                    RoutedOp::Publish { key } => {
                        refusal(h.step(|n, e| n.publish(key, e)))?.map(Routed::Published)
                    }
                    RoutedOp::Settle => refusal(h.step(|n, e| n.settle(e)))?.map(Routed::Settled),
                    RoutedOp::PublishRetry { key } => {
                        refusal(h.step(|n, e| n.publish_retry(key, e)))?.map(Routed::Retried)
                    }
                },
            };
            let _ = reply.send(served);
            h.answer_waiters(id, partition);
        }
    }
    Ok(())
}

/// A request's result: a refusal (not serving, the owner's refusal) is the
/// caller's answer; a disk or control-plane failure stops the node.
fn refusal<T>(r: Result<T, NodeError>) -> Result<Result<T, TcpError>, NodeError> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(
            e @ (NodeError::NotServing { .. }
            | NodeError::Refused { .. }
            | NodeError::SettleRefused { .. }),
        ) => Ok(Err(e.into())),
        Err(e) => Err(e),
    }
}

/// Queued publishes of one partition, written to its disk together.
fn publish_batch(
    id: NodeId,
    hosted: &mut BTreeMap<Partition, Hosted>,
    partition: Partition,
    batch: Vec<(u64, Answer<Position>)>,
) -> Result<(), NodeError> {
    let Some(h) = hosted.get_mut(&partition) else {
        for (_, reply) in batch {
            let _ = reply.send(Err(TcpError::UnknownPartition {
                node: id,
                partition,
            }));
        }
        return Ok(());
    };
    let keys: Vec<u64> = batch.iter().map(|(k, _)| *k).collect();
    let answers = h.step(|n, e| n.publish_batch(&keys, e))?;
    for ((_, reply), a) in batch.into_iter().zip(answers) {
        let _ = reply.send(a.map_err(TcpError::from));
    }
    h.answer_waiters(id, partition);
    Ok(())
}

/// The node's task: messages, the timer and requests, one at a time
/// (queued publishes together, per partition).
async fn run(
    id: NodeId,
    mut hosted: BTreeMap<Partition, Hosted>,
    mut inbox: mpsc::Receiver<(Partition, Msg)>,
    mut commands: mpsc::Receiver<Command>,
    tick: Duration,
) -> Result<(), NodeError> {
    let mut timer = tokio::time::interval(tick);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let step = tokio::select! {
            Some((partition, msg)) = inbox.recv() => match hosted.get_mut(&partition) {
                Some(h) => h.step(|n, e| n.on_msg(msg, e)).map(|()| h.answer_waiters(id, partition)),
                None => {
                    tracing::warn!(node = %id, %partition, %msg, "a message for a partition this node does not host");
                    Ok(())
                }
            },
            _ = timer.tick() => {
                let mut result = Ok(());
                for (&partition, h) in hosted.iter_mut() {
                    result = h.step(|n, e| n.on_tick(e));
                    if result.is_err() {
                        break;
                    }
                    h.answer_waiters(id, partition);
                    // Let messages and requests in between partitions.
                    tokio::task::yield_now().await;
                }
                result
            }
            Some(c) = commands.recv() => {
                // Group commit: the publishes queued behind this one go to
                // their partition's disk together (at most
                // PUBLISH_BATCH_MAX); other requests are answered after
                // them, in order.
                let mut batches: BTreeMap<Partition, Vec<(u64, Answer<Position>)>> = BTreeMap::new();
                let mut others = Vec::new();
                let mut taken = 0;
                let mut next = Some(c);
                while let Some(c) = next.take() {
                    match c {
                        Command::Publish { partition, key, reply } => {
                            batches.entry(partition).or_default().push((key, reply));
                        }
                        other => others.push(other),
                    }
                    taken += 1;
                    if taken < PUBLISH_BATCH_MAX {
                        next = commands.try_recv().ok();
                    }
                }
                let mut result = Ok(());
                for (partition, batch) in batches {
                    result = result.and_then(|()| publish_batch(id, &mut hosted, partition, batch));
                }
                for c in others {
                    result = result.and_then(|()| command(id, c, &mut hosted));
                }
                result
            }
            else => return Ok(()),
        };
        if let Err(e) = step {
            tracing::error!(node = %id, error = %e, "node stops");
            return Err(e);
        }
    }
}

/// Start a node on a single-threaded tokio runtime of its own and run it
/// until it stops (on an error of a disk or control plane) or the process
/// is killed: the body of `livemove node`.
pub fn serve_blocking(cfg: TcpNodeConfig) -> Result<(), TcpError> {
    let id = cfg.id;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| TcpError::Runtime { node: id, source })?;
    rt.block_on(async {
        let node = TcpNode::start(cfg).await?;
        node.wait().await
    })
}
