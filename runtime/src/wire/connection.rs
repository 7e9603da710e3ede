//! A framed connection over any async byte stream.

use super::frame::{decode_payload, encode_frame, FRAME_BYTES_MAX, LENGTH_BYTES};
use super::FrameError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// One connection: sends and receives whole frames, counting stream bytes
/// in each direction so that errors name offsets. After a receive error the
/// stream is shut down and dropped, and every later call is
/// `FrameError::Closed`.
#[derive(Debug)]
pub struct Connection<S> {
    stream: Option<S>,
    read_offset: u64,
    write_offset: u64,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    /// Frame `stream`.
    pub fn new(stream: S) -> Self {
        Connection {
            stream: Some(stream),
            read_offset: 0,
            write_offset: 0,
        }
    }

    /// Whether the connection is still open.
    pub fn is_open(&self) -> bool {
        self.stream.is_some()
    }

    /// Send one message as one frame. A message too large to frame is
    /// refused before anything is written, and the connection stays open.
    pub async fn send<T: Serialize>(&mut self, message: &T) -> Result<(), FrameError> {
        let offset = self.write_offset;
        let frame = encode_frame(message, offset)?;
        let stream = self.stream.as_mut().ok_or(FrameError::Closed)?;
        let sent = async {
            stream.write_all(&frame).await?;
            stream.flush().await
        }
        .await;
        match sent {
            Ok(()) => {
                self.write_offset += frame.len() as u64;
                Ok(())
            }
            Err(source) => Err(self.close(FrameError::Io { offset, source }).await),
        }
    }

    /// Receive one message; `None` when the peer closed the stream at a
    /// frame boundary.
    pub async fn recv<T: DeserializeOwned>(&mut self) -> Result<Option<T>, FrameError> {
        match self.read_frame().await {
            Ok(None) => Ok(None),
            Ok(Some((offset, body))) => match decode_payload(&body, offset) {
                Ok(m) => Ok(Some(m)),
                Err(e) => Err(self.close(e).await),
            },
            Err(FrameError::Closed) => Err(FrameError::Closed),
            Err(e) => Err(self.close(e).await),
        }
    }

    /// The next frame's start offset and body, without decoding it.
    async fn read_frame(&mut self) -> Result<Option<(u64, Vec<u8>)>, FrameError> {
        let offset = self.read_offset;
        let stream = self.stream.as_mut().ok_or(FrameError::Closed)?;
        let mut prefix = [0u8; LENGTH_BYTES];
        let got = read_full(stream, &mut prefix)
            .await
            .map_err(|source| FrameError::Io { offset, source })?;
        if got == 0 {
            return Ok(None);
        }
        if got < LENGTH_BYTES {
            return Err(FrameError::Truncated {
                offset,
                needed: LENGTH_BYTES as u64,
                got: got as u64,
            });
        }
        let len = u32::from_be_bytes(prefix);
        if len > FRAME_BYTES_MAX {
            return Err(FrameError::TooLarge {
                offset,
                len: u64::from(len),
                max: FRAME_BYTES_MAX,
            });
        }
        let mut body = vec![0u8; len as usize];
        let got = read_full(stream, &mut body)
            .await
            .map_err(|source| FrameError::Io { offset, source })?;
        if got < body.len() {
            return Err(FrameError::Truncated {
                offset,
                needed: (LENGTH_BYTES + body.len()) as u64,
                got: (LENGTH_BYTES + got) as u64,
            });
        }
        self.read_offset += (LENGTH_BYTES + body.len()) as u64;
        Ok(Some((offset, body)))
    }

    /// Shut the stream down and drop it, so the peer sees the end; return
    /// the error that caused it.
    async fn close(&mut self, error: FrameError) -> FrameError {
        if let Some(mut stream) = self.stream.take() {
            tracing::warn!(%error, "closing connection");
            // The peer learns of the close from the dropped stream even if
            // the shutdown itself fails; the original error is what matters.
            let _ = stream.shutdown().await;
        }
        error
    }
}

/// Read until `buf` is full or the stream ends; the number of bytes read.
async fn read_full<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = stream.read(&mut buf[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}
