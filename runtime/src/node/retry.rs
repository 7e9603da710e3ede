//! A producer's retry (note 2: "does timeout retry cause duplicate
//! effects?"): a publish sent again because its first answer never came.
//!
//! The implementation's `Serving::publish_retry` decides: every entry
//! carries its message key (the producer's sequence), so an owner whose
//! history holds the key answers with that entry's position and appends
//! nothing, wherever the entry came from (its own append, replication, a
//! recovery's install, a handoff's continuation); one that lacks it
//! appends it at its own epoch. The node makes an append durable before it
//! answers or ships anything, as for a publish, and traces either answer
//! as `RetryPublish`, which the trace validator checks against the spec's
//! `RetryPublish`: a held answer must name the entry the spec's owner
//! holds (changing no copy), an appended one the entry it appends.

use super::env::emit;
use super::{Env, Node, NodeError};
use crate::trace::Event;
use livemove_impl::owner::Retried;
use livemove_impl::{Epoch, Op, Position};

/// How the owner answered a retry: durable on its disk, not yet confirmed
/// (a held entry may be unconfirmed too, when the first attempt reached
/// this owner and its answer was lost before W copies held it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// The position of the entry holding the message.
    pub pos: Position,
    /// That entry's epoch tag (the owner's epoch when it appended now).
    pub entry_epoch: Epoch,
    /// Whether its history held the message (nothing appended).
    pub held: bool,
}

impl Node {
    /// Take a producer's retry of message `key`. Refused, with nothing
    /// written, when the node does not serve, admission is closed or (for
    /// an append) the owner is fenced.
    pub fn publish_retry(&mut self, key: u64, env: &mut dyn Env) -> Result<Retry, NodeError> {
        let node = self.id;
        let s = self
            .serving
            .as_mut()
            .ok_or(NodeError::NotServing { node })?;
        let epoch = s.epoch();
        let op = Op::Put { key, value: key };
        let retry = match s
            .publish_retry(&mut self.replica, op, self.mutants)
            .map_err(|source| NodeError::Refused { node, source })?
        {
            Retried::Held { pos, epoch } => Retry {
                pos,
                entry_epoch: epoch,
                held: true,
            },
            Retried::Appended { pos, persist } => {
                self.persist(&persist)?;
                Retry {
                    pos,
                    entry_epoch: epoch,
                    held: false,
                }
            }
        };
        assert!(
            self.replica
                .entry(retry.pos)
                .is_some_and(|e| e.op == op && e.epoch == retry.entry_epoch),
            "invariant broken: a retry of {key} answered with position {} that does not hold it",
            retry.pos
        );
        emit(env, || Event::RetryPublish {
            node,
            pos: retry.pos,
            epoch: retry.entry_epoch,
            key,
            held: retry.held,
        });
        if !retry.held {
            self.confirm_and_ship(env);
        }
        Ok(retry)
    }
}
