//! Join and move actions: step 0, admission, step 1, the owner's switch,
//! step 2, cancel, and the replication-factor increase.

use super::{Cluster, ClusterError, Outcome};
use crate::ids::{NodeId, StorageId};
use crate::store::Write;

impl Cluster {
    /// `AddLearner{target}` (step 0): the target's current storage instance
    /// becomes a learner. The target must be up (a registered process).
    pub fn add_learner(&mut self, target: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("add_learner", |c| {
            c.alive(target)?;
            let t = c.storage_of(target)?;
            let r = c.write(Write::AddLearner {
                target: t,
                leaving: None,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `AdmitLearner{target}`: the learner, caught up with the owner's
    /// confirmed tail, enters the accepted history (the eligible set).
    pub fn admit_learner(&mut self, target: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("admit_learner", |c| {
            c.alive(target)?;
            let t = c.storage_of(target)?;
            let owner_confirmed = c.owner_serving()?.confirmed_tail();
            let r = c.write(Write::AdmitLearner {
                target: t,
                durable: c.durable(t),
                owner_confirmed,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `Swap{target, leaving}` (step 1): the target counts instead of the
    /// follower on `leaving`, which keeps replicating and stays eligible.
    pub fn swap(&mut self, target: NodeId, leaving: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("swap", |c| {
            let t = c.storage_of(target)?;
            let l = c.follower_on(leaving)?;
            let r = c.write(Write::Swap {
                target: t,
                leaving: l,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `OwnerSwitch`: the owner adopts the record's counted set (and W) and
    /// records its confirmed tail as the switch boundary B.
    pub fn owner_switch(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("owner_switch", |c| {
            let boundary = c.owner_serving()?.confirmed_tail();
            let target_durable = c
                .record()
                .move_task
                .as_ref()
                .map_or(0, |m| c.durable(m.target));
            let r = c.write(Write::OwnerSwitch {
                boundary,
                target_durable,
            })?;
            let adopted = c.owner_serving_mut()?.adopt(r.counted(), r.confirm_w);
            assert_eq!(
                adopted, boundary,
                "invariant broken: boundary moved during the switch"
            );
            Ok(Outcome::Switched {
                boundary,
                version: r.version,
            })
        })
    }

    /// `RemoveLeaving` (step 2): once the target covers B, the leaving copy
    /// leaves the assignment and the eligible set (its data stays on disk).
    pub fn remove_leaving(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("remove_leaving", |c| {
            let target_durable = c
                .record()
                .move_task
                .as_ref()
                .map_or(0, |m| c.durable(m.target));
            let r = c.write(Write::RemoveLeaving { target_durable })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `CancelMove`: drop the learner of a move that has not swapped yet.
    pub fn cancel_move(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("cancel_move", |c| {
            let r = c.write(Write::CancelMove)?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `PromoteLearner{target}` (replication-factor increase): the admitted,
    /// caught-up learner becomes a follower and rf grows by one; W grows
    /// only when the owner adopts it (`owner_switch`).
    pub fn promote_learner(&mut self, target: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("promote_learner", |c| {
            let t = c.storage_of(target)?;
            let owner_confirmed = c.owner_serving()?.confirmed_tail();
            let r = c.write(Write::PromoteLearner {
                target: t,
                durable: c.durable(t),
                owner_confirmed,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// The record's follower whose storage lives on `node` (the current
    /// disk or a lost one).
    pub(super) fn follower_on(&self, node: NodeId) -> Result<StorageId, ClusterError> {
        self.node(node)?;
        let r = self.record();
        let current = self.storage_of(node)?;
        if r.followers.contains(&current) {
            return Ok(current);
        }
        r.followers
            .iter()
            .copied()
            .find(|s| s.node == node)
            .ok_or(ClusterError::NoFollowerOn { node })
    }
}
