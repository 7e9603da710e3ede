//! The consumer's settles on the serving path (note 2: "deletions must
//! propagate as log events or tombstones").
//!
//! The owner delivers what it confirmed and its log has not settled: the
//! publishes within its confirmed tail whose key no `Delete` of its log
//! names. A settle is a `Delete` of the oldest delivered key, appended at
//! the owner's epoch like a publish; replication, a recovery's install, a
//! handoff's continuation and a checkpoint carry it with the rest of the
//! history. The consumer is told it is done only when an owner confirms
//! the entry (the cluster's consumer record, `Cluster::settled`).

use super::{OwnerError, Serving};
use crate::entry::Op;
use crate::ids::Position;
use crate::mutant::Mutants;
use crate::replica::{Persist, Replica};

/// An accepted settle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// The message key it settles.
    pub key: u64,
    /// The position of the `Delete` entry.
    pub pos: Position,
    /// What makes the append durable.
    pub persist: Vec<Persist>,
}

impl Serving {
    /// The oldest message this owner delivers: the first publish within
    /// its confirmed tail whose key no entry of its log settles.
    pub fn delivered(&self, own: &Replica) -> Option<u64> {
        let log = own.entries();
        let tail = (self.confirmed_tail as usize).min(log.len());
        log[..tail].iter().find_map(|e| match e.op {
            Op::Put { key, .. } if !settled_in(own, key) => Some(key),
            _ => None,
        })
    }

    /// Accept the consumer's settle of the oldest delivered message: append
    /// its `Delete` at the owner's epoch. Refused while admission is closed
    /// (a settle is state-changing work) and when nothing is delivered.
    pub fn settle(&mut self, own: &mut Replica, mutants: Mutants) -> Result<Settled, OwnerError> {
        if !self.admission_open {
            return Err(OwnerError::AdmissionClosed);
        }
        let key = self.delivered(own).ok_or(OwnerError::NothingDelivered {
            confirmed_tail: self.confirmed_tail,
        })?;
        let (pos, persist) = self.publish(own, Op::Delete { key }, mutants)?;
        tracing::info!(owner = %self.me, key, pos, "settle");
        Ok(Settled { key, pos, persist })
    }
}

/// Whether some entry of `own`'s log settles message `key`.
pub fn settled_in(own: &Replica, key: u64) -> bool {
    own.entries()
        .iter()
        .any(|e| matches!(e.op, Op::Delete { key: k } if k == key))
}
