//! The livemove processes and what they sit on. The sans-IO machines of
//! `livemove-impl` make every protocol decision; this crate only moves
//! messages, stores, frames, persists and runs timers.
//!
//! - `control`: the coordination record's guarded write behind one trait,
//!   with an embedded file backend (the default) and an etcd backend.
//! - `controller`: the controller process's failure detector (a lease on
//!   every node; a recovery opened for each partition of a lapsed owner).
//! - `wire`: length-delimited frames with a version byte, postcard
//!   payloads; `PeerMsg`, the serving path's messages in wire form.
//! - `disk_log`: one replica's log in an append-only segment file with
//!   per-record CRC32, fsync before an append returns, torn-tail recovery,
//!   and the fence and seal epochs beside it.
//! - `node`: one node hosting one partition's copy; it feeds messages to
//!   the implementation's machines and sends what they output, behind an
//!   `Env` (clock, send, trace).
//! - `partition`: many partitions on one node: each with its own data
//!   directory and record (`Records`: a directory of files, or etcd keys).
//! - `tcp`: the node over tokio TCP, hosting any number of partitions.
//! - `sim`: the node under a deterministic, seeded simulator with a fault
//!   phase and a healing phase.
//! - `trace`: NDJSON events at the protocol transitions.
//!
//! See `runtime/README.md` for what does not exist yet.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod control;
pub mod controller;
pub mod demo;
pub mod disk_log;
pub mod fsutil;
pub mod node;
pub mod partition;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod wire;
