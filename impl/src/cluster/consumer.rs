//! The queue's consumer: it settles (deletes) the oldest message the owner
//! delivered, and keeps the record of the settles it was told are done
//! (note 2: "how are deletions synchronized?").
//!
//! A settle is a `Delete` entry on the serving path (`Serving::settle`),
//! under the same confirm rule as a publish. The consumer is told its
//! settle is done when an owner confirms the entry: at a `confirm`, and at
//! the activations that confirm entries without one (a handoff's new owner
//! takes F as its confirmed tail, a recovery's new owner the recovered
//! tail). Every confirmed `Delete` counts, whichever owner wrote it.

use super::{Cluster, ClusterError, Outcome};
use crate::entry::{Entry, Op};
use crate::ids::{NodeId, Position};
use crate::mutant::Mutant;
use std::collections::BTreeSet;

impl Cluster {
    /// `Settle{node}`: the consumer settles the oldest message `node`
    /// delivered (published within its confirmed tail, not settled in its
    /// log). The node must be up and serving with admission open; it
    /// appends the `Delete` at its epoch. Under
    /// `settle_acked_before_confirm` the consumer is told at once.
    pub fn settle(&mut self, node: NodeId) -> Result<Outcome, ClusterError> {
        self.atomically("settle", |c| {
            let mutants = c.mutants;
            let n = c.alive_mut(node)?;
            let s = n
                .serving
                .as_mut()
                .ok_or(ClusterError::NotServing { node })?;
            let epoch = s.epoch();
            let settled = s.settle(&mut n.replica, mutants)?;
            n.persist(&settled.persist);
            if mutants.on(Mutant::SettleAckedBeforeConfirm) {
                // The wrong idea: the append is taken for the settle being
                // done, before any copy holds it.
                c.settled.insert(settled.key);
            }
            Ok(Outcome::Settled {
                key: settled.key,
                pos: settled.pos,
                epoch,
            })
        })
    }

    /// The messages whose settle the consumer was told is done, by key.
    pub fn settled(&self) -> &BTreeSet<u64> {
        &self.settled
    }
}

/// An owner confirmed `log` through `upto`: the consumer is told every
/// settle in that range is done (recorded in `settled`).
pub(super) fn tell_settled(settled: &mut BTreeSet<u64>, log: &[Entry], upto: Position) {
    let upto = (upto as usize).min(log.len());
    for e in &log[..upto] {
        if let Op::Delete { key } = e.op {
            if settled.insert(key) {
                tracing::info!(key, "consumer: settle confirmed");
            }
        }
    }
}
