//! Guarded writes: each checks the notes' preconditions against the record
//! (and the facts the writer observed) and produces the next record.
//!
//! Facts that live outside the record, such as how far a copy is durable,
//! are inputs: the writer observes them and names them in the write, the
//! store checks them. `durable` always means the length of the copy's prefix
//! that equals the owner's history (a copy with a divergent suffix of the
//! same length does not cover it).

use crate::entry::Entry;
use crate::ids::{Position, StorageId};

mod faults;
mod guards;
mod handoff;
mod moves;
mod recovery;

pub(crate) use recovery::{readmitted_at_activation, receipts};

use crate::mutant::{Mutant, Mutants};
use crate::store::error::StoreError;
use crate::store::record::{Record, RecoveredTail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One guarded write, named after the shared action it implements.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Write {
    /// Step 0: add `target` to the learners and start a move.
    AddLearner {
        /// The joining storage instance.
        target: StorageId,
        /// The follower the operator wants to leave, if already chosen.
        leaving: Option<StorageId>,
        /// The counted follower this move replaces, when the controller
        /// starts it because that copy is down or lost (the swap must then
        /// take it out); `None` for a planned move.
        replaces: Option<StorageId>,
    },
    /// Admit the caught-up learner into the accepted history.
    AdmitLearner {
        /// The learner.
        target: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// Step 1: `target` counts instead of `leaving`.
    Swap {
        /// The admitted learner.
        target: StorageId,
        /// The follower that leaves.
        leaving: StorageId,
        /// The target's durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// Replication-factor increase: the admitted learner becomes a follower, nothing leaves.
    PromoteLearner {
        /// The admitted learner.
        target: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// The owner adopted the record's counted set; `boundary` is its confirmed tail (B).
    OwnerSwitch {
        /// The owner's confirmed tail when it adopted the new set.
        boundary: Position,
        /// The move target's durable prefix of the owner's history.
        target_durable: Position,
    },
    /// Step 2: remove the leaving copy from the assignment and the eligible set.
    RemoveLeaving {
        /// The target's durable prefix of the owner's history.
        target_durable: Position,
    },
    /// The operator cancels a move before its swap.
    CancelMove,
    /// The controller aborts a move whose target is down or lost: before the
    /// swap the learner is dropped; an unadopted promotion is withdrawn.
    AbortMove {
        /// Whether the writer observed the target's process down (a lost
        /// disk is in the record).
        target_down: bool,
    },
    /// After the swap, with the target down or lost: the leaving copy, which
    /// kept replicating, counts again and the target becomes the leaving
    /// copy; the owner must adopt the set again.
    SwapBack {
        /// Whether the writer observed the target's process down.
        target_down: bool,
        /// The leaving copy's durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// Handoff: the owner closed admission for a handoff to `to`.
    CloseAdmission {
        /// The follower that becomes owner.
        to: StorageId,
    },
    /// Handoff: the owner drained and reports its final boundary F.
    ReportFinalBoundary {
        /// F.
        boundary: Position,
    },
    /// Handoff: commit the new owner at epoch + 1 (the continuation certificate).
    CommitHandoff {
        /// Each counted copy's durable prefix of the owner's history.
        durable: BTreeMap<StorageId, Position>,
    },
    /// Handoff: the new owner activated and serves.
    ActivateOwner,
    /// Handoff: the operator cancels before the commit; the owner reopens
    /// admission.
    CancelHandoff,
    /// Handoff: the controller aborts before the commit because the new
    /// owner is down or lost; the owner reopens admission.
    AbortHandoff {
        /// Whether the writer observed the new owner's process down.
        to_down: bool,
    },
    /// A follower restarted on its own disk: suspend it.
    Suspend {
        /// The restarted follower.
        storage: StorageId,
    },
    /// A node came back with a fresh disk: its old storage instance is gone.
    MarkLost {
        /// The storage instance whose disk is gone.
        storage: StorageId,
    },
    /// A suspended follower caught up and is re-admitted without a fence.
    Rejoin {
        /// The suspended follower.
        storage: StorageId,
        /// Its durable prefix of the owner's history.
        durable: Position,
        /// The owner's confirmed tail.
        owner_confirmed: Position,
    },
    /// Open a recovery: the owner crashed or is suspected.
    OpenRecovery,
    /// A member of the eligible set sealed at the recovery's epoch.
    Seal {
        /// The sealed storage instance.
        storage: StorageId,
        /// With messages in flight, the history the instance sealed, given
        /// with the seal as evidence (note 1: "B and C seal their history
        /// and provide evidence"); inspection then reads the record, never
        /// a copy's log. `None` when inspection reads the sealed copies at
        /// the first install (the atomic cluster).
        #[serde(default)]
        evidence: Option<Vec<Entry>>,
    },
    /// A counted copy installed the recovered tail.
    InstallRecovered {
        /// The storage instance that holds the tail now.
        storage: StorageId,
        /// The tail inspection chose; fixed by the first install.
        tail: RecoveredTail,
    },
    /// Activate the recovery: `candidate` owns at epoch + 1.
    ActivateRecovery {
        /// The new owner.
        candidate: StorageId,
    },
    /// Operator: pause rebalancing.
    Pause,
    /// Operator: resume rebalancing.
    Resume,
}

impl Write {
    /// The shared action name of the write.
    pub fn action(&self) -> &'static str {
        match self {
            Write::AddLearner { .. } => "add_learner",
            Write::AdmitLearner { .. } => "admit_learner",
            Write::Swap { .. } => "swap",
            Write::PromoteLearner { .. } => "promote_learner",
            Write::OwnerSwitch { .. } => "owner_switch",
            Write::RemoveLeaving { .. } => "remove_leaving",
            Write::CancelMove => "cancel_move",
            Write::AbortMove { .. } => "abort_move",
            Write::SwapBack { .. } => "swap_back",
            Write::CloseAdmission { .. } => "close_admission",
            Write::ReportFinalBoundary { .. } => "report_final_boundary",
            Write::CommitHandoff { .. } => "commit_handoff",
            Write::ActivateOwner => "activate_owner",
            Write::CancelHandoff => "cancel_handoff",
            Write::AbortHandoff { .. } => "abort_handoff",
            Write::Suspend { .. } => "restart",
            Write::MarkLost { .. } => "restart",
            Write::Rejoin { .. } => "rejoin",
            Write::OpenRecovery => "open_recovery",
            Write::Seal { .. } => "seal",
            Write::InstallRecovered { .. } => "install_recovered",
            Write::ActivateRecovery { .. } => "activate_recovery",
            Write::Pause => "pause",
            Write::Resume => "resume",
        }
    }
}

/// The seal quorum E - W + 1 for a record, where W is the W the owner may
/// still be confirming on (`confirm_w`), not the one a pending
/// replication-factor increase will bring.
pub fn seal_quorum(record: &Record, mutants: Mutants) -> u8 {
    let e = record.eligible.len() as u8;
    let w = if mutants.on(Mutant::SealWithNewW) {
        record.configured_w()
    } else {
        record.confirm_w
    };
    let quorum = e.saturating_sub(w) + 1;
    if mutants.on(Mutant::SmallSealQuorum) {
        quorum.saturating_sub(1)
    } else {
        quorum
    }
}

/// Apply `write` to `record` (the version check is the store's): the next
/// record, or the first failed precondition.
pub fn apply(record: &Record, write: &Write, mutants: Mutants) -> Result<Record, StoreError> {
    let mut r = record.clone();
    match write {
        Write::AddLearner { .. }
        | Write::AdmitLearner { .. }
        | Write::Swap { .. }
        | Write::PromoteLearner { .. }
        | Write::OwnerSwitch { .. }
        | Write::RemoveLeaving { .. }
        | Write::CancelMove
        | Write::AbortMove { .. }
        | Write::SwapBack { .. }
        | Write::Pause
        | Write::Resume => moves::apply(&mut r, write, mutants)?,
        Write::CloseAdmission { .. }
        | Write::ReportFinalBoundary { .. }
        | Write::CommitHandoff { .. }
        | Write::ActivateOwner
        | Write::CancelHandoff
        | Write::AbortHandoff { .. } => handoff::apply(&mut r, write)?,
        Write::Suspend { .. } | Write::MarkLost { .. } | Write::Rejoin { .. } => {
            faults::apply(&mut r, write, mutants)?
        }
        Write::OpenRecovery
        | Write::Seal { .. }
        | Write::InstallRecovered { .. }
        | Write::ActivateRecovery { .. } => recovery::apply(&mut r, write, mutants)?,
    }
    r.version = record.version.next();
    check_record(&r);
    Ok(r)
}

/// Structural invariants every committed record satisfies; a failure is a
/// programming mistake in a guard above.
pub fn check_record(r: &Record) {
    assert!(
        !r.followers.contains(&r.owner),
        "invariant broken: owner {} is also a follower",
        r.owner
    );
    for l in &r.learners {
        assert!(
            !r.followers.contains(l) && *l != r.owner,
            "invariant broken: learner {l} also counts"
        );
    }
    for s in &r.suspended {
        assert!(
            r.followers.contains(s) || r.leaving == Some(*s),
            "invariant broken: suspended {s} is neither a follower nor leaving"
        );
    }
    if let Some(l) = r.leaving {
        assert!(
            !r.followers.contains(&l),
            "invariant broken: leaving {l} still counts"
        );
    }
}

/// Shorthand used by tests and the operator: the recovered tail of `entries`.
pub fn tail_of(source: StorageId, entries: &[Entry]) -> RecoveredTail {
    RecoveredTail {
        source,
        entries: entries.to_vec(),
    }
}
