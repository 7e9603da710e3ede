//! Planned owner handoff.
//!
//! The handoff is split by owner of each step: the owner closes admission,
//! drains and reports the final boundary F (`owner::Serving`); the store
//! guards the commit on F being held by the new owner (every entry up to F
//! is already confirmed, so on W counted copies) and bumps the epoch
//! (`store::write`, `Write::CommitHandoff`); the new owner activates
//! without seal or inspection with F as its confirmed tail
//! (`cluster::Cluster::activate_owner`). This module holds the barrier
//! rule shared by those steps.

use crate::ids::{Position, StorageId};
use std::collections::BTreeMap;

/// The barrier (note 2, "caught up after barrier"): the first copy of
/// `must_hold` (the store passes the new owner) that does not hold F, if any. "Just caught up" is not enough: F is fixed
/// only after admission closed and in-flight work drained.
pub fn first_behind(
    durable: &BTreeMap<StorageId, Position>,
    must_hold: impl IntoIterator<Item = StorageId>,
    final_boundary: Position,
) -> Option<(StorageId, Position)> {
    must_hold.into_iter().find_map(|s| {
        let d = durable.get(&s).copied().unwrap_or(0);
        (d < final_boundary).then_some((s, d))
    })
}
