//! One node hosting one partition's copy: the replica's log on the disk
//! log, and the owner's serving state while the record says this node owns
//! the partition.
//!
//! The node makes no protocol decision. It feeds each delivered message to
//! the implementation's machines (`Replica::receive`, `Serving::on_ack`,
//! `Serving::on_suspend`), makes their `Persist` commands durable before it
//! sends anything that depends on them, and sends what they output
//! (`Serving::next_append`, the replica's acknowledgement or refusal). Its
//! timer resends the next append to every copy, because any message may be
//! lost. Its environment (`Env`) is the only thing the TCP driver and the
//! simulator do differently.
//!
//! Inputs: `boot`, `on_msg`, `on_tick`, `publish`, `publish_batch`,
//! `publish_retry` (a producer's publish sent again, answered from the
//! history when it holds the key, `retry.rs`),
//! `settle` (the consumer's delete of the oldest delivered message,
//! `consume.rs`),
//! `hand_off` (`handoff.rs`), `join` (`moves.rs`); on its tick a node also
//! takes its part in a pending recovery (`recovery.rs`). Getters: `id`, `inc`,
//! `replica`, `serving`, `is_restarting`, `is_suspended`, `torn_tail`,
//! `server_view` (what a routed request is answered from).
//!
//! Guarded writes the node makes itself, as the in-memory cluster's actions
//! do until the controller process exists: a follower's suspension at its
//! restart (`Write::Suspend`, note 1 "Restarted followers"), and the
//! re-admission of a caught-up suspended follower, written by the owner's
//! node, which holds both facts the guard needs (the copy's acknowledged
//! prefix and its own confirmed tail). The owner looks for such copies in
//! the record on every tick, not only when a marked acknowledgement
//! arrives: the simulator found seeds (112, 194) where the suspension
//! notice was lost and the copy, already caught up, never acknowledged
//! again, so a second restarted follower waited for ever.

mod consume;
mod env;
mod error;
mod handoff;
mod inbox;
mod moves;
pub(crate) use moves::swap_leaving;
pub mod recovery;
mod retry;
pub mod storage;
mod writes;

pub use consume::Settled;
pub use env::Env;
pub use error::NodeError;
pub use retry::Retry;

use crate::control::{BatchCrash, ControlPlane};
use crate::disk_log::{DiskLog, TornTail};
use crate::trace::Event;
use env::emit;
use livemove_impl::owner::{AckMsg, RecordView, Serving};
use livemove_impl::replica::{Offer, Persist, Replica};
use livemove_impl::store::{Record, StoreError};
use livemove_impl::{Entry, Epoch, Msg, Mutant, Mutants, NodeId, Op, Position, StorageId};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// How a node is started.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// The node.
    pub id: NodeId,
    /// Its data directory: the disk log and the incarnation file.
    pub data: PathBuf,
    /// Mutants switched on in the implementation's machines.
    pub mutants: Mutants,
    /// An owner resends the same append to a copy only this long after it
    /// last sent it (0: on every tick and every publish, as the
    /// simulator's virtual network does). An acknowledgement that moves a
    /// copy forward still sends the next append at once; the resend is
    /// for what was lost. Without it a copy that lags under load draws an
    /// append per tick and per publish, and an acknowledgement for each:
    /// queues of duplicates that slowed a restarted follower's catch-up
    /// below the clients' publish rate, so it was never re-admitted.
    pub resend_ms: u64,
    /// A tick reads the record from the control plane at least once in
    /// this many ticks. On the ticks between, when the control plane knows
    /// the record unchanged since the node last had it
    /// (`ControlPlane::known_unchanged`: etcd's watch, the file's identity),
    /// the tick reuses the record the node holds. The re-read bounds how
    /// long a lost or late notification can keep a change from the node;
    /// it only delays: every write is guarded by the version. 1 (or 0)
    /// reads on every tick without asking. The TCP node's is
    /// `REREAD_TICKS`.
    pub reread_ticks: u32,
    /// Tests only: the process dies inside the `Persist` batch this crash
    /// point names (`--crash-at persist:K`); `None` in operation.
    pub crash: Option<BatchCrash>,
}

/// The TCP node's resend interval, in ticks.
pub const RESEND_TICKS: u32 = 5;

/// The TCP node's safety re-read of the record, in ticks (one second at
/// the 20 ms tick): a change whose notification was lost reaches the node
/// within this many ticks. Reading on every tick through etcd's gateway
/// was one request per partition per tick per node, which starved the
/// 8-partition demo's debug build.
pub const REREAD_TICKS: u32 = 50;

/// A running node.
pub struct Node {
    id: NodeId,
    me: StorageId,
    inc: u32,
    replica: Replica,
    log: DiskLog,
    control: Box<dyn ControlPlane>,
    /// The record as last read.
    record: Record,
    serving: Option<Serving>,
    /// This copy is a follower suspended by its restart: its
    /// acknowledgements say so until it reads its re-admission.
    suspended: bool,
    /// The torn last record the disk log cut away when this process
    /// started, if there was one.
    torn_tail: Option<TornTail>,
    /// Restarted, but the suspension write was refused: the process takes
    /// nothing until it commits (the model's `Restart` is one step).
    restarting: bool,
    /// Back on an empty disk: the record is told every earlier instance of
    /// this node it still names is lost (`Write::MarkLost`) before the
    /// restart commits.
    fresh_disk: bool,
    mutants: Mutants,
    /// Per copy, the append position last sent and when (ms), for
    /// `NodeConfig::resend_ms`.
    sent: BTreeMap<StorageId, (Position, u64)>,
    resend_ms: u64,
    /// Inside `on_tick`, and whether the record was read (or known
    /// unchanged) in this tick, with no write of this node refused since:
    /// the tick's steps then share one read. Each step used to read the
    /// record itself, three reads a tick per partition, which through
    /// etcd's gateway took the node's task from its messages.
    in_tick: bool,
    tick_read: bool,
    /// A guarded write of this node was refused since it last read: the
    /// record changed under it, and the next read goes to the control
    /// plane whatever it says of changes.
    refused: bool,
    /// Ticks since the last one that read the record from the control
    /// plane, and how many may pass (`NodeConfig::reread_ticks`).
    ticks_unread: u32,
    reread_ticks: u32,
    crash: Option<BatchCrash>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.id)
            .field("inc", &self.inc)
            .field("replica", &self.replica)
            .field("serving", &self.serving)
            .field("suspended", &self.suspended)
            .field("restarting", &self.restarting)
            .finish()
    }
}

impl Node {
    /// Start on `cfg.data`: open the log (cutting a torn tail), raise the
    /// incarnation, read the record. On a first start a copy the record
    /// assigns learns the record's epoch and the record's owner activates
    /// at it; a restart is traced, and a follower back on its disk asks to
    /// be suspended and tells the record's owner so.
    ///
    /// A restarted owner does not serve again: its serving state was
    /// volatile, and only a recovery (a new epoch) may make a node serve
    /// after it.
    pub fn boot(
        cfg: NodeConfig,
        mut control: Box<dyn ControlPlane>,
        env: &mut dyn Env,
    ) -> Result<Node, NodeError> {
        let id = cfg.id;
        let (log, recovered) =
            DiskLog::open(&cfg.data).map_err(|source| NodeError::Disk { node: id, source })?;
        let disk_path = cfg.data.join(storage::DISK_FILE);
        let storage_error = |source| NodeError::StorageFile {
            node: id,
            path: disk_path.clone(),
            source,
        };
        let held = storage::read(&cfg.data).map_err(storage_error)?;
        let d = &recovered.state;
        if held.is_none() && (!d.entries.is_empty() || d.fence > Epoch(0) || d.sealed.is_some()) {
            return Err(NodeError::MissingStorageId {
                node: id,
                path: disk_path,
            });
        }
        let reg = control
            .register(id, held)
            .map_err(|source| NodeError::Control { node: id, source })?;
        if held.is_none() {
            storage::write(&cfg.data, reg.disk).map_err(storage_error)?;
        }
        let record = control
            .read()
            .map_err(|source| NodeError::Control { node: id, source })?;
        let me = StorageId {
            node: id,
            disk: reg.disk,
        };
        // A start after the first: on the node's disk, or on an empty one
        // (the disk was lost), which makes it a new storage instance with
        // an empty log that the record does not name yet.
        let restarted = (reg.inc > 0).then_some(held.is_none());
        let mut node = Node {
            id,
            me,
            inc: reg.inc,
            replica: Replica::restore(me, recovered.state),
            log,
            control,
            record,
            serving: None,
            suspended: false,
            torn_tail: recovered.torn_tail,
            restarting: false,
            fresh_disk: false,
            mutants: cfg.mutants,
            sent: BTreeMap::new(),
            resend_ms: cfg.resend_ms,
            in_tick: false,
            tick_read: false,
            refused: false,
            ticks_unread: 0,
            reread_ticks: cfg.reread_ticks.max(1),
            crash: cfg.crash,
        };
        match restarted {
            Some(false) => {
                node.restarting = true;
                node.try_restart(env)?;
                return Ok(node);
            }
            Some(true) => {
                node.restarting = true;
                node.fresh_disk = true;
                node.try_restart(env)?;
                return Ok(node);
            }
            None => {}
        }
        if node.record.is_assigned(me) {
            let persist = node.replica.observe_epoch(node.record.epoch);
            node.persist(&persist)?;
        }
        // Only the epoch-1 owner activates by itself, with nothing
        // confirmed yet; a later owner activates through a handoff or a
        // recovery, which the controller drives.
        let r = &node.record;
        if r.owner == me && r.epoch == Epoch(1) && r.recovery.is_none() {
            let s = Serving::activate(me, r.epoch, r.counted(), r.confirm_w, 0, view_of(r));
            node.serving = Some(s.networked());
        }
        Ok(node)
    }

    /// The node.
    pub fn id(&self) -> NodeId {
        self.id
    }
    /// The process incarnation.
    pub fn inc(&self) -> u32 {
        self.inc
    }
    /// The storage instance this process runs on.
    pub fn storage(&self) -> StorageId {
        self.me
    }
    /// The replica (its log mirrors the disk's).
    pub fn replica(&self) -> &Replica {
        &self.replica
    }
    /// The serving state, while the node owns the partition.
    pub fn serving(&self) -> Option<&Serving> {
        self.serving.as_ref()
    }
    /// Whether the restart waits for its suspension to commit.
    pub fn is_restarting(&self) -> bool {
        self.restarting
    }
    /// Whether this copy believes it is a suspended follower.
    pub fn is_suspended(&self) -> bool {
        self.suspended
    }
    /// The torn last record cut away at this start, if any.
    pub fn torn_tail(&self) -> Option<TornTail> {
        self.torn_tail
    }

    /// Publish message `key`: the owner appends it at its epoch, durably,
    /// then ships it to every copy. Returns its position.
    pub fn publish(&mut self, key: u64, env: &mut dyn Env) -> Result<Position, NodeError> {
        self.publish_batch(&[key], env)?
            .pop()
            .expect("invariant broken: publish_batch answers every key")
    }

    /// Publish `keys` in order with one write to the disk (group commit):
    /// each is appended at the owner's epoch, the batch is made durable
    /// once, then each is traced and shipped. One answer per key, in order:
    /// its position, or its refusal (not serving, admission closed), which
    /// leaves the others alone. `Err` only when the disk or control plane
    /// fails, and then nothing of the batch was acknowledged.
    pub fn publish_batch(
        &mut self,
        keys: &[u64],
        env: &mut dyn Env,
    ) -> Result<Vec<Result<Position, NodeError>>, NodeError> {
        let node = self.id;
        let mut answers = Vec::with_capacity(keys.len());
        let mut persist = Vec::new();
        let mut appended = Vec::new();
        for &key in keys {
            let Some(s) = self.serving.as_mut() else {
                answers.push(Err(NodeError::NotServing { node }));
                continue;
            };
            let epoch = s.epoch();
            match s.publish(&mut self.replica, Op::Put { key, value: key }, self.mutants) {
                Ok((pos, p)) => {
                    persist.extend(p);
                    appended.push((pos, epoch, key));
                    answers.push(Ok(pos));
                }
                Err(source) => answers.push(Err(NodeError::Refused { node, source })),
            }
        }
        if appended.is_empty() {
            return Ok(answers);
        }
        self.persist(&persist)?;
        for (pos, epoch, key) in appended {
            emit(env, || Event::Publish {
                node,
                pos,
                epoch,
                key,
            });
        }
        self.confirm_and_ship(env);
        Ok(answers)
    }

    /// The resend timer: the owner re-admits caught-up suspended copies
    /// and ships every copy the entry after its acknowledged prefix; a
    /// suspended copy reads the record for its re-admission; a restart
    /// whose suspension was refused tries again.
    pub fn on_tick(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        self.in_tick = true;
        self.tick_read = false;
        self.ticks_unread = self.ticks_unread.saturating_add(1);
        let done = self.tick(env);
        self.in_tick = false;
        self.tick_read = false;
        done
    }

    fn tick(&mut self, env: &mut dyn Env) -> Result<(), NodeError> {
        if self.restarting {
            return self.try_restart(env);
        }
        if self.suspended {
            self.record = self.read_record()?;
            self.suspended = self.record.suspended.contains(&self.me);
            // The copy's own knowledge changed: the acknowledgements it
            // sends from now on are marked admitted, while ones already on
            // the wire still say suspended (finding 22).
            if !self.suspended {
                let node = self.id;
                emit(env, || Event::NoticeRejoin { node });
            }
        }
        self.drive_recovery(env)?;
        if self.serving.is_some() {
            self.readmit_caught_up(env)?;
            self.notice_readmission(env);
            if let Some(s) = self.serving.as_mut() {
                s.observe(view_of(&self.record));
            }
            self.drive_handoff(env)?;
            self.drive_move(env)?;
            self.ship_to_all(env);
        } else if !self.suspended {
            self.activate_if_committed(env)?;
            self.open_if_owner_restarted(env)?;
        }
        Ok(())
    }

    /// Handle one delivered message.
    pub fn on_msg(&mut self, msg: Msg, env: &mut dyn Env) -> Result<(), NodeError> {
        if self.restarting {
            // Not up yet in the protocol's sense: the message is lost.
            return Ok(());
        }
        let len = match msg {
            Msg::Append { to, .. } if to == self.me => Some(self.replica.len()),
            _ => None,
        };
        emit(env, || Event::Deliver { msg, len });
        match msg {
            Msg::Append {
                from,
                to,
                epoch,
                pos,
                prev,
                entry,
            } => self.on_append(
                from,
                to,
                Offer {
                    epoch,
                    pos,
                    prev,
                    entry,
                },
                env,
            )?,
            Msg::Ack {
                epoch,
                from,
                inc,
                pos,
                entry,
                admitted,
                ..
            } => self.on_ack(
                AckMsg {
                    epoch,
                    from,
                    inc,
                    pos,
                    entry,
                    admitted,
                },
                env,
            )?,
            Msg::Refuse { epoch, .. } => {
                if !self.mutants.on(Mutant::RefusalIgnored) {
                    self.learn_epoch(epoch)?;
                }
            }
            // Addressed to the controller, which is no node: a node that
            // gets one was sent it by mistake, and it changes nothing here.
            Msg::Progress { .. } => {
                tracing::warn!(node = %self.id, %msg, "a progress report reached a node");
            }
            Msg::Suspend { from, inc, .. } => {
                if let Some(s) = self.serving.as_mut() {
                    s.on_suspend(from, inc);
                }
            }
        }
        Ok(())
    }

    /// Copies the owner ships to: its counted set and every other copy the
    /// record assigns (learners, a leaving copy).
    fn peers(&self) -> Vec<StorageId> {
        let Some(s) = self.serving.as_ref() else {
            return Vec::new();
        };
        let mut to: BTreeSet<StorageId> = s.counted().clone();
        to.extend(self.record.assigned());
        to.remove(&self.me);
        // A lost instance's disk is gone: nothing sent there arrives.
        to.retain(|x| !self.record.lost.contains(x));
        to.into_iter().collect()
    }

    /// After appending: confirm what W copies hold, then ship every copy
    /// its next append.
    fn confirm_and_ship(&mut self, env: &mut dyn Env) {
        self.try_confirm(env);
        self.ship_to_all(env);
    }

    /// Send every copy the owner ships to its next append.
    fn ship_to_all(&mut self, env: &mut dyn Env) {
        for to in self.peers() {
            self.send_next(to, env);
        }
    }

    /// Send `to` the owner's next append, if there is one.
    fn send_next(&mut self, to: StorageId, env: &mut dyn Env) {
        let Some(s) = self.serving.as_ref() else {
            return;
        };
        // A fenced owner sends nothing: its epoch is over.
        let own = &self.replica;
        if own.fence() > s.epoch() || own.sealed().is_some_and(|x| x >= s.epoch()) {
            return;
        }

        if let Ok(msg) = s.next_append(own, self.id, to) {
            if let Msg::Append { pos, .. } = msg {
                let now = env.now_ms();
                if self.resend_ms > 0 {
                    let again = self.sent.get(&to).is_some_and(|&(p, at)| {
                        p == pos && now.saturating_sub(at) < self.resend_ms
                    });
                    if again {
                        return;
                    }
                    self.sent.insert(to, (pos, now));
                }
                let from = self.id;
                emit(env, || Event::Replicate {
                    from,
                    to: to.node,
                    to_disk: to.disk,
                    pos,
                });
            }
            env.send(msg);
        }
    }

    fn try_confirm(&mut self, env: &mut dyn Env) {
        let Some(s) = self.serving.as_mut() else {
            return;
        };
        if let Ok(tail) = s.confirm(&self.replica, self.mutants) {
            let node = self.id;
            emit(env, || Event::Confirm { node, tail });
        }
    }

    fn ack(&self, owner: NodeId, epoch: Epoch, pos: Position, entry: Entry, admitted: bool) -> Msg {
        Msg::Ack {
            to: owner,
            epoch,
            from: self.me,
            inc: self.inc,
            pos,
            entry,
            admitted,
        }
    }

    /// A node that took an append of `epoch` stops serving at an older one.
    fn stop_if_older(&mut self, epoch: Epoch) {
        if self.serving.as_ref().is_some_and(|s| s.epoch() < epoch) {
            tracing::info!(node = %self.id, epoch = epoch.0, "saw a newer epoch: stops serving");
            self.serving = None;
        }
    }

    /// A refused owner learns the newer epoch and stops serving.
    fn learn_epoch(&mut self, epoch: Epoch) -> Result<(), NodeError> {
        let persist = self.replica.observe_epoch(epoch);
        self.persist(&persist)?;
        self.stop_if_older(epoch);
        Ok(())
    }

    /// Make `batch` durable, in order (a crash point may end the process
    /// between two of its steps: nothing of the batch is acknowledged
    /// before this returns).
    fn persist(&mut self, batch: &[Persist]) -> Result<(), NodeError> {
        let log = &mut self.log;
        let mut apply = |b: &[Persist]| log.apply_batch(b);
        match &self.crash {
            Some(c) => c.apply(batch, apply),
            None => apply(batch),
        }
        .map_err(|source| NodeError::Disk {
            node: self.id,
            source,
        })
    }

    /// The record, for a step that decides on it. Outside a tick (a
    /// command: a handoff, a join, a swap back) always read. In a tick,
    /// once: the tick's later steps share it; and not even once when the
    /// control plane knows the record unchanged since the node had it, no
    /// write of the node was refused since, and the safety re-read is not
    /// due (`NodeConfig::reread_ticks`).
    fn read_record(&mut self) -> Result<Record, NodeError> {
        if self.in_tick && self.tick_read {
            return Ok(self.record.clone());
        }
        let due = self.ticks_unread >= self.reread_ticks;
        if self.in_tick && !due && !self.refused && self.control.known_unchanged() {
            self.tick_read = true;
            return Ok(self.record.clone());
        }
        let r = self.control.read().map_err(|source| NodeError::Control {
            node: self.id,
            source,
        })?;
        self.refused = false;
        self.tick_read = self.in_tick;
        if self.in_tick {
            self.ticks_unread = 0;
        }
        Ok(r)
    }

    /// A guarded write of this node was refused by `source`. A stale
    /// version means the record changed under the node: the next step
    /// reads it from the control plane, in this tick or a later one,
    /// whatever the control plane says of changes. Any other refusal was
    /// judged on the version the node holds; the next step still reads it
    /// again, unless the control plane knows it unchanged.
    fn write_refused(&mut self, source: &StoreError) {
        self.tick_read = false;
        if matches!(source, StoreError::StaleVersion { .. }) {
            self.refused = true;
        }
    }
}

/// The part of the record an owner watches.
fn view_of(r: &Record) -> RecordView {
    RecordView {
        version: r.version,
        learners: r.learners.clone(),
        suspended: r.suspended.clone(),
        assigned_copies: r.assigned().len() as u8,
    }
}
