//! Power losses: a node's machine loses power, and its disk keeps what
//! the node made durable (`fsutil::ledger`), not what the kernel held.
//!
//! A kill (`faults.rs`) leaves every byte a process wrote, fsynced or not;
//! a power loss rolls each file of the node's data directory back to its
//! content at its last fsync and the directory's names back to its last
//! fsync, keeping a seeded part of the rest (none, all, or a prefix cut
//! anywhere, mid-record too). The node acknowledges only what it made
//! durable, so with every fsync in place a power loss takes nothing that
//! was acknowledged: only the torn record of a kill inside an append,
//! never fsynced, may go with it; each power loss checks that at the disk
//! (`SimFailure::DurableLost`). With one fsync skipped
//! (`SimConfig::skip_sync`) the checks must catch what is lost.

use super::check::{self, SimFailure};
use super::Sim;
use crate::disk_log;
use crate::fsutil::ledger;
use crate::node::NodeError;
use livemove_impl::NodeId;

impl Sim<'_> {
    /// A seeded node's machine loses power: a follower that is up, a node
    /// whose process is down (a kill, then the power: what the kernel
    /// held for it goes too), or the record's owner while it serves with
    /// no handoff, move or recovery pending (an owner kill, which the
    /// nodes recover from). A process whose restart has not committed is
    /// passed over, as a kill passes it over.
    pub(super) fn power_loss(&mut self) -> Result<(), NodeError> {
        let owner = self.quiet_serving_owner()?;
        let hit: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| match &self.nodes[i] {
                None => true,
                Some(n) => !n.is_restarting() && (n.serving().is_none() || owner == Some(i)),
            })
            .collect();
        if hit.is_empty() {
            return Ok(());
        }
        let i = hit[self.world.rng.below(hit.len() as u64) as usize];
        let node = NodeId(i as u8 + 1);
        let held = match &self.nodes[i] {
            Some(n) => Some(n.replica().durable()),
            None => self.held_at_kill[i].clone(),
        };
        if self.nodes[i].is_some() {
            if owner == Some(i) {
                self.owner_kills += 1;
                self.owner_power_losses += 1;
            }
            self.kill(i);
        }
        let dir = self.dirs[i].clone();
        let rng = &mut self.world.rng;
        let lost = ledger::power_loss(&dir, &mut |n| rng.below(n));
        self.power_losses += 1;
        self.power_bytes_lost += lost.bytes_lost;
        // The kill's torn record may be gone, kept, or cut shorter; a
        // record appended and never made durable (an fsync skipped) may be
        // left torn.
        let torn = match disk_log::find_torn_tail(&dir) {
            Ok(t) => t.is_some(),
            Err(source) => return Err(NodeError::Disk { node, source }),
        };
        // The node's promise, checked at its disk: everything it held as
        // durable (and may have acknowledged) is still there.
        if let (Some(held), None) = (held, &self.durable_lost) {
            let what = match disk_log::read_durable(&dir) {
                Ok(on_disk) => check::durable_difference(&held, &on_disk),
                Err(e) => Some(e.to_string()),
            };
            self.durable_lost = what.map(|what| SimFailure::DurableLost { node, what });
        }
        match (std::mem::replace(&mut self.torn_unseen[i], torn), torn) {
            (true, false) => self.torn_lost += 1,
            (false, true) => self.torn_written += 1,
            _ => {}
        }
        Ok(())
    }
}
