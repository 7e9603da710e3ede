//! What a simulated run is given, what it reports, and what stops it
//! before it starts.

use super::SimFailure;
use crate::control::ControlError;
use crate::disk_log::DiskLogError;
use crate::fsutil::ledger::SyncPoint;
use livemove_impl::{Mutants, NodeId, Position};

/// The fault schedule's rates, in percent of the fault phase's steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Faults {
    /// A message in flight is lost.
    pub drop_pct: u64,
    /// A message in flight will arrive once more.
    pub duplicate_pct: u64,
    /// A follower's process is killed (its disk stays).
    pub crash_pct: u64,
    /// A killed follower comes back on its data directory.
    pub restart_pct: u64,
    /// The link between two nodes is cut: every message across it is lost
    /// until the cut heals.
    pub cut_pct: u64,
    /// The longest cut, in virtual milliseconds.
    pub cut_ms_max: u64,
    /// Percent of kills that happen inside an append: part of one more
    /// record is on the disk, never acknowledged, and the restart must cut
    /// it away.
    pub torn_pct: u64,
    /// The longest delay of a message, in virtual milliseconds.
    pub delay_ms_max: u64,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            drop_pct: 8,
            duplicate_pct: 5,
            crash_pct: 2,
            restart_pct: 3,
            cut_pct: 1,
            cut_ms_max: 300,
            torn_pct: 50,
            delay_ms_max: 30,
        }
    }
}

/// One simulated run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The seed of every choice.
    pub seed: u64,
    /// Nodes; `n1` owns, `n2..n(rf)` follow.
    pub nodes: u8,
    /// The replication factor.
    pub rf: u8,
    /// Steps of the fault phase.
    pub fault_steps: u64,
    /// The most steps the healing phase may take.
    pub heal_steps_max: u64,
    /// Messages published during the fault phase, at most.
    pub publish_max: u64,
    /// Percent of fault-phase steps that publish.
    pub publish_pct: u64,
    /// The fault schedule.
    pub faults: Faults,
    /// Whether to record the NDJSON trace.
    pub trace: bool,
    /// Mutants switched on in the nodes' machines and the store.
    pub mutants: Mutants,
    /// Planned owner handoffs the fault phase may start (each to a seeded
    /// follower that is up); the healing phase must finish any pending.
    pub handoffs: u64,
    /// Planned follower moves the fault phase may start (a node the record
    /// assigns nothing joins as a learner, at a step when every process is
    /// up); needs more nodes than rf. The healing phase must finish them.
    pub moves: u64,
    /// Kills of the serving owner the fault phase may make (at a step with
    /// no handoff, move or recovery pending); each needs a recovery, which
    /// the restarted owner or the controller's failure detector opens and
    /// the nodes run. The healing phase must finish every recovery.
    pub recoveries: u64,
    /// Lapses of the serving owner's lease while its process is up (a cut
    /// between it and the controller's detector) the fault phase may make,
    /// at a step with no handoff, move or recovery pending: the detector
    /// opens a recovery against a live owner, a zombie that serves until
    /// the seals fence it. The healing phase must finish every recovery.
    pub suspicions: u64,
    /// Lost disks the fault phase may make, each on another node: a
    /// killed follower (at a step with no move, handoff or recovery
    /// pending) comes back on an empty data directory, a new storage
    /// instance, and the controller replaces its lost instance with it (a
    /// move whose learner is the new instance). The healing phase must
    /// finish every replacement.
    pub disk_losses: u64,
    /// Power losses the fault phase may make: a seeded node's machine
    /// loses power (a follower or a node that is down; the record's owner
    /// too while it serves with no handoff, move or recovery pending, which
    /// then needs a recovery). Its process dies if it is up, and its disk
    /// keeps what was made durable (`fsutil::ledger`) and a seeded part of
    /// the rest. The healing phase restarts it on that disk.
    pub power_losses: u64,
    /// A test switch: the nodes skip this fsync (only under the
    /// simulator's durability ledger), so a power loss can show what it
    /// protects.
    pub skip_sync: Option<SyncPoint>,
    /// Eager writes the fault phase may try (`eager.rs`): a guarded write
    /// the nodes make only once its guard holds (`AdmitLearner`, `Swap`,
    /// `RemoveLeaving`, `Rejoin`, a learner's `AddLearner` during a
    /// recovery), tried without checking it, as a writer acting on a stale
    /// record or report would; the store must refuse what the record does
    /// not allow.
    pub eager_writes: u64,
    /// Producer retries the fault phase may make (note 2: "does timeout
    /// retry cause duplicate effects?"): the producer sends its newest
    /// published message again, with its key, as if the first answer had
    /// been lost, to a node that serves with admission open; an owner
    /// whose history holds the key answers with its position and appends
    /// nothing, one that lacks it (a recovery discarded the unconfirmed
    /// first attempt) appends it.
    pub publish_retries: u64,
}

impl SimConfig {
    /// The default run for `seed`: three nodes at rf 3.
    pub fn new(seed: u64) -> Self {
        SimConfig {
            seed,
            nodes: 3,
            rf: 3,
            fault_steps: 400,
            heal_steps_max: 4000,
            publish_max: 24,
            publish_pct: 12,
            faults: Faults::default(),
            trace: false,
            mutants: Mutants::NONE,
            handoffs: 0,
            moves: 0,
            recoveries: 0,
            suspicions: 0,
            disk_losses: 0,
            power_losses: 0,
            skip_sync: None,
            eager_writes: 0,
            publish_retries: 0,
        }
    }
}

/// What one seed did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimReport {
    /// The seed.
    pub seed: u64,
    /// Steps taken, both phases.
    pub steps: u64,
    /// Messages sent by the nodes (duplicates made by the network not counted).
    pub messages: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Messages published.
    pub published: u64,
    /// The owner's confirmed tail at the end.
    pub confirmed: Position,
    /// Follower processes killed (each one up and committed when killed).
    pub crashes: u64,
    /// Messages lost by the network (or at a process that was down).
    pub drops: u64,
    /// Messages the network duplicated.
    pub duplicates: u64,
    /// Links cut.
    pub cuts: u64,
    /// Torn last records left on a disk: by kills inside an append, and by
    /// power losses that kept part of a record never made durable.
    pub torn_tails: u64,
    /// Handoffs started (their `CloseAdmission` committed).
    pub handoffs: u64,
    /// Moves started (their `AddLearner` committed).
    pub moves: u64,
    /// Owners killed (each needs a recovery).
    pub owner_kills: u64,
    /// Live owners suspected (each a zombie until fenced).
    pub suspicions: u64,
    /// Followers back on an empty disk (each a new instance that replaced
    /// its lost one).
    pub disk_losses: u64,
    /// Replacements started while a lost instance was named (their
    /// `AddLearner` committed): of the lost instance, or of a follower
    /// that was down and lower (the controller replaces the lowest).
    pub replacements: u64,
    /// Power losses made (each on a node's machine, its disk rolled back
    /// to what was durable and a seeded part of the rest).
    pub power_losses: u64,
    /// Power losses that struck the serving owner (each also counted in
    /// `owner_kills`: it needs a recovery).
    pub owner_power_losses: u64,
    /// Bytes written and never made durable that power losses took.
    pub power_bytes_lost: u64,
    /// Swapped moves whose target was gone, swapped back.
    pub swap_backs: u64,
    /// Eager writes tried (`SimConfig::eager_writes`).
    pub eager_attempts: u64,
    /// Eager writes the store took: legitimate writes made early, or,
    /// under a mutant of a guard, writes the guard should have refused.
    pub eager_accepted: u64,
    /// Producer retries a node answered (`SimConfig::publish_retries`).
    pub retries: u64,
    /// Of those, the ones answered from the owner's history: the first
    /// attempt's entry was there, and nothing was appended.
    pub retries_held: u64,
    /// The record's epoch at the end: 1, plus one per handoff committed
    /// and per recovery activated (0 when the run failed before its disks
    /// were read).
    pub final_epoch: u64,
    /// Published messages never confirmed: accepted by an owner that died
    /// before W copies held them, and discarded by the recovery (never
    /// acknowledged, so nothing was promised). 0 without owner kills.
    pub unconfirmed_lost: u64,
    /// Pass, or the first failure.
    pub verdict: Result<(), SimFailure>,
    /// The NDJSON trace, if asked for.
    pub trace: Vec<u8>,
    /// Events in the trace.
    pub trace_events: u64,
}

/// A run could not be set up or its disks could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The temporary tree could not be made.
    #[error("simulation directory: {0}")]
    Dir(#[source] std::io::Error),
    /// The record could not be created or read.
    #[error("simulation control plane: {0}")]
    Control(#[source] ControlError),
    /// A disk could not be read back for the final checks.
    #[error("simulation disk of {node}: {source}")]
    Disk {
        /// The node.
        node: NodeId,
        /// What failed.
        #[source]
        source: DiskLogError,
    },
    /// The configuration cannot be simulated.
    #[error("invalid simulation config: {0}")]
    Config(String),
    /// The zoo's baseline: the correct node code fails a seed, so no
    /// mutant can be judged against it.
    #[error("the correct node code fails seed {seed}: {failure}")]
    CorrectFails {
        /// The seed.
        seed: u64,
        /// What failed.
        failure: SimFailure,
    },
}
