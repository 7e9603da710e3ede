//! Guards of the writes that follow faults: suspension of a restarted
//! follower, a lost disk, re-admission.

use super::guards::*;
use super::Write;
use crate::mutant::{Mutant, Mutants};
use crate::store::error::StoreError;
use crate::store::record::*;

/// Check and apply one write of this group to `r`.
pub(super) fn apply(r: &mut Record, write: &Write, mutants: Mutants) -> Result<(), StoreError> {
    match write {
        // Note 1, "Restarted followers": at most W - 1 rejoin at once. A
        // follower that crashed again while suspended keeps the slot it
        // holds, so the limit counts the other suspended followers; the
        // write then changes nothing but the version (the owner is told
        // again to forget the copy's progress). A lost instance stays
        // suspended but holds no slot: it never rejoins (finding 36).
        Write::Suspend { storage } => {
            if !r.followers.contains(storage) {
                return Err(StoreError::NotAFollower { storage: *storage });
            }
            let live = r.suspended.iter().filter(|x| !r.lost.contains(x));
            let others = if mutants.on(Mutant::RestartCountsOwnSuspension) {
                live.count()
            } else {
                live.filter(|x| *x != storage).count()
            };
            let max = usize::from(r.confirm_w) - 1;
            if others >= max {
                return Err(StoreError::TooManySuspended {
                    suspended: others,
                    max,
                });
            }
            r.suspended.insert(*storage);
        }
        Write::MarkLost { storage } => {
            if r.lost.contains(storage) {
                return Err(StoreError::Lost { storage: *storage });
            }
            // A suspended instance stays suspended: it is never counted
            // again, and only its replacement's removal takes it out of
            // the record (finding 36: the model keeps it there too).
            r.lost.insert(*storage);
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
