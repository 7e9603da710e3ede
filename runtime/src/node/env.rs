//! What a node sees of the world: a clock, a way to send, and the trace.
//!
//! The node's code is the same under the tokio TCP driver (`crate::tcp`)
//! and the deterministic simulator (`crate::sim`); only this trait differs.
//! A send never blocks and never fails from the node's point of view: a
//! message may be lost, late or repeated, which the protocol tolerates and
//! the resend timer repairs.

use crate::trace::Event;
use livemove_impl::Msg;

/// The node's environment.
pub trait Env {
    /// Milliseconds on the run's clock (virtual in the simulator).
    fn now_ms(&self) -> u64;
    /// Put `msg` on the network towards `msg.dest()`.
    fn send(&mut self, msg: Msg);
    /// Whether trace events are wanted; when false none is built.
    fn tracing(&self) -> bool;
    /// Record one trace event (called only while `tracing()`).
    fn trace(&mut self, event: Event);
}

/// Record an event built by `f`, only if tracing is on.
pub(crate) fn emit(env: &mut dyn Env, f: impl FnOnce() -> Event) {
    if env.tracing() {
        env.trace(f());
    }
}
