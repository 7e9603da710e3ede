//! Planned owner handoff: close admission, final boundary, commit, activate,
//! cancel.

use super::consumer::tell_settled;
use super::{view_of, Cluster, ClusterError, Outcome};
use crate::ids::NodeId;
use crate::mutant::Mutant;
use crate::owner::Serving;
use crate::store::{HandoffPhase, StoreError, Write};
use std::collections::BTreeMap;

impl Cluster {
    /// `CloseAdmission{to}`: the serving owner stops accepting
    /// state-changing work for a handoff to the follower on `to`.
    pub fn close_admission(&mut self, to: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("close_admission", |c| {
            c.owner_serving()?;
            c.alive(to)?;
            let t = c.storage_of(to)?;
            let r = c.write(Write::CloseAdmission { to: t })?;
            let mutants = c.mutants;
            c.owner_serving_mut()?.close_admission(mutants);
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `ReportFinalBoundary`: the owner has drained; its last accepted
    /// position is the final boundary F.
    pub fn report_final_boundary(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("report_final_boundary", |c| {
            let owner = c.record().owner;
            c.owner_serving()?;
            let n = &mut c.nodes[owner.node.index()];
            let s = n.serving.as_mut().expect("checked above");
            let boundary = s.report_final_boundary(&n.replica)?;
            c.write(Write::ReportFinalBoundary { boundary })?;
            Ok(Outcome::FinalBoundary { boundary })
        })
    }

    /// `CommitHandoff`: with the reporting owner still serving (with
    /// messages in flight: a report from it at the record's epoch) and the
    /// new owner (up) durable at F, one guarded write commits the new owner
    /// at epoch + 1 (the continuation certificate). The old owner stays on as
    /// a follower; it learns the new epoch like any other stale sender, when
    /// a replica refuses it (its admission is closed and it has drained, so
    /// it has nothing left to accept or confirm).
    pub fn commit_handoff(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("commit_handoff", |c| {
            c.sees_owner()?;
            if let Some(h) = c.record().handoff.clone() {
                if !c.networked() {
                    c.reporting(h.to)?;
                } else if c.holder(h.to).is_none() {
                    // With messages in flight the new owner's process may
                    // be down when the controller acts on its report
                    // (finding 27); its disk must still be the one the
                    // record names.
                    return Err(StoreError::Lost { storage: h.to }.into());
                }
            }
            let r = c.record().clone();
            let mut durable = BTreeMap::new();
            for s in r.followers.iter() {
                durable.insert(*s, c.sees(*s)?.0);
            }
            let old_owner = c.record().owner;
            let r = c.write(Write::CommitHandoff { durable })?;
            if c.mutants.on(Mutant::OldOwnerServesAfterCommit) {
                // The wrong idea: the old owner takes the commit for the end
                // of its handoff and reopens admission, as after a cancel.
                if let Some(s) = c.nodes[old_owner.node.index()].serving.as_mut() {
                    s.reopen_admission();
                }
            }
            Ok(Outcome::Committed { epoch: r.epoch })
        })
    }

    /// `ActivateOwner`: the committed new owner starts serving at the new
    /// epoch without seal or inspection; F is its confirmed tail (the
    /// consumer is told of every settle at or below it).
    pub fn activate_owner(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("activate_owner", |c| {
            let before = c.record().clone();
            let h = before.handoff.clone().ok_or(StoreError::NoHandoff)?;
            if h.phase != HandoffPhase::Committed {
                return Err(StoreError::WrongHandoffPhase {
                    expected: HandoffPhase::Committed,
                    found: h.phase,
                }
                .into());
            }
            c.alive(h.to.node)?;
            if c.holder(h.to).is_none() {
                return Err(StoreError::Lost { storage: h.to }.into());
            }
            let r = c.write(Write::ActivateOwner)?;
            let f = h.final_boundary.expect("a committed handoff has F");
            c.learn_epoch(h.to.node, r.epoch);
            // The new owner continues F and nothing past it (finding 33).
            if !c.mutants.on(Mutant::HandoffKeepsStaleTail) {
                let n = &mut c.nodes[h.to.node.index()];
                let persist = n.replica.continue_at(f)?;
                n.persist(&persist);
            }
            let serving = c.serve(Serving::activate(
                h.to,
                r.epoch,
                r.counted(),
                r.confirm_w,
                f,
                view_of(&r),
            ));
            c.nodes[h.to.node.index()].serving = Some(serving);
            // F is confirmed: so is every settle at or below it.
            tell_settled(
                &mut c.settled,
                c.nodes[h.to.node.index()].replica.entries(),
                f,
            );
            Ok(Outcome::Activated {
                owner: h.to.node,
                epoch: r.epoch,
            })
        })
    }

    /// `CancelHandoff`: before the commit, drop the handoff; the owner
    /// reopens admission.
    pub fn cancel_handoff(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("cancel_handoff", |c| {
            let r = c.write(Write::CancelHandoff)?;
            if let Ok(s) = c.owner_serving_mut() {
                s.reopen_admission();
            }
            Ok(Outcome::Recorded { version: r.version })
        })
    }
}
