//! What a controller does next, read from the persisted record alone (note
//! 2: after a failure, the next steps are determined by persistent state).
//!
//! A controller that restarts loads the record and asks `next_step`; it never
//! needs memory of what it was doing. The step named is one whose guarded
//! write the store accepts once the facts outside the record allow it (a
//! copy caught up, a node up): it never names a write the record alone
//! makes the store refuse. Conformance checks this after every step of
//! every lockstep run against the steps the model enables.

use crate::ids::{Position, StorageId};
use crate::mutant::Mutants;
use crate::store::record::{HandoffPhase, MovePhase, Record};
use crate::store::write::{readmitted_at_activation, receipts};
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
    /// Install the recovered tail on the sealed copies.
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
    /// The move's target lost its disk before the swap (or before the
    /// owner adopted its promotion): `abort_move`.
    AbortMove {
        /// The lost target.
        target: StorageId,
    },
    /// The move's target lost its disk after the swap: `swap_back` the
    /// leaving copy.
    SwapBack {
        /// The leaving copy that counts again.
        back: StorageId,
    },
    /// The move's target became the owner through a recovery and lost its
    /// disk: the owner is recovered first (an ordinary recovery, opened on
    /// the controller's own observation); the move's way out applies to the
    /// follower the target is afterwards (finding 25).
    RecoverOwner {
        /// The lost owner.
        owner: StorageId,
    },
    /// The handoff's new owner lost its disk before the commit:
    /// `abort_handoff`.
    AbortHandoff {
        /// The lost new owner.
        to: StorageId,
    },
}

/// The step to resume with after loading `r`.
///
/// A pending recovery comes first: activation once W receipts are in,
/// counted exactly as activation counts them (counted copies that installed
/// the tail and are not lost, a suspended installer re-admitted); else seals
/// until E - W + 1 live ones; else installs on sealed copies that have not
/// installed; else more seals (a sealed copy outside the counted set, such
/// as the leaving copy, gives no receipt). Only lost disks are in the record;
/// a target that is only down is the controller's observation, not the
/// record's, so resume waits on it like any other fact.
pub fn next_step(r: &Record) -> NextStep {
    if let Some(rec) = &r.recovery {
        // Receipts exist only once the first install fixed the tail, with
        // the seals counted then.
        let readmitted = readmitted_at_activation(r, rec, Mutants::NONE);
        let suspended = r.suspended.difference(&readmitted).copied().collect();
        if receipts(r, rec, &suspended) >= usize::from(r.configured_w()) {
            return NextStep::ActivateRecovery;
        }
        let sealed = rec.sealed.iter().filter(|s| !r.lost.contains(s)).count();
        let quorum = usize::from(rec.seal_quorum);
        if sealed < quorum {
            return NextStep::Seal {
                missing: quorum - sealed,
            };
        }
        let installable = rec
            .sealed
            .iter()
            .any(|s| !rec.installed.contains(s) && !r.lost.contains(s));
        if installable {
            return NextStep::InstallRecovered;
        }
        return NextStep::Seal { missing: 1 };
    }
    if let Some(h) = &r.handoff {
        return match h.phase {
            HandoffPhase::Closed | HandoffPhase::Reported if r.lost.contains(&h.to) => {
                NextStep::AbortHandoff { to: h.to }
            }
            HandoffPhase::Closed => NextStep::ReportFinalBoundary,
            HandoffPhase::Reported => NextStep::CommitHandoff {
                boundary: h.final_boundary.unwrap_or(0),
            },
            HandoffPhase::Committed => NextStep::ActivateOwner { owner: h.to },
        };
    }
    if let Some(m) = &r.move_task {
        let lost = r.lost.contains(&m.target);
        if lost && m.target == r.owner {
            return NextStep::RecoverOwner { owner: m.target };
        }
        return match m.phase {
            MovePhase::Learner | MovePhase::Admitted if lost => {
                NextStep::AbortMove { target: m.target }
            }
            MovePhase::Swapped if lost && m.promotion => NextStep::AbortMove { target: m.target },
            MovePhase::Swapped | MovePhase::Switched if lost && !m.promotion => match r.leaving {
                Some(back) => NextStep::SwapBack { back },
                None => panic!("invariant broken: a swapped follower move without a leaving copy"),
            },
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
