//! Faults: crash, restart (on the same disk or a fresh one), rejoin, and
//! (networked delivery) a copy noticing its re-admission.

use super::{Cluster, ClusterError, Outcome};
use crate::ids::{NodeId, StorageId};
use crate::mutant::Mutant;
use crate::net::Msg;
use crate::replica::Replica;
use crate::store::Write;

impl Cluster {
    /// `Crash{node}`: the process stops; its serving state (volatile) is
    /// gone, its disk stays.
    pub fn crash(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("crash", |c| {
            let n = c.alive_mut(node)?;
            n.alive = false;
            n.serving = None;
            // What the process knew of its suspension is volatile: it
            // learns it again when it restarts.
            n.suspended = false;
            Ok(Outcome::Crashed)
        })
    }

    /// `Restart{node}`: the process comes back.
    ///
    /// On its own disk it reloads its replica; a follower is suspended (one
    /// guarded write, refused while W - 1 followers are suspended already).
    /// With a fresh disk it is a new storage instance with an empty log and
    /// no seal; the old instance is marked lost, and the node joins again
    /// only through step 0. Under `storage_identity_ignored` the fresh disk
    /// is taken for the instance it replaces.
    pub fn restart(&mut self, node: NodeId, fresh_disk: bool) -> Result<Outcome, ClusterError> {
        self.atomically("restart", |c| {
            let n = c.node(node)?;
            if n.alive {
                return Err(ClusterError::NodeAlive { node });
            }
            let old = n.replica.id();
            let ignore_identity = c.mutants.on(Mutant::StorageIdentityIgnored);
            let mut suspended = false;
            if fresh_disk {
                let disk = n.disk + 1;
                let id = if ignore_identity {
                    old
                } else {
                    StorageId { node, disk }
                };
                let r = c.record();
                let known = r.eligible.contains(&old) || r.is_assigned(old);
                if !ignore_identity && known {
                    c.write(Write::MarkLost { storage: old })?;
                }
                let n = c.node_mut(node)?;
                n.disk = disk;
                n.replica = Replica::new(id);
                n.durable = Default::default();
                let fresh = n.replica.durable();
                n.persist(&[crate::replica::Persist::Fence {
                    fence: fresh.fence,
                    sealed: fresh.sealed,
                }]);
            } else {
                c.node_mut(node)?.reload();
            }
            let id = c.storage_of(node)?;
            let is_follower = c.record().followers.contains(&id);
            // Only a follower back on its own disk is suspended; a fresh
            // disk taken for the old instance (the mutant) is not.
            if is_follower && !fresh_disk {
                c.write(Write::Suspend { storage: id })?;
                suspended = true;
                // The returning follower's first message to the owner the
                // record names is its suspension, delivered whether or not
                // the controller can reach that owner (a zombie): the owner
                // drops the progress it holds for the copy. Under
                // `rejoin_counts_early` it keeps counting it.
                if c.networked() {
                    // Networked: the notice travels to the node the record
                    // names as owner, and may arrive late or never (the
                    // copy's acknowledgements, marked suspended, repeat it).
                    let to = c.record().owner.node;
                    let inc = c.node(node)?.inc + 1;
                    c.in_flight.push(Msg::Suspend { to, from: id, inc })?;
                } else if !c.mutants.on(Mutant::RejoinCountsEarly) {
                    if let Ok(s) = c.owner_serving_mut() {
                        s.handle_suspended(id);
                    }
                }
            }
            let networked = c.networked();
            let n = c.node_mut(node)?;
            n.alive = true;
            n.inc += 1;
            // The copy wrote its own suspension, so it knows of it; with
            // messages in flight its acknowledgements are marked from this
            // knowledge (atomic delivery reads the record at the moment of
            // each replicate instead).
            n.suspended = suspended && networked;
            Ok(Outcome::Restarted {
                storage: id,
                suspended,
            })
        })
    }

    /// `Rejoin{node}`: a suspended follower that caught up with the owner's
    /// confirmed tail is re-admitted without a fence.
    ///
    /// With atomic delivery the copy must be up. With messages in flight
    /// the controller has only the owner's report of the copy, not an exact
    /// failure detector: the copy may have crashed again since it was
    /// reported caught up. Its disk survived, so what it acknowledged it
    /// still holds, and when it comes back it is suspended again.
    pub fn rejoin(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("rejoin", |c| {
            if !c.networked() {
                c.alive(node)?;
            }
            let s = c.storage_of(node)?;
            let (durable, owner_confirmed) = c.sees(s)?;
            let r = c.write(Write::Rejoin {
                storage: s,
                durable,
                owner_confirmed,
            })?;
            // Networked: the copy learns it when it reads the record
            // (`notice_rejoin`), the owner from the copy's next
            // acknowledgement after that, which is marked admitted.
            if c.networked() {
                return Ok(Outcome::Recorded { version: r.version });
            }
            // Re-admitted, it reports its durable progress to the owner.
            let ack = c.node(node)?.replica.progress();
            c.owner_serving_mut()?.handle_ack(ack);
            Ok(Outcome::Recorded { version: r.version })
        })
    }

    /// `NoticeRejoin{node}` (networked delivery): a process that knows
    /// itself suspended reads the record and finds its current instance is
    /// not suspended any more (re-admitted, or no longer a follower at
    /// all); from then on its acknowledgements are marked admitted. The
    /// controller's write does not reach the copy by itself: the process
    /// reads the record on its own timer, so its knowledge lags the record.
    pub fn notice_rejoin(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("notice_rejoin", |c| {
            c.require_networked()?;
            let n = c.alive(node)?;
            if !n.suspended {
                return Err(ClusterError::NotKnownSuspended { node });
            }
            let storage = n.replica.id();
            if c.record().suspended.contains(&storage) {
                return Err(ClusterError::StillSuspended { storage });
            }
            c.node_mut(node)?.suspended = false;
            Ok(Outcome::RejoinNoticed { storage })
        })
    }

    /// `NoticeReadmission{node}` (networked delivery): the record's owner,
    /// serving at the record's epoch, reads the record and unmutes every
    /// copy it muted that the record no longer suspends (finding 35). The
    /// copy's own notice (`notice_rejoin`) tells only the copy; the owner
    /// reads the controller's re-admission itself, so no message that may
    /// be lost stands between a re-admission and the owner counting the
    /// copy again. `owner_ignores_readmission` reads nothing.
    pub fn notice_readmission(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("notice_readmission", |c| {
            c.require_networked()?;
            let owner = c.record().owner;
            if owner.node != node || c.owner_serving().is_err() {
                return Err(ClusterError::NotRecordOwner { node });
            }
            let suspended = c.record().suspended.clone();
            let mutants = c.mutants;
            let copies = c
                .owner_serving_mut()?
                .readmit(&suspended, mutants)
                .ok_or(ClusterError::NothingReadmitted { owner })?;
            Ok(Outcome::ReadmissionNoticed { owner, copies })
        })
    }
}
