//! Note 2's producer over TCP: "does timeout retry cause duplicate
//! effects?" A publish is done once an owner confirmed the position it
//! answered with; until then the client cannot tell a publish that was
//! never appended from one whose answer was lost (the connection refused
//! or reset, no answer in time, the owner fenced or no longer serving, its
//! confirm never coming). It sends the same key again as a retry
//! (`RoutedOp::PublishRetry`), which the owner answers from its history
//! when it holds the key (nothing appended) and appends otherwise
//! (`Serving::publish_retry`), so a retry never duplicates an entry.
//!
//! Before each retry the client does what the model's `ClientTimeout`
//! does: the request is dropped and the route refreshed from what the
//! other known nodes (the entry nodes and the addresses learned from
//! redirects) say the record names, forward in epoch only (a node that
//! has not read the record yet cannot take the route back to an older
//! owner). The node whose answer never came is not asked. Then the retry
//! goes along the refreshed route (the model's `ClientRetry`).
//!
//! Every attempt, a held answer included, is waited on until the owner
//! that answered confirms the position at the epoch it served the
//! request at (`RoutedClient::wait_confirmed`): a held entry need not be
//! confirmed yet (the first attempt may have reached this owner and lost
//! its answer before W copies held it).
//!
//! Bounded three ways: at most `RetryPolicy::attempts_max` attempts, each
//! exchange (the routed request with its redirects, the wait for the
//! confirm) within `RetryPolicy::attempt_timeout`, all within
//! `RetryPolicy::deadline`; the pause between attempts doubles from
//! `RETRY_PAUSE_MIN` to `RETRY_PAUSE_MAX`.

use super::{Hop, RoutedClient, RoutedError, Served, Target};
use crate::partition::Partition;
use crate::tcp::client::{ClientError, RoutedAnswer};
use crate::tcp::frame::RoutedOp;
use livemove_impl::routing::{PartitionId, Redirect};
use livemove_impl::{Epoch, NodeId, Position};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

/// The most attempts a policy may allow: a publish retried more than this
/// is a cluster that is down, not a lost answer.
pub const ATTEMPTS_MAX: u32 = 1000;
/// The pause before the second attempt; it doubles up to
/// `RETRY_PAUSE_MAX`.
pub const RETRY_PAUSE_MIN: Duration = Duration::from_millis(50);
/// The longest pause between two attempts.
pub const RETRY_PAUSE_MAX: Duration = Duration::from_millis(500);

// The doubling must reach the cap.
const _: () = assert!(RETRY_PAUSE_MIN.as_millis() <= RETRY_PAUSE_MAX.as_millis());

/// How hard a publish is tried before the client gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    attempts_max: u32,
    attempt_timeout: Duration,
    deadline: Duration,
}

/// A retry policy that makes no sense.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadPolicy {
    /// No attempt, or more than `ATTEMPTS_MAX`.
    #[error("{attempts} attempts: from 1 to {ATTEMPTS_MAX}")]
    Attempts {
        /// The value given.
        attempts: u32,
    },
    /// A wait of nothing.
    #[error("{what} of 0: nothing could be answered in it")]
    ZeroWait {
        /// Which one.
        what: &'static str,
    },
}

impl RetryPolicy {
    /// At most `attempts_max` attempts, each exchange within
    /// `attempt_timeout`, all within `deadline`.
    pub fn new(
        attempts_max: u32,
        attempt_timeout: Duration,
        deadline: Duration,
    ) -> Result<RetryPolicy, BadPolicy> {
        if !(1..=ATTEMPTS_MAX).contains(&attempts_max) {
            return Err(BadPolicy::Attempts {
                attempts: attempts_max,
            });
        }
        if attempt_timeout.is_zero() {
            return Err(BadPolicy::ZeroWait {
                what: "an attempt timeout",
            });
        }
        if deadline.is_zero() {
            return Err(BadPolicy::ZeroWait { what: "a deadline" });
        }
        Ok(RetryPolicy {
            attempts_max,
            attempt_timeout,
            deadline,
        })
    }

    /// The most attempts.
    pub fn attempts_max(&self) -> u32 {
        self.attempts_max
    }

    /// The longest one exchange of an attempt may take.
    pub fn attempt_timeout(&self) -> Duration {
        self.attempt_timeout
    }

    /// The longest the whole publish may take.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }
}

/// How the owner that confirmed it answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// It appended the message (a first attempt, or a retry the owner's
    /// history lacked).
    Appended,
    /// Its history held the message already: nothing was appended.
    Held,
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Answer::Appended => "appended",
            Answer::Held => "held",
        })
    }
}

/// What one attempt got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Served and confirmed: the publish is done.
    Confirmed {
        /// The owner that served and confirmed it.
        #[serde(serialize_with = "super::node_name")]
        node: NodeId,
        /// The position it answered with.
        pos: Position,
        /// The epoch it served the request at.
        epoch: Epoch,
        /// Appended or held.
        answer: Answer,
    },
    /// Served, but the owner's confirm never came (its wait refused, lost
    /// or late): the position may yet be discarded by a recovery.
    Unconfirmed {
        /// The owner that served it.
        #[serde(serialize_with = "super::node_name")]
        node: NodeId,
        /// The position it answered with.
        pos: Position,
        /// The epoch it served the request at.
        epoch: Epoch,
        /// Appended or held.
        answer: Answer,
        /// Why no confirm came.
        error: String,
    },
    /// No answer came: the node could not be reached, closed or reset the
    /// connection, or did not answer in time. It may have appended.
    NoAnswer {
        /// What failed.
        error: String,
    },
    /// A node refused the request (not serving, admission closed,
    /// fenced): it appended nothing.
    Refused {
        /// Its reason.
        error: String,
    },
    /// The request gave up among redirects (the hop limit or the
    /// attempt's deadline) or learned no first route: nothing was served.
    GaveUp {
        /// Why.
        error: String,
    },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Confirmed {
                node,
                pos,
                epoch,
                answer,
            } => write!(f, "{answer} at {pos} by {node} at {epoch}, confirmed"),
            Outcome::Unconfirmed {
                node,
                pos,
                epoch,
                answer,
                error,
            } => write!(
                f,
                "{answer} at {pos} by {node} at {epoch}, not confirmed: {error}"
            ),
            Outcome::NoAnswer { error } => write!(f, "no answer: {error}"),
            Outcome::Refused { error } => write!(f, "refused: {error}"),
            Outcome::GaveUp { error } => write!(f, "gave up: {error}"),
        }
    }
}

/// One attempt of a publish.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AttemptReport {
    /// Sent as a retry (`RoutedOp::PublishRetry`): every attempt after
    /// the first, and the first of a resend.
    pub retry: bool,
    /// The routes a refresh learned before it and the answers it
    /// followed, in order.
    pub hops: Vec<Hop>,
    /// What it got.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// A publish confirmed by the owner that answered it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Published {
    /// The partition.
    pub partition: Partition,
    /// The message key.
    pub key: u64,
    /// The position of the entry holding it, confirmed on the owner.
    pub pos: Position,
    /// The owner that answered and confirmed it.
    #[serde(serialize_with = "super::node_name")]
    pub node: NodeId,
    /// The epoch it served and confirmed it at.
    pub epoch: Epoch,
    /// Appended by this publish, or held from an earlier attempt's.
    pub answer: Answer,
    /// The epoch tag of the entry: older than `epoch` when another owner
    /// appended it (a handoff or a recovery carried it over).
    pub entry_epoch: Epoch,
    /// Every attempt, in order, the confirmed one last.
    pub attempts: Vec<AttemptReport>,
}

/// A publish that was not confirmed.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// Every attempt the policy allows was made.
    #[error("{partition}: message {key}: not confirmed after {} attempt(s) (last: {})", attempts.len(), last(attempts))]
    Attempts {
        /// The partition.
        partition: Partition,
        /// The message key.
        key: u64,
        /// Every attempt, in order.
        attempts: Vec<AttemptReport>,
    },
    /// The deadline passed.
    #[error("{partition}: message {key}: not confirmed within {} ms, {} attempt(s) (last: {})", deadline.as_millis(), attempts.len(), last(attempts))]
    Deadline {
        /// The partition.
        partition: Partition,
        /// The message key.
        key: u64,
        /// The policy's deadline.
        deadline: Duration,
        /// Every attempt, in order.
        attempts: Vec<AttemptReport>,
    },
    /// A failure no retry mends: no node to start from, a redirect to a
    /// node whose address no node gave, an answer to another request, the
    /// client's own runtime.
    #[error("{partition}: message {key}: {source}")]
    Routed {
        /// The partition.
        partition: Partition,
        /// The message key.
        key: u64,
        /// What failed (boxed: a routed error is large, and this is the
        /// rare case).
        #[source]
        source: Box<RoutedError>,
        /// The attempts before it, in order.
        attempts: Vec<AttemptReport>,
    },
}

impl PublishError {
    /// The attempts made, in order.
    pub fn attempts(&self) -> &[AttemptReport] {
        match self {
            PublishError::Attempts { attempts, .. }
            | PublishError::Deadline { attempts, .. }
            | PublishError::Routed { attempts, .. } => attempts,
        }
    }
}

fn last(attempts: &[AttemptReport]) -> String {
    attempts
        .last()
        .map_or_else(|| "none made".into(), |a| a.outcome.to_string())
}

/// What a failed exchange tells the next attempt: the outcome, and the
/// address of a node whose answer never came (not asked by the refresh).
fn failed(e: RoutedError) -> Result<(Outcome, Option<SocketAddr>), RoutedError> {
    let error = e.to_string();
    match e {
        RoutedError::Client(ClientError::Refused { .. }) => Ok((Outcome::Refused { error }, None)),
        RoutedError::Client(
            ClientError::Connect { addr, .. }
            | ClientError::Frame { addr, .. }
            | ClientError::NoAnswer { addr }
            | ClientError::TimedOut { addr, .. },
        ) => Ok((Outcome::NoAnswer { error }, Some(addr))),
        RoutedError::Routing { .. } | RoutedError::NoRoute { .. } => {
            Ok((Outcome::GaveUp { error }, None))
        }
        e @ (RoutedError::NoEntry
        | RoutedError::NoAddress { .. }
        | RoutedError::Mismatch { .. }
        | RoutedError::Client(ClientError::Unexpected { .. } | ClientError::Runtime(_))) => Err(e),
    }
}

/// The pause before attempt `n` (0-based, so `n` >= 1).
fn pause(n: u32) -> Duration {
    let doubled = RETRY_PAUSE_MIN.saturating_mul(1u32 << (n - 1).min(16));
    doubled.min(RETRY_PAUSE_MAX)
}

impl RoutedClient {
    /// Publish message `key` on `partition` and wait until the owner that
    /// answered confirms it, sending it again as a retry, with a refreshed
    /// route, while no confirm comes, within `policy`.
    pub async fn publish_confirmed(
        &mut self,
        partition: Partition,
        key: u64,
        policy: &RetryPolicy,
    ) -> Result<Published, PublishError> {
        self.attempts(partition, key, policy, false).await
    }

    /// `publish_confirmed` of a message an earlier publish may have
    /// appended (one that failed, or whose process died): every attempt,
    /// the first included, is a retry, answered from the owner's history
    /// when it holds the key.
    pub async fn resend_confirmed(
        &mut self,
        partition: Partition,
        key: u64,
        policy: &RetryPolicy,
    ) -> Result<Published, PublishError> {
        self.attempts(partition, key, policy, true).await
    }

    async fn attempts(
        &mut self,
        partition: Partition,
        key: u64,
        policy: &RetryPolicy,
        resend: bool,
    ) -> Result<Published, PublishError> {
        let start = Instant::now();
        let deadline_at = start + policy.deadline;
        let mut attempts: Vec<AttemptReport> = Vec::new();
        // The node whose answer the last attempt never got.
        let mut silent: Option<SocketAddr> = None;
        let out_of_time = |attempts: Vec<AttemptReport>| PublishError::Deadline {
            partition,
            key,
            deadline: policy.deadline,
            attempts,
        };
        for n in 0..policy.attempts_max {
            let retry = resend || n > 0;
            let mut hops = Vec::new();
            if n > 0 {
                let p = pause(n);
                if Instant::now() + p >= deadline_at {
                    return Err(out_of_time(attempts));
                }
                tokio::time::sleep(p).await;
                self.refresh(partition, key, silent, policy, deadline_at, &mut hops)
                    .await;
            }
            let Some(wait) = remaining(deadline_at, policy.attempt_timeout) else {
                return Err(out_of_time(attempts));
            };
            let op = if retry {
                RoutedOp::PublishRetry { key }
            } else {
                RoutedOp::Publish { key }
            };
            let routed = tokio::time::timeout(wait, self.routed(partition, op, wait, &mut hops));
            let outcome = match routed.await {
                Err(_) => {
                    // Abandoned midway: an answer still on its way must not
                    // be read as the next request's.
                    self.conns.clear();
                    silent = None;
                    Outcome::NoAnswer {
                        error: format!("no answer within {} ms", wait.as_millis()),
                    }
                }
                Ok(Err(e)) => match failed(e) {
                    Ok((outcome, addr)) => {
                        silent = addr;
                        outcome
                    }
                    Err(source) => {
                        return Err(PublishError::Routed {
                            partition,
                            key,
                            source: Box::new(source),
                            attempts,
                        })
                    }
                },
                Ok(Ok(served)) => {
                    silent = None;
                    match self.confirm(&served, deadline_at, policy).await {
                        Ok(outcome @ Outcome::Confirmed { answer, .. }) => {
                            attempts.push(AttemptReport {
                                retry,
                                hops,
                                outcome,
                            });
                            return Ok(Published {
                                partition,
                                key,
                                pos: served.pos,
                                node: served.node,
                                epoch: served.epoch,
                                answer,
                                entry_epoch: served.held.unwrap_or(served.epoch),
                                attempts,
                            });
                        }
                        Ok(outcome) => outcome,
                        Err(source) => {
                            return Err(PublishError::Routed {
                                partition,
                                key,
                                source: Box::new(source),
                                attempts,
                            })
                        }
                    }
                }
            };
            tracing::debug!(%partition, key, attempt = n + 1, %outcome, "publish not confirmed");
            attempts.push(AttemptReport {
                retry,
                hops,
                outcome,
            });
        }
        Err(PublishError::Attempts {
            partition,
            key,
            attempts,
        })
    }

    /// Wait for the confirm of a served publish: `Confirmed` once the
    /// owner that served it confirms its position at the epoch it served
    /// it at, else `Unconfirmed` with why.
    async fn confirm(
        &mut self,
        served: &Served,
        deadline_at: Instant,
        policy: &RetryPolicy,
    ) -> Result<Outcome, RoutedError> {
        let answer = if served.held.is_some() {
            Answer::Held
        } else {
            Answer::Appended
        };
        let (node, pos, epoch) = (served.node, served.pos, served.epoch);
        let Some(wait) = remaining(deadline_at, policy.attempt_timeout) else {
            return Ok(Outcome::Unconfirmed {
                node,
                pos,
                epoch,
                answer,
                error: "no time left to wait for the confirm".into(),
            });
        };
        match self.wait_confirmed(served, wait).await {
            Ok(()) => Ok(Outcome::Confirmed {
                node,
                pos,
                epoch,
                answer,
            }),
            Err(RoutedError::Client(e)) => match e {
                ClientError::Unexpected { .. } | ClientError::Runtime(_) => {
                    Err(RoutedError::Client(e))
                }
                e => Ok(Outcome::Unconfirmed {
                    node,
                    pos,
                    epoch,
                    answer,
                    error: e.to_string(),
                }),
            },
            Err(e) => Err(e),
        }
    }

    /// The model's `ClientTimeout`: ask every other known node (entry
    /// nodes first, then the addresses redirects gave), but not `silent`,
    /// for the partition's route with a request at epoch 0, which no owner
    /// serves, and learn each `MOVED` forward in epoch only. A node that
    /// does not answer is passed over.
    async fn refresh(
        &mut self,
        partition: Partition,
        key: u64,
        silent: Option<SocketAddr>,
        policy: &RetryPolicy,
        deadline_at: Instant,
        hops: &mut Vec<Hop>,
    ) {
        let pid = PartitionId(partition.0);
        let mut asked = BTreeSet::new();
        let known: Vec<SocketAddr> = self
            .entries
            .iter()
            .chain(self.addrs.values())
            .copied()
            .filter(|&a| Some(a) != silent && asked.insert(a))
            .collect();
        for at in known {
            let Some(wait) = remaining(deadline_at, policy.attempt_timeout) else {
                return;
            };
            let op = RoutedOp::PublishRetry { key };
            let asked = self.send(partition, Target::Entry(at), Epoch(0), false, op);
            match tokio::time::timeout(wait, asked).await {
                Ok(Ok(RoutedAnswer::Redirect {
                    redirect: Redirect::Moved(route),
                    ..
                })) => {
                    if self.cache.learn(pid, route) {
                        hops.push(Hop::Refreshed {
                            at,
                            to: route.owner,
                            epoch: route.epoch,
                        });
                    }
                }
                Ok(answer) => {
                    tracing::debug!(%partition, %at, ?answer, "refresh: no route from this node");
                }
                Err(_) => {
                    self.conn(at).reset();
                    tracing::debug!(%partition, %at, "refresh: no answer in time");
                }
            }
        }
    }
}

/// The wait for one exchange: `attempt_timeout`, or less if the deadline
/// comes first; `None` when it has passed.
fn remaining(deadline_at: Instant, attempt_timeout: Duration) -> Option<Duration> {
    let left = deadline_at.saturating_duration_since(Instant::now());
    (!left.is_zero()).then(|| left.min(attempt_timeout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_from_its_floor_to_its_cap() {
        let ms: Vec<u128> = (1..=6).map(|n| pause(n).as_millis()).collect();
        assert_eq!(ms, vec![50, 100, 200, 400, 500, 500]);
        assert_eq!(pause(u32::MAX - 1), RETRY_PAUSE_MAX, "no overflow");
    }

    #[test]
    fn a_policy_without_attempts_or_time_is_refused() {
        let s = Duration::from_secs(1);
        assert_eq!(
            RetryPolicy::new(0, s, s),
            Err(BadPolicy::Attempts { attempts: 0 })
        );
        assert_eq!(
            RetryPolicy::new(ATTEMPTS_MAX + 1, s, s),
            Err(BadPolicy::Attempts {
                attempts: ATTEMPTS_MAX + 1
            })
        );
        assert!(RetryPolicy::new(1, Duration::ZERO, s)
            .unwrap_err()
            .to_string()
            .contains("an attempt timeout of 0"));
        assert!(RetryPolicy::new(1, s, Duration::ZERO)
            .unwrap_err()
            .to_string()
            .contains("a deadline of 0"));
        assert_eq!(RetryPolicy::new(3, s, s).unwrap().attempts_max(), 3);
    }

    #[test]
    fn a_lost_answer_names_its_node_and_a_refusal_does_not() {
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let lost = RoutedError::Client(ClientError::NoAnswer { addr });
        let (o, silent) = failed(lost).unwrap();
        assert!(matches!(o, Outcome::NoAnswer { .. }), "{o}");
        assert_eq!(silent, Some(addr));
        let refused = RoutedError::Client(ClientError::Refused {
            addr,
            reason: "node n1 is not serving".into(),
        });
        let (o, silent) = failed(refused).unwrap();
        assert!(o.to_string().starts_with("refused: "), "{o}");
        assert_eq!(silent, None, "a node that refused answered: ask it again");
        assert!(failed(RoutedError::NoEntry).is_err(), "no retry mends it");
    }
}
