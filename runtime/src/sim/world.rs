//! The simulated network and clock: the `Env` every simulated node sees.
//!
//! A sent message gets a delivery time (now plus a seeded delay) and waits
//! in one list; the simulator picks among the messages that are due, in a
//! seeded order, so delays, reordering, drops and duplicates all come from
//! the one seed.

use super::rng::Rng;
use crate::node::Env;
use crate::trace::{self, Event};
use livemove_impl::Msg;

/// One message on its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flight {
    /// Not delivered before this time.
    pub at_ms: u64,
    /// The message.
    pub msg: Msg,
}

/// Clock, network and trace of one run.
#[derive(Debug)]
pub struct World {
    pub(super) now_ms: u64,
    pub(super) rng: Rng,
    pub(super) flights: Vec<Flight>,
    pub(super) delay_ms_max: u64,
    pub(super) trace: Option<Vec<u8>>,
    pub(super) trace_events: u64,
    pub(super) sent: u64,
}

impl World {
    pub(super) fn new(seed: u64, delay_ms_max: u64, tracing: bool) -> Self {
        World {
            now_ms: 0,
            rng: Rng::new(seed),
            flights: Vec::new(),
            delay_ms_max,
            trace: tracing.then(Vec::new),
            trace_events: 0,
            sent: 0,
        }
    }

    /// Put a message on its way with a seeded delay.
    pub(super) fn schedule(&mut self, msg: Msg) {
        let at_ms = self.now_ms + self.rng.below(self.delay_ms_max + 1);
        self.flights.push(Flight { at_ms, msg });
    }

    /// Take one due message, chosen by the seed.
    pub(super) fn take_due(&mut self) -> Option<Msg> {
        let due: Vec<usize> = (0..self.flights.len())
            .filter(|&i| self.flights[i].at_ms <= self.now_ms)
            .collect();
        if due.is_empty() {
            return None;
        }
        let i = due[self.rng.below(due.len() as u64) as usize];
        Some(self.flights.remove(i).msg)
    }

    /// Take any message in flight, chosen by the seed.
    pub(super) fn take_any(&mut self) -> Option<Msg> {
        if self.flights.is_empty() {
            return None;
        }
        let i = self.rng.below(self.flights.len() as u64) as usize;
        Some(self.flights.remove(i).msg)
    }
}

impl Env for World {
    fn now_ms(&self) -> u64 {
        self.now_ms
    }

    fn send(&mut self, msg: Msg) {
        self.sent += 1;
        self.schedule(msg);
    }

    fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    fn trace(&mut self, event: Event) {
        if let Some(out) = self.trace.as_mut() {
            out.extend_from_slice(&trace::line(self.now_ms, &event));
            self.trace_events += 1;
        }
    }
}

impl World {
    /// Record an event of the network itself (a drop, a duplicate, a crash).
    pub(super) fn trace_event(&mut self, event: Event) {
        if self.tracing() {
            self.trace(event);
        }
    }
}
