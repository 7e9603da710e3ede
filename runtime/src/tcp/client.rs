//! A client of one node's port: publish a message, read a node's status.
//! One connection per request; the blocking forms run their own
//! single-threaded tokio runtime, for the command line.

use super::frame::{Frame, Reply};
use super::Status;
use crate::wire::{Connection, FrameError};
use livemove_impl::Position;
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
    /// The node refused the publish.
    #[error("{addr}: publish refused: {reason}")]
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
    /// The client's own runtime could not start.
    #[error("tokio runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

async fn request(addr: SocketAddr, frame: Frame) -> Result<Reply, ClientError> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|source| ClientError::Connect { addr, source })?;
    let mut conn = Connection::new(stream);
    let framed = |source| ClientError::Frame { addr, source };
    conn.send(&frame).await.map_err(framed)?;
    conn.recv::<Reply>()
        .await
        .map_err(framed)?
        .ok_or(ClientError::NoAnswer { addr })
}

/// Publish message `key` on the node at `addr`; its position.
pub async fn publish(addr: SocketAddr, key: u64) -> Result<Position, ClientError> {
    match request(addr, Frame::Publish { key }).await? {
        Reply::Published { pos } => Ok(pos),
        Reply::Refused { reason } => Err(ClientError::Refused { addr, reason }),
        reply => Err(ClientError::Unexpected { addr, reply }),
    }
}

/// The status of the node at `addr`.
pub async fn status(addr: SocketAddr) -> Result<Status, ClientError> {
    match request(addr, Frame::Status).await? {
        Reply::Status(s) => Ok(s),
        reply => Err(ClientError::Unexpected { addr, reply }),
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

/// `publish`, blocking.
pub fn publish_blocking(addr: SocketAddr, key: u64) -> Result<Position, ClientError> {
    block_on(publish(addr, key))
}

/// `status`, blocking.
pub fn status_blocking(addr: SocketAddr) -> Result<Status, ClientError> {
    block_on(status(addr))
}
