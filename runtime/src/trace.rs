//! NDJSON trace events at the protocol transitions, named in the shared
//! action vocabulary (`Publish`, `RetryPublish`, `Settle`, `Replicate`,
//! `Deliver`, `Confirm`, `Crash`, `Restart`, `Rejoin`, `NoticeRejoin`,
//! `NoticeReadmission`, `Drop`, `Duplicate`,
//! `CloseAdmission`, `ReportFinalBoundary`, `CommitHandoff`,
//! `ActivateOwner`, `AddLearner`, `AdmitLearner`, `Swap`, `OwnerSwitch`,
//! `RemoveLeaving`, `OpenRecovery`, `Seal`, `InstallRecovered`,
//! `ActivateRecovery`), one JSON object per line.
//!
//! Tracing is a flag of the node's environment (`Env::tracing`): when it is
//! off no event is built, so the cost is one branch per transition. The
//! simulator writes one trace for the whole run, in the order its single
//! thread took the steps; each TCP node writes its own.

use livemove_impl::{Epoch, Msg, NodeId, Position, StorageId};
use serde::Serialize;
use std::io::{self, Write};

/// One protocol transition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action")]
pub enum Event {
    /// The owner appended a new entry at its epoch.
    Publish {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The entry's position.
        pos: Position,
        /// The owner's epoch.
        epoch: Epoch,
        /// The message key.
        key: u64,
    },
    /// The owner took a producer's retry of message `key` (note 2:
    /// "does timeout retry cause duplicate effects?"): its history held
    /// the key at `pos` with epoch tag `epoch` and it appended nothing
    /// (`held`), or it lacked the key and appended it at `pos` at its own
    /// epoch, durable before this event, shipped after it like a publish.
    RetryPublish {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The position of the entry holding the message.
        pos: Position,
        /// That entry's epoch tag.
        epoch: Epoch,
        /// The message key.
        key: u64,
        /// Whether the history held it (nothing appended).
        held: bool,
    },
    /// The owner appended the consumer's settle (the `Delete` of the
    /// oldest message it delivered) at its epoch.
    Settle {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The `Delete` entry's position.
        pos: Position,
        /// The owner's epoch.
        epoch: Epoch,
        /// The key of the message it settles.
        key: u64,
    },
    /// The owner put an append for `to` on the wire.
    Replicate {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        from: NodeId,
        /// The copy's node.
        #[serde(serialize_with = "node_name")]
        to: NodeId,
        /// The copy's disk incarnation (written only when not 0): an owner
        /// that has not yet read that a disk was lost still ships to the
        /// lost instance, and the message is lost on arrival.
        #[serde(skip_serializing_if = "is_zero")]
        to_disk: u32,
        /// The position shipped.
        pos: Position,
    },
    /// A message reached the process it is addressed to, which handled it.
    Deliver {
        /// The message, in the implementation's wire vocabulary.
        msg: Msg,
        /// For an append reaching the disk it is for: the copy's log length
        /// before it handles the append, which is what shows a write the
        /// other events cannot (a duplicate applied twice lands at the tail).
        #[serde(skip_serializing_if = "Option::is_none")]
        len: Option<Position>,
    },
    /// The network lost one copy of a message (simulator).
    Drop {
        /// The message.
        msg: Msg,
    },
    /// The network will deliver a message once more (simulator).
    Duplicate {
        /// The message.
        msg: Msg,
    },
    /// The owner advanced its confirmed tail.
    Confirm {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The new confirmed tail.
        tail: Position,
    },
    /// The process stopped; its disk stays.
    Crash {
        /// The node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// The process came back, on its own disk or on an empty one.
    Restart {
        /// The node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// Its new process incarnation.
        inc: u32,
        /// Whether the record suspends it once it is back: a follower it
        /// suspended at this restart, or a leaving copy it still suspends
        /// from before the swap (the copy itself does not know it: its
        /// crash forgot it, as in the spec).
        suspended: bool,
        /// Whether it came back on an empty disk (the old one lost): a new
        /// storage instance. Written only when true.
        #[serde(skip_serializing_if = "is_false")]
        fresh_disk: bool,
    },
    /// A suspended follower, caught up, was re-admitted (one guarded write).
    Rejoin {
        /// The follower's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// A copy that knew itself suspended read the record and found it is
    /// not: from now on its acknowledgements are marked admitted.
    NoticeRejoin {
        /// The copy's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// The record's owner read the record and unmuted the copies it had
    /// muted that the record no longer suspends (finding 35).
    NoticeReadmission {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The copies it unmuted, in order: every one it had muted that
        /// the record no longer suspends.
        copies: Vec<StorageId>,
    },
    /// The owner started a handoff to the follower on `to` and closed
    /// admission (one guarded write).
    CloseAdmission {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The new owner's node.
        #[serde(serialize_with = "node_name")]
        to: NodeId,
    },
    /// The drained owner reported its final boundary F.
    ReportFinalBoundary {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// F.
        boundary: Position,
    },
    /// The new owner was committed at the next epoch (one guarded write,
    /// made by the old owner's node from its acknowledgements).
    CommitHandoff {
        /// The old owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// A node the record assigned nothing joined as a planned move's
    /// learner (step 0, its own guarded write).
    AddLearner {
        /// The learner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// The owner admitted the caught-up learner into the eligible set.
    AdmitLearner {
        /// The learner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// The owner swapped the target in for the follower on `leaving`
    /// (step 1).
    Swap {
        /// The target's node.
        #[serde(serialize_with = "node_name")]
        target: NodeId,
        /// The leaving follower's node.
        #[serde(serialize_with = "node_name")]
        leaving: NodeId,
    },
    /// The owner adopted the new counted set and recorded B.
    OwnerSwitch {
        /// The owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The switch boundary B.
        boundary: Position,
    },
    /// The owner removed the leaving copy (step 2); its data stays.
    RemoveLeaving {
        /// The removed copy's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// The way out of a swapped move whose target is down or lost (one
    /// guarded write, by the owner's node at the controller's request): the
    /// leaving copy counts again and the target leaves.
    SwapBack {
        /// The move's target's node.
        #[serde(serialize_with = "node_name")]
        target: NodeId,
        /// The node of the copy swapped back in.
        #[serde(serialize_with = "node_name")]
        back: NodeId,
    },
    /// A recovery was opened against the record's owner on `node` (one
    /// guarded write): by the controller's failure detector when that
    /// owner's process has been down for a lease, or by the owner's own
    /// process when it came back and found it no longer serves.
    OpenRecovery {
        /// The owner the recovery replaces.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// An eligible copy sealed at the recovery's epoch (durably first,
    /// then its guarded write, which carries its log as evidence).
    Seal {
        /// The copy's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
    },
    /// A sealed copy installed the recovered tail (durably first, then its
    /// receipt, one guarded write).
    InstallRecovered {
        /// The copy's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The recovered tail's length.
        tail: Position,
    },
    /// A copy that installed the recovered tail became the owner at the
    /// next epoch (one guarded write) and serves from the tail.
    ActivateRecovery {
        /// The new owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The epoch it serves at.
        epoch: Epoch,
    },
    /// The committed new owner started serving at the new epoch.
    ActivateOwner {
        /// The new owner's node.
        #[serde(serialize_with = "node_name")]
        node: NodeId,
        /// The epoch it serves at.
        epoch: Epoch,
    },
}

fn node_name<S: serde::Serializer>(n: &NodeId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(n)
}

/// One line of a trace: the event and the time it happened at, in
/// milliseconds of the run's clock (virtual in the simulator).
#[derive(Serialize)]
struct Line<'a> {
    t_ms: u64,
    #[serde(flatten)]
    event: &'a Event,
}

/// One event as one NDJSON line, newline included.
pub fn line(t_ms: u64, event: &Event) -> Vec<u8> {
    let mut out =
        serde_json::to_vec(&Line { t_ms, event }).expect("invariant broken: an event is not JSON");
    out.push(b'\n');
    out
}

/// Writes events as NDJSON.
pub struct Tracer {
    out: Box<dyn Write + Send>,
    events: u64,
}

impl Tracer {
    /// A tracer writing to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Tracer { out, events: 0 }
    }

    /// Write one event at `t_ms`.
    pub fn emit(&mut self, t_ms: u64, event: &Event) -> io::Result<()> {
        self.out.write_all(&line(t_ms, event))?;
        self.events += 1;
        Ok(())
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Flush what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// A tracer appending to the file at `path` (created if missing), one
    /// line written at a time.
    pub fn append_to(path: &std::path::Path) -> io::Result<Tracer> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Tracer::new(Box::new(io::LineWriter::new(f))))
    }

    /// This tracer, shareable between the nodes of one process: the
    /// partitions of a TCP node each write to their own, and the nodes of
    /// one process on one thread may share a partition's, so that its
    /// trace is one order of every node's steps.
    pub fn shared(self) -> SharedTracer {
        std::sync::Arc::new(std::sync::Mutex::new(self))
    }
}

/// A tracer several nodes write to.
pub type SharedTracer = std::sync::Arc<std::sync::Mutex<Tracer>>;

/// Write one event at `t_ms` to a shared tracer. A writer that panicked
/// while holding it left at most a partial line, which the validator
/// reports; the error says so.
pub fn emit_shared(shared: &SharedTracer, t_ms: u64, event: &Event) -> io::Result<()> {
    match shared.lock() {
        Ok(mut t) => t.emit(t_ms, event),
        Err(_) => Err(io::Error::other("a writer of this trace panicked")),
    }
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer")
            .field("events", &self.events)
            .finish()
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}
