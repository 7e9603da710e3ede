//! Guards of the writes that follow faults: suspension of a restarted
//! follower, a lost disk, re-admission.

use super::guards::*;
use super::Write;
use crate::store::error::StoreError;
use crate::store::record::*;

/// Check and apply one write of this group to `r`.
pub(super) fn apply(r: &mut Record, write: &Write) -> Result<(), StoreError> {
    match write {
        Write::Suspend { storage } => {
            if !r.followers.contains(storage) {
                return Err(StoreError::NotAFollower { storage: *storage });
            }
            if r.suspended.contains(storage) {
                return Err(StoreError::Suspended { storage: *storage });
            }
            let max = usize::from(r.confirm_w) - 1;
            if r.suspended.len() >= max {
                return Err(StoreError::TooManySuspended {
                    suspended: r.suspended.len(),
                    max,
                });
            }
            r.suspended.insert(*storage);
        }
        Write::MarkLost { storage } => {
            if r.lost.contains(storage) {
                return Err(StoreError::Lost { storage: *storage });
            }
            r.lost.insert(*storage);
            r.suspended.remove(storage);
        }
        Write::Rejoin {
            storage,
            durable,
            owner_confirmed,
        } => {
            no_recovery(r)?;
            if !r.suspended.contains(storage) {
                return Err(StoreError::NotSuspended { storage: *storage });
            }
            caught_up(*storage, *durable, *owner_confirmed)?;
            r.suspended.remove(storage);
        }
        other => unreachable!("faults guards got {}", other.action()),
    }
    Ok(())
}
