//! A client of one node's port: publish a message, wait for its confirm,
//! read a partition's status, ask for a join, a handoff or a swap back,
//! set the node's network faults. `NodeClient` keeps one connection; the
//! blocking forms open one per call on a single-threaded tokio runtime of
//! their own, for the command line.

use super::faults::{FaultChange, FaultState};
use super::frame::{Frame, Reply, RoutedOp};
use super::Status;
use crate::partition::Partition;
use crate::wire::{Connection, FrameError};
use livemove_impl::routing::Redirect;
use livemove_impl::{Epoch, NodeId, Position};
use std::net::SocketAddr;
use tokio::net::TcpStream;

/// A request that got no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The node could not be reached.
    #[error("{addr}: connect: {source}")]
    Connect {
        /// The node's address.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The connection failed or carried a bad frame.
    #[error("{addr}: {source}")]
    Frame {
        /// The node's address.
        addr: SocketAddr,
        /// What failed.
        #[source]
        source: FrameError,
    },
    /// The node closed the connection without answering.
    #[error("{addr}: closed without an answer")]
    NoAnswer {
        /// The node's address.
        addr: SocketAddr,
    },
    /// The node refused the request.
    #[error("{addr}: refused: {reason}")]
    Refused {
        /// The node's address.
        addr: SocketAddr,
        /// Its reason.
        reason: String,
    },
    /// The node answered with something else than what was asked.
    #[error("{addr}: unexpected answer {reply:?}")]
    Unexpected {
        /// The node's address.
        addr: SocketAddr,
        /// The answer.
        reply: Reply,
    },
    /// No answer came within the time the caller gave.
    #[error("{addr}: no answer within {waited:?}")]
    TimedOut {
        /// The node's address.
        addr: SocketAddr,
        /// How long the caller waited.
        waited: std::time::Duration,
    },
    /// The client's own runtime could not start.
    #[error("tokio runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// A node's answer to one routed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutedAnswer {
    /// A publish served: durable on the owner at `pos`.
    Published {
        /// Its position.
        pos: Position,
    },
    /// A settle served: durable on the owner at `pos`.
    Settled {
        /// The key of the message it settles.
        key: u64,
        /// The position of its `Delete` entry.
        pos: Position,
    },
    /// A publish retry served: the owner's entry holding the message is
    /// at `pos` (held from its history, or appended now).
    Retried {
        /// Its position.
        pos: Position,
        /// That entry's epoch tag.
        entry_epoch: Epoch,
        /// Whether the history held it (nothing appended).
        held: bool,
    },
    /// Redirected (`MOVED` or `ASK`), with the address of the node named
    /// when the answering node knows it.
    Redirect {
        /// The redirect.
        redirect: Redirect,
        /// The named node's address.
        addr: Option<SocketAddr>,
    },
    /// Not served along this route yet: try it again.
    TryAgain,
}

/// One connection to a node's port, opened on first use and again after a
/// failure; one request at a time.
pub struct NodeClient {
    addr: SocketAddr,
    conn: Option<Connection<TcpStream>>,
}

impl NodeClient {
    /// A client of the node at `addr`; nothing is contacted yet.
    pub fn new(addr: SocketAddr) -> Self {
        NodeClient { addr, conn: None }
    }

    /// The node's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Send `frame` and read the answer. On any failure the connection is
    /// dropped (the next request opens a new one), a close without an
    /// answer included: the node closed its end, and a request written
    /// on it would be lost.
    pub async fn request(&mut self, frame: Frame) -> Result<Reply, ClientError> {
        let addr = self.addr;
        let result = self
            .exchange(frame)
            .await
            .and_then(|r| r.ok_or(ClientError::NoAnswer { addr }));
        if result.is_err() {
            self.conn = None;
        }
        result
    }

    async fn exchange(&mut self, frame: Frame) -> Result<Option<Reply>, ClientError> {
        let addr = self.addr;
        if self.conn.is_none() {
            let stream = TcpStream::connect(addr)
                .await
                .map_err(|source| ClientError::Connect { addr, source })?;
            let _ = stream.set_nodelay(true);
            self.conn = Some(Connection::new(stream));
        }
        let conn = self.conn.as_mut().expect("connected above");
        let framed = |source| ClientError::Frame { addr, source };
        conn.send(&frame).await.map_err(framed)?;
        conn.recv::<Reply>().await.map_err(framed)
    }

    /// Publish message `key` on `partition`; its position on the owner.
    pub async fn publish(
        &mut self,
        partition: Partition,
        key: u64,
    ) -> Result<Position, ClientError> {
        let addr = self.addr;
        match self.request(Frame::Publish { partition, key }).await? {
            Reply::Published { pos } => Ok(pos),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    /// Wait until the node, serving `partition`, has confirmed `pos`.
    pub async fn wait_confirmed(
        &mut self,
        partition: Partition,
        pos: Position,
    ) -> Result<(), ClientError> {
        let addr = self.addr;
        match self
            .request(Frame::WaitConfirmed { partition, pos })
            .await?
        {
            Reply::Confirmed => Ok(()),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    /// Wait until the node, serving `partition` at `epoch`, has confirmed
    /// `pos`; refused once it serves at no or another epoch.
    pub async fn wait_confirmed_at(
        &mut self,
        partition: Partition,
        pos: Position,
        epoch: Epoch,
    ) -> Result<(), ClientError> {
        let addr = self.addr;
        match self
            .request(Frame::WaitConfirmedAt {
                partition,
                pos,
                epoch,
            })
            .await?
        {
            Reply::Confirmed => Ok(()),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    /// Drop the connection (after a request was abandoned midway, say by a
    /// timeout: its answer must not be read as the next one's).
    pub fn reset(&mut self) {
        self.conn = None;
    }

    /// Whether the node's process is up: it answers on its port.
    pub async fn ping(&mut self) -> Result<(), ClientError> {
        let addr = self.addr;
        match self.request(Frame::Ping).await? {
            Reply::Pong => Ok(()),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    /// The node's status for `partition`.
    pub async fn status(&mut self, partition: Partition) -> Result<Status, ClientError> {
        let addr = self.addr;
        match self.request(Frame::Status { partition }).await? {
            Reply::Status(s) => Ok(s),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    /// Ask the node to join `partition` as a planned move's learner,
    /// replacing the follower on `replaces` if one is named.
    pub async fn join(
        &mut self,
        partition: Partition,
        replaces: Option<NodeId>,
    ) -> Result<bool, ClientError> {
        self.join_as(partition, replaces, None).await
    }

    /// Ask the node to join `partition` as a learner whose move takes the
    /// follower on `leaving` out at the swap (a planner's choice), unless
    /// it replaces the follower on `replaces`, which then leaves.
    pub async fn join_as(
        &mut self,
        partition: Partition,
        replaces: Option<NodeId>,
        leaving: Option<NodeId>,
    ) -> Result<bool, ClientError> {
        self.started(Frame::Join {
            partition,
            replaces,
            leaving,
        })
        .await
    }

    /// Ask the node, owner of `partition`, to hand it over to `to`.
    pub async fn hand_off(
        &mut self,
        partition: Partition,
        to: NodeId,
    ) -> Result<bool, ClientError> {
        self.started(Frame::HandOff { partition, to }).await
    }

    /// Ask the node, owner of `partition`, to swap its swapped move's
    /// leaving copy back in (the move's target is down or lost).
    pub async fn swap_back(&mut self, partition: Partition) -> Result<bool, ClientError> {
        self.started(Frame::SwapBack { partition }).await
    }

    /// Settle the oldest message the node, owner of `partition`,
    /// delivers (unrouted: a node that does not serve it refuses); the
    /// settled key, the position of its `Delete` and the owner's epoch,
    /// durable on the owner and not yet confirmed (`wait_confirmed_at`
    /// says when it is).
    pub async fn settle(
        &mut self,
        partition: Partition,
    ) -> Result<(u64, Position, Epoch), ClientError> {
        let addr = self.addr;
        match self.request(Frame::Settle { partition }).await? {
            Reply::Settled { key, pos, epoch } => Ok((key, pos, epoch)),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    /// One routed request: the node serves it, redirects it or asks for it
    /// again (`RoutedAnswer`); a refusal is an error.
    pub async fn routed(
        &mut self,
        partition: Partition,
        epoch: Epoch,
        asking: bool,
        op: RoutedOp,
    ) -> Result<RoutedAnswer, ClientError> {
        let addr = self.addr;
        let frame = Frame::Routed {
            partition,
            epoch,
            asking,
            op,
        };
        match self.request(frame).await? {
            Reply::Published { pos } => Ok(RoutedAnswer::Published { pos }),
            Reply::Settled { key, pos, .. } => Ok(RoutedAnswer::Settled { key, pos }),
            Reply::Retried {
                pos,
                entry_epoch,
                held,
            } => Ok(RoutedAnswer::Retried {
                pos,
                entry_epoch,
                held,
            }),
            Reply::Redirect { redirect, addr } => Ok(RoutedAnswer::Redirect { redirect, addr }),
            Reply::TryAgain => Ok(RoutedAnswer::TryAgain),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    /// Change the node's network faults (`FaultChange::Show`: none); the
    /// faults set after the change.
    pub async fn fault(&mut self, change: FaultChange) -> Result<FaultState, ClientError> {
        let addr = self.addr;
        match self.request(Frame::Fault(change)).await? {
            Reply::Faults(s) => Ok(s),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }

    async fn started(&mut self, frame: Frame) -> Result<bool, ClientError> {
        let addr = self.addr;
        match self.request(frame).await? {
            Reply::Started(b) => Ok(b),
            Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
            reply => Err(ClientError::Unexpected { addr, reply }),
        }
    }
}

fn block_on<T>(
    f: impl std::future::Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClientError::Runtime)?
        .block_on(f)
}

/// Publish message `key` on `partition` at the node at `addr`, blocking.
pub fn publish_blocking(
    addr: SocketAddr,
    partition: Partition,
    key: u64,
) -> Result<Position, ClientError> {
    block_on(async { NodeClient::new(addr).publish(partition, key).await })
}

/// Wait until the node at `addr`, serving `partition`, has confirmed
/// `pos`, for at most `wait`, blocking.
pub fn wait_confirmed_blocking(
    addr: SocketAddr,
    partition: Partition,
    pos: Position,
    wait: std::time::Duration,
) -> Result<(), ClientError> {
    block_on(async {
        let mut c = NodeClient::new(addr);
        match tokio::time::timeout(wait, c.wait_confirmed(partition, pos)).await {
            Ok(r) => r,
            Err(_) => Err(ClientError::TimedOut { addr, waited: wait }),
        }
    })
}

/// The status of `partition` on the node at `addr`, blocking.
pub fn status_blocking(addr: SocketAddr, partition: Partition) -> Result<Status, ClientError> {
    block_on(async { NodeClient::new(addr).status(partition).await })
}

/// Ask the node at `addr` to join `partition` as a learner (replacing the
/// follower on `replaces`, if named), blocking.
pub fn join_blocking(
    addr: SocketAddr,
    partition: Partition,
    replaces: Option<NodeId>,
) -> Result<bool, ClientError> {
    block_on(async { NodeClient::new(addr).join(partition, replaces).await })
}

/// Ask the node at `addr` to hand `partition` over to `to`, blocking.
pub fn hand_off_blocking(
    addr: SocketAddr,
    partition: Partition,
    to: NodeId,
) -> Result<bool, ClientError> {
    block_on(async { NodeClient::new(addr).hand_off(partition, to).await })
}

/// Ask the node at `addr`, owner of `partition`, to swap its swapped
/// move's leaving copy back in, blocking.
pub fn swap_back_blocking(addr: SocketAddr, partition: Partition) -> Result<bool, ClientError> {
    block_on(async { NodeClient::new(addr).swap_back(partition).await })
}

/// Settle the oldest message the node at `addr`, owner of `partition`,
/// delivers (unrouted), and wait for the settle's confirm for at most
/// `wait`, blocking: the settled key and its `Delete`'s position.
pub fn settle_blocking(
    addr: SocketAddr,
    partition: Partition,
    wait: std::time::Duration,
) -> Result<(u64, Position), ClientError> {
    block_on(async {
        let mut c = NodeClient::new(addr);
        let (key, pos, epoch) = c.settle(partition).await?;
        match tokio::time::timeout(wait, c.wait_confirmed_at(partition, pos, epoch)).await {
            Ok(r) => r.map(|()| (key, pos)),
            Err(_) => Err(ClientError::TimedOut { addr, waited: wait }),
        }
    })
}

/// Make each change to the faults of the node at `addr` in turn, on one
/// connection, blocking; the faults set after the last (with no change,
/// the faults set).
pub fn fault_blocking(
    addr: SocketAddr,
    changes: &[FaultChange],
) -> Result<FaultState, ClientError> {
    block_on(async {
        let mut c = NodeClient::new(addr);
        let (last, first) = changes.split_last().unwrap_or((&FaultChange::Show, &[]));
        for &change in first {
            c.fault(change).await?;
        }
        c.fault(*last).await
    })
}
