//! A deterministic simulation of the same node code (`crate::node`) on one
//! thread: one seed drives every choice (which due message is delivered
//! next, its delay, drops, duplicates, cut links, publishes, kills of
//! followers, some inside an append, and their restarts on their data
//! directories: `faults.rs`), a fault phase is followed by a healing
//! phase, and the run ends with checks read from the disks (`check.rs`).
//! The same seed gives the same trace, byte for byte. What a run is given
//! and reports is in `config.rs`, the network and clock in `world.rs`.
//!
//! The disks are real: each node's disk log and incarnation file live in a
//! directory of a temporary tree, and the record in a file control plane
//! beside them, so a restart reopens what a crash left. A power loss
//! (`power.rs`) rolls a node's directory back to what was fsynced, as the
//! durability ledger (`fsutil::ledger`) recorded it. Nothing in a run
//! reads the wall clock or a path, so neither reaches the trace.
//!
//! Why not turmoil: see `runtime/README.md`.

mod check;
mod config;
mod eager;
mod faults;
mod power;
mod recovery;
mod rng;
mod world;
pub mod zoo;

pub use check::SimFailure;
pub use config::{Faults, SimConfig, SimError, SimReport};
pub use rng::Rng;

use crate::control::{ControlPlane, FileControlPlane};
use crate::disk_log::DiskLog;
use crate::node::{Node, NodeConfig, NodeError};
use crate::trace::Event;
use livemove_impl::net::Endpoint;
use livemove_impl::store::Record;
use livemove_impl::{Entry, Epoch, NodeId, Position, StorageId};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use world::World;

/// Virtual milliseconds between two resend timer ticks of a node.
pub const TICK_MS: u64 = 20;
/// The most virtual milliseconds one step advances the clock.
pub const STEP_MS_MAX: u64 = 4;
/// Messages the network holds at once; duplicates stop at this bound.
pub const FLIGHTS_MAX: usize = 256;
/// Percent of fault-phase steps that start a handoff, while any of the
/// run's `handoffs` is left.
pub const HANDOFF_PCT: u64 = 2;
/// Percent of fault-phase steps that try to start a move, while any of the
/// run's `moves` is left.
pub const MOVE_PCT: u64 = 2;
/// Percent of fault-phase steps that kill the serving owner, while any of
/// the run's `recoveries` is left.
pub const OWNER_KILL_PCT: u64 = 1;
/// Percent of fault-phase steps whose owner's lease lapses while its
/// process is up, while any of the run's `suspicions` is left.
pub const SUSPECT_PCT: u64 = 1;
/// Percent of a fault-phase restart of a follower that comes back on an
/// empty disk, while any of the run's `disk_losses` is left.
pub const DISK_LOSS_PCT: u64 = 50;
/// Percent of fault-phase steps that cut a node's power, while any of the
/// run's `power_losses` is left.
pub const POWER_LOSS_PCT: u64 = 1;
/// Percent of fault-phase steps that retry the producer's newest message
/// while any retry is left (`SimConfig::publish_retries`).
pub const RETRY_PCT: u64 = 2;
/// The owner's lease: how long the controller's failure detector waits
/// after the owner's process went down before it opens a recovery (virtual
/// milliseconds; a process that comes back sooner opens it itself).
pub const LEASE_MS: u64 = 5 * TICK_MS;
/// Healing steps a run with moves is given (`livemove sim --moves`): a
/// learner catches up one entry per acknowledgement, among the resends of
/// every tick, and seed 4 of the default schedule needs more than 4,000.
pub const HEAL_STEPS_WITH_MOVES: u64 = 20_000;

const _: () = assert!(STEP_MS_MAX >= 1, "time must advance at every step");
const _: () = assert!(
    TICK_MS > STEP_MS_MAX,
    "a tick spans several steps, so deliveries happen between resends"
);

/// Run one seed.
pub fn run(cfg: &SimConfig) -> Result<SimReport, SimError> {
    if cfg.moves > 0 && cfg.nodes <= cfg.rf {
        return Err(SimError::Config(format!(
            "{} moves with {} nodes at rf {}: a move needs a node that holds no copy",
            cfg.moves, cfg.nodes, cfg.rf
        )));
    }
    if cfg.rf < 1 || cfg.rf > cfg.nodes || cfg.nodes > 16 {
        return Err(SimError::Config(format!(
            "{} nodes at rf {} (need 1 <= rf <= nodes <= 16)",
            cfg.nodes, cfg.rf
        )));
    }
    let f = cfg.faults;
    let pct =
        cfg.publish_pct + f.drop_pct + f.duplicate_pct + f.crash_pct + f.restart_pct + f.cut_pct;
    if pct > 100 {
        return Err(SimError::Config(format!(
            "publish {} + drop {} + duplicate {} + crash {} + restart {} + cut {} = {pct} percent of steps, more than 100",
            cfg.publish_pct, f.drop_pct, f.duplicate_pct, f.crash_pct, f.restart_pct, f.cut_pct
        )));
    }
    if f.torn_pct > 100 {
        return Err(SimError::Config(format!(
            "torn {} percent of kills, more than 100",
            f.torn_pct
        )));
    }
    let tmp = tempfile::tempdir().map_err(SimError::Dir)?;
    // The ledger lives on this thread, which runs every node of the run.
    let _ledger = (cfg.power_losses > 0 || cfg.skip_sync.is_some())
        .then(|| crate::fsutil::ledger::install(cfg.skip_sync));
    let mut sim = Sim::new(cfg, tmp.path())?;
    let verdict = match sim.run_phases() {
        Ok(()) => sim.check_disks()?,
        Err(f) => Err(f),
    };
    // A power loss that took what a node held is reported last, so the
    // checks of what the protocol made of it stay visible first.
    let verdict = verdict.and(sim.durable_lost.take().map_or(Ok(()), Err));
    let unconfirmed_lost = sim.unconfirmed();
    let w = sim.world;
    Ok(SimReport {
        seed: cfg.seed,
        steps: sim.steps,
        messages: w.sent,
        delivered: sim.delivered,
        published: sim.published,
        confirmed: sim.confirmed.keys().next_back().copied().unwrap_or(0),
        crashes: sim.crashes,
        drops: sim.drops,
        duplicates: sim.duplicates,
        cuts: sim.cuts,
        torn_tails: sim.torn_written,
        handoffs: sim.handoffs,
        moves: sim.moves,
        owner_kills: sim.owner_kills,
        suspicions: sim.suspicions,
        disk_losses: sim.disk_losses,
        replacements: sim.replacements,
        swap_backs: sim.swap_backs,
        power_losses: sim.power_losses,
        owner_power_losses: sim.owner_power_losses,
        power_bytes_lost: sim.power_bytes_lost,
        eager_attempts: sim.eager_attempts,
        eager_accepted: sim.eager_accepted,
        retries: sim.retries,
        retries_held: sim.retries_held,
        final_epoch: sim.final_epoch,
        unconfirmed_lost,
        verdict,
        trace: w.trace.unwrap_or_default(),
        trace_events: w.trace_events,
    })
}

struct Sim<'a> {
    cfg: &'a SimConfig,
    world: World,
    store: PathBuf,
    dirs: Vec<PathBuf>,
    /// `None` while the process is down.
    nodes: Vec<Option<Node>>,
    next_tick_ms: Vec<u64>,
    /// Every entry the owner reported confirmed, by position.
    confirmed: BTreeMap<Position, Entry>,
    steps: u64,
    delivered: u64,
    published: u64,
    crashes: u64,
    drops: u64,
    duplicates: u64,
    cuts: u64,
    torn_written: u64,
    torn_cut: u64,
    /// Torn records whose disk was lost before a restart could cut them.
    torn_lost: u64,
    /// Node `i` was killed inside an append and has not started since.
    torn_unseen: Vec<bool>,
    handoffs: u64,
    moves: u64,
    owner_kills: u64,
    suspicions: u64,
    disk_losses: u64,
    replacements: u64,
    /// The controller's lease on a swapped move's target.
    target_watch: crate::controller::decide::TargetWatch,
    swap_backs: u64,
    power_losses: u64,
    owner_power_losses: u64,
    power_bytes_lost: u64,
    /// What each node held as durable when its process was killed, for a
    /// power loss while it is down.
    held_at_kill: Vec<Option<livemove_impl::replica::DurableLog>>,
    /// The first power loss that took what a node held as durable.
    durable_lost: Option<SimFailure>,
    eager_attempts: u64,
    eager_accepted: u64,
    retries: u64,
    retries_held: u64,
    /// Each node's current disk incarnation (its data directory's): 0, or
    /// 1 once its disk was lost (at most once: the spec's two disk
    /// generations).
    disk_of: Vec<u32>,
    /// The record's owner whose process is down, and since when (the
    /// controller's lease on it).
    owner_down_since: Option<(NodeId, u64)>,
    /// The record's epoch, read when the run ends.
    final_epoch: u64,
    /// A position two owners confirmed with different entries: the first
    /// one seen, the entry confirmed first and the other.
    forked: Option<(Position, Entry, Entry)>,
    /// Cut links: two nodes and the time the cut heals.
    cut_until_ms: Vec<(NodeId, NodeId, u64)>,
}

impl<'a> Sim<'a> {
    fn new(cfg: &'a SimConfig, root: &Path) -> Result<Self, SimError> {
        let store = root.join("record.json");
        let owner = StorageId::first(NodeId(1));
        let followers = (2..=cfg.rf).map(|n| StorageId::first(NodeId(n)));
        let mut cp = FileControlPlane::open(&store).map_err(SimError::Control)?;
        cp.set_mutants(cfg.mutants);
        cp.create(&Record::initial(owner, followers, cfg.rf))
            .map_err(SimError::Control)?;
        let dirs: Vec<PathBuf> = (1..=cfg.nodes)
            .map(|n| root.join(format!("n{n}")))
            .collect();
        let mut sim = Sim {
            cfg,
            world: World::new(cfg.seed, cfg.faults.delay_ms_max, cfg.trace),
            store,
            dirs,
            nodes: (0..cfg.nodes).map(|_| None).collect(),
            next_tick_ms: vec![0; usize::from(cfg.nodes)],
            confirmed: BTreeMap::new(),
            steps: 0,
            delivered: 0,
            published: 0,
            crashes: 0,
            drops: 0,
            duplicates: 0,
            cuts: 0,
            torn_written: 0,
            torn_cut: 0,
            torn_lost: 0,
            torn_unseen: vec![false; usize::from(cfg.nodes)],
            handoffs: 0,
            moves: 0,
            owner_kills: 0,
            suspicions: 0,
            disk_losses: 0,
            replacements: 0,
            disk_of: vec![0; usize::from(cfg.nodes)],
            target_watch: Default::default(),
            swap_backs: 0,
            power_losses: 0,
            owner_power_losses: 0,
            power_bytes_lost: 0,
            held_at_kill: vec![None; usize::from(cfg.nodes)],
            durable_lost: None,
            eager_attempts: 0,
            eager_accepted: 0,
            retries: 0,
            retries_held: 0,
            owner_down_since: None,
            final_epoch: 0,
            forked: None,
            cut_until_ms: Vec::new(),
        };
        for dir in &sim.dirs {
            // Each data directory stands for a disk: it exists before the
            // node first starts, and a power loss never takes it.
            std::fs::create_dir_all(dir)
                .and_then(|()| crate::fsutil::ledger::watch(dir))
                .map_err(SimError::Dir)?;
        }
        for i in 0..usize::from(cfg.nodes) {
            if let Err(e) = sim.boot(i) {
                return Err(SimError::Config(format!("first start: {e}")));
            }
        }
        Ok(sim)
    }

    fn boot(&mut self, i: usize) -> Result<(), NodeError> {
        let id = NodeId(i as u8 + 1);
        let mut cp = FileControlPlane::open(&self.store)
            .map_err(|source| NodeError::Control { node: id, source })?;
        cp.set_mutants(self.cfg.mutants);
        let cfg = NodeConfig {
            id,
            data: self.dirs[i].clone(),
            mutants: self.cfg.mutants,
            resend_ms: 0,
            reread_ticks: crate::node::REREAD_TICKS,
            crash: None,
        };
        let node = Node::boot(cfg, Box::new(cp), &mut self.world)?;
        if node.torn_tail().is_some() {
            self.torn_cut += 1;
        }
        self.torn_unseen[i] = false;
        self.nodes[i] = Some(node);
        self.next_tick_ms[i] = self.world.now_ms + TICK_MS;
        Ok(())
    }

    fn run_phases(&mut self) -> Result<(), SimFailure> {
        let failed = |e: NodeError| SimFailure::NodeFailed {
            reason: e.to_string(),
        };
        for _ in 0..self.cfg.fault_steps {
            self.fault_step().map_err(failed)?;
        }
        for heal in 0..self.cfg.heal_steps_max {
            if self.healed() {
                // Every process came back, so every torn record was seen
                // (or lost with its disk).
                if self.torn_cut + self.torn_lost != self.torn_written {
                    return Err(SimFailure::TornTailKept {
                        written: self.torn_written,
                        cut: self.torn_cut,
                    });
                }
                return Ok(());
            }
            self.heal_step().map_err(failed)?;
            if heal + 1 == self.cfg.heal_steps_max && !self.healed() {
                return Err(SimFailure::NotHealed {
                    steps: heal + 1,
                    confirmed: self.owner_confirmed(),
                    published: self.published,
                });
            }
        }
        Ok(())
    }

    /// One step of the fault phase: the seed picks publish, drop,
    /// duplicate, crash, restart or a delivery.
    fn fault_step(&mut self) -> Result<(), NodeError> {
        self.advance();
        let f = self.cfg.faults;
        let mut r = self.world.rng.below(100);
        let mut pick = |pct: u64| {
            let hit = r < pct;
            r = r.saturating_sub(pct);
            hit
        };
        if pick(self.cfg.publish_pct) {
            if self.published < self.cfg.publish_max {
                self.publish()?;
            }
        } else if pick(f.drop_pct) {
            if let Some(msg) = self.world.take_any() {
                self.drops += 1;
                self.world.trace_event(Event::Drop { msg });
            }
        } else if pick(f.duplicate_pct) {
            self.duplicate();
        } else if pick(f.crash_pct) {
            self.crash_follower();
        } else if pick(f.restart_pct) {
            self.restart_one()?;
        } else if pick(f.cut_pct) {
            self.cut();
        } else if self.owner_kills < self.cfg.recoveries && pick(OWNER_KILL_PCT) {
            self.crash_owner()?;
        } else if self.suspicions < self.cfg.suspicions && pick(SUSPECT_PCT) {
            self.suspect_owner()?;
        } else if self.eager_left() && pick(eager::EAGER_PCT) {
            self.eager_write()?;
        } else if self.handoffs < self.cfg.handoffs && pick(HANDOFF_PCT) {
            self.hand_off()?;
        } else if self.moves < self.cfg.moves && pick(MOVE_PCT) {
            self.start_move()?;
        } else if self.disk_losses > 0 && pick(MOVE_PCT) {
            self.replace_lost()?;
        } else if self.power_losses < self.cfg.power_losses && pick(POWER_LOSS_PCT) {
            self.power_loss()?;
        } else if self.retries < self.cfg.publish_retries && self.published > 0 && pick(RETRY_PCT) {
            self.retry_publish()?;
        } else {
            self.deliver()?;
        }
        self.ticks()?;
        if self.cfg.disk_losses > 0 {
            self.swap_back_gone_target()?;
        }
        self.detect_owner_down()
    }

    /// The owner serving at the record's epoch with admission open starts
    /// a handoff to a seeded follower that is up.
    fn hand_off(&mut self) -> Result<(), NodeError> {
        let record = self.read_record()?;
        let up: Vec<NodeId> = record
            .followers
            .iter()
            .filter(|f| {
                !record.suspended.contains(f)
                    && self.nodes[f.node.index()].as_ref().is_some_and(|x| {
                        !x.is_restarting() && x.serving().is_none() && x.storage() == **f
                    })
            })
            .map(|f| f.node)
            .collect();
        let Some(owner) = self.nodes[record.owner.node.index()].as_mut() else {
            return Ok(());
        };
        if up.is_empty() {
            return Ok(());
        }
        let to = up[self.world.rng.below(up.len() as u64) as usize];
        if owner.hand_off(to, &mut self.world)? {
            self.handoffs += 1;
        }
        Ok(())
    }

    /// At a step when every process is up and committed, a seeded node
    /// the record assigns nothing joins as a planned move's learner.
    fn start_move(&mut self) -> Result<(), NodeError> {
        if self
            .nodes
            .iter()
            .any(|n| n.as_ref().is_none_or(|n| n.is_restarting()))
        {
            return Ok(());
        }
        let record = self.read_record()?;
        // A follower whose disk is lost is replaced, not moved away from:
        // the controller's move then replaces it (`replace_lost`).
        if record.followers.iter().any(|f| !self.is_current(*f)) {
            return Ok(());
        }
        let free: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                self.nodes[i]
                    .as_ref()
                    .is_some_and(|n| !record.is_assigned(n.storage()))
            })
            .collect();
        if free.is_empty() {
            return Ok(());
        }
        let i = free[self.world.rng.below(free.len() as u64) as usize];
        let node = self.nodes[i].as_mut().expect("every process is up");
        if node.join(&mut self.world)? {
            self.moves += 1;
        }
        Ok(())
    }

    fn read_record(&self) -> Result<Record, NodeError> {
        FileControlPlane::open(&self.store)
            .and_then(|mut cp| cp.read())
            .map_err(|source| NodeError::Control {
                node: NodeId(1),
                source,
            })
    }

    /// One step of the healing phase: every killed process comes back, the
    /// cuts heal, the network delivers in a seeded order and loses nothing.
    fn heal_step(&mut self) -> Result<(), NodeError> {
        self.advance();
        self.cut_until_ms.clear();
        for i in 0..self.nodes.len() {
            if self.nodes[i].is_none() {
                self.restart(i)?;
            }
        }
        if self.disk_losses > 0 {
            self.replace_lost()?;
        }
        self.deliver()?;
        self.ticks()?;
        if self.cfg.disk_losses > 0 {
            self.swap_back_gone_target()?;
        }
        self.detect_owner_down()
    }

    fn advance(&mut self) {
        self.steps += 1;
        self.world.now_ms += 1 + self.world.rng.below(STEP_MS_MAX);
    }

    /// Healed: every process up and its restart committed, every
    /// published message confirmed, and no handoff pending (only read
    /// when the rest holds: with handoffs only).
    fn healed(&self) -> bool {
        let all_up = self
            .nodes
            .iter()
            .all(|n| n.as_ref().is_some_and(|n| !n.is_restarting()));
        // A power loss may strike the owner, which then needs a recovery
        // as an owner kill does.
        if self.cfg.recoveries > 0 || self.cfg.suspicions > 0 || self.owner_kills > 0 {
            return all_up && self.recovered();
        }
        all_up
            && self.owner_confirmed() == self.published
            && (self.cfg.handoffs == 0 && self.cfg.moves == 0 && self.disk_losses == 0
                || self.read_record().is_ok_and(|r| {
                    r.handoff.is_none() && r.move_task.is_none() && !self.names_lost(&r)
                }))
    }

    /// Whether the record still names an instance whose disk is lost.
    fn names_lost(&self, r: &Record) -> bool {
        r.assigned().into_iter().any(|s| !self.is_current(s))
    }

    /// The node serving at the highest epoch (the lowest such node).
    fn owner(&self) -> Option<usize> {
        let mut best: Option<(Epoch, usize)> = None;
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(s) = n.as_ref().and_then(|n| n.serving()) {
                if best.is_none_or(|(e, _)| s.epoch() > e) {
                    best = Some((s.epoch(), i));
                }
            }
        }
        best.map(|(_, i)| i)
    }

    fn owner_confirmed(&self) -> Position {
        self.owner()
            .and_then(|i| self.nodes[i].as_ref())
            .and_then(|n| n.serving())
            .map_or(0, |s| s.confirmed_tail())
    }

    /// Publish on a node that serves with admission open (`publish_to`).
    fn publish(&mut self) -> Result<(), NodeError> {
        let key = self.published + 1;
        let i = self.publish_to();
        let Some(owner) = self.nodes[i].as_mut() else {
            return Ok(());
        };
        match owner.publish(key, &mut self.world) {
            Ok(_) => self.published += 1,
            Err(NodeError::NotServing { .. } | NodeError::Refused { .. }) => {}
            Err(e) => return Err(e),
        }
        self.note_confirms();
        Ok(())
    }

    /// The producer sends its newest message again, with its key, as if
    /// the answer to its publish had been lost: to a node that serves with
    /// admission open (`publish_to`), which answers from its history or
    /// appends it (`Node::publish_retry`). A node that does not serve, or
    /// refuses, changes nothing, and the retry waits for a later step.
    fn retry_publish(&mut self) -> Result<(), NodeError> {
        let key = self.published;
        let i = self.publish_to();
        let Some(owner) = self.nodes[i].as_mut() else {
            return Ok(());
        };
        match owner.publish_retry(key, &mut self.world) {
            Ok(r) => {
                self.retries += 1;
                self.retries_held += u64::from(r.held);
            }
            Err(NodeError::NotServing { .. } | NodeError::Refused { .. }) => {}
            Err(e) => return Err(e),
        }
        self.note_confirms();
        Ok(())
    }

    /// Where a publish or a retry goes: a node that serves with admission
    /// open, the record's owner, or, after a handoff's commit, an old owner
    /// a stale client still reaches (seeded, only when there are two).
    fn publish_to(&mut self) -> usize {
        let open: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                self.nodes[i]
                    .as_ref()
                    .and_then(|n| n.serving())
                    .is_some_and(|s| s.admission_open())
            })
            .collect();
        match open.len() {
            0 => self.owner().unwrap_or(0),
            1 => open[0],
            k => open[self.world.rng.below(k as u64) as usize],
        }
    }

    /// Deliver one due message; one for a process that is down, or across
    /// a cut link, is lost.
    fn deliver(&mut self) -> Result<(), NodeError> {
        let Some(msg) = self.world.take_due() else {
            return Ok(());
        };
        // No controller runs in the simulator yet, and no node sends to it:
        // a report to it would be lost like a message to a process that
        // is down.
        let target = match msg.dest() {
            Endpoint::Node(n) if !self.is_cut(&msg) => self.nodes[n.index()].as_mut(),
            _ => None,
        };
        match target {
            Some(n) => {
                self.delivered += 1;
                n.on_msg(msg, &mut self.world)?;
            }
            None => {
                self.drops += 1;
                self.world.trace_event(Event::Drop { msg });
            }
        }
        self.note_confirms();
        Ok(())
    }

    fn ticks(&mut self) -> Result<(), NodeError> {
        for i in 0..self.nodes.len() {
            if self.next_tick_ms[i] > self.world.now_ms {
                continue;
            }
            self.next_tick_ms[i] = self.world.now_ms + TICK_MS;
            if let Some(n) = self.nodes[i].as_mut() {
                n.on_tick(&mut self.world)?;
            }
        }
        self.note_confirms();
        Ok(())
    }

    /// Remember every entry an owner has confirmed, as it was when
    /// confirmed: the final check looks for exactly these on the disks. An
    /// owner that confirms a different entry at a position confirmed before
    /// (two owners at once) is remembered too, for the final check.
    fn note_confirms(&mut self) {
        for n in self.nodes.iter().flatten() {
            let Some(s) = n.serving() else {
                continue;
            };
            for pos in 1..=s.confirmed_tail() {
                let entry = *n
                    .replica()
                    .entry(pos)
                    .expect("invariant broken: an owner confirmed an entry it does not hold");
                match self.confirmed.get(&pos) {
                    None => {
                        self.confirmed.insert(pos, entry);
                    }
                    Some(first) if *first != entry && self.forked.is_none() => {
                        self.forked = Some((pos, *first, entry));
                    }
                    Some(_) => {}
                }
            }
        }
    }

    /// Published messages (keys 1 to `published`) no owner ever confirmed
    /// at any position. Counted by key, not by position: under a mutant a
    /// message may be confirmed at two positions, or two owners may
    /// confirm different messages at one.
    fn unconfirmed(&self) -> u64 {
        let confirmed: std::collections::BTreeSet<u64> = self
            .confirmed
            .values()
            .filter_map(|e| match e.op {
                livemove_impl::Op::Put { key, .. } => Some(key),
                _ => None,
            })
            .collect();
        (1..=self.published)
            .filter(|k| !confirmed.contains(k))
            .count() as u64
    }

    /// Stop every process and read the disks back.
    fn check_disks(&mut self) -> Result<Result<(), SimFailure>, SimError> {
        self.nodes.iter_mut().for_each(|n| *n = None);
        let mut cp = FileControlPlane::open(&self.store).map_err(SimError::Control)?;
        let record = cp.read().map_err(SimError::Control)?;
        self.final_epoch = record.epoch.0;
        let mut disks = BTreeMap::new();
        for (i, dir) in self.dirs.iter().enumerate() {
            let node = NodeId(i as u8 + 1);
            let (_, recovered) =
                DiskLog::open(dir).map_err(|source| SimError::Disk { node, source })?;
            disks.insert(self.current(i), recovered.state);
        }
        if let Some((pos, first, second)) = self.forked {
            return Ok(Err(SimFailure::ForkedConfirm { pos, first, second }));
        }
        Ok(check::check_durable(&self.confirmed, &record, &disks))
    }
}
