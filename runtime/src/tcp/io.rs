//! The node's connections and its partitions' environments: a listener and
//! a reader per connection (peers' frames to the inbox with their
//! partition, requests to the node's task and their answers back), a
//! writer per peer, and the `Env` each partition sends and traces through.

use super::{Command, Frame, Reply, TcpError};
use crate::node::Env;
use crate::partition::Partition;
use crate::trace::{emit_shared, Event, SharedTracer};
use crate::wire::{Connection, PeerMsg};
use livemove_impl::net::Endpoint;
use livemove_impl::{Msg, NodeId};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

/// Accept peers and clients; each connection's frames go to the inbox or,
/// for a request, to the node's task and back.
pub(super) async fn accept(
    listener: TcpListener,
    inbox: mpsc::Sender<(Partition, Msg)>,
    commands: mpsc::Sender<Command>,
) {
    // Dropped with this task, so a kill closes every accepted connection.
    let mut readers = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    readers.spawn(read_frames(stream, inbox.clone(), commands.clone()));
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

async fn read_frames(
    stream: TcpStream,
    inbox: mpsc::Sender<(Partition, Msg)>,
    commands: mpsc::Sender<Command>,
) {
    let mut conn = Connection::new(stream);
    loop {
        let frame = match conn.recv::<Frame>().await {
            Ok(Some(f)) => f,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "connection dropped");
                return;
            }
        };
        let answer = match frame {
            Frame::Peer { partition, msg } => {
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
                    reply,
                })
                .await
                .map(|r| r.map_or_else(refused, |()| Reply::Confirmed))
            }
            Frame::Ping => Some(Reply::Pong),
            Frame::Status { partition } => {
                ask(&commands, |reply| Command::Status { partition, reply })
                    .await
                    .map(|r| r.map_or_else(refused, Reply::Status))
            }
            Frame::Join {
                partition,
                replaces,
            } => ask(&commands, |reply| Command::Join {
                partition,
                replaces,
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
        };
        let Some(answer) = answer else { return };
        if conn.send(&answer).await.is_err() {
            return;
        }
    }
}

/// Frame every message for one peer, connecting when there is none.
pub(super) async fn write_to_peer(addr: SocketAddr, mut outbox: mpsc::Receiver<(Partition, Msg)>) {
    let mut conn: Option<Connection<TcpStream>> = None;
    while let Some((partition, msg)) = outbox.recv().await {
        if conn.is_none() {
            match TcpStream::connect(addr).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    conn = Some(Connection::new(s));
                }
                Err(e) => {
                    tracing::debug!(%addr, error = %e, "peer unreachable: message dropped");
                    continue;
                }
            }
        }
        let c = conn.as_mut().expect("connected above");
        let frame = Frame::Peer {
            partition,
            msg: PeerMsg::from(msg),
        };
        if let Err(e) = c.send(&frame).await {
            tracing::debug!(%addr, error = %e, "send failed: message dropped");
            conn = None;
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
