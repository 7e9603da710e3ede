//! What a controller does next, read from the persisted record alone (note
//! 2: after a failure, the next steps are determined by persistent state).
//!
//! A controller that restarts loads the record and asks `next_step`; it never
//! needs memory of what it was doing.

use crate::ids::{Position, StorageId};
use crate::store::record::{HandoffPhase, MovePhase, Record};
use serde::{Deserialize, Serialize};

/// The next protocol step for the partition, by shared action name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NextStep {
    /// Nothing in flight.
    Idle,
    /// Seal members of the eligible set until the quorum is reached.
    Seal {
        /// Seals still needed.
        missing: usize,
    },
    /// Install the recovered tail on counted copies.
    InstallRecovered,
    /// Activate the recovery with an installed candidate.
    ActivateRecovery,
    /// The learner catches up, then `admit_learner`.
    AdmitLearner {
        /// The learner.
        target: StorageId,
    },
    /// `swap` (or `promote_learner`) the admitted learner in.
    Swap {
        /// The admitted learner.
        target: StorageId,
    },
    /// The owner adopts the new counted set (`owner_switch`).
    OwnerSwitch,
    /// Wait for the target to cover B, then `remove_leaving`.
    RemoveLeaving {
        /// The switch boundary.
        boundary: Position,
    },
    /// The owner drains and reports its final boundary.
    ReportFinalBoundary,
    /// Copies reach F, then `commit_handoff`.
    CommitHandoff {
        /// The final boundary.
        boundary: Position,
    },
    /// The committed new owner activates.
    ActivateOwner {
        /// The new owner.
        owner: StorageId,
    },
}

/// The step to resume with after loading `r`.
pub fn next_step(r: &Record) -> NextStep {
    if let Some(rec) = &r.recovery {
        let sealed = rec.sealed.iter().filter(|s| !r.lost.contains(s)).count();
        let quorum = usize::from(rec.seal_quorum);
        if sealed < quorum {
            return NextStep::Seal {
                missing: quorum - sealed,
            };
        }
        let receipts = rec.installed.len();
        if receipts < usize::from(r.configured_w()) {
            return NextStep::InstallRecovered;
        }
        return NextStep::ActivateRecovery;
    }
    if let Some(h) = &r.handoff {
        return match h.phase {
            HandoffPhase::Closed => NextStep::ReportFinalBoundary,
            HandoffPhase::Reported => NextStep::CommitHandoff {
                boundary: h.final_boundary.unwrap_or(0),
            },
            HandoffPhase::Committed => NextStep::ActivateOwner { owner: h.to },
        };
    }
    if let Some(m) = &r.move_task {
        return match m.phase {
            MovePhase::Learner => NextStep::AdmitLearner { target: m.target },
            MovePhase::Admitted => NextStep::Swap { target: m.target },
            MovePhase::Swapped => NextStep::OwnerSwitch,
            MovePhase::Switched => NextStep::RemoveLeaving {
                boundary: m.boundary.unwrap_or(0),
            },
        };
    }
    NextStep::Idle
}
