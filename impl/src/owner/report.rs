//! The owner's progress reports to the controller (networked delivery).
//!
//! Every guarded write that waits on a copy waits for it to hold the
//! owner's confirmed tail (or a boundary at or below it), so the owner
//! reports a copy once it has caught up, and only a copy the record waits
//! on: a move's target, a leaving copy, a suspended follower, a handoff's
//! new owner. It reports again while the controller holds something else
//! for it (another epoch, another tail, another position): a report may be
//! lost, and a copy's progress and the tail move on. One report is
//! outstanding at a time; the router checks that, as it checks a link's
//! window.

use super::{OwnerError, Serving};
use crate::controller::Known;
use crate::ids::{NodeId, StorageId};
use crate::net::Msg;
use crate::replica::Replica;
use std::collections::BTreeSet;

impl Serving {
    /// The report on a copy on node `of`: of the instances in `awaited`
    /// (what the record waits on) on that node, in instance order, the
    /// first that covers the confirmed tail and whose progress the
    /// controller holds otherwise (`held`: what it answered it holds).
    pub fn progress_report(
        &self,
        own: &Replica,
        awaited: &BTreeSet<StorageId>,
        of: NodeId,
        held: &Known,
    ) -> Result<Msg, OwnerError> {
        assert!(
            self.networked,
            "invariant broken: a progress report from an owner with atomic delivery"
        );
        let tail = self.confirmed_tail;
        let news = |x: StorageId| {
            let pos = self.covered(own, x);
            pos >= tail
                && (held.epoch() != Some(self.epoch)
                    || held.confirmed() != tail
                    || held.reported(x) != pos)
        };
        let x = awaited
            .iter()
            .copied()
            .find(|x| x.node == of && *x != self.me && news(*x))
            .ok_or(OwnerError::NothingToReport { node: of })?;
        Ok(Msg::Progress {
            from: self.me,
            epoch: self.epoch,
            of: x,
            pos: self.covered(own, x),
            confirmed: tail,
        })
    }
}
