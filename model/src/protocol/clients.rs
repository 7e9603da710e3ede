//! Client routing (note 2, "routing publication can have atomic decisions,
//! but clients won't refresh simultaneously", after Redis Cluster's MOVED
//! and ASK): a client with a cached stable route publishes, follows the
//! answers it gets within a hop limit, times out and retries with its
//! producer sequence, and is acknowledged once its publish is confirmed.
//! A config has `cfg.clients` of them, each a producer of its own: message
//! ids are drawn from one budget, so a message names its producer and its
//! sequence at once, and the owner's history deduplicates a retry by it.

use super::*;

/// A node's answer to the client's request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reply {
    /// It serves at the request's epoch with admission open: it appends the
    /// message, or finds the producer's sequence in its history.
    Accept,
    /// This request only: send it to `node` at `epoch`, with ASKING. The
    /// stable route stays as it is.
    Ask { node: NodeId, epoch: u8 },
    /// The owner is `node` at `epoch`: update the stable route (forward in
    /// epoch only) and send there.
    Moved { node: NodeId, epoch: u8 },
    /// Not now (admission closed while a handoff drains, or no owner
    /// serves yet): send again along the stable route.
    TryAgain,
}

impl MoveModel {
    /// What the node client `k`'s request is at answers, from its own
    /// state (its serving state, and the record it watches while it hands
    /// off or once it does not serve); `None` if no request awaits an
    /// answer, that node is down (it answers nothing: the client times
    /// out), or the config has no client `k`.
    pub fn reply(&self, s: &State, k: ClientId) -> Option<Reply> {
        if k >= self.cfg.clients {
            return None;
        }
        let c = &s.clients[k as usize];
        if c.phase != ReqPhase::Sent {
            return None;
        }
        let n = c.at;
        let nd = &s.nodes[n as usize];
        if !nd.alive {
            return None;
        }
        let r = &s.record;
        let h = &r.handoff;
        // The old owner of a committed handoff, not yet activated: the new
        // owner will serve this request at the new epoch, but is not the
        // published owner yet.
        let handing_off = h.phase == HandoffPhase::Committed && h.from == n;
        let newer_owner = r.owner.node() != n && r.epoch > c.epoch;
        if self.serves(s, n) {
            let e = nd.serving.epoch;
            if c.epoch < e {
                // The stale-epoch refusal: this node serves at a newer epoch.
                return Some(Reply::Moved { node: n, epoch: e });
            }
            if c.epoch > e {
                // The client knows a newer epoch than this node serves at:
                // this node is stale, and must not accept.
                return Some(Reply::TryAgain);
            }
            if nd.serving.open {
                return Some(Reply::Accept);
            }
            if handing_off {
                return Some(Reply::Ask {
                    node: h.to,
                    epoch: r.epoch,
                });
            }
            // Closed: a handoff drains, or it activated its new owner and
            // this node still believes it serves with admission closed.
            if r.epoch > e && r.owner.node() != n {
                return Some(Reply::Moved {
                    node: r.owner.node(),
                    epoch: r.epoch,
                });
            }
            return Some(Reply::TryAgain);
        }
        if handing_off {
            return Some(Reply::Ask {
                node: h.to,
                epoch: r.epoch,
            });
        }
        if newer_owner {
            return Some(Reply::Moved {
                node: r.owner.node(),
                epoch: r.epoch,
            });
        }
        Some(Reply::TryAgain)
    }

    /// Send message `msg` along client `k`'s stable route as a new request.
    fn send_request(t: &mut State, k: ClientId, msg: u8) {
        let c = &mut t.clients[k as usize];
        c.phase = ReqPhase::Sent;
        c.at = c.route_node;
        c.epoch = c.route_epoch;
        c.asking = false;
        c.hops = 0;
        c.msg = msg;
    }

    /// End the request unacknowledged: the message waits for a retry.
    fn drop_request(t: &mut State, k: ClientId) {
        let c = &mut t.clients[k as usize];
        c.phase = ReqPhase::Idle;
        c.at = 0;
        c.epoch = 0;
        c.asking = false;
        c.hops = 0;
    }

    /// Client `k` exists in the config.
    fn client(&self, k: ClientId) -> Result<(), Disabled> {
        need(self.cfg.client_hops > 0, "a client")?;
        need(k < self.cfg.clients, "the client exists")
    }

    pub(super) fn client_publish(&self, s: &State, k: ClientId, t: &mut State) -> Step {
        self.client(k)?;
        need(
            s.clients[k as usize].phase == ReqPhase::Idle,
            "no request in flight",
        )?;
        need(s.budget.published < self.cfg.messages, "messages left")?;
        *t = *s;
        t.budget.published += 1;
        let m = t.budget.published;
        Self::send_request(t, k, m);
        Ok(())
    }

    pub(super) fn client_retry(&self, s: &State, k: ClientId, t: &mut State) -> Step {
        self.client(k)?;
        let c = &s.clients[k as usize];
        need(c.phase == ReqPhase::Idle, "no request in flight")?;
        need(
            c.msg > 0 && !c.is_acked(c.msg),
            "a message timed out unacknowledged",
        )?;
        need(
            s.budget.publish_retries < self.cfg.publish_retries,
            "publish retries left",
        )?;
        *t = *s;
        t.budget.publish_retries += 1;
        Self::send_request(t, k, c.msg);
        Ok(())
    }

    pub(super) fn answer_client(&self, s: &State, k: ClientId, t: &mut State) -> Step {
        let reply = self
            .reply(s, k)
            .ok_or(Disabled("a request at a node that is up"))?;
        let c = s.clients[k as usize];
        *t = *s;
        if reply == Reply::Accept {
            let n = c.at as usize;
            let nd = &s.nodes[n];
            let held = (1..=nd.log.len).any(|p| nd.log.at(p).msg() == c.msg);
            if !held || self.has(Mutant::RetryWithoutProducerId) {
                t.nodes[n].log.push(Entry::new(nd.serving.epoch, c.msg));
            }
            t.clients[k as usize].phase = ReqPhase::Accepted;
            return Ok(());
        }
        let limit = self.cfg.client_hops;
        if let Reply::Moved { node, epoch } = reply {
            // A MOVED is news about ownership, whether or not the request
            // goes on.
            if epoch > c.route_epoch {
                t.clients[k as usize].route_node = node;
                t.clients[k as usize].route_epoch = epoch;
            }
        }
        if c.hops >= limit && !self.has(Mutant::NoHopLimit) {
            // The hop limit: the request gives up.
            Self::drop_request(t, k);
            return Ok(());
        }
        let tc = &mut t.clients[k as usize];
        // Under no_hop_limit the count is kept at limit + 1: "beyond the
        // limit" is all the property needs, and the state space stays finite.
        tc.hops = (c.hops + 1).min(limit + 1);
        match reply {
            Reply::Ask { node, epoch } => {
                tc.at = node;
                tc.epoch = epoch;
                tc.asking = true;
                if self.has(Mutant::AskUpdatesRoute) {
                    tc.route_node = node;
                    tc.route_epoch = epoch;
                }
            }
            Reply::Moved { .. } | Reply::TryAgain => {
                tc.at = tc.route_node;
                tc.epoch = tc.route_epoch;
                tc.asking = false;
            }
            Reply::Accept => unreachable!("handled above"),
        }
        need(
            *t != *s,
            "the answer changes nothing (beyond the hop limit)",
        )?;
        Ok(())
    }

    /// The position of client `k`'s accepted message in the log of the
    /// node that accepted it (its first copy), if it holds it.
    pub fn acked_position(&self, s: &State, k: ClientId) -> Option<u8> {
        let c = &s.clients[k as usize];
        let log = &s.nodes[c.at as usize].log;
        (1..=log.len).find(|p| log.at(*p).msg() == c.msg)
    }

    pub(super) fn ack_client(&self, s: &State, k: ClientId, t: &mut State) -> Step {
        // A client the config does not have stays idle: no guard of its own.
        let c = s.clients[k as usize];
        need(c.phase == ReqPhase::Accepted, "a request accepted")?;
        need(self.serves(s, c.at), "the accepting node serves")?;
        let p = self
            .acked_position(s, k)
            .ok_or(Disabled("the accepting node holds the message"))?;
        need(
            p <= s.nodes[c.at as usize].serving.confirmed || self.has(Mutant::AckBeforeConfirm),
            "its confirmed tail covers the message",
        )?;
        *t = *s;
        t.clients[k as usize].acked |= 1 << (c.msg - 1);
        Self::drop_request(t, k);
        t.clients[k as usize].msg = 0;
        Ok(())
    }

    pub(super) fn client_timeout(&self, s: &State, k: ClientId, t: &mut State) -> Step {
        need(
            s.clients[k as usize].phase != ReqPhase::Idle,
            "a request in flight",
        )?;
        *t = *s;
        Self::drop_request(t, k);
        // The refresh from the control plane: its record names the owner.
        let r = &s.record;
        let tc = &mut t.clients[k as usize];
        if r.epoch > tc.route_epoch {
            tc.route_node = r.owner.node();
            tc.route_epoch = r.epoch;
        }
        Ok(())
    }
}
