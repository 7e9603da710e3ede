//! Progress reports and the controller's knowledge (networked delivery).
//!
//! `report_progress` is the owner's send (`Serving::progress_report`
//! decides what it says); a delivered report reaches the controller
//! (`on_progress`, `controller::Known::on_report`). The controller's
//! guarded writes ask `sees` and `sees_owner`: with atomic delivery they
//! read the record owner's serving state and the copy's log at the moment
//! of the write, as before; with messages in flight only the last report
//! taken at the record's epoch.

use super::{Cluster, ClusterError, Outcome};
use crate::controller::{Known, Report, ReportVerdict};
use crate::ids::{NodeId, Position, StorageId};
use crate::mutant::Mutant;
use crate::net::Msg;
use crate::owner::{OwnerError, Serving};
use crate::replica::Replica;
use crate::store::HandoffPhase;
use std::collections::BTreeSet;

impl Cluster {
    /// What the controller was told of progress.
    pub fn known(&self) -> &Known {
        &self.known
    }

    /// `ReportProgress{from, of}`: the serving node `from` puts in flight
    /// its report on a copy on node `of` that the record waits on, unless
    /// a report of its own is still in flight.
    pub fn report_progress(&mut self, from: NodeId, of: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("report_progress", |c| {
            c.require_networked()?;
            c.node(of)?;
            if from == of {
                return Err(ClusterError::SameNode { node: from });
            }
            let (s, own) = c.unfenced_serving(from)?;
            // The window of a report covers its answer: a refusal on its
            // way to the reporter (finding 23: otherwise a stale owner piles
            // up refusals without bound).
            let covers_refusal = !c.mutants.on(Mutant::ReportWindowIgnoresRefusal);
            let outstanding = c.in_flight.iter().any(|m| match m {
                Msg::Progress { from: f, .. } => f.node == from,
                Msg::Refuse { to, .. } => covers_refusal && *to == from,
                _ => false,
            });
            if outstanding {
                return Err(ClusterError::ReportOutstanding { node: from });
            }
            let msg = s.progress_report(own, &c.awaited(), of, &c.known)?;
            c.in_flight.push(msg)?;
            tracing::info!(%msg, "report_progress: sent");
            Ok(Outcome::Sent { msg })
        })
    }

    /// The copies a guarded write of the record waits to hear about: a
    /// move's target, a leaving copy (a swap back), a suspended follower
    /// (its rejoin) and the current instance of a handoff's new owner.
    fn awaited(&self) -> BTreeSet<StorageId> {
        let r = self.record();
        let mut out: BTreeSet<StorageId> = r.suspended.iter().copied().collect();
        out.extend(r.leaving);
        out.extend(r.move_task.as_ref().map(|m| m.target));
        if let Some(h) = &r.handoff {
            if matches!(h.phase, HandoffPhase::Closed | HandoffPhase::Reported) {
                out.extend(self.storage_of(h.to.node).ok());
            }
        }
        out
    }

    /// The serving state of node `from`, which is up and not fenced at the
    /// epoch it serves, with its own log.
    pub(super) fn unfenced_serving(
        &self,
        from: NodeId,
    ) -> Result<(&Serving, &Replica), ClusterError> {
        let n = self.alive(from)?;
        let s = n
            .serving
            .as_ref()
            .ok_or(ClusterError::NotServing { node: from })?;
        let own = &n.replica;
        let fenced = own.fence() > s.epoch() || own.sealed().is_some_and(|x| x >= s.epoch());
        if fenced {
            return Err(OwnerError::Fenced {
                sender_epoch: s.epoch(),
                fence_epoch: own.accepts_from(),
            }
            .into());
        }
        Ok((s, own))
    }

    /// The controller receives a report; its reply, if any (a refusal of
    /// a report from an older epoch).
    pub(super) fn on_progress(&mut self, report: Report) -> Option<Msg> {
        let r = self.record();
        let (owner, epoch) = (r.owner, r.epoch);
        match self.known.on_report(owner, epoch, &report, self.mutants) {
            ReportVerdict::Taken | ReportVerdict::Ignored => None,
            ReportVerdict::Refuse { to, epoch } => {
                tracing::info!(from = %report.from, %epoch, "deliver: report from an older epoch refused");
                Some(Msg::Refuse { to, epoch })
            }
        }
    }

    /// The controller's view of the owner before a guarded write: with
    /// atomic delivery the record's owner serving at the record's epoch,
    /// with messages in flight a report from it at that epoch.
    pub(super) fn sees_owner(&self) -> Result<(), ClusterError> {
        if self.networked() {
            self.known_fresh().map(|_| ())
        } else {
            self.owner_serving().map(|_| ())
        }
    }

    /// How far instance `x` holds the owner's history and the owner's
    /// confirmed tail, as the controller sees them: read from the logs
    /// and the serving owner with atomic delivery, from the last report
    /// with messages in flight.
    pub(super) fn sees(&self, x: StorageId) -> Result<(Position, Position), ClusterError> {
        if self.networked() {
            let k = self.known_fresh()?;
            Ok((k.pos(x, self.mutants), k.confirmed()))
        } else {
            let confirmed = self.owner_serving()?.confirmed_tail();
            Ok((self.durable(x), confirmed))
        }
    }

    /// The controller's knowledge, if it comes from a report at the
    /// record's epoch.
    fn known_fresh(&self) -> Result<&Known, ClusterError> {
        Ok(self.known.fresh(self.record().epoch, self.mutants)?)
    }
}
