//! The livemove processes and what they sit on. The sans-IO machines of
//! `livemove-impl` make every protocol decision; this crate only moves
//! messages, stores, frames, persists and runs timers.
//!
//! - `control`: the coordination record's guarded write behind one trait,
//!   with an embedded file backend (the default) and an etcd backend.
//! - `wire`: length-delimited frames with a version byte, postcard
//!   payloads; `PeerMsg`, the serving path's messages in wire form.
//! - `disk_log`: one replica's log in an append-only segment file with
//!   per-record CRC32, fsync before an append returns, torn-tail recovery,
//!   and the fence and seal epochs beside it.
//! - `node`: one node hosting one partition's copy; it feeds messages to
//!   the implementation's machines and sends what they output, behind an
//!   `Env` (clock, send, trace).
//! - `tcp`: the node over tokio TCP.
//! - `sim`: the node under a deterministic, seeded simulator with a fault
//!   phase and a healing phase.
//! - `trace`: NDJSON events at the protocol transitions.
//!
//! See `runtime/README.md` for what does not exist yet.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod control;
pub mod disk_log;
pub mod fsutil;
pub mod node;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod wire;
