//! The messages in flight: a multiset the driver holds, reorders,
//! duplicates, drops and delivers. Order of insertion is kept only for
//! printing; no decision depends on it.

use super::{Msg, NetError, IN_FLIGHT_MAX};
use crate::ids::NodeId;
use serde::{Deserialize, Serialize};

/// A multiset of messages, at most [`IN_FLIGHT_MAX`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    msgs: Vec<Msg>,
}

impl InFlight {
    /// Every copy in flight, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Msg> + '_ {
        self.msgs.iter()
    }
    /// How many copies are in flight.
    pub fn len(&self) -> usize {
        self.msgs.len()
    }
    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }
    /// How many copies of `m` are in flight.
    pub fn count(&self, m: &Msg) -> usize {
        self.msgs.iter().filter(|x| *x == m).count()
    }
    /// Messages on the link between `a` and `b`, either way.
    pub fn on_link(&self, a: NodeId, b: NodeId) -> usize {
        self.msgs.iter().filter(|m| m.on_link(a, b)).count()
    }
    /// Put one copy of `m` in flight.
    pub fn push(&mut self, m: Msg) -> Result<(), NetError> {
        if self.msgs.len() >= IN_FLIGHT_MAX {
            return Err(NetError::Full { max: IN_FLIGHT_MAX });
        }
        self.msgs.push(m);
        Ok(())
    }
    /// Take one copy of `m` out of flight.
    pub fn take(&mut self, m: &Msg) -> Result<(), NetError> {
        let i = self
            .msgs
            .iter()
            .position(|x| x == m)
            .ok_or(NetError::NotInFlight { msg: *m })?;
        self.msgs.remove(i);
        Ok(())
    }
}
