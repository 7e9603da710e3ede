//! The shared action vocabulary. The same names appear in the
//! implementation, the TLA+ spec and the docs.

use crate::net::Msg;
use crate::types::{client_name, node_name, ClientId, NodeId, CLIENTS_MAX};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One step of the system. Each variant cites the note step it models
/// (note 1: `000_…` live rebalancing; note 2: `001_…` cutover and fencing).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(tag = "action", deny_unknown_fields)]
pub enum Action {
    /// Serving: the owner appends a new message at its epoch (admission open).
    Publish {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// Serving: `from` ships its next entry to `to`. The replica accepts it
    /// only from a sender at or above the newest epoch it has seen and above
    /// the epoch it sealed at (note 2: "permission checks must be enforced at
    /// the resource boundary that actually accepts writes"); a refusal tells
    /// a stale sender the newer epoch and it stops serving.
    Replicate {
        #[serde(with = "crate::types::node_serde")]
        from: NodeId,
        #[serde(with = "crate::types::node_serde")]
        to: NodeId,
    },
    /// Serving: the owner advances its confirmed tail to the last entry of its
    /// own epoch that W counted copies hold (note 1, "the confirm contract").
    Confirm {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// Step 0: one guarded write adds the target as a learner.
    AddLearner {
        #[serde(with = "crate::types::node_serde")]
        target: NodeId,
    },
    /// Step 0, end: the caught-up learner's storage instance joins the
    /// accepted history (eligible set grows; owner, epoch and W unchanged).
    AdmitLearner {
        #[serde(with = "crate::types::node_serde")]
        target: NodeId,
    },
    /// Step 1: one guarded write moves the target into the followers and marks
    /// `leaving` as leaving (it keeps replicating and stays eligible).
    Swap {
        #[serde(with = "crate::types::node_serde")]
        target: NodeId,
        #[serde(with = "crate::types::node_serde")]
        leaving: NodeId,
    },
    /// Step 1, owner side: the owner adopts the new counted set and records
    /// boundary B, its confirmed tail at that moment.
    OwnerSwitch,
    /// Step 2: once the target is durable at or beyond B, one guarded write
    /// removes the leaving copy from the assignment and the eligible set.
    RemoveLeaving,
    /// Aborts, by the operator (a budgeted request): cancel a move before
    /// the swap; the learner is dropped.
    CancelMove,
    /// Aborts, by the controller, for a reason: the move's target is down or
    /// lost before the swap (note 1: "if T fails before step 1, drop the
    /// learner"), or before the owner adopted a promotion (the promotion is
    /// withdrawn). A planned move aborted this way earns a retry.
    AbortMove,
    /// Aborts, by the controller, after the swap: the target is down or lost
    /// (note 1: "if T fails between steps 1 and 2, R is still in the eligible
    /// set and still holds its data"), so the leaving copy, which kept
    /// replicating, is swapped back in and the target becomes the leaving
    /// copy; `OwnerSwitch` and `RemoveLeaving` then finish the reversed move.
    SwapBack,
    /// Replication-factor increase: step 0, then the learner becomes a
    /// follower and rf grows; W grows when the owner adopts it.
    PromoteLearner {
        #[serde(with = "crate::types::node_serde")]
        target: NodeId,
    },
    /// Handoff: the owner stops accepting state-changing work (quiet point).
    CloseAdmission {
        #[serde(with = "crate::types::node_serde")]
        to: NodeId,
    },
    /// Handoff: the owner has drained in-flight work and reports final boundary F.
    ReportFinalBoundary,
    /// Handoff: one guarded write commits the new owner at epoch + 1 with a
    /// continuation certificate.
    CommitHandoff,
    /// Handoff: the new owner activates without seal or inspection.
    ActivateOwner,
    /// Handoff, by the operator (a budgeted request): cancel before the
    /// commit; admission reopens.
    CancelHandoff,
    /// Handoff, by the controller, for a reason: the new owner is down or
    /// lost before the commit (note 1: "a failure before the next write
    /// cancels the handoff and A reopens admission").
    AbortHandoff,
    /// Fault: the process stops; volatile state is lost, the disk survives.
    Crash {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// Fault: the process comes back, on its old disk or on a fresh one. A
    /// follower back on its old disk is suspended until re-admitted.
    Restart {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
        fresh_disk: bool,
    },
    /// A suspended follower, caught up, is re-admitted without a fence.
    Rejoin {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// With messages in flight: a copy that knows itself suspended reads
    /// its re-admission from the record.
    NoticeRejoin {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// With messages in flight: the owner reads the record and unmutes
    /// every copy it muted that the record no longer suspends (finding 35).
    NoticeReadmission {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// The controller opens a pending recovery: the owner crashed, or it is
    /// suspected while still alive (`zombie`).
    OpenRecovery { zombie: bool },
    /// Recovery: an eligible replica seals its history at the current epoch.
    Seal {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// Recovery: inspection picks the recovered tail from the sealed copies
    /// and a sealed replica installs it (a quorum receipt).
    InstallRecovered {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// Recovery: with E - W + 1 seals and W receipts the candidate activates
    /// at epoch + 1.
    ActivateRecovery {
        #[serde(with = "crate::types::node_serde")]
        candidate: NodeId,
    },
    /// Progress (configs with messages in flight): the owner `from` reports
    /// to the controller how far copy `of` holds its history, with its own
    /// confirmed tail. It reports on the copies a guarded write waits for
    /// (a move's target, a leaving copy, a suspended follower, a handoff's
    /// new owner), and again while the controller holds something else
    /// (the controller's answer to a report is not modelled as a message).
    ReportProgress {
        #[serde(with = "crate::types::node_serde")]
        from: NodeId,
        #[serde(with = "crate::types::node_serde")]
        of: NodeId,
    },
    /// Network (configs with messages in flight): one copy of `msg` reaches
    /// the process it is addressed to, which is up, and handles it (an
    /// append to an instance whose disk is gone is lost).
    Deliver { msg: Msg },
    /// Network: one copy of `msg` is lost (budgeted).
    Drop { msg: Msg },
    /// Network: `msg` is delivered twice later: one more copy is in flight
    /// (budgeted).
    Duplicate { msg: Msg },
    /// Retention (note 2: "log retention periods must be long enough"): the
    /// serving owner takes a checkpoint at its confirmed tail, bound to that
    /// position and the epoch tag of the entry there, and reclaims the
    /// increments below it (budgeted).
    Truncate {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// Catch-up (note 2: "the target loads the snapshot first and then
    /// replays increments"): owner `from` ships its checkpoint to replica
    /// `to`, which lacks the entry at the checkpoint's position (history
    /// compare: the epoch tag). The copy's state becomes the checkpoint's;
    /// a copy that already holds that entry refuses it ("an older snapshot
    /// cannot overwrite post-increment state"); replay then continues with
    /// `Replicate`.
    InstallCheckpoint {
        #[serde(with = "crate::types::node_serde")]
        from: NodeId,
        #[serde(with = "crate::types::node_serde")]
        to: NodeId,
    },
    /// The producer (note 2: "does timeout retry cause duplicate
    /// effects?"), timed out on its newest publish because the
    /// acknowledgement is late or lost, sends it again, with its producer
    /// id and sequence number, to `node`, which serves with admission open.
    /// An owner whose history already holds that sequence answers with the
    /// position it holds and appends nothing; one that lacks it (the first
    /// attempt never reached it, or a recovery discarded it) appends it as
    /// a new entry at its own epoch.
    RetryPublish {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
    /// Client routing (note 2, after Redis Cluster's MOVED and ASK): the
    /// client, with no request in flight, publishes its next message (a new
    /// producer sequence) to the owner its stable route names, carrying that
    /// route's epoch.
    ClientPublish {
        // Traces written before there were several clients name none: `c1`.
        #[serde(default, with = "crate::types::client_serde")]
        client: ClientId,
    },
    /// The client, whose last request timed out or gave up unacknowledged,
    /// sends the same message (same producer sequence) again along its
    /// stable route (budgeted by `publish_retries`).
    ClientRetry {
        // Traces written before there were several clients name none: `c1`.
        #[serde(default, with = "crate::types::client_serde")]
        client: ClientId,
    },
    /// The node the request is at answers it from its own state: it
    /// accepts (appends, or finds the sequence in its history) if it serves
    /// at the request's epoch with admission open; an old owner whose
    /// handoff is committed but not yet activated answers ASK (this request
    /// only, at the new owner and epoch); a node that knows a newer owner
    /// answers MOVED (the client updates its stable route, forward in epoch
    /// only); a node that serves at a newer epoch than the request's refuses
    /// it with MOVED to itself (the stale-epoch refusal); otherwise it asks
    /// the client to try again along its stable route. Each answer but an
    /// acceptance costs one hop; at the hop limit the request gives up.
    AnswerClient {
        // Traces written before there were several clients name none: `c1`.
        #[serde(default, with = "crate::types::client_serde")]
        client: ClientId,
    },
    /// The node that accepted the request acknowledges it to the client,
    /// once it serves and its confirmed tail covers the message.
    AckClient {
        // Traces written before there were several clients name none: `c1`.
        #[serde(default, with = "crate::types::client_serde")]
        client: ClientId,
    },
    /// The client's deadline passes on its request (the node is down, the
    /// answer or the acknowledgement is late or lost): it drops the request
    /// and refreshes its stable route from the control plane's record.
    ClientTimeout {
        // Traces written before there were several clients name none: `c1`.
        #[serde(default, with = "crate::types::client_serde")]
        client: ClientId,
    },
    /// The consumer settles (deletes) the oldest message owner `node`
    /// delivered: a message published within its confirmed tail and not yet
    /// settled in its log. The settle is a log entry at the owner's epoch,
    /// under the same confirm rule as a publish; the consumer is told it is
    /// done once the owner confirms it.
    Settle {
        #[serde(with = "crate::types::node_serde")]
        node: NodeId,
    },
}

impl Action {
    /// The action's name without parameters (`"Swap"`).
    pub fn name(&self) -> &'static str {
        match self {
            Action::Publish { .. } => "Publish",
            Action::Replicate { .. } => "Replicate",
            Action::Confirm { .. } => "Confirm",
            Action::AddLearner { .. } => "AddLearner",
            Action::AdmitLearner { .. } => "AdmitLearner",
            Action::Swap { .. } => "Swap",
            Action::OwnerSwitch => "OwnerSwitch",
            Action::RemoveLeaving => "RemoveLeaving",
            Action::CancelMove => "CancelMove",
            Action::AbortMove => "AbortMove",
            Action::SwapBack => "SwapBack",
            Action::PromoteLearner { .. } => "PromoteLearner",
            Action::CloseAdmission { .. } => "CloseAdmission",
            Action::ReportFinalBoundary => "ReportFinalBoundary",
            Action::CommitHandoff => "CommitHandoff",
            Action::ActivateOwner => "ActivateOwner",
            Action::CancelHandoff => "CancelHandoff",
            Action::AbortHandoff => "AbortHandoff",
            Action::Crash { .. } => "Crash",
            Action::Restart { .. } => "Restart",
            Action::Rejoin { .. } => "Rejoin",
            Action::NoticeRejoin { .. } => "NoticeRejoin",
            Action::NoticeReadmission { .. } => "NoticeReadmission",
            Action::OpenRecovery { .. } => "OpenRecovery",
            Action::Seal { .. } => "Seal",
            Action::InstallRecovered { .. } => "InstallRecovered",
            Action::ActivateRecovery { .. } => "ActivateRecovery",
            Action::ReportProgress { .. } => "ReportProgress",
            Action::Deliver { .. } => "Deliver",
            Action::Drop { .. } => "Drop",
            Action::Duplicate { .. } => "Duplicate",
            Action::Truncate { .. } => "Truncate",
            Action::InstallCheckpoint { .. } => "InstallCheckpoint",
            Action::RetryPublish { .. } => "RetryPublish",
            Action::ClientPublish { .. } => "ClientPublish",
            Action::ClientRetry { .. } => "ClientRetry",
            Action::AnswerClient { .. } => "AnswerClient",
            Action::AckClient { .. } => "AckClient",
            Action::ClientTimeout { .. } => "ClientTimeout",
            Action::Settle { .. } => "Settle",
        }
    }

    /// Every action over every parameter value for `n` nodes, in a fixed order.
    pub fn alphabet(n: u8) -> Vec<Action> {
        let mut v = Vec::new();
        for a in 0..n {
            v.push(Action::Publish { node: a });
            v.push(Action::Confirm { node: a });
            for b in 0..n {
                if a != b {
                    v.push(Action::Replicate { from: a, to: b });
                }
            }
        }
        for t in 0..n {
            v.push(Action::AddLearner { target: t });
            v.push(Action::AdmitLearner { target: t });
            // `leaving` may be the target's own node: a node back on a fresh
            // disk swaps out its own lost instance.
            for l in 0..n {
                v.push(Action::Swap {
                    target: t,
                    leaving: l,
                });
            }
            v.push(Action::PromoteLearner { target: t });
        }
        v.extend([
            Action::OwnerSwitch,
            Action::RemoveLeaving,
            Action::CancelMove,
            Action::AbortMove,
            Action::SwapBack,
        ]);
        for t in 0..n {
            v.push(Action::CloseAdmission { to: t });
        }
        v.extend([
            Action::ReportFinalBoundary,
            Action::CommitHandoff,
            Action::ActivateOwner,
            Action::CancelHandoff,
            Action::AbortHandoff,
        ]);
        for a in 0..n {
            v.push(Action::Crash { node: a });
            v.push(Action::Restart {
                node: a,
                fresh_disk: false,
            });
            v.push(Action::Restart {
                node: a,
                fresh_disk: true,
            });
            v.push(Action::Rejoin { node: a });
            v.push(Action::NoticeRejoin { node: a });
            v.push(Action::NoticeReadmission { node: a });
        }
        v.push(Action::OpenRecovery { zombie: false });
        v.push(Action::OpenRecovery { zombie: true });
        for a in 0..n {
            v.push(Action::Seal { node: a });
            v.push(Action::InstallRecovered { node: a });
            v.push(Action::ActivateRecovery { candidate: a });
        }
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    v.push(Action::ReportProgress { from: a, of: b });
                }
            }
        }
        // Retention last, so the order of every other action, and with it
        // every counterexample found before retention existed, is kept.
        for a in 0..n {
            v.push(Action::Truncate { node: a });
            for b in 0..n {
                if a != b {
                    v.push(Action::InstallCheckpoint { from: a, to: b });
                }
            }
        }
        // The producer's retries after retention, for the same reason.
        for a in 0..n {
            v.push(Action::RetryPublish { node: a });
        }
        // The client after the producer's retries, for the same reason.
        // Each kind for every client in turn, so that with one client the
        // order is the one before there were more.
        for kind in [
            (|client| Action::ClientPublish { client }) as fn(ClientId) -> Action,
            |client| Action::ClientRetry { client },
            |client| Action::AnswerClient { client },
            |client| Action::AckClient { client },
            |client| Action::ClientTimeout { client },
        ] {
            v.extend((0..CLIENTS_MAX as ClientId).map(kind));
        }
        // The consumer's settles after the client, for the same reason.
        for a in 0..n {
            v.push(Action::Settle { node: a });
        }
        v
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |x: &NodeId| node_name(*x);
        match self {
            Action::Publish { node } => write!(f, "Publish {{ node: {} }}", n(node)),
            Action::Replicate { from, to } => {
                write!(f, "Replicate {{ from: {}, to: {} }}", n(from), n(to))
            }
            Action::Confirm { node } => write!(f, "Confirm {{ node: {} }}", n(node)),
            Action::AddLearner { target } => write!(f, "AddLearner {{ target: {} }}", n(target)),
            Action::AdmitLearner { target } => {
                write!(f, "AdmitLearner {{ target: {} }}", n(target))
            }
            Action::Swap { target, leaving } => {
                write!(
                    f,
                    "Swap {{ target: {}, leaving: {} }}",
                    n(target),
                    n(leaving)
                )
            }
            Action::PromoteLearner { target } => {
                write!(f, "PromoteLearner {{ target: {} }}", n(target))
            }
            Action::CloseAdmission { to } => write!(f, "CloseAdmission {{ to: {} }}", n(to)),
            Action::Crash { node } => write!(f, "Crash {{ node: {} }}", n(node)),
            Action::Restart { node, fresh_disk } => {
                write!(
                    f,
                    "Restart {{ node: {}, fresh_disk: {fresh_disk} }}",
                    n(node)
                )
            }
            Action::Rejoin { node } => write!(f, "Rejoin {{ node: {} }}", n(node)),
            Action::NoticeRejoin { node } => write!(f, "NoticeRejoin {{ node: {} }}", n(node)),
            Action::NoticeReadmission { node } => {
                write!(f, "NoticeReadmission {{ node: {} }}", n(node))
            }
            Action::OpenRecovery { zombie } => write!(f, "OpenRecovery {{ zombie: {zombie} }}"),
            Action::Seal { node } => write!(f, "Seal {{ node: {} }}", n(node)),
            Action::InstallRecovered { node } => {
                write!(f, "InstallRecovered {{ node: {} }}", n(node))
            }
            Action::ActivateRecovery { candidate } => {
                write!(f, "ActivateRecovery {{ candidate: {} }}", n(candidate))
            }
            Action::ReportProgress { from, of } => {
                write!(f, "ReportProgress {{ from: {}, of: {} }}", n(from), n(of))
            }
            Action::Deliver { msg } => write!(f, "Deliver {{ {msg} }}"),
            Action::Drop { msg } => write!(f, "Drop {{ {msg} }}"),
            Action::Duplicate { msg } => write!(f, "Duplicate {{ {msg} }}"),
            Action::Truncate { node } => write!(f, "Truncate {{ node: {} }}", n(node)),
            Action::RetryPublish { node } => write!(f, "RetryPublish {{ node: {} }}", n(node)),
            Action::Settle { node } => write!(f, "Settle {{ node: {} }}", n(node)),
            Action::ClientPublish { client }
            | Action::ClientRetry { client }
            | Action::AnswerClient { client }
            | Action::AckClient { client }
            | Action::ClientTimeout { client } => {
                write!(f, "{} {{ client: {} }}", self.name(), client_name(*client))
            }
            Action::InstallCheckpoint { from, to } => {
                write!(
                    f,
                    "InstallCheckpoint {{ from: {}, to: {} }}",
                    n(from),
                    n(to)
                )
            }
            other => write!(f, "{}", other.name()),
        }
    }
}
