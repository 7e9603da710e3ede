//! Wire framing: how nodes, controller and clients will exchange messages
//! over a byte stream (TCP in production, `tokio::io::duplex` in tests).
//!
//! A frame is a 4-byte big-endian length, then that many bytes: one version
//! byte (`WIRE_VERSION`) and the payload, one message encoded with postcard.
//! postcard, not JSON, because the implementation's messages hold maps
//! keyed by storage instances (`Write::CommitHandoff`'s durable prefixes),
//! which JSON objects cannot key; a run is to be read through its NDJSON
//! trace events (not built yet), not its frames.
//!
//! Nothing is dropped silently: a frame that is too large, truncated, of an
//! unknown version or undecodable is a typed `FrameError` naming the
//! frame's byte offset in the stream, and the connection is shut down and
//! dropped, so both sides see it end.

mod connection;
mod error;
mod frame;
mod peer;

pub use connection::Connection;
pub use error::FrameError;
pub use frame::{decode_payload, encode_frame, FRAME_BYTES_MAX, LENGTH_BYTES, WIRE_VERSION};
pub use peer::PeerMsg;
