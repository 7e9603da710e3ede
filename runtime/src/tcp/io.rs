//! The node's connections and its partitions' environments: a listener and
//! a reader per connection (peers' frames to the inbox with their
//! partition, requests to the node's task and their answers back), a
//! writer per peer, and the `Env` each partition sends and traces through.
//! Readers and writers consult the node's fault layer (`super::faults`).

use super::faults::{Fate, Faults, Link};
use super::{Command, Frame, Reply, Routed, TcpError};
use crate::node::Env;
use crate::partition::Partition;
use crate::trace::{emit_shared, Event, SharedTracer};
use crate::wire::{Connection, PeerMsg};
use livemove_impl::net::Endpoint;
use livemove_impl::{Msg, NodeId};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

/// What every reader of a node shares.
#[derive(Clone)]
pub(super) struct Readers {
    pub(super) node: NodeId,
    pub(super) inbox: mpsc::Sender<(Partition, Msg)>,
    pub(super) commands: mpsc::Sender<Command>,
    pub(super) faults: Arc<Faults>,
    /// Whether `Frame::Fault` requests are taken.
    pub(super) fault_requests: bool,
    /// Where every node listens (this one included): the address a
    /// redirect names.
    pub(super) addrs: Arc<BTreeMap<NodeId, SocketAddr>>,
}

/// Accept peers and clients; each connection's frames go to the inbox or,
/// for a request, to the node's task and back.
pub(super) async fn accept(listener: TcpListener, shared: Readers) {
    // Dropped with this task, so a kill closes every accepted connection.
    let mut readers = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    readers.spawn(read_frames(stream, shared.clone()));
                }
                Err(e) => tracing::warn!(error = %e, "accept failed"),
            },
            Some(_) = readers.join_next() => {}
        }
    }
}

/// Ask the node's task and wait for its answer; `None` when the node's task
/// is gone.
async fn ask<T>(
    commands: &mpsc::Sender<Command>,
    make: impl FnOnce(oneshot::Sender<Result<T, TcpError>>) -> Command,
) -> Option<Result<T, TcpError>> {
    let (reply, rx) = oneshot::channel();
    commands.send(make(reply)).await.ok()?;
    rx.await.ok()
}

fn refused(e: TcpError) -> Reply {
    Reply::Refused {
        reason: e.to_string(),
    }
}

async fn read_frames(stream: TcpStream, shared: Readers) {
    let Readers {
        node,
        inbox,
        commands,
        faults,
        fault_requests,
        addrs,
    } = shared;
    let mut conn = Connection::new(stream);
    // The peer node whose messages this connection carries, once it said.
    let mut peer: Option<NodeId> = None;
    loop {
        let frame = match conn.recv::<Frame>().await {
            Ok(Some(f)) => f,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "connection dropped");
                return;
            }
        };
        // A client's request, whose answer a cut client link loses.
        let from_client = matches!(
            frame,
            Frame::Publish { .. }
                | Frame::Settle { .. }
                | Frame::Routed { .. }
                | Frame::WaitConfirmed { .. }
                | Frame::WaitConfirmedAt { .. }
        );
        let answer = match frame {
            Frame::Hello { from } => {
                peer = Some(from);
                continue;
            }
            Frame::Peer { partition, msg } => {
                if faults.active() && peer.is_some_and(|p| faults.cut_drops(Link::Node(p))) {
                    tracing::debug!(from = ?peer, "link cut: message from the peer dropped");
                    continue;
                }
                if inbox.send((partition, Msg::from(msg))).await.is_err() {
                    return;
                }
                continue;
            }
            Frame::Publish { partition, key } => ask(&commands, |reply| Command::Publish {
                partition,
                key,
                reply,
            })
            .await
            .map(|r| r.map_or_else(refused, |pos| Reply::Published { pos })),
            Frame::WaitConfirmed { partition, pos } => {
                ask(&commands, |reply| Command::WaitConfirmed {
                    partition,
                    pos,
                    epoch: None,
                    reply,
                })
                .await
                .map(|r| r.map_or_else(refused, |()| Reply::Confirmed))
            }
            Frame::Ping if faults.cut_drops(Link::Controller) => {
                tracing::debug!("controller link cut: probe unanswered");
                continue;
            }
            Frame::Ping => Some(Reply::Pong),
            Frame::Fault(change) => Some(if fault_requests {
                Reply::Faults(faults.apply(change))
            } else {
                refused(TcpError::FaultsDisabled { node })
            }),
            Frame::Status { partition } => {
                ask(&commands, |reply| Command::Status { partition, reply })
                    .await
                    .map(|r| r.map_or_else(refused, Reply::Status))
            }
            Frame::Join {
                partition,
                replaces,
                leaving,
            } => ask(&commands, |reply| Command::Join {
                partition,
                replaces,
                leaving,
                reply,
            })
            .await
            .map(|r| r.map_or_else(refused, Reply::Started)),
            Frame::HandOff { partition, to } => ask(&commands, |reply| Command::HandOff {
                partition,
                to,
                reply,
            })
            .await
            .map(|r| r.map_or_else(refused, Reply::Started)),
            Frame::SwapBack { partition } => {
                ask(&commands, |reply| Command::SwapBack { partition, reply })
                    .await
                    .map(|r| r.map_or_else(refused, Reply::Started))
            }
            Frame::Settle { partition } => {
                ask(&commands, |reply| Command::Settle { partition, reply })
                    .await
                    .map(|r| {
                        r.map_or_else(refused, |s| Reply::Settled {
                            key: s.key,
                            pos: s.pos,
                            epoch: s.epoch,
                        })
                    })
            }
            Frame::Routed {
                partition,
                epoch,
                asking,
                op,
            } => ask(&commands, |reply| Command::Routed {
                partition,
                epoch,
                asking,
                op,
                reply,
            })
            .await
            .map(|r| r.map_or_else(refused, |routed| routed_reply(routed, &addrs))),
            Frame::WaitConfirmedAt {
                partition,
                pos,
                epoch,
            } => ask(&commands, |reply| Command::WaitConfirmed {
                partition,
                pos,
                epoch: Some(epoch),
                reply,
            })
            .await
            .map(|r| r.map_or_else(refused, |()| Reply::Confirmed)),
        };
        let Some(answer) = answer else { return };
        if from_client && faults.cut_drops(Link::Clients) {
            tracing::debug!(?answer, "client link cut: answer lost, connection closed");
            return;
        }
        if conn.send(&answer).await.is_err() {
            return;
        }
    }
}

/// A routed request's answer on the wire; a redirect carries the address
/// of the node it names, when known.
fn routed_reply(routed: Routed, addrs: &BTreeMap<NodeId, SocketAddr>) -> Reply {
    match routed {
        Routed::Published(pos) => Reply::Published { pos },
        Routed::Settled(s) => Reply::Settled {
            key: s.key,
            pos: s.pos,
            epoch: s.epoch,
        },
        Routed::Retried(r) => Reply::Retried {
            pos: r.pos,
            entry_epoch: r.entry_epoch,
            held: r.held,
        },
        Routed::TryAgain => Reply::TryAgain,
        Routed::Redirect(redirect) => {
            let to = match redirect {
                livemove_impl::routing::Redirect::Moved(route) => route.owner,
                livemove_impl::routing::Redirect::Ask { node, .. } => node,
            };
            Reply::Redirect {
                redirect,
                addr: addrs.get(&to).copied(),
            }
        }
    }
}

/// Messages held back by the fault layer's delays, per peer; more are
/// dropped.
pub const HELD_MAX: usize = 1024;

/// A writer's connection to one peer, opened on demand.
struct PeerLink {
    me: NodeId,
    peer: NodeId,
    addr: SocketAddr,
    conn: Option<Connection<TcpStream>>,
}

impl PeerLink {
    /// Frame one message, connecting (and naming this node) when there is
    /// no connection; a failure drops the message and the connection.
    async fn send(&mut self, partition: Partition, msg: Msg) {
        let addr = self.addr;
        if self.conn.is_none() {
            match TcpStream::connect(addr).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    let mut c = Connection::new(s);
                    if let Err(e) = c.send(&Frame::Hello { from: self.me }).await {
                        tracing::debug!(%addr, error = %e, "hello failed: message dropped");
                        return;
                    }
                    self.conn = Some(c);
                }
                Err(e) => {
                    tracing::debug!(%addr, error = %e, "peer unreachable: message dropped");
                    return;
                }
            }
        }
        let c = self.conn.as_mut().expect("connected above");
        let frame = Frame::Peer {
            partition,
            msg: PeerMsg::from(msg),
        };
        if let Err(e) = c.send(&frame).await {
            tracing::debug!(%addr, peer = %self.peer, error = %e, "send failed: message dropped");
            self.conn = None;
        }
    }
}

/// Frame every message for one peer, connecting when there is none; the
/// fault layer drops or holds back messages when a fault is set.
pub(super) async fn write_to_peer(
    me: NodeId,
    peer: NodeId,
    addr: SocketAddr,
    mut outbox: mpsc::Receiver<(Partition, Msg)>,
    faults: Arc<Faults>,
) {
    let mut link = PeerLink {
        me,
        peer,
        addr,
        conn: None,
    };
    // Held-back messages by release time, then by the order they came.
    let mut held: BTreeMap<(tokio::time::Instant, u64), (Partition, Msg)> = BTreeMap::new();
    let mut seq: u64 = 0;
    loop {
        let next = if held.is_empty() {
            outbox.recv().await
        } else {
            let due = held.keys().next().expect("not empty").0;
            tokio::select! {
                m = outbox.recv() => m,
                () = tokio::time::sleep_until(due) => {
                    let (_, (partition, msg)) = held.pop_first().expect("not empty");
                    if faults.cut_drops(Link::Node(peer)) {
                        tracing::debug!(%peer, %msg, "link cut: held message dropped");
                    } else {
                        link.send(partition, msg).await;
                    }
                    continue;
                }
            }
        };
        let Some((partition, msg)) = next else { return };
        match faults.on_send(peer) {
            Fate::Send => link.send(partition, msg).await,
            Fate::Drop => tracing::debug!(%peer, %msg, "fault layer: message dropped"),
            Fate::Delay(d) if held.len() < HELD_MAX => {
                seq += 1;
                held.insert((tokio::time::Instant::now() + d, seq), (partition, msg));
            }
            Fate::Delay(_) => {
                faults.count_drop();
                tracing::debug!(%peer, %msg, "too many held back: message dropped");
            }
        }
    }
}

/// One partition's environment on a TCP node.
pub(super) struct PartitionEnv {
    pub(super) partition: Partition,
    pub(super) start: Instant,
    pub(super) outboxes: BTreeMap<NodeId, mpsc::Sender<(Partition, Msg)>>,
    pub(super) trace: Option<SharedTracer>,
}

impl Env for PartitionEnv {
    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn send(&mut self, msg: Msg) {
        let Endpoint::Node(dest) = msg.dest() else {
            tracing::warn!(%msg, "no controller to send to yet: message dropped");
            return;
        };
        match self.outboxes.get(&dest) {
            Some(tx) => {
                if tx.try_send((self.partition, msg)).is_err() {
                    tracing::debug!(%msg, "outbox full: message dropped");
                }
            }
            None => tracing::warn!(%msg, "no address for the destination: message dropped"),
        }
    }

    fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    fn trace(&mut self, event: Event) {
        let t_ms = self.now_ms();
        let Some(t) = self.trace.as_ref() else { return };
        if let Err(e) = emit_shared(t, t_ms, &event) {
            tracing::error!(partition = %self.partition, error = %e, "trace write failed: tracing stops");
            self.trace = None;
        }
    }
}
