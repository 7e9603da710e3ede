//! Guards and effects of every action, stated once. `apply` either returns
//! the next state or names the guard that disables the action; the checker,
//! the trace replayer and negative conformance all go through it.

mod clients;
mod consumer;
mod faults;
mod handoff;
mod measure;
mod moves;
mod network;
mod recovery;
mod retention;
mod serving;

use crate::action::Action;
use crate::config::Cfg;
use crate::mutant::Mutant;
use crate::state::*;
use crate::types::*;

pub use clients::Reply;
pub use consumer::settled_in;
pub use measure::Measure;

/// Why an action is not enabled: the name of the guard that failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Disabled(pub &'static str);

impl std::fmt::Display for Disabled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// An action's outcome: enabled, with the next state written to the
/// buffer it was given, or the guard that disables it (the buffer then
/// holds nothing of use).
pub(crate) type Step = Result<(), Disabled>;

/// Fail with the named guard unless `cond` holds.
pub(crate) fn need(cond: bool, guard: &'static str) -> Result<(), Disabled> {
    if cond {
        Ok(())
    } else {
        Err(Disabled(guard))
    }
}

/// The model of one queue partition under a configuration.
#[derive(Clone, Debug)]
pub struct MoveModel {
    pub cfg: Cfg,
    alphabet: Vec<Action>,
    /// The alphabet without the actions the config's budgets keep disabled
    /// in every state (`never_enabled`), in the same order: what the
    /// checker's hot path tries. [`MoveModel::actions`] keeps them all, so
    /// negative conformance still asks the implementation to refuse them.
    possible: Vec<Action>,
    /// Per action of `possible`, the condition it needs that its kind
    /// shares (see [`Gate`]).
    gates: Vec<Gate>,
}

/// A guard that every action of a kind (or of a kind and a node) checks
/// first, read once per state by the successor loop so that it skips those
/// actions when it fails instead of trying each one. Each is a guard its
/// actions check anyway (named beside each variant), so skipping drops
/// only actions that are disabled; `debug_assert`s recheck every skip.
#[derive(Clone, Copy, Debug)]
enum Gate {
    /// No shared guard: always tried.
    Open,
    /// Publish, Confirm and Replicate from this node: "node serves" /
    /// "sender serves".
    Serves(NodeId),
    /// Seal, InstallRecovered, ActivateRecovery: "recovery pending".
    Recovery,
    /// Swap: "config allows follower moves, or the move replaces a lost
    /// copy" and "move phase admitted".
    Swap,
    /// AddLearner: "no move in flight", "no handoff in flight".
    NoMove,
    /// AdmitLearner: "move phase learning".
    Learning,
    /// PromoteLearner: "move phase admitted".
    Admitted,
}

impl Gate {
    fn of(a: Action) -> Gate {
        match a {
            Action::Publish { node } | Action::Confirm { node } => Gate::Serves(node),
            Action::Replicate { from, .. } => Gate::Serves(from),
            Action::Seal { .. }
            | Action::InstallRecovered { .. }
            | Action::ActivateRecovery { .. } => Gate::Recovery,
            Action::Swap { .. } => Gate::Swap,
            Action::AddLearner { .. } => Gate::NoMove,
            Action::AdmitLearner { .. } => Gate::Learning,
            Action::PromoteLearner { .. } => Gate::Admitted,
            _ => Gate::Open,
        }
    }
}

/// The shared guards of [`Gate`] in one state.
struct Gates {
    serves: u8,
    recovery: bool,
    swap: bool,
    no_move: bool,
    learning: bool,
    admitted: bool,
}

impl Gates {
    fn new(m: &MoveModel, s: &State) -> Gates {
        let r = &s.record;
        let mut serves = 0u8;
        for n in 0..m.cfg.nodes {
            if m.serves(s, n) {
                serves |= 1 << n;
            }
        }
        Gates {
            serves,
            recovery: r.recovery.pending,
            swap: (m.cfg.moves > 0 || !r.mv.replaces.is_empty())
                && (r.mv.phase == MovePhase::Admitted
                    || (m.has(Mutant::SwapBeforeAdmission) && r.mv.phase == MovePhase::Learning)),
            no_move: r.mv.phase == MovePhase::None && r.handoff.phase == HandoffPhase::None,
            learning: r.mv.phase == MovePhase::Learning,
            admitted: r.mv.phase == MovePhase::Admitted,
        }
    }

    fn pass(&self, g: Gate) -> bool {
        match g {
            Gate::Open => true,
            Gate::Serves(n) => self.serves & (1 << n) != 0,
            Gate::Recovery => self.recovery,
            Gate::Swap => self.swap,
            Gate::NoMove => self.no_move,
            Gate::Learning => self.learning,
            Gate::Admitted => self.admitted,
        }
    }
}

/// Whether `cfg` keeps `a` disabled in every reachable state: a budget of
/// zero that its guard checks, or the state that only such a budgeted
/// action creates (a pending recovery, a handoff in progress, a suspended
/// copy, a checkpoint, a client's request). Dropping these from the
/// successor loop changes no successor: `model/tests/configs.rs` pins every
/// count and path, and `possible_alphabet_drops_only_disabled_actions`
/// checks every edge of a set of configs both ways.
fn never_enabled(cfg: &Cfg, a: Action) -> bool {
    // Budgets may be lifted near u8::MAX (conformance's relaxed model).
    let no_recovery = cfg.crashes == 0 && cfg.suspicions == 0;
    match a {
        Action::Publish { .. } => cfg.client_hops > 0 || cfg.messages == 0,
        Action::Truncate { .. } | Action::InstallCheckpoint { .. } => cfg.truncations == 0,
        Action::RetryPublish { .. } => cfg.publish_retries == 0 || cfg.client_hops > 0,
        Action::ClientPublish { client }
        | Action::ClientRetry { client }
        | Action::AnswerClient { client }
        | Action::AckClient { client }
        | Action::ClientTimeout { client } => cfg.client_hops == 0 || client >= cfg.clients,
        Action::Settle { .. } => cfg.settles == 0,
        Action::ReportProgress { .. } | Action::NoticeRejoin { .. } => !cfg.net,
        Action::NoticeReadmission { .. } => !cfg.net || cfg.restarts == 0,
        Action::Crash { .. } => cfg.crashes == 0,
        Action::Restart { fresh_disk, .. } => {
            cfg.restarts == 0 || (fresh_disk && cfg.disk_losses == 0)
        }
        Action::Rejoin { .. } => cfg.restarts == 0,
        Action::OpenRecovery { zombie: true } => cfg.suspicions == 0,
        Action::OpenRecovery { zombie: false } => cfg.crashes == 0,
        Action::Seal { .. } | Action::InstallRecovered { .. } | Action::ActivateRecovery { .. } => {
            no_recovery
        }
        Action::CloseAdmission { .. }
        | Action::ReportFinalBoundary
        | Action::CommitHandoff
        | Action::ActivateOwner
        | Action::AbortHandoff => cfg.handoffs == 0,
        Action::CancelHandoff => cfg.handoffs == 0 || cfg.cancels == 0,
        Action::CancelMove => cfg.cancels == 0,
        Action::PromoteLearner { .. } => cfg.rf_increases == 0,
        _ => false,
    }
}

impl MoveModel {
    pub fn new(cfg: Cfg) -> MoveModel {
        if let Err(e) = cfg.validate() {
            panic!("invalid config `{}`: {e}", cfg.name);
        }
        let alphabet = Action::alphabet(cfg.nodes);
        let possible: Vec<Action> = alphabet
            .iter()
            .copied()
            .filter(|a| !never_enabled(&cfg, *a))
            .collect();
        let gates = possible.iter().map(|a| Gate::of(*a)).collect();
        MoveModel {
            cfg,
            alphabet,
            possible,
            gates,
        }
    }

    /// The actions the successor loop tries: the alphabet less those the
    /// config keeps disabled in every state.
    pub fn possible_alphabet(&self) -> &[Action] {
        &self.possible
    }

    pub fn has(&self, m: Mutant) -> bool {
        self.cfg.has(m)
    }

    /// Every action over every parameter value, in a fixed order.
    pub fn alphabet(&self) -> &[Action] {
        &self.alphabet
    }

    /// Owner n1, followers n2..n(rf), the rest empty; epoch 1.
    pub fn init(&self) -> State {
        let mut s = State::default();
        let rf = self.cfg.rf;
        for n in 0..self.cfg.nodes {
            let nd = &mut s.nodes[n as usize];
            nd.alive = true;
            nd.seen = if n < rf { 1 } else { 0 };
        }
        let mut followers = Slots::EMPTY;
        for n in 1..rf {
            followers = followers.with(Slot::new(n, 0));
        }
        let owner = Slot::new(0, 0);
        s.record = Record {
            epoch: 1,
            owner,
            followers,
            eligible: followers.with(owner),
            rf,
            rf_served: rf,
            adopted: true,
            ..Record::default()
        };
        s.nodes[0].serving = Serving {
            active: true,
            epoch: 1,
            counted: followers,
            w: majority(rf),
            open: true,
            confirmed: 0,
            via_handoff: false,
            acks: Acks::default(),
            ..Serving::default()
        };
        if self.cfg.client_hops > 0 {
            for c in &mut s.clients[..self.cfg.clients as usize] {
                c.route_node = 0;
                c.route_epoch = 1;
            }
        }
        s
    }

    /// The next state if `a` is enabled in `s`, else the failed guard.
    pub fn apply(&self, s: &State, a: Action) -> Result<State, Disabled> {
        if let Some(n) = nodes_of(a)
            .into_iter()
            .flatten()
            .find(|n| *n >= self.cfg.nodes)
        {
            let _ = n;
            return Err(Disabled("node out of range"));
        }
        // A network at its capacity already broke the property that bounds
        // it ("messages in flight stay below the network's capacity"); no
        // step leaves such a state, so no send can overflow the fixed-size
        // multiset.
        if s.net.is_full() {
            return Err(Disabled("the network is at its capacity"));
        }
        let mut next = *s;
        self.dispatch(s, a, &mut next)?;
        debug_assert!(next != *s, "enabled action {a} left the state unchanged");
        Ok(next)
    }

    /// [`MoveModel::apply`] for the successor loop: the next state is
    /// written to `out` (returning it would move it several times), and the
    /// checks that never fail there are left out (every action of
    /// `possible` and every network action names nodes in range, and a
    /// state whose network is at its capacity is not expanded at all).
    #[inline]
    fn apply_into(&self, s: &State, a: Action, out: &mut State) -> Result<(), Disabled> {
        debug_assert!(nodes_of(a)
            .into_iter()
            .flatten()
            .all(|n| n < self.cfg.nodes));
        debug_assert!(!s.net.is_full());
        self.dispatch(s, a, out)?;
        debug_assert!(*out != *s, "enabled action {a} left the state unchanged");
        Ok(())
    }

    /// The action's guards and effects: the next state goes to `t`.
    #[inline(always)]
    fn dispatch(&self, s: &State, a: Action, t: &mut State) -> Step {
        match a {
            Action::Publish { node } => self.publish(s, node, t),
            Action::Replicate { from, to } => self.replicate(s, from, to, t),
            Action::Confirm { node } => self.confirm(s, node, t),
            Action::AddLearner { target } => self.add_learner(s, target, t),
            Action::AdmitLearner { target } => self.admit_learner(s, target, t),
            Action::Swap { target, leaving } => self.swap(s, target, leaving, t),
            Action::OwnerSwitch => self.owner_switch(s, t),
            Action::RemoveLeaving => self.remove_leaving(s, t),
            Action::CancelMove => self.cancel_move(s, t),
            Action::AbortMove => self.abort_move(s, t),
            Action::SwapBack => self.swap_back(s, t),
            Action::PromoteLearner { target } => self.promote_learner(s, target, t),
            Action::CloseAdmission { to } => self.close_admission(s, to, t),
            Action::ReportFinalBoundary => self.report_final_boundary(s, t),
            Action::CommitHandoff => self.commit_handoff(s, t),
            Action::ActivateOwner => self.activate_owner(s, t),
            Action::CancelHandoff => self.cancel_handoff(s, t),
            Action::AbortHandoff => self.abort_handoff(s, t),
            Action::Crash { node } => self.crash(s, node, t),
            Action::Restart { node, fresh_disk } => self.restart(s, node, fresh_disk, t),
            Action::Rejoin { node } => self.rejoin(s, node, t),
            Action::NoticeRejoin { node } => self.notice_rejoin(s, node, t),
            Action::NoticeReadmission { node } => self.notice_readmission(s, node, t),
            Action::OpenRecovery { zombie } => self.open_recovery(s, zombie, t),
            Action::Seal { node } => self.seal(s, node, t),
            Action::InstallRecovered { node } => self.install_recovered(s, node, t),
            Action::ActivateRecovery { candidate } => self.activate_recovery(s, candidate, t),
            Action::ReportProgress { from, of } => self.report_progress(s, from, of, t),
            Action::Deliver { msg } => self.deliver(s, msg, t),
            Action::Drop { msg } => self.drop_msg(s, msg, t),
            Action::Duplicate { msg } => self.duplicate(s, msg, t),
            Action::Truncate { node } => self.truncate(s, node, t),
            Action::InstallCheckpoint { from, to } => self.install_checkpoint(s, from, to, t),
            Action::RetryPublish { node } => self.retry_publish(s, node, t),
            Action::ClientPublish { client } => self.client_publish(s, client, t),
            Action::ClientRetry { client } => self.client_retry(s, client, t),
            Action::AnswerClient { client } => self.answer_client(s, client, t),
            Action::AckClient { client } => self.ack_client(s, client, t),
            Action::ClientTimeout { client } => self.client_timeout(s, client, t),
            Action::Settle { node } => self.settle(s, node, t),
        }
    }

    /// Every action that could be enabled in `s`: the fixed alphabet, then
    /// the network's actions on each distinct message in flight.
    pub fn actions(&self, s: &State) -> impl Iterator<Item = Action> + '_ {
        let net: Vec<Action> = s
            .net
            .distinct()
            .flat_map(|msg| {
                [
                    Action::Deliver { msg },
                    Action::Drop { msg },
                    Action::Duplicate { msg },
                ]
            })
            .collect();
        self.alphabet.iter().copied().chain(net)
    }

    /// Push every enabled action with its next state.
    pub fn successors(&self, s: &State, out: &mut Vec<(Action, State)>) {
        self.for_each_successor(s, |a, t| out.push((a, *t)));
    }

    /// Hand every enabled action with its next state to `f`, in the order
    /// of [`MoveModel::successors`], without collecting them first (the
    /// checker's hot path stores each next state once).
    pub fn for_each_successor(&self, s: &State, mut f: impl FnMut(Action, &State)) {
        // `apply` refuses every action in such a state.
        if s.net.is_full() {
            return;
        }
        let mut t = *s;
        self.candidates(s, |a| {
            if self.apply_into(s, a, &mut t).is_ok() {
                f(a, &t);
            }
        });
    }

    /// [`MoveModel::for_each_successor`], each next state written where it
    /// is kept: at `buf[*used]`, and `*used` counts it once `f` has seen
    /// it. `buf` only grows (its states past `*used` are left over from
    /// earlier calls and overwritten), so a successor is written once
    /// instead of being built aside and copied in.
    pub fn successors_in(
        &self,
        s: &State,
        buf: &mut Vec<State>,
        used: &mut usize,
        mut f: impl FnMut(Action, &State),
    ) {
        if s.net.is_full() {
            return;
        }
        self.candidates(s, |a| {
            if *used == buf.len() {
                buf.push(*s);
            }
            let t = &mut buf[*used];
            if self.apply_into(s, a, t).is_ok() {
                f(a, t);
                *used += 1;
            }
        });
    }

    /// The actions worth trying in `s`, in the order of
    /// [`MoveModel::successors`]: every action whose kind's gate passes,
    /// then the network's actions on each distinct message in flight.
    #[inline(always)]
    fn candidates(&self, s: &State, mut g: impl FnMut(Action)) {
        let gates = Gates::new(self, s);
        for (&a, &gate) in self.possible.iter().zip(&self.gates) {
            if !gates.pass(gate) {
                debug_assert!(
                    self.apply(s, a).is_err(),
                    "{a} skipped by its gate {gate:?} but enabled"
                );
                continue;
            }
            g(a);
        }
        for msg in s.net.distinct() {
            for a in [
                Action::Deliver { msg },
                Action::Drop { msg },
                Action::Duplicate { msg },
            ] {
                g(a);
            }
        }
    }

    // ---- shared helpers -------------------------------------------------

    /// Whether replica `n` accepts an append from a sender at `epoch`:
    /// not from an epoch older than the newest it has seen, and not from an
    /// epoch at or below the one it sealed at.
    pub(crate) fn accepts(&self, s: &State, n: NodeId, epoch: u8) -> bool {
        let nd = &s.nodes[n as usize];
        epoch >= nd.seen && (self.has(Mutant::NoSealFencing) || epoch > nd.sealed_at)
    }

    /// Whether node `n` may act as an owner at its serving epoch: it is
    /// alive, believes it serves, and is fenced neither by a seal nor by a
    /// newer epoch (DESIGN: "a node sealed at epoch e never serves at e").
    pub(crate) fn serves(&self, s: &State, n: NodeId) -> bool {
        let nd = &s.nodes[n as usize];
        nd.alive
            && nd.serving.active
            && nd.seen <= nd.serving.epoch
            && nd.sealed_at < nd.serving.epoch
    }

    /// The owner the controller takes progress from: the record's owner,
    /// serving at the record's epoch.
    pub(crate) fn owner(&self, s: &State) -> Result<NodeId, Disabled> {
        let o = s
            .current_owner()
            .ok_or(Disabled("owner serving at the record's epoch"))?;
        need(self.serves(s, o), "owner not fenced")?;
        Ok(o)
    }

    /// What the controller knows of progress, taken from a report the
    /// owner the record names sent at the record's epoch (messages in
    /// flight). Under `stale_progress_admits` whatever was reported last.
    pub(crate) fn known(&self, s: &State) -> Result<Known, Disabled> {
        let k = s.known;
        let fresh =
            k.epoch == s.record.epoch || (self.has(Mutant::StaleProgressAdmits) && k.epoch > 0);
        need(fresh, "a progress report at the record's epoch")?;
        Ok(k)
    }

    /// The position through which instance `x` holds the owner's history,
    /// as reported. Under `stale_progress_admits` the controller keeps
    /// progress per node, so a report on an instance whose disk is gone
    /// speaks for the node's next one.
    pub(crate) fn known_pos(&self, k: &Known, x: Slot) -> u8 {
        if self.has(Mutant::StaleProgressAdmits) {
            (0..GENS_MAX)
                .map(|g| k.acks.get(Slot::new(x.node(), g)))
                .max()
                .unwrap_or(0)
        } else {
            k.acks.get(x)
        }
    }

    /// The controller's view of the owner before a guarded write:
    /// atomically, the record's owner serving unfenced at the record's
    /// epoch; with messages in flight, a report from it at that epoch.
    pub(crate) fn controller_sees_owner(&self, s: &State) -> Result<(), Disabled> {
        if self.cfg.net {
            self.known(s).map(|_| ())
        } else {
            self.owner(s).map(|_| ())
        }
    }

    /// Whether the controller may take instance `x` as holding the owner's
    /// history through position `p` (`None`: the owner's confirmed tail,
    /// "caught up"). Atomically it reads both logs; with messages in flight
    /// it has only what the owner reported.
    pub(crate) fn sees_covering(
        &self,
        s: &State,
        x: Slot,
        p: Option<u8>,
    ) -> Result<bool, Disabled> {
        if self.cfg.net {
            let k = self.known(s)?;
            Ok(self.known_pos(&k, x) >= p.unwrap_or(k.confirmed))
        } else {
            let o = self.owner(s)?;
            let owner = &s.nodes[o as usize];
            let p = p.unwrap_or(owner.serving.confirmed);
            let nd = &s.nodes[x.node() as usize];
            Ok(s.current(x) && nd.alive && self.covers(&nd.log, &owner.log, p))
        }
    }

    /// Recovery may block this move or handoff step.
    pub(crate) fn no_recovery_for_moves(&self, s: &State) -> Result<(), Disabled> {
        need(
            !s.record.recovery.pending || self.has(Mutant::RecoveryKeepsMove),
            "no pending recovery",
        )
    }

    /// Whether `log` holds `reference`'s history through position `p`: the
    /// entry at `p` is the same write (same epoch tag), not merely present.
    /// A returning or formerly zombie copy can hold a divergent suffix of the
    /// same length (DESIGN, "covers position p").
    pub fn covers(&self, log: &Log, reference: &Log, p: u8) -> bool {
        if self.has(Mutant::CoversByLength) {
            log.len >= p
        } else {
            log.covers(reference, p)
        }
    }

    /// The write requirement of the rf the owner may be confirming on.
    pub(crate) fn w_served(&self, s: &State) -> u8 {
        majority(s.record.rf_served)
    }
}

/// The node parameters an action names.
pub fn nodes_of(a: Action) -> [Option<NodeId>; 2] {
    match a {
        Action::Publish { node }
        | Action::Confirm { node }
        | Action::Crash { node }
        | Action::Restart { node, .. }
        | Action::Rejoin { node }
        | Action::NoticeRejoin { node }
        | Action::NoticeReadmission { node }
        | Action::Seal { node }
        | Action::InstallRecovered { node }
        | Action::Truncate { node }
        | Action::RetryPublish { node }
        | Action::Settle { node } => [Some(node), None],
        Action::Replicate { from, to } | Action::InstallCheckpoint { from, to } => {
            [Some(from), Some(to)]
        }
        Action::ReportProgress { from, of } => [Some(from), Some(of)],
        Action::AddLearner { target }
        | Action::AdmitLearner { target }
        | Action::PromoteLearner { target } => [Some(target), None],
        Action::Swap { target, leaving } => [Some(target), Some(leaving)],
        Action::CloseAdmission { to } => [Some(to), None],
        Action::ActivateRecovery { candidate } => [Some(candidate), None],
        _ => [None, None],
    }
}
