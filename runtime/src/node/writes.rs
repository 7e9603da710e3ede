//! The two guarded writes the node makes itself until a controller process
//! exists: a restarted follower's suspension, and the owner's re-admission
//! of a caught-up suspended copy. The guards are the store's; a refusal
//! is retried on the next tick, never hidden. Beside them, the owner's
//! reading of re-admissions back from the record (finding 35).

use super::env::{emit, Env};
use super::{Node, NodeError};
use crate::control::ControlError;
use crate::trace::Event;
use livemove_impl::store::{StoreError, Write};
use livemove_impl::{Msg, StorageId};

impl Node {
    /// The owner re-admits every suspended copy that covers its confirmed
    /// tail (note 1, "Restarted followers"); the guard is the store's. The
    /// record is read each time: a suspension notice may have been lost,
    /// and a copy that is caught up may never acknowledge again, so
    /// neither a message nor a memory of an earlier write can be relied on.
    pub(super) fn readmit_caught_up(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        if self.serving.is_none() {
            return Ok(());
        }
        self.record = self.read_record()?;
        // Only the record's owner at the record's epoch: an old owner still
        // serving after a handoff's commit holds stale acknowledgements (the
        // controller would take no report from it).
        let current = self
            .serving
            .as_ref()
            .is_some_and(|s| s.epoch() == self.record.epoch && self.record.owner == self.me);
        if !current {
            return Ok(());
        }
        let suspended: Vec<StorageId> = self.record.suspended.iter().copied().collect();
        for copy in suspended {
            let Some(s) = self.serving.as_ref() else {
                return Ok(());
            };
            let durable = s.covered(&self.replica, copy);
            let owner_confirmed = s.confirmed_tail();
            if durable < owner_confirmed {
                continue;
            }
            let w = Write::Rejoin {
                storage: copy,
                durable,
                owner_confirmed,
            };
            match self.control.write(self.record.version, &w) {
                Ok(r) => {
                    self.record = r;
                    emit(env, || Event::Rejoin { node: copy.node });
                }
                // Refused by a rule or a race: the next tick tries again.
                Err(ControlError::Refused { source, .. }) => {
                    tracing::debug!(node = %self.id, %copy, error = %source, "re-admission refused");
                    self.write_refused(&source);
                    return Ok(());
                }
                Err(source) => {
                    return Err(NodeError::Control {
                        node: self.id,
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    /// The record's owner, serving at the record's epoch, reads the record
    /// it just read and unmutes every copy it muted that the record no
    /// longer suspends (`NoticeReadmission`, finding 35): its own
    /// re-admissions above, or the controller's. No message stands between
    /// a re-admission and the owner counting the copy again, so no loss can
    /// keep a copy that holds the whole log muted for good (finding 32).
    /// The event names the copies it unmuted, so the trace spec holds the
    /// owner to what it read: `owner_ignores_readmission` unmutes none.
    pub(super) fn notice_readmission(&mut self, env: &mut dyn Env) {
        let (epoch, owner) = (self.record.epoch, self.record.owner);
        let Some(s) = self.serving.as_mut() else {
            return;
        };
        if s.epoch() != epoch || owner != self.me {
            return;
        }
        let Some(copies) = s.readmit(&self.record.suspended, self.mutants) else {
            return;
        };
        let node = self.id;
        emit(env, || Event::NoticeReadmission { node, copies });
        // The copies count again: what they acknowledged may confirm now,
        // and no acknowledgement need follow (a copy that holds the whole
        // log is sent nothing more; with admission closed for a handoff
        // nothing new arrives either).
        self.try_confirm(env);
    }

    /// Commit a restart on an empty disk: the record is told every earlier
    /// instance of this node it still names is lost (`Write::MarkLost`; one
    /// as a rule, more if a start died between registering a disk and
    /// taking it), as the in-memory cluster's `restart` does in the same
    /// step; the store then leaves it out of the seals a recovery needs and
    /// lets a move that targets it abort. A refusal is retried on the next
    /// tick.
    fn commit_fresh_restart(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        loop {
            let r = &self.record;
            let mut named: Vec<StorageId> = r.assigned().into_iter().collect();
            named.extend(r.eligible.iter().copied());
            let Some(old) = named
                .into_iter()
                .find(|s| s.node == self.id && s.disk < self.me.disk && !r.lost.contains(s))
            else {
                break;
            };
            if !self.guarded(&Write::MarkLost { storage: old })? {
                return Ok(());
            }
        }
        self.restarting = false;
        self.fresh_disk = false;
        let (node, inc) = (self.id, self.inc);
        emit(env, || Event::Restart {
            node,
            inc,
            suspended: false,
            fresh_disk: true,
        });
        Ok(())
    }

    /// Commit this restart: a follower of the record is suspended first
    /// (refused while W - 1 other followers are) and tells the record's
    /// owner; anything else comes back as it is.
    pub(super) fn try_restart(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        self.record = self.read_record()?;
        if self.fresh_disk {
            return self.commit_fresh_restart(env);
        }
        let follower = self.record.followers.contains(&self.me);
        if follower {
            let w = Write::Suspend { storage: self.me };
            match self.control.write(self.record.version, &w) {
                Ok(r) => self.record = r,
                Err(ControlError::Refused { source, .. }) => {
                    self.write_refused(&source);
                    if !matches!(
                        source,
                        StoreError::TooManySuspended { .. } | StoreError::StaleVersion { .. }
                    ) {
                        tracing::warn!(node = %self.id, error = %source, "suspension refused");
                    }
                    return Ok(());
                }
                Err(source) => {
                    return Err(NodeError::Control {
                        node: self.id,
                        source,
                    })
                }
            }
            env.send(Msg::Suspend {
                to: self.record.owner.node,
                from: self.me,
                inc: self.inc,
            });
        }
        self.restarting = false;
        self.suspended = follower;
        // The event says whether the record suspends the copy once it is
        // back: a follower it just suspended, or a leaving copy it still
        // suspends from before its swap (which, as the spec's copy, does
        // not know itself suspended: its crash forgot it).
        let suspended = follower || self.record.suspended.contains(&self.me);
        let (node, inc) = (self.id, self.inc);
        emit(env, || Event::Restart {
            node,
            inc,
            suspended,
            fresh_disk: false,
        });
        Ok(())
    }
}
