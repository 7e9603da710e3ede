//! Join and move actions: step 0, admission, step 1, the owner's switch,
//! step 2, cancel, and the replication-factor increase.

use super::{Cluster, ClusterError, Outcome};
use crate::ids::{NodeId, Position, StorageId};
use crate::mutant::Mutant;
use crate::store::{MovePhase, StoreError, Write};

impl Cluster {
    /// `AddLearner{target}` (step 0): the target's current storage instance
    /// becomes a learner. The target must be up (a registered process).
    ///
    /// The controller starts a move for one of two reasons: a counted
    /// follower is down or lost (note 1, "Lost follower replaced": step 0
    /// on the replacement, then the lost copy leaves), the lowest such
    /// instance first, which the swap must then take out; or a planned move
    /// is left in its plan, which this move uses up.
    pub fn add_learner(&mut self, target: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("add_learner", |c| {
            c.alive(target)?;
            c.moves_allowed()?;
            let replaces = c.to_replace();
            if replaces.is_none() {
                c.take_planned_move()?;
            }
            c.step0_owner(target)?;
            let t = c.storage_of(target)?;
            let r = c.write(Write::AddLearner {
                target: t,
                leaving: None,
                replaces,
            })?;
            c.tell_learner_epoch(target, r.epoch);
            // Atomically the learner reports its durable progress to the
            // owner as it joins, as a re-admitted copy does: one that kept
            // data from an earlier stint may hold the owner's whole log,
            // and then no append draws an acknowledgement (finding 37).
            if !c.networked() {
                let ack = c.node(target)?.replica.progress();
                c.owner_serving_mut()?.handle_ack(ack);
            }
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `AdmitLearner{target}`: the learner, caught up with the owner's
    /// confirmed tail, enters the accepted history (the eligible set).
    pub fn admit_learner(&mut self, target: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("admit_learner", |c| {
            c.target_reachable(target)?;
            let t = c.storage_of(target)?;
            let (durable, owner_confirmed) = c.sees(t)?;
            let r = c.write(Write::AdmitLearner {
                target: t,
                durable,
                owner_confirmed,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `Swap{target, leaving}` (step 1): the target counts instead of the
    /// follower on `leaving`, which keeps replicating and stays eligible.
    /// `leaving` may be the target's own node: a node back on a fresh disk
    /// swaps out its own lost instance.
    pub fn swap(&mut self, target: NodeId, leaving: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("swap", |c| {
            c.target_reachable(target)?;
            let t = c.storage_of(target)?;
            let l = c.follower_on(leaving, Some(t))?;
            let (durable, owner_confirmed) = c.sees(t)?;
            let r = c.write(Write::Swap {
                target: t,
                leaving: l,
                durable,
                owner_confirmed,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `OwnerSwitch`: the owner adopts the record's counted set (and W) and
    /// records its confirmed tail as the switch boundary B.
    pub fn owner_switch(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("owner_switch", |c| {
            let boundary = c.owner_serving()?.confirmed_tail();
            // W grows at a promotion's switch only if the new copy covers
            // the confirmed tail: with atomic delivery the copy, up on its
            // instance, shows it in its log; with messages in flight the
            // owner knows only what the copy acknowledged to it.
            let checks_copy = !c.mutants.on(Mutant::PromoteWithoutCatchup)
                && !c.mutants.on(Mutant::AdoptWBeforeCatchup);
            if let Some(m) = c.record().move_task.clone() {
                if m.promotion && m.phase == MovePhase::Swapped && checks_copy && !c.networked() {
                    c.reporting(m.target)?;
                }
            }
            let target_durable = match c.record().move_task.as_ref() {
                None => 0,
                Some(m) if c.networked() => {
                    let owner = c.record().owner;
                    let own = &c.nodes[owner.node.index()].replica;
                    c.owner_serving()?.covered(own, m.target)
                }
                Some(m) => c.durable(m.target),
            };
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
            c.moves_allowed()?;
            c.sees_owner()?;
            let mut target_durable = 0;
            if let Some(m) = c.record().move_task.clone() {
                // With messages in flight the target's process may be down
                // when the controller acts on its report; its disk must
                // still be the one the record names.
                if !c.networked() {
                    c.reporting(m.target)?;
                } else if c.holder(m.target).is_none()
                    && !c.mutants.on(Mutant::RemoveBeforeBoundary)
                {
                    return Err(StoreError::Lost { storage: m.target }.into());
                }
                target_durable = c.sees(m.target)?.0;
            }
            let r = c.write(Write::RemoveLeaving { target_durable })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `CancelMove`, the operator's request: drop the learner of a move that
    /// has not swapped yet. It needs no reason and gives no planned move
    /// back (the operator withdrew it).
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
            c.target_reachable(target)?;
            let t = c.storage_of(target)?;
            let (durable, owner_confirmed) = c.sees(t)?;
            let r = c.write(Write::PromoteLearner {
                target: t,
                durable,
                owner_confirmed,
            })?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// Operator: pause rebalancing (no new move or handoff starts).
    pub fn pause(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("pause", |c| {
            let r = c.write(Write::Pause)?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// Operator: resume rebalancing.
    pub fn resume(&mut self) -> Result<Outcome, ClusterError> {
        self.atomically("resume", |c| {
            let r = c.write(Write::Resume)?;
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// Operator: request a move of the follower on `leaving` to `target`
    /// (step 0 now; the swap must name the same leaving copy).
    pub fn request_move(
        &mut self,
        target: NodeId,
        leaving: NodeId,
    ) -> Result<Outcome, ClusterError> {
        self.atomically("request_move", |c| {
            c.alive(target)?;
            c.step0_owner(target)?;
            let t = c.storage_of(target)?;
            let l = c.follower_on(leaving, Some(t))?;
            // A requested move of a copy that is down or lost replaces it.
            let replaces = c.gone(l).then_some(l);
            let r = c.write(Write::AddLearner {
                target: t,
                leaving: Some(l),
                replaces,
            })?;
            c.tell_learner_epoch(target, r.epoch);
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// Operator: the moves in flight with phase, bytes remaining (at
    /// `entry_bytes` per log entry) and blocking reason.
    pub fn list_moves(&self, entry_bytes: u64) -> Vec<crate::operator::MoveStatus> {
        let r = self.record();
        let target_durable = r.move_task.as_ref().map_or(0, |m| self.durable(m.target));
        let progress = crate::operator::Progress {
            target_durable,
            owner_tail: self.owner_log().len() as Position,
            owner_confirmed: self.owner_serving().map_or(0, |s| s.confirmed_tail()),
            entry_bytes,
        };
        crate::operator::list_moves(r, progress)
    }

    /// Step 0 tells the new copy the record's epoch: from then on it refuses
    /// appends of an older one (note 2: "permission checks must be enforced
    /// at the resource boundary that actually accepts writes"). A node that
    /// kept data from an earlier stint may already cover the confirmed tail
    /// and be admitted without one append from the current owner, so only
    /// this tells it the epoch. Under `learner_keeps_old_epoch` it is not
    /// told.
    fn tell_learner_epoch(&mut self, target: NodeId, epoch: crate::ids::Epoch) {
        if !self.mutants.on(Mutant::LearnerKeepsOldEpoch) {
            self.learn_epoch(target, epoch);
        }
    }

    /// Step 0's view of the owner: "the assignment and activation match
    /// the committed ones". With atomic delivery the record's owner serves
    /// at the record's epoch; with messages in flight the controller knows
    /// the owner from its record and needs no progress to start a move. The
    /// target is never the owner's node.
    fn step0_owner(&self, target: NodeId) -> Result<(), ClusterError> {
        if !self.networked() {
            self.owner_serving()?;
        }
        if self.record().owner.node == target {
            return Err(ClusterError::TargetIsOwner { node: target });
        }
        Ok(())
    }

    /// A pending recovery pauses every move step (the store checks it again
    /// in the write; this reports it before the owner's absence).
    pub(super) fn moves_allowed(&self) -> Result<(), ClusterError> {
        if self.record().recovery_pending() && !self.mutants.on(Mutant::RecoveryKeepsMove) {
            return Err(StoreError::RecoveryPending.into());
        }
        Ok(())
    }

    /// Storage instance `s` is on its node's current disk and the node is
    /// up: it can report durable progress.
    /// A move's target as the controller may require it: up, with atomic
    /// delivery (the controller reads the copy in the same step); with
    /// messages in flight only a node of this cluster, since the controller
    /// has reports, not the process's liveness (finding 28).
    pub(super) fn target_reachable(&self, target: NodeId) -> Result<(), ClusterError> {
        if self.networked() {
            self.node(target).map(|_| ())
        } else {
            self.alive(target).map(|_| ())
        }
    }

    pub(super) fn reporting(&self, s: StorageId) -> Result<(), ClusterError> {
        self.alive(s.node)?;
        if self.holder(s).is_none() {
            return Err(StoreError::Lost { storage: s }.into());
        }
        Ok(())
    }

    /// The record's follower whose storage lives on `node`, other than
    /// `except`: its oldest instance. A node that holds a lost instance and a
    /// current one as followers (it came back on a fresh disk and joined
    /// again) gives up the lost one first.
    pub(super) fn follower_on(
        &self,
        node: NodeId,
        except: Option<StorageId>,
    ) -> Result<StorageId, ClusterError> {
        self.node(node)?;
        self.record()
            .followers
            .iter()
            .copied()
            .find(|s| s.node == node && Some(*s) != except)
            .ok_or(ClusterError::NoFollowerOn { node })
    }
}
