//! A planned follower move (note 1, "A new broker joins. A copy moves
//! without a fence.") run by the nodes, each guarded write the store's:
//!
//! - `join()`: a node the record assigns nothing writes step 0 for itself
//!   (`AddLearner`, a planned move) and learns the record's epoch durably
//!   in the same step, as the model's `AddLearner` tells the target.
//!   `join_replacing(Some(n))` is the same step of a replacement of the
//!   follower on n (the controller's choice when that follower is down, as
//!   the model's `AddLearner` replaces a follower that is down or lost).
//! - On its tick the owner, from its acknowledgements, admits the learner
//!   once it covers the confirmed tail (`AdmitLearner`), swaps it in for
//!   the replaced follower, or else the follower with the highest node id
//!   (`Swap`), adopts the new counted
//!   set and records its confirmed tail as the switch boundary B
//!   (`OwnerSwitch`), and removes the leaving copy once the target covers B
//!   (`RemoveLeaving`); the removed copy keeps its data.

use super::env::{emit, Env};
use super::{Node, NodeError};
use crate::trace::Event;
use livemove_impl::store::{Move, MovePhase, Record, Write};
use livemove_impl::{NodeId, StorageId};

impl Node {
    /// Join as the learner of a planned move. `Ok(false)` when the record
    /// assigns this node a copy already, or the store refuses (a move, a
    /// handoff or a recovery pending, a race); nothing changed then.
    pub fn join(&mut self, env: &mut dyn Env) -> Result<bool, NodeError> {
        self.join_replacing(None, env)
    }

    /// Join as the learner of a move that replaces the follower on node
    /// `replaces` (note 1, "Lost follower replaced"): the controller's
    /// choice when a follower is down, whose copy then leaves at the swap.
    /// `Ok(false)` as for `join`, and when `replaces` holds no follower.
    pub fn join_replacing(
        &mut self,
        replaces: Option<NodeId>,
        env: &mut dyn Env,
    ) -> Result<bool, NodeError> {
        self.join_as(replaces, None, env)
    }

    /// Join as the learner of a move that replaces the follower on
    /// `replaces`, or else takes the follower on `leaving` out at the
    /// swap (a planner's choice, `Move::leaving`); with neither, the owner
    /// chooses at the swap. `Ok(false)` as for `join_replacing`, and when
    /// `leaving` holds no follower.
    pub fn join_as(
        &mut self,
        replaces: Option<NodeId>,
        leaving: Option<NodeId>,
        env: &mut dyn Env,
    ) -> Result<bool, NodeError> {
        self.record = self.read_record()?;
        if self.record.is_assigned(self.me) || self.restarting {
            return Ok(false);
        }
        let replaces = match replaces {
            None => None,
            // The lowest instance of the follower on n (a node back on an
            // empty disk may have its lost instance there beside its new one).
            Some(n) => match self.record.followers.iter().filter(|f| f.node == n).min() {
                Some(f) => Some(*f),
                None => return Ok(false),
            },
        };
        // A replacement decides the leaving copy; a planner's choice only
        // when nothing is replaced.
        let leaving = match (replaces, leaving) {
            (Some(_), _) | (None, None) => None,
            (None, Some(n)) => match self.record.followers.iter().filter(|f| f.node == n).min() {
                Some(f) => Some(*f),
                None => return Ok(false),
            },
        };
        let w = Write::AddLearner {
            target: self.me,
            leaving,
            replaces,
        };
        if !self.guarded(&w)? {
            return Ok(false);
        }
        let persist = self.replica.observe_epoch(self.record.epoch);
        self.persist(&persist)?;
        let node = self.id;
        emit(env, || Event::AddLearner { node });
        Ok(true)
    }

    /// The controller's way out of a swapped move whose target is down or
    /// lost (note 1, Aborts: "if T fails between steps 1 and 2, R is still
    /// in the eligible set and still holds its data"), written by the
    /// owner's node, which holds both facts the guard needs: the leaving
    /// copy's acknowledged prefix and its own confirmed tail. The caller
    /// (the controller's failure detector) vouches that the target is
    /// gone. `Ok(false)` when this node is not the record's owner serving
    /// at the record's epoch, or the store refuses (the leaving copy not
    /// caught up, no swapped move, a race); nothing changed then.
    pub fn swap_back(&mut self, env: &mut dyn Env) -> Result<bool, NodeError> {
        self.record = self.read_record()?;
        let Some(m) = self.record.move_task.clone() else {
            return Ok(false);
        };
        let (Some(s), Some(back)) = (self.serving.as_ref(), self.record.leaving) else {
            return Ok(false);
        };
        if self.record.owner != self.me || s.epoch() != self.record.epoch || m.promotion {
            return Ok(false);
        }
        let w = Write::SwapBack {
            target_down: true,
            durable: s.covered(&self.replica, back),
            owner_confirmed: s.confirmed_tail(),
        };
        if !self.guarded(&w)? {
            return Ok(false);
        }
        let (target, back) = (m.target.node, back.node);
        emit(env, || Event::SwapBack { target, back });
        Ok(true)
    }

    /// The owner's part of a move, on its tick (the record was just read).
    pub(super) fn drive_move(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        let Some(m) = self.record.move_task.clone() else {
            return Ok(());
        };
        let Some(s) = self.serving.as_ref() else {
            return Ok(());
        };
        if self.record.owner != self.me || s.epoch() != self.record.epoch || m.promotion {
            return Ok(());
        }
        let durable = s.covered(&self.replica, m.target);
        let owner_confirmed = s.confirmed_tail();
        let target = m.target.node;
        match m.phase {
            MovePhase::Learner if durable >= owner_confirmed => {
                let w = Write::AdmitLearner {
                    target: m.target,
                    durable,
                    owner_confirmed,
                };
                if self.guarded(&w)? {
                    emit(env, || Event::AdmitLearner { node: target });
                }
            }
            MovePhase::Admitted if durable >= owner_confirmed => {
                let Some(leaving) = swap_leaving(&self.record, &m) else {
                    return Ok(());
                };
                let w = Write::Swap {
                    target: m.target,
                    leaving,
                    durable,
                    owner_confirmed,
                };
                if self.guarded(&w)? {
                    emit(env, || Event::Swap {
                        target,
                        leaving: leaving.node,
                    });
                }
            }
            MovePhase::Swapped => {
                let boundary = owner_confirmed;
                let w = Write::OwnerSwitch {
                    boundary,
                    target_durable: durable,
                };
                if self.guarded(&w)? {
                    let (counted, w) = (self.record.counted(), self.record.confirm_w);
                    let s = self.serving.as_mut().expect("checked above");
                    let adopted = s.adopt(counted, w);
                    assert_eq!(
                        adopted, boundary,
                        "invariant broken: boundary moved during the switch"
                    );
                    let node = self.id;
                    emit(env, || Event::OwnerSwitch { node, boundary });
                }
            }
            // The target covers B, and the owner's confirmed tail as well:
            // the controller hears of a copy's progress once it holds that
            // tail (the spec's progress report), so a write that read less
            // would rest on something no report said.
            MovePhase::Switched
                if m.boundary.is_some_and(|b| durable >= b) && durable >= owner_confirmed =>
            {
                let leaving: Option<StorageId> = self.record.leaving;
                let w = Write::RemoveLeaving {
                    target_durable: durable,
                };
                if self.guarded(&w)? {
                    if let Some(l) = leaving {
                        emit(env, || Event::RemoveLeaving { node: l.node });
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The copy a move's swap takes out: the one a replacement names, else the
/// follower with the highest node id (finding 30). The simulator's eager
/// writes name the same.
pub(crate) fn swap_leaving(record: &Record, m: &Move) -> Option<StorageId> {
    m.replaces.or(m.leaving).or_else(|| {
        record
            .followers
            .iter()
            .copied()
            .filter(|f| *f != m.target)
            .max_by_key(|f| f.node)
    })
}
