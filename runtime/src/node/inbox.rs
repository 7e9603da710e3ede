//! A delivered append (at a copy) and a delivered acknowledgement (at the
//! owner): each goes to the implementation's machine, what it decides is
//! made durable, and then its output is sent.

use super::env::Env;
use super::{Node, NodeError};
use livemove_impl::owner::{AckMsg, AckVerdict};
use livemove_impl::replica::{Offer, Received};
use livemove_impl::{Msg, Mutant, NodeId, StorageId};

impl Node {
    pub(super) fn on_append(
        &mut self,
        from: NodeId,
        to: StorageId,
        offer: Offer,
        env: &mut dyn Env,
    ) -> Result<(), NodeError> {
        if to != self.me {
            tracing::info!(%to, "append to a lost disk");
            return Ok(());
        }
        let (got, persist) = self.replica.receive(&offer, self.mutants);
        // Durable before anything is said about it.
        self.persist(&persist)?;
        match got {
            Received::Refused { newer } => env.send(Msg::Refuse {
                to: from,
                epoch: newer,
            }),
            Received::Gap => self.stop_if_older(offer.epoch),
            Received::Holds { .. } => {
                self.stop_if_older(offer.epoch);
                let admitted = !self.suspended || self.mutants.on(Mutant::RejoinCountsEarly);
                env.send(self.ack(from, offer.epoch, offer.pos, offer.entry, admitted));
            }
        }
        Ok(())
    }

    pub(super) fn on_ack(&mut self, a: AckMsg, env: &mut dyn Env) -> Result<(), NodeError> {
        let Some(s) = self.serving.as_mut() else {
            return Ok(());
        };
        let before = s.covered(&self.replica, a.from);
        let verdict = s.on_ack(&self.replica, &a, self.mutants);
        let advanced = s.covered(&self.replica, a.from) > before;
        tracing::debug!(node = %self.id, from = %a.from, pos = a.pos, ?verdict, "ack");
        if verdict != AckVerdict::Taken {
            return Ok(());
        }
        self.try_confirm(env);
        if !a.admitted {
            self.readmit_caught_up(env)?;
        }
        // The next append goes out when this acknowledgement moved the
        // copy forward: one that repeats what the owner knew (a duplicate,
        // or the answer to a resent append) sends nothing, or every resend
        // of the timer would keep one more append and acknowledgement going
        // round for as long as the copy lags (finding 31). A copy the
        // record no longer assigns (a removed leaving copy whose
        // acknowledgement was still in flight) is sent nothing more.
        if advanced && self.peers().contains(&a.from) {
            self.send_next(a.from, env);
        }
        Ok(())
    }
}
