//! Guards of the planned owner handoff writes.

use super::guards::*;
use super::Write;
use crate::store::error::StoreError;
use crate::store::record::*;

/// Check and apply one write of this group to `r`.
pub(super) fn apply(r: &mut Record, write: &Write) -> Result<(), StoreError> {
    match write {
        Write::CloseAdmission { to } => {
            no_recovery(r)?;
            if r.paused {
                return Err(StoreError::Paused);
            }
            idle(r)?;
            if !r.followers.contains(to) {
                return Err(StoreError::NotAFollower { storage: *to });
            }
            if r.suspended.contains(to) {
                return Err(StoreError::Suspended { storage: *to });
            }
            r.handoff = Some(Handoff {
                to: *to,
                from: r.owner,
                phase: HandoffPhase::Closed,
                final_boundary: None,
            });
        }
        Write::ReportFinalBoundary { boundary } => {
            no_recovery(r)?;
            let h = handoff_in(r, HandoffPhase::Closed)?;
            h.final_boundary = Some(*boundary);
            h.phase = HandoffPhase::Reported;
        }
        Write::CommitHandoff { durable } => {
            no_recovery(r)?;
            let h = handoff_in(r, HandoffPhase::Reported)?.clone();
            let boundary = h
                .final_boundary
                .expect("a reported handoff has a final boundary");
            if r.suspended.contains(&h.to) {
                return Err(StoreError::Suspended { storage: h.to });
            }
            // The barrier: the new owner holds F. Every entry up to F is
            // confirmed (the owner drained), so it is on W counted copies
            // already; the old owner stays a follower holding F.
            if let Some((storage, durable)) =
                crate::handoff::first_behind(durable, [h.to], boundary)
            {
                return Err(StoreError::CopyBehindFinalBoundary {
                    storage,
                    durable,
                    boundary,
                });
            }
            r.followers.remove(&h.to);
            r.followers.insert(r.owner);
            r.owner = h.to;
            r.epoch = r.epoch.next();
            r.confirm_w = r.configured_w();
            handoff_mut(r).phase = HandoffPhase::Committed;
        }
        Write::ActivateOwner => {
            // A recovery opened after the commit fences the new owner too.
            no_recovery(r)?;
            handoff_in(r, HandoffPhase::Committed)?;
            r.handoff = None;
        }
        Write::CancelHandoff => {
            let h = r.handoff.as_ref().ok_or(StoreError::NoHandoff)?;
            if h.phase == HandoffPhase::Committed {
                return Err(StoreError::HandoffCommitted);
            }
            r.handoff = None;
        }
        // Note 1, "Moving an owner": "a failure before the next write
        // cancels the handoff and A reopens admission". The controller
        // aborts for the new owner's failure; the old owner's opens a
        // recovery, which cancels the handoff itself.
        Write::AbortHandoff { to_down } => {
            let h = r.handoff.as_ref().ok_or(StoreError::NoHandoff)?;
            if h.phase == HandoffPhase::Committed {
                return Err(StoreError::HandoffCommitted);
            }
            if !to_down && !r.lost.contains(&h.to) {
                return Err(StoreError::StillAvailable { storage: h.to });
            }
            r.handoff = None;
        }
        other => unreachable!("handoff guards got {}", other.action()),
    }
    Ok(())
}
