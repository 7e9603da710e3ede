//! One client per partition: it routes by the partition's record (the
//! owner it names), publishes one message at a time at a steady rate and
//! waits for its confirm; after every `SETTLE_EVERY`-th acknowledged
//! publish it also consumes: it settles the oldest message the owner
//! delivers (`Frame::Settle`) and waits for the settle's confirm, which is
//! when it is told the settle is done. A publish the owner refused was not appended and
//! is sent again with the same key after the route is read again; one whose
//! answer never came (a connection broken, the owner gone before the
//! confirm) may or may not be in the history, so it is never sent again:
//! its key's fate is read from the disks at the end. No message is ever
//! sent twice by a client, so a key twice in a confirmed history is the
//! protocol's duplicate, not the client's.

use crate::partition::{Partition, Records};
use crate::tcp::client::{ClientError, NodeClient};
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
    /// Publish attempts that did not end acknowledged, by phase.
    pub failed: [u64; 3],
    /// Keys whose answer never came (their fate is read from the disks).
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

/// Pause after a refusal or a failure before the route is read again.
const BACKOFF: Duration = Duration::from_millis(20);

/// A client settles one message after every this many acknowledged
/// publishes, so a backlog of delivered messages stays to settle.
pub const SETTLE_EVERY: u64 = 2;

pub(super) async fn run(
    p: Partition,
    records: Records,
    addrs: BTreeMap<NodeId, SocketAddr>,
    rate: f64,
    stats: Arc<Mutex<ClientStats>>,
    phase: Arc<Mutex<Phase>>,
) {
    let pace = Duration::from_secs_f64(1.0 / rate.max(0.001));
    let mut plane = match records.open(p) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(partition = %p, error = %e, "client cannot open the record: stops");
            return;
        }
    };
    let mut clients: BTreeMap<NodeId, NodeClient> = addrs
        .iter()
        .map(|(&n, &a)| (n, NodeClient::new(a)))
        .collect();
    let mut route: Option<NodeId> = None;
    let mut seq = 0;
    let mut again: Option<u64> = None;
    let mut next_at = tokio::time::Instant::now();
    loop {
        let now_phase = *phase.lock().expect("no client panics");
        if now_phase == Phase::Stopped {
            return;
        }
        tokio::time::sleep_until(next_at).await;
        next_at += pace;
        let owner = match route {
            Some(n) => n,
            None => match plane.read() {
                Ok(r) => {
                    route = Some(r.owner.node);
                    r.owner.node
                }
                Err(e) => {
                    tracing::warn!(partition = %p, error = %e, "client cannot read the route");
                    continue;
                }
            },
        };
        let k = again.take().unwrap_or_else(|| {
            seq += 1;
            stats.lock().expect("no client panics").sent += 1;
            key(p, seq)
        });
        let Some(c) = clients.get_mut(&owner) else {
            route = None;
            again = Some(k);
            continue;
        };
        let started = Instant::now();
        let outcome = match c.publish(p, k).await {
            Ok(pos) => match c.wait_confirmed(p, pos).await {
                Ok(()) => Ok(()),
                Err(_) => Err(false),
            },
            // Refused, or never reached the node: not appended.
            Err(ClientError::Refused { .. } | ClientError::Connect { .. }) => Err(true),
            Err(_) => Err(false),
        };
        let consume = {
            let mut s = stats.lock().expect("no client panics");
            match outcome {
                Ok(()) => {
                    let acked = s.acked.entry(p).or_default();
                    acked.push(k);
                    let consume = (acked.len() as u64).is_multiple_of(SETTLE_EVERY);
                    s.latency_ms[now_phase.index()].push(started.elapsed().as_secs_f64() * 1e3);
                    if consume {
                        s.settles_sent += 1;
                    }
                    consume
                }
                Err(not_appended) => {
                    s.failed[now_phase.index()] += 1;
                    if not_appended {
                        again = Some(k);
                    } else {
                        s.uncertain += 1;
                    }
                    route = None;
                    next_at = tokio::time::Instant::now() + BACKOFF;
                    false
                }
            }
        };
        if consume {
            // Done only once confirmed; a settle refused or whose answer
            // never came is not retried (the next one takes the oldest
            // message then delivered, which may be the same).
            let settled = match c.settle(p).await {
                Ok((key, pos, epoch)) => c.wait_confirmed_at(p, pos, epoch).await.map(|()| key),
                Err(e) => Err(e),
            };
            let mut s = stats.lock().expect("no client panics");
            match settled {
                Ok(key) => s.settled.entry(p).or_default().push(key),
                Err(_) => {
                    s.settles_failed += 1;
                    route = None;
                }
            }
        }
    }
}
