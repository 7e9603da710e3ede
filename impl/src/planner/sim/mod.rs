//! A round-based simulation that executes plans the way a controller
//! would: a follower move's learner catches up for its estimated time, then
//! the swap and the removal apply and the leaving node keeps a retained
//! copy; a handoff applies within its round. It checks, every round, what
//! must never happen (limits exceeded, a move inside a cooldown, two copies
//! in one domain) and counts reversals and repeated moves.

use crate::planner::domains;
use crate::planner::limits::cooldown::History;
use crate::planner::ops::{Op, Plan};
use crate::planner::policy::Policy;
use crate::planner::round::plan;
use crate::planner::view::{ClusterView, NodeIx, PartIx, Retained, Transfer};
use crate::planner::PlanError;

/// The window, in rounds, over which reversals and repeated moves count.
pub const WATCH_ROUNDS: u64 = 50;

/// The simulation's running tallies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Follower moves started.
    pub follower_moves: u64,
    /// Handoffs done.
    pub handoffs: u64,
    /// Bytes the follower moves copy.
    pub bytes_moved: u64,
    /// Follower moves that started from a retained copy.
    pub from_retained: u64,
    /// Most transfers in flight at once, cluster-wide.
    pub peak_transfers: u32,
    /// Most transfers into one node at once.
    pub peak_node_incoming: u32,
    /// Most transfers off one node at once.
    pub peak_node_outgoing: u32,
    /// Moves that undo the partition's previous move of the same kind
    /// (A -> B -> A) within `WATCH_ROUNDS` rounds of it.
    pub reversals: u64,
    /// Such moves at any distance in time.
    pub reversals_any_time: u64,
    /// Partitions moved again within `WATCH_ROUNDS` rounds of a move of the same kind.
    pub repeated: Vec<bool>,
    /// Moves of a partition inside its cooldown, or off a node inside its cooldown.
    pub cooldown_violations: u64,
    /// Largest number of partitions with two copies in one domain seen after any round.
    pub domain_violations: usize,
    /// Rounds held by a pending recovery or a pause.
    pub held_rounds: u64,
    /// Moves in plans made while held (must stay 0).
    pub moves_while_held: u64,
    /// Candidates refused because catch-up could not finish.
    pub refused_catch_up: u64,
    /// Candidates refused by the failure-domain rule.
    pub refused_domain: u64,
    /// Plans made (rounds run).
    pub rounds: u64,
    /// The last round (1-based) that started a move or still had a transfer in flight.
    pub last_active_round: u64,
    /// Moves per partition: follower moves and handoffs.
    pub per_partition: Vec<(u32, u32)>,
}

impl Tally {
    /// Partitions moved twice (same kind) within `WATCH_ROUNDS` rounds.
    pub fn moved_twice(&self) -> u64 {
        self.repeated.iter().filter(|&&r| r).count() as u64
    }

    /// Partitions with more than one follower move or more than one
    /// handoff over the whole run.
    pub fn moved_twice_any_time(&self) -> u64 {
        self.per_partition
            .iter()
            .filter(|&&(f, h)| f > 1 || h > 1)
            .count() as u64
    }

    /// Partitions moved more than once counting both kinds together.
    pub fn moved_twice_any_kind(&self) -> u64 {
        self.per_partition
            .iter()
            .filter(|&&(f, h)| f + h > 1)
            .count() as u64
    }
}

/// A cluster, the planner's memory and the tallies.
#[derive(Clone, Debug)]
pub struct Sim {
    /// The cluster now.
    pub view: ClusterView,
    /// The planner's memory.
    pub history: History,
    /// The policy.
    pub policy: Policy,
    /// Seconds per round.
    pub round_secs: f64,
    /// What happened so far.
    pub tally: Tally,
    /// Each partition's last follower move and last handoff: from, to, when.
    last_moves: Vec<[Option<(NodeIx, NodeIx, f64)>; 2]>,
}

impl Sim {
    /// Start a simulation of `view` with `history`.
    pub fn new(view: ClusterView, history: History, policy: Policy, round_secs: f64) -> Sim {
        let parts = view.partitions.len();
        // Moves made before the simulation starts count for reversals too.
        let last = |m: Option<crate::planner::limits::cooldown::LastMove>| {
            m.map(|m| (m.from, m.to, m.at_secs))
        };
        let last_moves = (0..parts)
            .map(|p| {
                [
                    last(history.last_copy_move.get(p).copied().flatten()),
                    last(history.last_handoff.get(p).copied().flatten()),
                ]
            })
            .collect();
        Sim {
            view,
            history,
            policy,
            round_secs,
            tally: Tally {
                per_partition: vec![(0, 0); parts],
                repeated: vec![false; parts],
                ..Tally::default()
            },
            last_moves,
        }
    }

    /// Advance the clock by one round and finish transfers whose catch-up is done.
    pub fn advance(&mut self) {
        self.view.now_secs += self.round_secs;
        let now = self.view.now_secs;
        let dt = self.round_secs;
        let mut still = Vec::with_capacity(self.view.transfers.len());
        for mut t in std::mem::take(&mut self.view.transfers) {
            if t.secs_remaining <= dt {
                self.finish(&t, now);
            } else {
                let done = dt / t.secs_remaining;
                t.bytes_remaining -= (t.bytes_remaining as f64 * done) as u64;
                t.secs_remaining -= dt;
                still.push(t);
            }
        }
        self.view.transfers = still;
        let grace = self.policy.retained_grace_secs;
        self.view.retained.retain(|c| now - c.since_secs < grace);
    }

    /// Swap and removal of a finished transfer; the leaving node keeps its copy.
    fn finish(&mut self, t: &Transfer, now: f64) {
        let pl = &mut self.view.placement[t.partition as usize];
        let slot = pl
            .followers
            .iter()
            .position(|&f| f == t.leaving)
            .unwrap_or_else(|| {
                panic!(
                    "transfer of partition {} names {} as leaving, which no longer follows",
                    t.partition, t.leaving
                )
            });
        pl.followers[slot] = t.target;
        self.view
            .retained
            .retain(|c| !(c.partition == t.partition && c.node == t.target));
        self.view.retained.push(Retained {
            partition: t.partition,
            node: t.leaving,
            since_secs: now,
        });
    }

    /// Plan one round and apply the plan; `now_ms` reads a monotonic clock
    /// so the caller can time the planning. Returns the plan and its time.
    pub fn round(&mut self, now_ms: &mut dyn FnMut() -> f64) -> Result<(Plan, f64), PlanError> {
        let t0 = now_ms();
        let p = plan(&self.view, &self.history, &self.policy)?;
        let ms = now_ms() - t0;
        self.apply(&p);
        Ok((p, ms))
    }

    /// Apply a plan: handoffs now, follower moves as transfers.
    pub fn apply(&mut self, p: &Plan) {
        let now = self.view.now_secs;
        self.tally.rounds += 1;
        if p.hold.is_some() {
            self.tally.held_rounds += 1;
            self.tally.moves_while_held += p.moves.len() as u64;
        }
        self.tally.refused_catch_up += p.refusals.catch_up_infeasible;
        self.tally.refused_domain += p.refusals.domain;
        for m in &p.moves {
            let part = m.partition;
            let kind = usize::from(m.is_handoff());
            let draining = self.view.nodes[m.from as usize].draining;
            let cooling = self.history.partition_cooling(&self.policy, part, now)
                || self.history.node_cooling(&self.policy, m.from, now);
            if cooling && !draining {
                self.tally.cooldown_violations += 1;
            }
            let watch_secs = WATCH_ROUNDS as f64 * self.round_secs;
            if let Some((from, to, at)) = self.last_moves[part as usize][kind] {
                let recent = now - at <= watch_secs;
                if (from, to) == (m.to, m.from) {
                    self.tally.reversals_any_time += 1;
                    self.tally.reversals += u64::from(recent);
                }
                if recent {
                    self.tally.repeated[part as usize] = true;
                }
            }
            self.last_moves[part as usize][kind] = Some((m.from, m.to, now));
            let counts = &mut self.tally.per_partition[part as usize];
            match m.ops[..] {
                [Op::Handoff { from, to, .. }] => {
                    counts.1 += 1;
                    self.tally.handoffs += 1;
                    self.handoff(part, from, to);
                }
                [Op::AddLearner { target, .. }, Op::Swap { leaving, .. }, Op::Remove { .. }] => {
                    counts.0 += 1;
                    self.tally.follower_moves += 1;
                    self.tally.bytes_moved += m.bytes;
                    self.tally.from_retained += u64::from(m.from_retained);
                    let c = m
                        .catch_up
                        .expect("a follower move carries its catch-up estimate");
                    self.view.transfers.push(Transfer {
                        partition: part,
                        target,
                        leaving,
                        bytes_remaining: m.bytes,
                        secs_remaining: c.total_secs,
                    });
                }
                _ => panic!(
                    "a planned move is neither a handoff nor add_learner, swap, remove: {:?}",
                    m.ops
                ),
            }
        }
        self.history.record(p, now);
        let t = &mut self.tally;
        t.peak_transfers = t.peak_transfers.max(self.view.transfers.len() as u32);
        let n = self.view.nodes.len();
        let (mut inc, mut out) = (vec![0u32; n], vec![0u32; n]);
        for tr in &self.view.transfers {
            inc[tr.target as usize] += 1;
            out[tr.leaving as usize] += 1;
        }
        t.peak_node_incoming = t.peak_node_incoming.max(inc.into_iter().max().unwrap_or(0));
        t.peak_node_outgoing = t.peak_node_outgoing.max(out.into_iter().max().unwrap_or(0));
        t.domain_violations = t.domain_violations.max(domains::violations(&self.view));
        if !p.moves.is_empty() || !self.view.transfers.is_empty() {
            t.last_active_round = t.rounds;
        }
    }

    fn handoff(&mut self, part: PartIx, from: NodeIx, to: NodeIx) {
        let pl = &mut self.view.placement[part as usize];
        assert_eq!(
            pl.owner, from,
            "handoff of partition {part} from a node that does not own it"
        );
        let slot = pl
            .followers
            .iter()
            .position(|&f| f == to)
            .unwrap_or_else(|| {
                panic!("handoff of partition {part} to {to}, which does not follow it")
            });
        pl.followers[slot] = from;
        pl.owner = to;
    }

    /// Whether nothing is in flight and the planner has closed its episode.
    pub fn settled(&self) -> bool {
        self.view.transfers.is_empty() && !self.history.episode_open
    }
}
