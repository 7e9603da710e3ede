//! The node's connections and its environment: a listener and a reader
//! per connection (peers' frames to the inbox, clients' requests to the
//! node's task and their answers back), a writer per peer, and the `Env`
//! the node sends and traces through.

use super::{Command, Frame, Reply};
use crate::node::Env;
use crate::trace::{Event, Tracer};
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
/// for a client's request, to the node's task and back.
pub(super) async fn accept(
    listener: TcpListener,
    inbox: mpsc::Sender<Msg>,
    commands: mpsc::Sender<Command>,
) {
    // Dropped with this task, so a kill closes every accepted connection.
    let mut readers = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    readers.spawn(read_frames(stream, inbox.clone(), commands.clone()));
                }
                Err(e) => tracing::warn!(error = %e, "accept failed"),
            },
            Some(_) = readers.join_next() => {}
        }
    }
}

async fn read_frames(stream: TcpStream, inbox: mpsc::Sender<Msg>, commands: mpsc::Sender<Command>) {
    let mut conn = Connection::new(stream);
    loop {
        match conn.recv::<Frame>().await {
            Ok(Some(Frame::Peer(msg))) => {
                if inbox.send(Msg::from(msg)).await.is_err() {
                    return;
                }
            }
            Ok(Some(Frame::Publish { key })) => {
                let (reply, rx) = oneshot::channel();
                if commands
                    .send(Command::Publish { key, reply })
                    .await
                    .is_err()
                {
                    return;
                }
                let answer = match rx.await {
                    Ok(Ok(pos)) => Reply::Published { pos },
                    Ok(Err(e)) => Reply::Refused {
                        reason: e.to_string(),
                    },
                    Err(_) => return,
                };
                if conn.send(&answer).await.is_err() {
                    return;
                }
            }
            Ok(Some(Frame::Status)) => {
                let (reply, rx) = oneshot::channel();
                if commands.send(Command::Status { reply }).await.is_err() {
                    return;
                }
                let Ok(status) = rx.await else { return };
                if conn.send(&Reply::Status(status)).await.is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "peer connection dropped");
                return;
            }
        }
    }
}

/// Frame every message for one peer, connecting when there is none.
pub(super) async fn write_to_peer(addr: SocketAddr, mut outbox: mpsc::Receiver<Msg>) {
    let mut conn: Option<Connection<TcpStream>> = None;
    while let Some(msg) = outbox.recv().await {
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
        if let Err(e) = c.send(&Frame::Peer(PeerMsg::from(msg))).await {
            tracing::debug!(%addr, error = %e, "send failed: message dropped");
            conn = None;
        }
    }
}

pub(super) struct TcpEnv {
    pub(super) start: Instant,
    pub(super) outboxes: BTreeMap<NodeId, mpsc::Sender<Msg>>,
    pub(super) trace: Option<Tracer>,
}

impl Env for TcpEnv {
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
                if tx.try_send(msg).is_err() {
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
        if let Some(t) = self.trace.as_mut() {
            if let Err(e) = t.emit(t_ms, &event) {
                tracing::error!(error = %e, "trace write failed: tracing stops");
                self.trace = None;
            }
        }
    }
}
