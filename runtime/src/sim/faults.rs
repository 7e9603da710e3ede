//! The fault phase's faults: duplicates, kills (some inside an append),
//! restarts (some on an empty disk), cut links; and the controller's
//! replacement of a lost instance.

use super::{Sim, DISK_LOSS_PCT, FLIGHTS_MAX};
use crate::controller::decide;
use crate::node::{Node, NodeError};
use crate::trace::Event;
use livemove_impl::{NodeId, StorageId};

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
        self.held_at_kill[i] = Some(killed.replica().durable());
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
            Ok(()) => {
                self.torn_written += 1;
                self.torn_unseen[i] = true;
            }
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
        if self.may_lose_disk(i)? && self.world.rng.chance(DISK_LOSS_PCT) {
            self.lose_disk(i);
        }
        self.restart(i)
    }

    /// Whether node `i` (down) may come back on an empty disk: the budget
    /// has a loss left, the node never lost one (the spec's two disk
    /// generations), the record names its instance as a follower and
    /// nothing else of it, no move, handoff or recovery is pending, and
    /// the record names no other lost instance: a second loss before the
    /// first is replaced is beyond what rf 3 tolerates (a confirmed entry
    /// may be on those two disks only, and a recovery could not gather
    /// its E - W + 1 seals).
    fn may_lose_disk(&self, i: usize) -> Result<bool, NodeError> {
        if self.disk_losses >= self.cfg.disk_losses || self.disk_of[i] > 0 {
            return Ok(false);
        }
        let r = self.read_record()?;
        let me = self.current(i);
        Ok(r.move_task.is_none()
            && !self.names_lost(&r)
            && r.handoff.is_none()
            && r.recovery.is_none()
            && r.owner.node != me.node
            && r.followers.contains(&me))
    }

    /// Wipe node `i`'s data directory (its process is down): the disk is
    /// lost, and the node comes back as a new storage instance.
    fn lose_disk(&mut self, i: usize) {
        let dir = &self.dirs[i];
        if let Err(e) = std::fs::remove_dir_all(dir).and_then(|()| std::fs::create_dir_all(dir)) {
            panic!(
                "invariant broken: the simulator cannot empty {}: {e}",
                dir.display()
            );
        }
        crate::fsutil::ledger::forget(dir);
        if let Err(e) = crate::fsutil::ledger::watch(dir) {
            panic!(
                "invariant broken: the simulator cannot read {}: {e}",
                dir.display()
            );
        }
        if std::mem::take(&mut self.torn_unseen[i]) {
            self.torn_lost += 1;
        }
        self.disk_of[i] += 1;
        self.disk_losses += 1;
    }

    /// Node `i`'s current storage instance (its process may be down).
    pub(super) fn current(&self, i: usize) -> StorageId {
        StorageId {
            node: NodeId(i as u8 + 1),
            disk: self.disk_of[i],
        }
    }

    /// Whether `s` is its node's current disk.
    pub(super) fn is_current(&self, s: StorageId) -> bool {
        self.disk_of.get(s.node.index()) == Some(&s.disk)
    }

    /// Whether node `n`'s process is up and its restart committed.
    fn is_up(&self, n: NodeId) -> bool {
        self.nodes[n.index()]
            .as_ref()
            .is_some_and(|x| !x.is_restarting())
    }

    /// What the controller's decisions (`controller::decide`) know here:
    /// which disks are gone and which processes are up, exactly.
    fn facts(&self) -> SimFacts {
        SimFacts {
            disk_of: self.disk_of.clone(),
            up: (0..self.nodes.len())
                .map(|i| self.is_up(NodeId(i as u8 + 1)))
                .collect(),
        }
    }

    /// The controller's replacement of a lost instance
    /// (`controller::decide::replacement`, which the controller process
    /// makes too): the chosen node's current instance joins as the
    /// replacement's learner.
    pub(super) fn replace_lost(&mut self) -> Result<(), NodeError> {
        let r = self.read_record()?;
        let nodes = (1..=self.nodes.len()).map(|n| NodeId(n as u8));
        let Some(rep) = decide::replacement(&r, nodes, &self.facts()) else {
            return Ok(());
        };
        let node = self.nodes[rep.by.index()]
            .as_mut()
            .expect("invariant broken: the replacement's node is down");
        if node.join_replacing(Some(rep.replaces.node), &mut self.world)? {
            self.replacements += 1;
        }
        Ok(())
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

    /// The controller's failure detector on a swapped move's target
    /// (`controller::decide::TargetWatch`, which the controller process
    /// keeps too): once the target has been down (or its disk lost) for
    /// the lease, the owner's node swaps the leaving copy back
    /// (`Node::swap_back`).
    pub(super) fn swap_back_gone_target(&mut self) -> Result<(), NodeError> {
        let r = self.read_record()?;
        let facts = self.facts();
        let now = self.world.now_ms;
        let Some(owner) = self.target_watch.due(&r, &facts, now, super::LEASE_MS) else {
            return Ok(());
        };
        let Some(owner) = self.nodes[owner.index()].as_mut() else {
            return Ok(());
        };
        if owner.swap_back(&mut self.world)? {
            self.swap_backs += 1;
            self.target_watch.done();
        }
        Ok(())
    }
}

/// The simulator's knowledge for the controller's decisions: each node's
/// current disk and whether its process is up.
struct SimFacts {
    disk_of: Vec<u32>,
    up: Vec<bool>,
}

impl decide::Facts for SimFacts {
    fn lost(&self, s: StorageId) -> bool {
        self.disk_of.get(s.node.index()) != Some(&s.disk)
    }
    fn up(&self, n: NodeId) -> bool {
        self.up.get(n.index()).copied().unwrap_or(false)
    }
}
