//! A planned owner handoff (note 1, "Planned ownership handoff") run by the
//! nodes: the guarded writes are the store's, made by the node that holds
//! the facts each guard needs, as the suspension and the re-admission are
//! until a controller process exists.
//!
//! - `hand_off(to)`: the owner, serving at the record's epoch with
//!   admission open, writes `CloseAdmission { to }` and closes admission
//!   (under `handoff_without_barrier` it keeps admitting).
//! - On its tick, once drained (its confirmed tail is its last accepted
//!   position), the owner writes `ReportFinalBoundary { F }`; then, once
//!   its acknowledgements show the new owner durable at F, it writes
//!   `CommitHandoff` with what each follower holds of its history (the
//!   controller's knowledge would be the owner's report of exactly these).
//!   It keeps serving with admission closed, at its old epoch, until a copy
//!   that learned the new epoch refuses it (under
//!   `old_owner_serves_after_commit` it reopens admission at the commit).
//! - A node that does not serve reads the record on its tick; the committed
//!   new owner learns the new epoch durably, writes `ActivateOwner` and
//!   serves from F, its confirmed tail.

use super::env::{emit, Env};
use super::{view_of, Node, NodeError};
use crate::control::ControlError;
use crate::trace::Event;
use livemove_impl::owner::Serving;
use livemove_impl::store::{HandoffPhase, Record, Write};
use livemove_impl::{Mutant, NodeId, StorageId};
use std::collections::BTreeMap;

impl Node {
    /// Start handing ownership to the follower on `to`. `Ok(false)` when
    /// this node does not serve at the record's epoch with admission open,
    /// or the store refuses (a handoff, move or recovery pending, `to` not
    /// a follower or suspended, a race); nothing changed then.
    pub fn hand_off(&mut self, to: NodeId, env: &mut dyn Env) -> Result<bool, NodeError> {
        self.record = self.read_record()?;
        let at_record_epoch = self.serving.as_ref().is_some_and(|s| {
            s.admission_open() && s.epoch() == self.record.epoch && self.record.owner == self.me
        });
        if !at_record_epoch {
            return Ok(false);
        }
        // The follower the record names on `to` (a node holds one copy of
        // a partition at a time outside a move).
        let Some(to_copy) = self
            .record
            .followers
            .iter()
            .filter(|f| f.node == to)
            .max_by_key(|f| f.disk)
            .copied()
        else {
            return Ok(false);
        };
        let w = Write::CloseAdmission { to: to_copy };
        if !self.guarded(&w)? {
            return Ok(false);
        }
        let mutants = self.mutants;
        if let Some(s) = self.serving.as_mut() {
            s.close_admission(mutants);
        }
        let node = self.id;
        emit(env, || Event::CloseAdmission { node, to });
        Ok(true)
    }

    /// The owner's part of a handoff it started, on its tick (the record
    /// was just read): report F once drained, commit once the new owner
    /// holds F.
    pub(super) fn drive_handoff(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        let Some(h) = self.record.handoff.clone() else {
            return Ok(());
        };
        let Some(s) = self.serving.as_ref() else {
            return Ok(());
        };
        if h.from != self.me || s.epoch() != self.record.epoch {
            return Ok(());
        }
        match h.phase {
            HandoffPhase::Closed => {
                // Drained: every accepted entry is confirmed.
                let boundary = self.replica.len();
                if s.confirmed_tail() != boundary {
                    return Ok(());
                }
                if self.guarded(&Write::ReportFinalBoundary { boundary })? {
                    let s = self.serving.as_mut().expect("checked above");
                    let f = s
                        .report_final_boundary(&self.replica)
                        .expect("invariant broken: drained a moment ago");
                    debug_assert_eq!(f, boundary);
                    let node = self.id;
                    emit(env, || Event::ReportFinalBoundary { node, boundary });
                }
            }
            HandoffPhase::Reported => {
                let f = h.final_boundary.expect("a reported handoff has F");
                if s.covered(&self.replica, h.to) < f {
                    return Ok(()); // the new owner does not hold F yet
                }
                let durable: BTreeMap<StorageId, u64> = self
                    .record
                    .followers
                    .iter()
                    .map(|x| (*x, s.covered(&self.replica, *x)))
                    .collect();
                if self.guarded(&Write::CommitHandoff { durable })? {
                    if self.mutants.on(Mutant::OldOwnerServesAfterCommit) {
                        if let Some(s) = self.serving.as_mut() {
                            s.reopen_admission();
                        }
                    }
                    let node = self.id;
                    emit(env, || Event::CommitHandoff { node });
                }
            }
            HandoffPhase::Committed => {}
        }
        Ok(())
    }

    /// A node that does not serve, on its tick: if the record names it the
    /// committed new owner, it activates.
    pub(super) fn activate_if_committed(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        self.record = self.read_record()?;
        let r = &self.record;
        let Some(h) = r.handoff.as_ref() else {
            return Ok(());
        };
        if h.phase != HandoffPhase::Committed || h.to != self.me || r.owner != self.me {
            return Ok(());
        }
        let f = h.final_boundary.expect("a committed handoff has F");
        if self.replica.len() < f {
            // The commit's guard had this copy durable at F; a copy that is
            // not is a broken invariant of the store or of this disk.
            panic!(
                "invariant broken: {} was committed owner at F = {f} but holds {} entries",
                self.me,
                self.replica.len()
            );
        }
        if !self.guarded(&Write::ActivateOwner)? {
            return Ok(());
        }
        // The new owner continues F and nothing past it (finding 33): a
        // tail past F is a divergent one of an older epoch, never
        // confirmed. Dropped in the same step as the activation (a crash
        // between leaves an owner that does not serve, which a recovery
        // replaces; its install rewrites the tail).
        if !self.mutants.on(Mutant::HandoffKeepsStaleTail) {
            // A checkpoint holds only confirmed history, and F covers all of
            // it: one past F is a broken invariant, not a refusal.
            let persist = match self.replica.continue_at(f) {
                Ok(persist) => persist,
                Err(source) => panic!(
                    "invariant broken: {} holds a checkpoint past F = {f}: {source}",
                    self.me
                ),
            };
            self.persist(&persist)?;
        }
        let r: Record = self.record.clone();
        // The new epoch is durable before the node serves at it.
        let persist = self.replica.observe_epoch(r.epoch);
        self.persist(&persist)?;
        let s = Serving::activate(self.me, r.epoch, r.counted(), r.confirm_w, f, view_of(&r));
        self.serving = Some(s.networked());
        let (node, epoch) = (self.id, r.epoch);
        emit(env, || Event::ActivateOwner { node, epoch });
        Ok(())
    }

    /// One guarded write at the version last read: `true` when it
    /// committed (the record is the new one), `false` when the store
    /// refused it (a rule or a race; a later tick tries again).
    pub(super) fn guarded(&mut self, w: &Write) -> Result<bool, NodeError> {
        match self.control.write(self.record.version, w) {
            Ok(r) => {
                self.record = r;
                if let Some(s) = self.serving.as_mut() {
                    s.observe(view_of(&self.record));
                }
                Ok(true)
            }
            Err(ControlError::Refused { source, .. }) => {
                tracing::debug!(node = %self.id, write = ?w, error = %source, "refused");
                // The record changed under this node: read it again.
                self.write_refused(&source);
                Ok(false)
            }
            Err(source) => Err(NodeError::Control {
                node: self.id,
                source,
            }),
        }
    }
}
