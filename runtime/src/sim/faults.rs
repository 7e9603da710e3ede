//! The fault phase's faults: duplicates, kills (some inside an append),
//! restarts, cut links.

use super::{Sim, FLIGHTS_MAX};
use crate::node::{Node, NodeError};
use crate::trace::Event;
use livemove_impl::NodeId;

impl Sim<'_> {
    pub(super) fn duplicate(&mut self) {
        if self.world.flights.is_empty() || self.world.flights.len() >= FLIGHTS_MAX {
            return;
        }
        let i = self.world.rng.below(self.world.flights.len() as u64) as usize;
        let msg = self.world.flights[i].msg;
        self.world.schedule(msg);
        self.duplicates += 1;
        self.world.trace_event(Event::Duplicate { msg });
    }

    /// Kill a follower's process: its volatile state goes, its disk stays.
    /// No node that serves is killed (the owner, or an old owner after a
    /// handoff's commit until it learns the new epoch): serving again after
    /// it needs a recovery, which this simulator does not drive yet.
    pub(super) fn crash_follower(&mut self) {
        // A process whose restart has not committed is not up in the
        // protocol's sense; killing it again is no transition to trace.
        let up: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                self.nodes[i]
                    .as_ref()
                    .is_some_and(|n| !n.is_restarting() && n.serving().is_none())
            })
            .collect();
        if up.is_empty() {
            return;
        }
        let i = up[self.world.rng.below(up.len() as u64) as usize];
        self.kill(i);
    }

    /// Kill node `i`'s process (it is up): its volatile state goes, its
    /// disk stays, and some kills land inside an append.
    pub(super) fn kill(&mut self, i: usize) {
        let killed = self.nodes[i]
            .take()
            .expect("invariant broken: killing a process that is down");
        self.crashes += 1;
        if self.world.rng.chance(self.cfg.faults.torn_pct) {
            self.tear(i, &killed);
        }
        let node = NodeId(i as u8 + 1);
        self.world.trace_event(Event::Crash { node });
    }

    /// Leave part of one more record at the end of node `i`'s segment, as
    /// an append the kill interrupted: it was never acknowledged.
    pub(super) fn tear(&mut self, i: usize, killed: &Node) {
        let pos = killed.replica().len() + 1;
        let entry = livemove_impl::Entry {
            epoch: killed.replica().fence(),
            op: livemove_impl::Op::Put {
                key: u64::MAX - self.world.rng.below(1 << 16),
                value: 0,
            },
        };
        let bytes = crate::disk_log::encode_record(pos, entry);
        let keep = 1 + self.world.rng.below(bytes.len() as u64 - 1) as usize;
        let path = self.dirs[i].join(crate::disk_log::SEGMENT_FILE);
        let torn = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes[..keep]));
        match torn {
            Ok(()) => self.torn_written += 1,
            Err(e) => panic!(
                "invariant broken: the simulator cannot write {}: {e}",
                path.display()
            ),
        }
    }

    pub(super) fn restart_one(&mut self) -> Result<(), NodeError> {
        let down: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].is_none())
            .collect();
        if down.is_empty() {
            return Ok(());
        }
        let i = down[self.world.rng.below(down.len() as u64) as usize];
        self.restart(i)
    }

    pub(super) fn restart(&mut self, i: usize) -> Result<(), NodeError> {
        self.boot(i)
    }

    /// Cut the link between two nodes for a seeded time.
    pub(super) fn cut(&mut self) {
        let n = self.nodes.len() as u64;
        if n < 2 {
            return;
        }
        let a = self.world.rng.below(n);
        let b = (a + 1 + self.world.rng.below(n - 1)) % n;
        let until = self.world.now_ms + 1 + self.world.rng.below(self.cfg.faults.cut_ms_max);
        let (a, b) = (NodeId(a as u8 + 1), NodeId(b as u8 + 1));
        self.cut_until_ms.push((a, b, until));
        self.cuts += 1;
    }

    pub(super) fn is_cut(&mut self, msg: &livemove_impl::Msg) -> bool {
        let now = self.world.now_ms;
        self.cut_until_ms.retain(|c| c.2 > now);
        self.cut_until_ms.iter().any(|&(a, b, _)| msg.on_link(a, b))
    }
}
