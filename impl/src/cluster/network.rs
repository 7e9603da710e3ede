//! Networked delivery: the cluster as a router with an explicit set of
//! messages in flight.
//!
//! Commands: `replicate` (through `send_append`) puts an append in flight,
//! `report_progress` a report to the controller (`progress.rs`);
//! `deliver` hands one copy of a message to the process it is addressed
//! to, which handles it from the message and its own state alone and puts
//! its reply in flight; `drop_msg` loses one copy; `duplicate` adds one.
//! Getter: `in_flight`. The driver chooses the order; budgets on losses and
//! duplicates are the driver's, not the cluster's. The cluster refuses, with
//! a typed error, a delivery, loss or duplicate of a message that is not in
//! flight, a delivery to a process that is down (the message waits), and a
//! send over a link whose window is full.

use super::{Cluster, ClusterError, Outcome};
use crate::controller::Report;
use crate::entry::Entry;
use crate::ids::{Epoch, NodeId, Position, StorageId};
use crate::mutant::Mutant;
use crate::net::{Endpoint, InFlight, Msg, NetError, LINK_WINDOW};
use crate::owner::AckMsg;
use crate::replica::{Offer, Received};

impl Cluster {
    /// The messages in flight.
    pub fn in_flight(&self) -> &InFlight {
        &self.in_flight
    }

    /// `Replicate{from, to}` with networked delivery: the serving node
    /// `from` puts in flight the append its owner state builds for `to`'s
    /// current instance (`Serving::next_append`), if the link has room.
    pub(super) fn send_append(
        &mut self,
        from: NodeId,
        to: NodeId,
    ) -> Result<Outcome, ClusterError> {
        if from == to {
            return Err(ClusterError::SameNode { node: from });
        }
        self.node(to)?;
        let (s, own) = self.unfenced_serving(from)?;
        let to_id = self.storage_of(to)?;
        let r = self.record();
        let replica_of_record = r.owner != to_id && r.is_assigned(to_id);
        if !s.counted().contains(&to_id) && !replica_of_record {
            return Err(ClusterError::NotAssigned { node: to });
        }
        let msg = s.next_append(own, from, to_id)?;
        let outstanding = self.in_flight.on_link(from, to);
        if outstanding >= LINK_WINDOW {
            return Err(NetError::WindowFull {
                a: from,
                b: to,
                outstanding,
            }
            .into());
        }
        self.in_flight.push(msg)?;
        tracing::info!(%msg, "replicate: sent");
        Ok(Outcome::Sent { msg })
    }

    /// `Deliver{msg}`: one copy of `msg` reaches its destination, which is
    /// up, and is handled there. An append to a disk that is gone is lost.
    pub fn deliver(&mut self, msg: &Msg) -> Result<Outcome, ClusterError> {
        self.atomically("deliver", |c| {
            c.require_networked()?;
            if c.in_flight.count(msg) == 0 {
                return Err(NetError::NotInFlight { msg: *msg }.into());
            }
            // The controller is always reachable (its record is the
            // replicated store); a node's process may be down.
            if let Endpoint::Node(n) = msg.dest() {
                c.alive(n)?;
            }
            c.in_flight.take(msg)?;
            let reply = match *msg {
                Msg::Append {
                    from,
                    to,
                    epoch,
                    pos,
                    prev,
                    entry,
                } => c.on_append(
                    from,
                    to,
                    Offer {
                        epoch,
                        pos,
                        prev,
                        entry,
                    },
                )?,
                Msg::Ack {
                    to,
                    epoch,
                    from,
                    inc,
                    pos,
                    entry,
                    admitted,
                } => {
                    c.on_ack(
                        to,
                        AckMsg {
                            epoch,
                            from,
                            inc,
                            pos,
                            entry,
                            admitted,
                        },
                    );
                    None
                }
                Msg::Refuse { to, epoch } => {
                    c.on_refuse(to, epoch);
                    None
                }
                Msg::Suspend { to, from, inc } => {
                    if let Some(s) = c.nodes[to.index()].serving.as_mut() {
                        s.on_suspend(from, inc);
                    }
                    None
                }
                Msg::Progress {
                    from,
                    epoch,
                    of,
                    pos,
                    confirmed,
                } => c.on_progress(Report {
                    from,
                    epoch,
                    of,
                    pos,
                    confirmed,
                }),
            };
            if let Some(r) = reply {
                c.in_flight.push(r)?;
            }
            Ok(Outcome::Delivered { msg: *msg, reply })
        })
    }

    /// `Drop{msg}`: one copy of `msg` is lost.
    pub fn drop_msg(&mut self, msg: &Msg) -> Result<Outcome, ClusterError> {
        self.atomically("drop", |c| {
            c.require_networked()?;
            c.in_flight.take(msg)?;
            Ok(Outcome::Dropped { msg: *msg })
        })
    }

    /// `Duplicate{msg}`: `msg` will arrive once more: one more copy is in
    /// flight.
    pub fn duplicate(&mut self, msg: &Msg) -> Result<Outcome, ClusterError> {
        self.atomically("duplicate", |c| {
            c.require_networked()?;
            if c.in_flight.count(msg) == 0 {
                return Err(NetError::NotInFlight { msg: *msg }.into());
            }
            c.in_flight.push(*msg)?;
            Ok(Outcome::Duplicated { msg: *msg })
        })
    }

    pub(super) fn require_networked(&self) -> Result<(), ClusterError> {
        if self.networked() {
            Ok(())
        } else {
            Err(NetError::Atomic.into())
        }
    }

    /// A replica receives an append; its reply, if any.
    fn on_append(
        &mut self,
        from: NodeId,
        to: StorageId,
        offer: Offer,
    ) -> Result<Option<Msg>, ClusterError> {
        let node = to.node;
        if self.storage_of(node)? != to {
            tracing::info!(%to, "deliver: append to a lost disk");
            return Ok(None);
        }
        let mutants = self.mutants;
        let n = &mut self.nodes[node.index()];
        let (got, persist) = n.replica.receive(&offer, mutants);
        n.persist(&persist);
        let (pos, entry) = match got {
            Received::Refused { newer } => {
                return Ok(Some(Msg::Refuse {
                    to: from,
                    epoch: newer,
                }))
            }
            Received::Gap => {
                self.stop_if_older(node, offer.epoch);
                return Ok(None);
            }
            Received::Holds { .. } => (offer.pos, offer.entry),
        };
        self.stop_if_older(node, offer.epoch);
        // A restarted follower awaiting re-admission catches up like a
        // learner but marks its acknowledgement: it must not count yet. The
        // mark is what the process knows of its own suspension (it wrote
        // the suspension when it restarted, and reads its re-admission
        // from the record later), never the record at this moment: a
        // process cannot read the record inside each delivery, so its
        // knowledge may lag the record either way.
        let admitted = !self.nodes[node.index()].suspended || mutants.on(Mutant::RejoinCountsEarly);
        Ok(Some(self.ack(from, offer.epoch, to, pos, entry, admitted)))
    }

    fn ack(
        &self,
        owner: NodeId,
        epoch: Epoch,
        from: StorageId,
        pos: Position,
        entry: Entry,
        admitted: bool,
    ) -> Msg {
        Msg::Ack {
            to: owner,
            epoch,
            from,
            inc: self.nodes[from.node.index()].inc,
            pos,
            entry,
            admitted,
        }
    }

    /// A node that took an append of `epoch` stops serving at an older one.
    fn stop_if_older(&mut self, node: NodeId, epoch: Epoch) {
        let n = &mut self.nodes[node.index()];
        if n.serving.as_ref().is_some_and(|s| s.epoch() < epoch) {
            tracing::info!(%node, epoch = epoch.0, "deliver: saw a newer epoch, stops serving");
            n.serving = None;
        }
    }

    /// An owner receives an acknowledgement.
    fn on_ack(&mut self, to: NodeId, a: AckMsg) {
        let mutants = self.mutants;
        let n = &mut self.nodes[to.index()];
        if let Some(s) = n.serving.as_mut() {
            let verdict = s.on_ack(&n.replica, &a, mutants);
            tracing::debug!(owner = %to, from = %a.from, pos = a.pos, ?verdict, "deliver: ack");
        }
    }

    /// A refused sender learns the newer epoch and stops serving if it
    /// served at an older one. Under `refusal_ignored` it does nothing.
    fn on_refuse(&mut self, to: NodeId, epoch: Epoch) {
        if self.mutants.on(Mutant::RefusalIgnored) {
            return;
        }
        self.learn_epoch(to, epoch);
    }
}
