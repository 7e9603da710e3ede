//! One client per partition, note 2's routed producer and consumer: it
//! routes by `MOVED` and `ASK` (`tcp::routed::RoutedClient`, its first
//! route learned from any node), publishes one message at a time at a
//! steady rate and waits for its confirm; a publish whose answer or
//! confirm never came is sent again with the same key as a retry, along a
//! refreshed route, which an owner holding the key answers from its
//! history (`RoutedClient::publish_confirmed`: note 2, "does timeout retry
//! cause duplicate effects?"). After every `SETTLE_EVERY`-th acknowledged
//! publish it also consumes: it settles the oldest message the owner
//! delivers (`RoutedOp::Settle`) and waits for the settle's confirm, which
//! is when it is told the settle is done. A publish still unconfirmed when
//! its retry policy runs out is given up, and its key's fate read from the
//! disks at the end if an attempt may have appended it. A client retries
//! only its newest message (the spec's one producer per partition), so a
//! key twice in a confirmed history is the protocol's duplicate, not the
//! client's.

use crate::partition::Partition;
use crate::tcp::routed::{Answer, Outcome, RetryPolicy, RoutedClient};
use livemove_impl::NodeId;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Steady traffic before the moves.
    Before,
    /// The moves, the kill and the restart.
    During,
    /// Steady traffic after the moves.
    After,
    /// The clients stop.
    Stopped,
}

impl Phase {
    pub(super) fn index(self) -> usize {
        match self {
            Phase::Before => 0,
            Phase::During => 1,
            Phase::After | Phase::Stopped => 2,
        }
    }
}

/// What the clients saw.
#[derive(Clone, Debug, Default)]
pub struct ClientStats {
    /// Distinct keys sent.
    pub sent: u64,
    /// Keys acknowledged (confirmed), per partition.
    pub acked: BTreeMap<Partition, Vec<u64>>,
    /// Confirm latency of each acknowledged publish, by the phase it
    /// started in (before, during, after), in milliseconds.
    pub latency_ms: [Vec<f64>; 3],
    /// Publishes that did not end acknowledged, every retry made, by the
    /// phase they started in.
    pub failed: [u64; 3],
    /// Attempts sent again as retries (every attempt after a publish's
    /// first), by the phase the publish started in.
    pub retries: [u64; 3],
    /// Publishes acknowledged through a retry that the owner answered from
    /// its history (an earlier attempt had appended the message): each one
    /// a duplicate the producer id prevented.
    pub retries_held: u64,
    /// Given-up keys an attempt may have appended (its answer or confirm
    /// never came): their fate is read from the disks.
    pub uncertain: u64,
    /// Settles sent (each asks the owner to settle its oldest delivered
    /// message).
    pub settles_sent: u64,
    /// Keys whose settle the client was told is done (its `Delete`
    /// confirmed), per partition.
    pub settled: BTreeMap<Partition, Vec<u64>>,
    /// Settles that did not end confirmed (refused, or lost with a node).
    pub settles_failed: u64,
}

impl ClientStats {
    /// Acknowledged publishes so far.
    pub fn acked_count(&self) -> u64 {
        self.acked.values().map(|v| v.len() as u64).sum()
    }

    /// Settles told done so far.
    pub fn settled_count(&self) -> u64 {
        self.settled.values().map(|v| v.len() as u64).sum()
    }
}

/// The key of partition `p`'s `seq`-th message: unique across partitions,
/// and below 2^31 (TLC's integers) for up to 2,000 partitions of a million
/// messages each.
pub fn key(p: Partition, seq: u64) -> u64 {
    assert!(
        seq < 1_000_000,
        "invariant broken: a demo client sent a million messages"
    );
    (u64::from(p.0) + 1) * 1_000_000 + seq
}

/// Pause after a publish given up, before the next one.
const BACKOFF: Duration = Duration::from_millis(20);

/// A client settles one message after every this many acknowledged
/// publishes, so a backlog of delivered messages stays to settle.
pub const SETTLE_EVERY: u64 = 2;

/// Answers other than a served one a request follows (a `MOVED`, an
/// `ASK`, a try-again while a handoff drains) before it gives up.
const HOPS_MAX: u8 = 4;
/// How long one routed request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// A publish's retry policy: a node killed mid-move is back within a few
/// seconds, and a recovery takes a lease; past this a publish is given up.
const ATTEMPTS: u32 = 40;
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);
const DEADLINE: Duration = Duration::from_secs(8);
/// How long a settle's confirm is waited for.
const SETTLE_WAIT: Duration = Duration::from_secs(2);

pub(super) async fn run(
    p: Partition,
    addrs: BTreeMap<NodeId, SocketAddr>,
    rate: f64,
    stats: Arc<Mutex<ClientStats>>,
    phase: Arc<Mutex<Phase>>,
) {
    let pace = Duration::from_secs_f64(1.0 / rate.max(0.001));
    let policy = RetryPolicy::new(ATTEMPTS, ATTEMPT_TIMEOUT, DEADLINE)
        .expect("invariant broken: the demo's retry policy is refused");
    let mut client =
        RoutedClient::new(addrs.values().copied().collect(), HOPS_MAX, REQUEST_TIMEOUT);
    let mut seq = 0;
    let mut next_at = tokio::time::Instant::now();
    loop {
        let now_phase = *phase.lock().expect("no client panics");
        if now_phase == Phase::Stopped {
            return;
        }
        tokio::time::sleep_until(next_at).await;
        next_at += pace;
        seq += 1;
        let k = key(p, seq);
        stats.lock().expect("no client panics").sent += 1;
        let started = Instant::now();
        let published = client.publish_confirmed(p, k, &policy).await;
        let consume = {
            let mut s = stats.lock().expect("no client panics");
            let at = now_phase.index();
            match published {
                Ok(done) => {
                    s.retries[at] += done.attempts.len().saturating_sub(1) as u64;
                    if done.answer == Answer::Held {
                        s.retries_held += 1;
                    }
                    s.latency_ms[at].push(started.elapsed().as_secs_f64() * 1e3);
                    let acked = s.acked.entry(p).or_default();
                    acked.push(k);
                    let consume = (acked.len() as u64).is_multiple_of(SETTLE_EVERY);
                    if consume {
                        s.settles_sent += 1;
                    }
                    consume
                }
                Err(e) => {
                    tracing::debug!(partition = %p, error = %e, "publish given up");
                    let attempts = e.attempts();
                    s.retries[at] += attempts.len().saturating_sub(1) as u64;
                    s.failed[at] += 1;
                    let may_have_appended = attempts.iter().any(|a| {
                        matches!(
                            a.outcome,
                            Outcome::NoAnswer { .. } | Outcome::Unconfirmed { .. }
                        )
                    });
                    if may_have_appended {
                        s.uncertain += 1;
                    }
                    next_at = tokio::time::Instant::now() + BACKOFF;
                    false
                }
            }
        };
        // A publish that took longer than the pace does not make the next
        // ones go out in a burst.
        next_at = next_at.max(tokio::time::Instant::now());
        if consume {
            // Done only once confirmed; a settle refused or whose answer
            // never came is not retried (the next one takes the oldest
            // message then delivered, which may be the same).
            let settled = match client.settle(p).await {
                Ok(served) => client
                    .wait_confirmed(&served, SETTLE_WAIT)
                    .await
                    .map(|()| served.key),
                Err(e) => Err(e),
            };
            let mut s = stats.lock().expect("no client panics");
            match settled {
                Ok(key) => s.settled.entry(p).or_default().push(key),
                Err(_) => s.settles_failed += 1,
            }
        }
    }
}
