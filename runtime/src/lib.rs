//! Foundations of the livemove processes: what the node, controller and
//! client processes will sit on. The sans-IO machines of `livemove-impl`
//! make every protocol decision; this crate only stores, frames and
//! persists.
//!
//! - `control`: the coordination record's guarded write behind one trait,
//!   with an embedded file backend (the default) and an etcd backend.
//! - `wire`: length-delimited frames with a version byte, JSON payloads.
//! - `disk_log`: one replica's log in an append-only segment file with
//!   per-record CRC32, fsync before an append returns, torn-tail recovery,
//!   and the fence and seal epochs beside it.
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
