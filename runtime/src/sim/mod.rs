//! A deterministic simulation of the same node code (`crate::node`) on one
//! thread: one seed drives every choice (which due message is delivered
//! next, its delay, drops, duplicates, publishes, crashes and restarts of
//! followers on their data directories), a fault phase is followed by a
//! healing phase, and the run ends with checks read from the disks
//! (`check.rs`). The same seed gives the same trace, byte for byte.
//!
//! The disks are real: each node's disk log and incarnation file live in a
//! directory of a temporary tree, and the record in a file control plane
//! beside them, so a restart reopens what a crash left. Nothing in a run
//! reads the wall clock or a path, so neither reaches the trace.
//!
//! Why not turmoil: see `runtime/README.md`.

mod check;
mod rng;
mod world;

pub use check::SimFailure;
pub use rng::Rng;

use crate::control::{ControlError, ControlPlane, FileControlPlane};
use crate::disk_log::{DiskLog, DiskLogError};
use crate::node::{Node, NodeConfig, NodeError};
use crate::trace::Event;
use livemove_impl::store::Record;
use livemove_impl::{Entry, Mutants, NodeId, Position, StorageId};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use world::World;

/// Virtual milliseconds between two resend timer ticks of a node.
pub const TICK_MS: u64 = 20;
/// The most virtual milliseconds one step advances the clock.
pub const STEP_MS_MAX: u64 = 4;
/// Messages the network holds at once; duplicates stop at this bound.
pub const FLIGHTS_MAX: usize = 256;

const _: () = assert!(STEP_MS_MAX >= 1, "time must advance at every step");
const _: () = assert!(
    TICK_MS > STEP_MS_MAX,
    "a tick spans several steps, so deliveries happen between resends"
);

/// The fault schedule's rates, in percent of the fault phase's steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Faults {
    /// A message in flight is lost.
    pub drop_pct: u64,
    /// A message in flight will arrive once more.
    pub duplicate_pct: u64,
    /// A follower's process is killed (its disk stays).
    pub crash_pct: u64,
    /// A killed follower comes back on its data directory.
    pub restart_pct: u64,
    /// The link between two nodes is cut: every message across it is lost
    /// until the cut heals.
    pub cut_pct: u64,
    /// The longest cut, in virtual milliseconds.
    pub cut_ms_max: u64,
    /// Percent of kills that happen inside an append: part of one more
    /// record is on the disk, never acknowledged, and the restart must cut
    /// it away.
    pub torn_pct: u64,
    /// The longest delay of a message, in virtual milliseconds.
    pub delay_ms_max: u64,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            drop_pct: 8,
            duplicate_pct: 5,
            crash_pct: 2,
            restart_pct: 3,
            cut_pct: 1,
            cut_ms_max: 300,
            torn_pct: 50,
            delay_ms_max: 30,
        }
    }
}

/// One simulated run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The seed of every choice.
    pub seed: u64,
    /// Nodes; `n1` owns, `n2..n(rf)` follow.
    pub nodes: u8,
    /// The replication factor.
    pub rf: u8,
    /// Steps of the fault phase.
    pub fault_steps: u64,
    /// The most steps the healing phase may take.
    pub heal_steps_max: u64,
    /// Messages published during the fault phase, at most.
    pub publish_max: u64,
    /// Percent of fault-phase steps that publish.
    pub publish_pct: u64,
    /// The fault schedule.
    pub faults: Faults,
    /// Whether to record the NDJSON trace.
    pub trace: bool,
    /// Mutants switched on in the nodes' machines and the store.
    pub mutants: Mutants,
}

impl SimConfig {
    /// The default run for `seed`: three nodes at rf 3.
    pub fn new(seed: u64) -> Self {
        SimConfig {
            seed,
            nodes: 3,
            rf: 3,
            fault_steps: 400,
            heal_steps_max: 4000,
            publish_max: 24,
            publish_pct: 12,
            faults: Faults::default(),
            trace: false,
            mutants: Mutants::NONE,
        }
    }
}

/// What one seed did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimReport {
    /// The seed.
    pub seed: u64,
    /// Steps taken, both phases.
    pub steps: u64,
    /// Messages sent by the nodes (duplicates made by the network not counted).
    pub messages: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Messages published.
    pub published: u64,
    /// The owner's confirmed tail at the end.
    pub confirmed: Position,
    /// Follower processes killed (each one up and committed when killed).
    pub crashes: u64,
    /// Messages lost by the network (or at a process that was down).
    pub drops: u64,
    /// Messages the network duplicated.
    pub duplicates: u64,
    /// Links cut.
    pub cuts: u64,
    /// Kills inside an append (a torn last record left on the disk).
    pub torn_tails: u64,
    /// Pass, or the first failure.
    pub verdict: Result<(), SimFailure>,
    /// The NDJSON trace, if asked for.
    pub trace: Vec<u8>,
    /// Events in the trace.
    pub trace_events: u64,
}

/// A run could not be set up or its disks could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The temporary tree could not be made.
    #[error("simulation directory: {0}")]
    Dir(#[source] std::io::Error),
    /// The record could not be created or read.
    #[error("simulation control plane: {0}")]
    Control(#[source] ControlError),
    /// A disk could not be read back for the final checks.
    #[error("simulation disk of {node}: {source}")]
    Disk {
        /// The node.
        node: NodeId,
        /// What failed.
        #[source]
        source: DiskLogError,
    },
    /// The configuration cannot be simulated.
    #[error("invalid simulation config: {0}")]
    Config(String),
}

/// Run one seed.
pub fn run(cfg: &SimConfig) -> Result<SimReport, SimError> {
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
    let mut sim = Sim::new(cfg, tmp.path())?;
    let verdict = match sim.run_phases() {
        Ok(()) => sim.check_disks()?,
        Err(f) => Err(f),
    };
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
            cut_until_ms: Vec::new(),
        };
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
        };
        let node = Node::boot(cfg, Box::new(cp), &mut self.world)?;
        if node.torn_tail().is_some() {
            self.torn_cut += 1;
        }
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
                // Every process came back, so every torn record was seen.
                if self.torn_cut != self.torn_written {
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
        } else {
            self.deliver()?;
        }
        self.ticks()
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
        self.deliver()?;
        self.ticks()
    }

    fn advance(&mut self) {
        self.steps += 1;
        self.world.now_ms += 1 + self.world.rng.below(STEP_MS_MAX);
    }

    /// Healed: every process up and its restart committed, and every
    /// published message confirmed.
    fn healed(&self) -> bool {
        let all_up = self
            .nodes
            .iter()
            .all(|n| n.as_ref().is_some_and(|n| !n.is_restarting()));
        all_up && self.owner_confirmed() == self.published
    }

    fn owner_confirmed(&self) -> Position {
        self.nodes[0]
            .as_ref()
            .and_then(|n| n.serving())
            .map_or(0, |s| s.confirmed_tail())
    }

    fn publish(&mut self) -> Result<(), NodeError> {
        let key = self.published + 1;
        let Some(owner) = self.nodes[0].as_mut() else {
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

    fn duplicate(&mut self) {
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
    /// The owner is not killed: serving again after it needs a recovery,
    /// which this simulator does not drive yet.
    fn crash_follower(&mut self) {
        // A process whose restart has not committed is not up in the
        // protocol's sense; killing it again is no transition to trace.
        let up: Vec<usize> = (1..self.nodes.len())
            .filter(|&i| self.nodes[i].as_ref().is_some_and(|n| !n.is_restarting()))
            .collect();
        if up.is_empty() {
            return;
        }
        let i = up[self.world.rng.below(up.len() as u64) as usize];
        let killed = self.nodes[i].take().expect("chosen among the nodes up");
        self.crashes += 1;
        if self.world.rng.chance(self.cfg.faults.torn_pct) {
            self.tear(i, &killed);
        }
        let node = NodeId(i as u8 + 1);
        self.world.trace_event(Event::Crash { node });
    }

    /// Leave part of one more record at the end of node `i`'s segment, as
    /// an append the kill interrupted: it was never acknowledged.
    fn tear(&mut self, i: usize, killed: &Node) {
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

    fn restart_one(&mut self) -> Result<(), NodeError> {
        let down: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].is_none())
            .collect();
        if down.is_empty() {
            return Ok(());
        }
        let i = down[self.world.rng.below(down.len() as u64) as usize];
        self.restart(i)
    }

    fn restart(&mut self, i: usize) -> Result<(), NodeError> {
        self.boot(i)
    }

    /// Cut the link between two nodes for a seeded time.
    fn cut(&mut self) {
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

    fn is_cut(&mut self, msg: &livemove_impl::Msg) -> bool {
        let now = self.world.now_ms;
        self.cut_until_ms.retain(|c| c.2 > now);
        self.cut_until_ms.iter().any(|&(a, b, _)| msg.on_link(a, b))
    }

    /// Deliver one due message; one for a process that is down, or across
    /// a cut link, is lost.
    fn deliver(&mut self) -> Result<(), NodeError> {
        let Some(msg) = self.world.take_due() else {
            return Ok(());
        };
        let target = if self.is_cut(&msg) {
            None
        } else {
            self.nodes[msg.dest().index()].as_mut()
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

    /// Remember every entry the owner has confirmed, as it was when
    /// confirmed: the final check looks for exactly these on the disks.
    fn note_confirms(&mut self) {
        let Some(owner) = self.nodes[0].as_ref() else {
            return;
        };
        let Some(s) = owner.serving() else {
            return;
        };
        let from = self.confirmed.keys().next_back().copied().unwrap_or(0) + 1;
        for pos in from..=s.confirmed_tail() {
            let entry = *owner
                .replica()
                .entry(pos)
                .expect("invariant broken: the owner confirmed an entry it does not hold");
            self.confirmed.insert(pos, entry);
        }
    }

    /// Stop every process and read the disks back.
    fn check_disks(&mut self) -> Result<Result<(), SimFailure>, SimError> {
        self.nodes.iter_mut().for_each(|n| *n = None);
        let mut cp = FileControlPlane::open(&self.store).map_err(SimError::Control)?;
        let record = cp.read().map_err(SimError::Control)?;
        let mut disks = BTreeMap::new();
        for (i, dir) in self.dirs.iter().enumerate() {
            let node = NodeId(i as u8 + 1);
            let (_, recovered) =
                DiskLog::open(dir).map_err(|source| SimError::Disk { node, source })?;
            disks.insert(StorageId::first(node), recovered.state);
        }
        Ok(check::check_durable(&self.confirmed, &record, &disks))
    }
}
