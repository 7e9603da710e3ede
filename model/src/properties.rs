//! Properties, each named as a sentence, each with the argument for it.
//!
//! - `always` properties hold in every reachable state (or on every step,
//!   for the ones that speak of a transition);
//! - `sometimes` properties are reachability checks: some reachable step
//!   does the thing, so the safety properties do not hold vacuously;
//! - `eventually` properties are progress, checked in every configuration,
//!   faults included. Every path is bounded by the config's budgets, the
//!   checker verifies the state graph is acyclic, so every maximal path ends
//!   in a terminal state: where the system rests once faults stop. Each
//!   property must hold in every terminal state in which at most
//!   [`tolerated`] copies are down. On a cyclic graph (only mutants make one)
//!   a property also fails on a cycle all of whose states are in its scope
//!   and miss its goal (TLA+'s leads-to under weak fairness of the next-state
//!   relation), with a path to a state on that cycle; that path's length is
//!   not a lasso's.
//!
//! `class` separates outcomes (what a user of the queue would see: a lost or
//! forked confirm) from rules (a guard of the protocol restated as an
//! invariant). The bug zoo reports a mutant caught only by an outcome.

use crate::action::Action;
use crate::config::Cfg;
use crate::protocol::MoveModel;
use crate::state::*;
use crate::types::*;
use serde::Serialize;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Always,
    Sometimes,
    Eventually,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// What a client of the queue observes.
    Outcome,
    /// A protocol rule restated as an invariant.
    Rule,
}

pub type StateFn = fn(&MoveModel, &State) -> bool;
pub type EdgeFn = fn(&MoveModel, &State, &Action, &State) -> bool;

#[derive(Clone, Copy)]
pub enum Check {
    /// Evaluated on every reachable state.
    State(StateFn),
    /// Evaluated on every reachable transition.
    Edge(EdgeFn),
    /// Evaluated on every terminal state (`eventually`): violated where
    /// `scope` holds and `goal` does not. `scope` says which terminal states
    /// the property speaks to (within the tolerated number of copies down,
    /// and whatever else the property names), so the report can say how many
    /// terminal states were checked.
    Terminal { scope: StateFn, goal: StateFn },
}

#[derive(Clone, Copy)]
pub struct Property {
    pub name: &'static str,
    pub kind: Kind,
    pub class: Class,
    pub check: Check,
    /// Whether the property speaks to this configuration.
    pub applies: fn(&Cfg) -> bool,
}

fn any(_: &Cfg) -> bool {
    true
}
fn moves(c: &Cfg) -> bool {
    c.moves > 0
}
fn owner_faults(c: &Cfg) -> bool {
    c.crashes + c.suspicions > 0
}
fn handoffs(c: &Cfg) -> bool {
    c.handoffs > 0
}
fn clients(c: &Cfg) -> bool {
    c.client_hops > 0
}
fn settles(c: &Cfg) -> bool {
    c.settles > 0
}
/// Reachability of a confirm or an acknowledgement needs a publish: the
/// small forms of some scenarios with messages in flight have none
/// (`config::NET_SMALL`), and their other forms check these.
pub fn publishes(c: &Cfg) -> bool {
    c.messages > 0
}

/// Every property, in report order.
pub fn all() -> Vec<Property> {
    use Check::*;
    use Class::*;
    use Kind::*;
    let p = |name, kind, class, check, applies| Property {
        name,
        kind,
        class,
        check,
        applies,
    };
    vec![
        p(
            "no confirmed entry is lost",
            Always,
            Outcome,
            State(no_confirmed_entry_lost),
            any,
        ),
        p(
            "one confirmed history",
            Always,
            Outcome,
            State(one_confirmed_history),
            any,
        ),
        p(
            "a stale owner never confirms what the current owner lacks",
            Always,
            Outcome,
            State(stale_owner_confirms_nothing_new),
            any,
        ),
        p(
            "a committed handoff's new owner holds F and its old owner accepted nothing after it",
            Always,
            Outcome,
            State(old_owner_accepted_nothing_after_f),
            handoffs,
        ),
        p(
            "no copy holds one message twice",
            Always,
            Outcome,
            State(no_message_twice),
            any,
        ),
        p(
            "a retried publish is in the confirmed history at most once",
            Always,
            Outcome,
            State(confirmed_once),
            |c| c.publish_retries > 0,
        ),
        p(
            "a client's publish is acknowledged only after it is confirmed",
            Always,
            Outcome,
            Edge(acked_after_confirm),
            clients,
        ),
        p(
            "no publish acknowledged to a client is lost",
            Always,
            Outcome,
            State(no_acked_publish_lost),
            clients,
        ),
        p(
            "an ASK never changes a client's stable route",
            Always,
            Outcome,
            Edge(ask_keeps_route),
            clients,
        ),
        p(
            "every redirect chain ends within the hop limit",
            Always,
            Outcome,
            State(hops_within_limit),
            clients,
        ),
        p(
            "a settled message is never delivered again after its settle is confirmed",
            Always,
            Outcome,
            State(settled_never_redelivered),
            settles,
        ),
        p(
            "no copy applies a gap",
            Always,
            Outcome,
            State(no_gap_applied),
            |c| c.truncations > 0,
        ),
        p(
            "W comes from the configured replication factor",
            Always,
            Rule,
            State(w_from_configured_rf),
            any,
        ),
        p(
            "the owner counts only committed, eligible, unsuspended followers",
            Always,
            Rule,
            State(owner_counts_committed_followers),
            any,
        ),
        p(
            "no move step or uncommitted handoff while a recovery is pending",
            Always,
            Rule,
            State(nothing_moves_during_recovery),
            any,
        ),
        p(
            "at most W - 1 followers are suspended at once",
            Always,
            Rule,
            State(suspended_below_w),
            any,
        ),
        p(
            "removal waits for the target to cover B",
            Always,
            Rule,
            Edge(removal_waits_for_b),
            moves,
        ),
        p(
            "fencing is enforced where writes are accepted",
            Always,
            Rule,
            Edge(fencing_enforced),
            any,
        ),
        p(
            "a refused owner stops serving",
            Always,
            Rule,
            Edge(refused_owner_stops),
            |c| c.net,
        ),
        p(
            "no copy drops a confirmed entry it holds, except with its disk",
            Always,
            Outcome,
            Edge(no_confirmed_entry_dropped),
            |c| c.truncations > 0,
        ),
        p(
            "a checkpoint holds only confirmed history",
            Always,
            Rule,
            State(checkpoint_confirmed),
            |c| c.truncations > 0,
        ),
        p(
            "a copy catches up from a checkpoint after the owner reclaimed what it lacked",
            Sometimes,
            Outcome,
            Edge(checkpoint_installed),
            |c| c.truncations > 0,
        ),
        p(
            "a copy takes a new checkpoint after the increments it needed were reclaimed again",
            Sometimes,
            Outcome,
            Edge(checkpoint_renewed),
            |c| c.truncations > 1,
        ),
        p(
            "a move back onto a removed copy starts from its retained data",
            Sometimes,
            Outcome,
            Edge(move_back_from_retained),
            |c| c.moves > 1 && publishes(c),
        ),
        p(
            "messages in flight stay below the network's capacity",
            Always,
            Outcome,
            State(net_below_capacity),
            |c| c.net,
        ),
        p(
            "a move completes past a confirmed boundary",
            Sometimes,
            Outcome,
            Edge(move_completes),
            |c| moves(c) && publishes(c),
        ),
        p(
            "a confirm is counted from the new set after a swap",
            Sometimes,
            Outcome,
            Edge(confirm_from_new_set),
            |c| moves(c) && publishes(c),
        ),
        p(
            "a recovery cancels a move in progress",
            Sometimes,
            Outcome,
            Edge(recovery_cancels_move),
            |c| moves(c) && owner_faults(c),
        ),
        p(
            "a recovery activates",
            Sometimes,
            Outcome,
            Edge(recovery_activates),
            owner_faults,
        ),
        p(
            "a handoff commits and the new owner confirms",
            Sometimes,
            Outcome,
            Edge(handoff_owner_confirms),
            |c| handoffs(c) && publishes(c),
        ),
        p(
            "a handoff is cancelled and admission reopens",
            Sometimes,
            Outcome,
            Edge(handoff_cancelled),
            |c| handoffs(c) && c.cancels + c.crashes + c.disk_losses > 0,
        ),
        p(
            "a restarted follower rejoins without a fence",
            Sometimes,
            Outcome,
            Edge(rejoin_without_fence),
            |c| c.restarts > c.disk_losses,
        ),
        p(
            "a zombie owner is refused",
            Sometimes,
            Outcome,
            Edge(zombie_refused),
            |c| c.suspicions > 0,
        ),
        p(
            "RF increases and a confirm uses the new W",
            Sometimes,
            Outcome,
            Edge(confirm_with_new_w),
            |c| c.rf_increases > 0 && majority(c.rf_max()) > majority(c.rf),
        ),
        p(
            "a publish is confirmed while a learner catches up and one follower is down",
            Sometimes,
            Outcome,
            Edge(confirm_with_learner_and_follower_down),
            |c| c.moves + c.rf_increases > 0 && c.crashes > 0 && publishes(c),
        ),
        p(
            "a lost follower is swapped out for a new copy",
            Sometimes,
            Outcome,
            Edge(lost_follower_replaced),
            |c| c.disk_losses > 0 && c.moves > 0,
        ),
        p(
            "a drained node leaves the partition",
            Sometimes,
            Outcome,
            Edge(drained_node_leaves),
            |c| c.handoffs > 0 && c.moves > 0,
        ),
        p(
            "the leaving copy is swapped back for a target lost after the swap",
            Sometimes,
            Outcome,
            Edge(swapped_back),
            |c| c.moves > 0 && c.crashes + c.disk_losses > 0,
        ),
        p(
            "a move cancelled by a recovery is retried and completes",
            Sometimes,
            Outcome,
            Edge(retried_move_completes),
            |c| moves(c) && owner_faults(c),
        ),
        p(
            "a suspended follower's receipt activates a recovery",
            Sometimes,
            Outcome,
            Edge(suspended_receipt_activates),
            |c| c.restarts > c.disk_losses && c.crashes >= 2,
        ),
        p(
            "a suspended follower that crashes again restarts on its disk",
            Sometimes,
            Outcome,
            Edge(suspended_restarts_again),
            |c| c.restarts >= 2 && c.crashes >= 2,
        ),
        p(
            "the controller refuses a progress report from an older epoch",
            Sometimes,
            Outcome,
            Edge(stale_report_refused),
            |c| c.net && c.handoffs > 0,
        ),
        p(
            "a duplicated append is recognised and not applied again",
            Sometimes,
            Outcome,
            Edge(duplicate_recognised),
            |c| c.net && c.dups > 0,
        ),
        p(
            "an acknowledgement sent before a restart arrives after the suspension and is not counted",
            Sometimes,
            Outcome,
            Edge(stale_ack_ignored),
            |c| c.net && c.restarts > c.disk_losses && publishes(c),
        ),
        p(
            "the controller re-admits a copy that crashed again after it was reported",
            Sometimes,
            Outcome,
            Edge(rejoin_while_down),
            |c| c.net && c.restarts > c.disk_losses && c.crashes >= 2,
        ),
        p(
            "an acknowledgement marked suspended arrives after the re-admission and mutes the copy",
            Sometimes,
            Outcome,
            Edge(late_suspended_mark),
            |c| c.net && c.restarts > c.disk_losses && publishes(c),
        ),
        p(
            "a retry after an owner change is answered from the producer's sequence",
            Sometimes,
            Outcome,
            Edge(retry_deduplicated_after_owner_change),
            |c| c.publish_retries > 0 && c.client_hops == 0,
        ),
        p(
            "a retry appends a publish the serving owner lacks",
            Sometimes,
            Outcome,
            Edge(retry_appended),
            |c| c.publish_retries > 0 && c.client_hops == 0,
        ),
        p(
            "a client follows an ASK during a handoff's cutover",
            Sometimes,
            Outcome,
            Edge(client_follows_ask),
            |c| c.client_hops > 0 && c.handoffs > 0,
        ),
        p(
            "a client's stable route moves forward on a MOVED",
            Sometimes,
            Outcome,
            Edge(client_moved),
            |c| c.client_hops > 0 && c.handoffs + c.crashes + c.suspicions > 0,
        ),
        p(
            "a client's publish is acknowledged after a redirect",
            Sometimes,
            Outcome,
            Edge(client_acked_after_redirect),
            |c| c.client_hops > 0 && c.handoffs > 0,
        ),
        p(
            "a client's request gives up at the hop limit",
            Sometimes,
            Outcome,
            Edge(client_gives_up),
            |c| c.client_hops > 0 && c.handoffs > 0,
        ),
        p(
            "a client's retry after an owner change is answered from the owner's history",
            Sometimes,
            Outcome,
            Edge(client_retry_deduplicated),
            |c| c.client_hops > 0 && c.publish_retries > 0,
        ),
        p(
            "a client's publish is acknowledged after its owner changed",
            Sometimes,
            Outcome,
            Edge(client_acked_by_new_owner),
            |c| c.client_hops > 0 && c.handoffs + c.crashes + c.suspicions > 0,
        ),
        p(
            "a client is acknowledged by a new owner while another still routes to the old one",
            Sometimes,
            Outcome,
            Edge(clients_see_cutover_apart),
            |c| c.client_hops > 0 && c.clients > 1 && c.handoffs + c.crashes + c.suspicions > 0,
        ),
        p(
            "a consumer's settle is confirmed",
            Sometimes,
            Outcome,
            Edge(settle_confirmed),
            settles,
        ),
        p(
            "a new owner keeps a settle confirmed under an earlier owner",
            Sometimes,
            Outcome,
            State(settle_kept_across_owner_change),
            |c| c.settles > 0 && c.handoffs + c.crashes + c.suspicions > 0,
        ),
        p(
            "a copy installs a checkpoint that folds in a settle",
            Sometimes,
            Outcome,
            Edge(checkpoint_folds_settle),
            |c| c.settles > 0 && c.truncations > 0,
        ),
        p(
            "a pending recovery activates",
            Eventually,
            Outcome,
            Terminal {
                scope: within_tolerance,
                goal: recovery_settles,
            },
            any,
        ),
        p(
            "a started move completes or is cancelled",
            Eventually,
            Outcome,
            Terminal {
                scope: within_tolerance,
                goal: move_settles,
            },
            any,
        ),
        p(
            "a started handoff commits or is cancelled",
            Eventually,
            Outcome,
            Terminal {
                scope: within_tolerance,
                goal: handoff_settles,
            },
            any,
        ),
        p(
            "the partition rests with rf counted copies on live, current instances",
            Eventually,
            Outcome,
            Terminal {
                scope: whole_in_scope,
                goal: partition_whole,
            },
            any,
        ),
        p(
            "what the owner accepted is confirmed once the partition is whole",
            Eventually,
            Outcome,
            Terminal {
                scope: whole_in_scope,
                goal: accepted_confirmed,
            },
            |c| c.messages > 0,
        ),
        p(
            "a process that restarts is let back in",
            Eventually,
            Outcome,
            Terminal {
                scope: within_tolerance,
                goal: restarts_admitted,
            },
            |c| c.restarts > 0,
        ),
        p(
            "a planned move is carried out while a free node can take it",
            Eventually,
            Outcome,
            Terminal {
                scope: planned_in_scope,
                goal: planned_moves_done,
            },
            |c| c.moves + c.rf_increases > 0,
        ),
    ]
}

/// The properties that speak to a configuration.
pub fn for_cfg(cfg: &Cfg) -> Vec<Property> {
    all().into_iter().filter(|p| (p.applies)(cfg)).collect()
}

// ---- always: outcomes -----------------------------------------------------

/// A step never takes a confirmed entry away from a copy that holds it,
/// except a restart on a fresh disk (note 2: "could an older record in the
/// snapshot overwrite a newer value that arrived first?").
///
/// Argument: a copy's log changes by an append (which cuts only a suffix
/// that disagrees with the sender, and a serving sender holds every
/// confirmed entry), by a checkpoint install (refused by a copy that holds
/// the checkpoint's entry, so it replaces only a log that lacks or
/// contradicts the entry at the checkpoint's position, and the checkpoint
/// holds only confirmed history), or by a recovered tail (which holds every
/// confirmed entry).
pub fn no_confirmed_entry_dropped(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let fresh = match a {
        Action::Restart {
            node,
            fresh_disk: true,
        } => Some(*node),
        _ => None,
    };
    (0..NODES_MAX as NodeId).all(|n| {
        fresh == Some(n) || {
            let (before, after) = (&s.nodes[n as usize].log, &t.nodes[n as usize].log);
            (1..=s.confirmed.len).all(|p| {
                let e = s.confirmed.at(p);
                before.at(p) != e || after.at(p) == e
            })
        }
    })
}

/// Every confirmed entry is durable on at least W eligible instances (W of
/// the rf the owner confirms on), less one for each eligible instance whose
/// disk is gone and never below one; and the owner serving at the record's
/// epoch holds it.
///
/// Argument: a confirm counts W counted copies, all eligible. Recovery seals
/// E - W + 1 eligible instances, which meets every W-subset, and inspection
/// takes the newest, longest sealed history, which holds every confirmed
/// entry; install plus W receipts put it back on W counted copies. A swap
/// keeps the leaving copy eligible until the target covers B, so below B an
/// entry keeps W - 1 old copies plus the target; above B it was counted from
/// the new set. A handoff commits only at F, after admission closed and F was
/// confirmed, and the new owner holds F.
pub fn no_confirmed_entry_lost(_m: &MoveModel, s: &State) -> bool {
    let r = &s.record;
    // Lost instances, by ground truth: a replaced disk is lost even where a
    // mutant protocol failed to notice.
    let lost = r
        .eligible
        .iter()
        .filter(|i| !s.current(*i) || s.nodes[i.node() as usize].wiped_unbound)
        .count() as u8;
    let need = majority(r.rf_served).saturating_sub(lost).max(1);
    let owner = s.current_owner();
    let holders = s.current_of(r.eligible);
    (1..=s.confirmed.len).all(|p| {
        let x = s.confirmed.at(p);
        let copies = holders
            .iter()
            .filter(|i| s.nodes[i.node() as usize].log.at(p) == x)
            .count();
        copies >= need as usize && owner.is_none_or(|o| s.nodes[o as usize].log.at(p) == x)
    })
}

/// Never two different entries confirmed at one position.
///
/// Argument: one owner writes each epoch; an owner confirms only entries of
/// its own epoch; a newer owner starts from a history that holds every
/// confirmed entry (see above), so its own entries go after them.
pub fn one_confirmed_history(_m: &MoveModel, s: &State) -> bool {
    !s.forked
}

/// An owner that is still able to act at an older epoch than the record's
/// (a zombie) has confirmed nothing that the current owner's log lacks.
///
/// Argument: it may still truthfully confirm an entry that reached W copies
/// before the seals (recovery keeps such an entry). After the seals, at most
/// W - 1 eligible copies accept its appends, so it cannot reach W again.
pub fn stale_owner_confirms_nothing_new(m: &MoveModel, s: &State) -> bool {
    let Some(cur) = s.current_owner() else {
        return true;
    };
    let cur_log = &s.nodes[cur as usize].log;
    (0..m.cfg.nodes).all(|n| {
        let nd = &s.nodes[n as usize];
        let stale = m.serves(s, n) && nd.serving.epoch < s.record.epoch;
        !stale || (1..=nd.serving.confirmed).all(|p| cur_log.at(p) == nd.log.at(p))
    })
}

/// While a handoff is committed, its new owner holds the certificate's entry
/// at F, and its old owner holds no entry of its own epoch beyond F (note 2:
/// the barrier Lcut must not grow).
///
/// Argument: the commit requires the new owner durable at F, and nothing but
/// a newer owner's append or a recovery install (which clears the handoff)
/// changes its log; the old owner closed admission before reporting F and
/// reported F only once drained, so nothing of its epoch lands after F.
pub fn old_owner_accepted_nothing_after_f(_m: &MoveModel, s: &State) -> bool {
    let h = &s.record.handoff;
    if h.phase != HandoffPhase::Committed {
        return true;
    }
    let new_log = &s.nodes[h.to as usize].log;
    let new_holds_f = h.fin == 0 || (new_log.len >= h.fin && new_log.at(h.fin) == h.fin_entry);
    let old = &s.nodes[h.from as usize].log;
    let old_epoch = s.record.epoch - 1;
    new_holds_f && (h.fin + 1..=old.len).all(|p| old.at(p).epoch() != old_epoch)
}

/// No copy's log holds one message at two positions: a consumer reading
/// any copy, or an owner activated from it, would deliver it twice (note 2:
/// "writing the same version repeatedly should be identifiable").
///
/// Argument: each publish appends a new message once, at the owner's tail;
/// a replica applies an append at the position it names, after checking the
/// entry before it, and an append it already holds changes nothing.
pub fn no_message_twice(m: &MoveModel, s: &State) -> bool {
    s.nodes[..m.cfg.nodes as usize].iter().all(|n| {
        let mut seen = 0u32;
        (1..=n.log.len).all(|p| {
            let bit = 1u32 << n.log.at(p).msg();
            let fresh = seen & bit == 0;
            seen |= bit;
            fresh
        })
    })
}

/// No message is confirmed at two positions: a producer that retried a
/// publish after a timeout sees it delivered once (note 2: "does timeout
/// retry cause duplicate effects?").
///
/// Argument: every entry carries the producer's sequence, so an owner's
/// history is its record of what the producer published; a retry is
/// appended only by an owner whose history lacks it. The confirmed history
/// is a prefix of every later owner's history (no confirmed entry is lost),
/// so once one attempt is confirmed every owner that could take the retry
/// holds it and answers from it; an owner that lacked it and appended the
/// retry holds no other attempt, and any other attempt still held elsewhere
/// was not confirmed, so recovery or replication discards it before anyone
/// can confirm it at a second position.
pub fn confirmed_once(_m: &MoveModel, s: &State) -> bool {
    let mut seen = 0u32;
    (1..=s.confirmed.len).all(|p| {
        let bit = 1u32 << s.confirmed.at(p).msg();
        let fresh = seen & bit == 0;
        seen |= bit;
        fresh
    })
}

/// Every checkpoint is confirmed history: the entry at a copy's checkpoint
/// position is the confirmed entry there (note 1's retention: the owner
/// truncates only below a boundary it confirmed).
///
/// Argument: `Truncate` takes the owner's confirmed tail, which is in the
/// confirmed history; `InstallCheckpoint` copies the sender's; recovery
/// never cuts a confirmed entry, so no later step moves the base off it.
pub fn checkpoint_confirmed(_m: &MoveModel, s: &State) -> bool {
    s.nodes
        .iter()
        .all(|n| n.base == 0 || s.confirmed.covers(&n.log, n.base))
}

/// Whether message `m` is in the confirmed history.
fn in_confirmed_history(s: &State, m: u8) -> bool {
    (1..=s.confirmed.len).any(|p| s.confirmed.at(p).msg() == m)
}

/// The client is acknowledged a publish only once the owner that accepted
/// it has confirmed it: at the acknowledgement, the message is in the
/// confirmed history, at or below that owner's confirmed tail.
///
/// Argument: `AckClient` needs the accepting node to serve and its
/// confirmed tail to cover the message's position in its log; a confirm
/// records its entries in the confirmed history (no two different entries
/// at a position, "one confirmed history"). The owner need not be the
/// record's: an owner that a recovery superseded may still truthfully
/// confirm an entry W copies held before the seals, and that entry is in
/// the recovered history.
pub fn acked_after_confirm(m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    let Action::AckClient { client: k } = *a else {
        return true;
    };
    let c = &s.clients[k as usize];
    let n = &s.nodes[c.at as usize];
    m.acked_position(s, k)
        .is_some_and(|p| p <= n.serving.confirmed && s.confirmed.at(p) == n.log.at(p))
        && in_confirmed_history(s, c.msg)
}

/// Every publish acknowledged to a client is in the confirmed history,
/// and the owner serving at the record's epoch holds it.
///
/// Argument: an acknowledgement follows a confirm (above), and no
/// confirmed entry is lost: every later owner starts from a history that
/// holds the confirmed history.
pub fn no_acked_publish_lost(_m: &MoveModel, s: &State) -> bool {
    let owner = s.current_owner();
    let acked = s.clients.iter().fold(0u8, |bits, c| bits | c.acked);
    (1..=8u8).filter(|x| acked & (1 << (x - 1)) != 0).all(|x| {
        in_confirmed_history(s, x)
            && owner.is_none_or(|o| {
                let log = &s.nodes[o as usize].log;
                (1..=log.len).any(|p| log.at(p).msg() == x)
            })
    })
}

/// A message whose settle the consumer was told is done is never
/// delivered again (note 2: "how are deletions synchronized?"; "deletions
/// must propagate as log events or tombstones").
///
/// Argument: a settle is a log entry, and the consumer is told it is done
/// only when an owner confirms the entry, so it is in the confirmed
/// history. The owner serving at the record's epoch holds every confirmed
/// entry ("no confirmed entry is lost"): whatever carried the history to
/// it (replication, a recovery's install, a handoff's continuation, a
/// checkpoint, whose state is the effect of the entries it folds in)
/// carried the settle. It delivers only messages its log has not settled.
/// (A zombie at an older epoch may still answer a consumer from its stale
/// log: fencing acts where writes are accepted, and the consumer's settle
/// of such a delivery is refused, because the zombie cannot confirm it.)
pub fn settled_never_redelivered(_m: &MoveModel, s: &State) -> bool {
    let Some(o) = s.current_owner() else {
        return true;
    };
    let nd = &s.nodes[o as usize];
    (1..crate::types::SETTLE_BIT)
        .filter(|x| s.is_settled(*x))
        .all(|x| {
            !(1..=nd.serving.confirmed).any(|p| nd.log.at(p).publishes() == Some(x))
                || crate::protocol::settled_in(&nd.log, x)
        })
}

/// No copy holds a log with an empty position below its tail (note 2:
/// "log gap detected; cannot skip").
///
/// Argument: an append extends the agreed prefix by the sender's next
/// entry, and a sender ships only increments above its checkpoint; a copy
/// whose agreed prefix ends below the sender's checkpoint gets the
/// checkpoint first (`InstallCheckpoint`), never the increment after it.
pub fn no_gap_applied(m: &MoveModel, s: &State) -> bool {
    s.nodes[..m.cfg.nodes as usize]
        .iter()
        .all(|n| (1..=n.log.len).all(|p| !n.log.at(p).is_none()))
}

/// An ASK redirects one request and leaves the client's stable route as
/// it was (note 2: "upon receiving ASK, only a one-time retry plan is
/// generated for the target").
///
/// Argument: the client writes its stable route from a MOVED (forward in
/// epoch only) or from the record at a timeout, never from an ASK; the
/// next request starts from the stable route.
pub fn ask_keeps_route(m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::AnswerClient { client: k } = *a else {
        return true;
    };
    if !matches!(m.reply(s, k), Some(crate::protocol::Reply::Ask { .. })) {
        return true;
    }
    let (c, d) = (&s.clients[k as usize], &t.clients[k as usize]);
    (d.route_node, d.route_epoch) == (c.route_node, c.route_epoch)
}

/// A request follows at most `client_hops` answers that send it on (note
/// 2: "redirects and forwards must also limit the number of hops to
/// prevent two nodes from pointing to each other in a loop").
///
/// Argument: each answer but an acceptance counts one hop, and a request
/// at the limit gives up instead of following another.
pub fn hops_within_limit(m: &MoveModel, s: &State) -> bool {
    s.clients.iter().all(|c| c.hops <= m.cfg.client_hops)
}

// ---- always: rules ----------------------------------------------------------

/// The owner at the record's epoch confirms with W of the rf it adopted from
/// the committed record (note 1: "the write requirement comes from the
/// configured replication factor, not from the number of copies currently
/// assigned").
pub fn w_from_configured_rf(m: &MoveModel, s: &State) -> bool {
    s.current_owner()
        .is_none_or(|o| m.effective_w(s, o) == majority(s.record.rf_served))
}

/// The owner at the record's epoch counts only followers of the committed
/// record (the leaving copy until it switches), all eligible, never learners,
/// and holds no acknowledgement from a suspended follower: what it counts
/// for a restarted copy comes only after re-admission. With messages in
/// flight the owner can know of a suspension only once the notice (or a
/// marked acknowledgement) reached it, so the last clause speaks of the
/// suspensions it heard of: from then on it counts nothing from that copy.
pub fn owner_counts_committed_followers(m: &MoveModel, s: &State) -> bool {
    let r = &s.record;
    s.current_owner().is_none_or(|o| {
        let c = m.counted_for_confirm(s, o);
        let sv = &s.nodes[o as usize].serving;
        let heard = |x: Slot| !m.cfg.net || sv.floor_of(x.node()) >= s.nodes[x.node() as usize].inc;
        c.minus(r.eligible).is_empty()
            && c.inter(r.learners).is_empty()
            && c.inter(r.suspended)
                .iter()
                .all(|x| sv.acks.get(x) == 0 || !heard(x))
            && c.minus(r.followers.union(r.leaving)).is_empty()
    })
}

/// While a recovery is pending there is no move before its swap and no
/// handoff (note 1: "a pending recovery cancels any move in progress").
pub fn nothing_moves_during_recovery(_m: &MoveModel, s: &State) -> bool {
    let r = &s.record;
    !r.recovery.pending
        || (!matches!(r.mv.phase, MovePhase::Learning | MovePhase::Admitted)
            && r.handoff.phase == HandoffPhase::None)
}

/// At most W - 1 restarted followers await re-admission at once (note 1,
/// "Restarted followers").
/// Counted on disks that still exist: a lost instance stays suspended (it
/// is never counted again) until its replacement removes it, but it never
/// rejoins, so it holds no rejoin slot (finding 36).
pub fn suspended_below_w(m: &MoveModel, s: &State) -> bool {
    s.current_of(s.record.suspended).len() < m.w_served(s)
}

/// Step 2 happens only when the target, on the instance the record names,
/// holds the confirmed history through B (B is the owner's confirmed tail
/// when it switched, so this is the owner's history through B; it is read
/// from the history variable because the owner may be down when the
/// controller acts on its report).
pub fn removal_waits_for_b(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    if *a != Action::RemoveLeaving {
        return true;
    }
    let r = &s.record;
    let target = &s.nodes[r.mv.target.node() as usize];
    s.current(r.mv.target) && target.log.covers(&s.confirmed, r.mv.boundary)
}

/// An append lands only on a replica that has seen no newer epoch than the
/// sender's and has not sealed at or above it (note 2).
pub fn fencing_enforced(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let (to, e) = match *a {
        Action::Replicate { from, to } => (to, s.nodes[from as usize].serving.epoch),
        Action::Deliver {
            msg: crate::net::Msg::Append { to, epoch, .. },
        } => (to.node(), epoch),
        _ => return true,
    };
    let before = &s.nodes[to as usize];
    if t.nodes[to as usize].log == before.log {
        return true;
    }
    e >= before.seen && e > before.sealed_at
}

/// Messages in flight: fewer than [`crate::net::NET_MAX`] messages are in
/// flight. What a deployment sees if this fails: some process's outbound
/// queue grows without bound.
///
/// Argument: every sender keeps a window. An owner has at most one message
/// outstanding on each link to a copy (an append, or the reply to it), a
/// refusal counting against every link touching its destination; an owner
/// keeps one progress report outstanding, and the controller's refusal of
/// it is part of that window (finding 23); a restart sends one suspension
/// notice; and the budgets bound drops and duplicates. With at most five
/// nodes, two owners serving at once and the configs' budgets, that stays
/// below twelve (the largest checked config reaches six).
pub fn net_below_capacity(_m: &MoveModel, s: &State) -> bool {
    !s.net.is_full()
}

/// Messages in flight: a node serving at an older epoch than a refusal
/// tells it stops serving when the refusal is delivered (note 2: "a node
/// that sees a newer epoch stops serving").
pub fn refused_owner_stops(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::Deliver {
        msg: crate::net::Msg::Refuse { to, epoch },
    } = *a
    else {
        return true;
    };
    let before = &s.nodes[to as usize].serving;
    !(before.active && before.epoch < epoch && t.nodes[to as usize].serving.active)
}

/// Note 1, "After removal": "a later move back to R can start from" its
/// retained copy. Step 0 names a node that holds data but no instance in
/// the record: it left as a removed (or dropped) copy and kept its disk.
fn move_back_from_retained(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    matches!(a, Action::AddLearner { target } if s.nodes[*target as usize].log.len > 0)
}

fn checkpoint_installed(_m: &MoveModel, _s: &State, a: &Action, _t: &State) -> bool {
    matches!(a, Action::InstallCheckpoint { .. })
}

fn checkpoint_renewed(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    matches!(a, Action::InstallCheckpoint { to, .. } if s.nodes[*to as usize].base > 0)
}

// ---- sometimes ----------------------------------------------------------------

fn confirm_advances(s: &State, a: &Action, t: &State) -> Option<NodeId> {
    match *a {
        Action::Confirm { node }
            if t.nodes[node as usize].serving.confirmed
                > s.nodes[node as usize].serving.confirmed =>
        {
            Some(node)
        }
        _ => None,
    }
}

/// Step 2 happens with data in play: the removal of a leaving copy after the
/// owner recorded a non-zero boundary B (note 1's story, steps 05-08).
fn move_completes(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    *a == Action::RemoveLeaving && s.record.mv.boundary > 0
}

/// After the swap and the owner's switch, a confirm's copies include the
/// target: the new counted set is really used, not just written.
fn confirm_from_new_set(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Some(n) = confirm_advances(s, a, t) else {
        return false;
    };
    let r = &s.record;
    let tail = t.nodes[n as usize].serving.confirmed;
    r.mv.phase == MovePhase::Swapped
        && r.adopted
        && s.nodes[r.mv.target.node() as usize]
            .log
            .covers(&s.nodes[n as usize].log, tail)
}

/// Note 1's abort story: a recovery opens while a move is before its swap
/// and cancels it.
fn recovery_cancels_move(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    matches!(a, Action::OpenRecovery { .. })
        && matches!(s.record.mv.phase, MovePhase::Learning | MovePhase::Admitted)
        && t.record.mv.phase == MovePhase::None
}

/// Recovery completes: otherwise every property about it holds vacuously.
fn recovery_activates(_m: &MoveModel, _s: &State, a: &Action, _t: &State) -> bool {
    matches!(a, Action::ActivateRecovery { .. })
}

/// A planned handoff goes all the way: the new owner, activated from the
/// continuation certificate, confirms a publish of its own.
fn handoff_owner_confirms(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    confirm_advances(s, a, t).is_some_and(|n| s.nodes[n as usize].serving.via_handoff)
}

/// A handoff cancelled before its commit reopens admission on the old owner.
fn handoff_cancelled(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    matches!(a, Action::CancelHandoff | Action::AbortHandoff)
        && t.nodes[s.record.handoff.from as usize].serving.open
}

/// A restarted follower is re-admitted while the epoch never changed: the
/// queue kept serving without a recovery fence (note 1, restarted followers).
fn rejoin_without_fence(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    matches!(a, Action::Rejoin { .. }) && s.record.epoch == 1 && !s.record.recovery.pending
}

/// A stale owner's append is refused by a fenced replica, and it stops
/// serving (note 2: permission checks where writes are accepted).
fn zombie_refused(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let from = match *a {
        Action::Replicate { from, .. } => from,
        Action::Deliver {
            msg: crate::net::Msg::Refuse { to, .. },
        } => to,
        _ => return false,
    };
    s.nodes[from as usize].serving.active && !t.nodes[from as usize].serving.active
}

/// Messages in flight: an append delivered to a replica that already holds
/// its entry at its position (a duplicate or a resend) leaves the log as it
/// was and is acknowledged again.
fn duplicate_recognised(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::Deliver {
        msg: crate::net::Msg::Append { to, pos, entry, .. },
    } = *a
    else {
        return false;
    };
    let n = to.node() as usize;
    s.nodes[n].log.at(pos) == entry
        && t.nodes[n].log == s.nodes[n].log
        && t.net.len == s.net.len
        && s.budget.dups > 0
}

/// The producer's retry reaches an owner at a newer epoch than the entry
/// that holds its first attempt (a recovery or a handoff carried it over),
/// and the owner answers from that entry without appending.
fn retry_deduplicated_after_owner_change(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::RetryPublish { node } = *a else {
        return false;
    };
    let nd = &s.nodes[node as usize];
    let m = s.budget.published;
    t.nodes[node as usize].log == nd.log
        && (1..=nd.log.len)
            .any(|p| nd.log.at(p).msg() == m && nd.log.at(p).epoch() < nd.serving.epoch)
}

/// The producer's retry reaches a serving owner whose history lacks the
/// message (the first attempt went to an owner that lost it, or a recovery
/// discarded it), which appends it.
fn retry_appended(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::RetryPublish { node } = *a else {
        return false;
    };
    t.nodes[node as usize].log.len > s.nodes[node as usize].log.len
}

/// The client, at the old owner of a committed handoff that is not yet
/// activated, is sent on by an ASK.
fn client_follows_ask(m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    let Action::AnswerClient { client: k } = *a else {
        return false;
    };
    matches!(m.reply(s, k), Some(crate::protocol::Reply::Ask { .. }))
}

/// A MOVED moves the client's stable route to a newer owner.
fn client_moved(m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::AnswerClient { client: k } = *a else {
        return false;
    };
    matches!(m.reply(s, k), Some(crate::protocol::Reply::Moved { .. }))
        && t.clients[k as usize].route_epoch > s.clients[k as usize].route_epoch
}

/// The client is acknowledged a publish whose request was redirected or
/// told to try again on its way.
fn client_acked_after_redirect(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    matches!(*a, Action::AckClient { client } if s.clients[client as usize].hops > 0)
}

/// A request reaches the hop limit and gives up.
fn client_gives_up(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::AnswerClient { client: k } = *a else {
        return false;
    };
    s.clients[k as usize].phase == ReqPhase::Sent && t.clients[k as usize].phase == ReqPhase::Idle
}

/// The client's retry reaches an owner at a newer epoch than the entry
/// that holds its first attempt, which accepts it from that entry without
/// appending.
fn client_retry_deduplicated(m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::AnswerClient { client: k } = *a else {
        return false;
    };
    if m.reply(s, k) != Some(crate::protocol::Reply::Accept) {
        return false;
    }
    let c = &s.clients[k as usize];
    let nd = &s.nodes[c.at as usize];
    t.nodes[c.at as usize].log == nd.log
        && (1..=nd.log.len)
            .any(|p| nd.log.at(p).msg() == c.msg && nd.log.at(p).epoch() < nd.serving.epoch)
}

/// The client is acknowledged by an owner at a newer epoch than the one
/// it first published at (its route moved on by a redirect or a refresh).
fn client_acked_by_new_owner(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    matches!(*a, Action::AckClient { client } if s.clients[client as usize].epoch > 1)
}

/// Note 2: "clients, proxies, and long-lived connections will see the new
/// state at different times": one client is acknowledged at a newer epoch
/// than another client's stable route still names.
fn clients_see_cutover_apart(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    let Action::AckClient { client: k } = *a else {
        return false;
    };
    let at = s.clients[k as usize].epoch;
    s.clients
        .iter()
        .enumerate()
        .any(|(j, c)| j != k as usize && c.route_epoch > 0 && c.route_epoch < at)
}

/// An owner confirms a settle entry, and the consumer is told it is done.
fn settle_confirmed(_m: &MoveModel, s: &State, _a: &Action, t: &State) -> bool {
    t.settled != s.settled
}

/// The owner serving at the record's epoch holds a settle, written under
/// an earlier epoch, that the consumer was told is done.
fn settle_kept_across_owner_change(_m: &MoveModel, s: &State) -> bool {
    let Some(o) = s.current_owner() else {
        return false;
    };
    let nd = &s.nodes[o as usize];
    (1..=nd.log.len).any(|p| {
        let e = nd.log.at(p);
        e.epoch() < nd.serving.epoch && e.settles().is_some_and(|x| s.is_settled(x))
    })
}

/// A copy installs a checkpoint whose folded history holds a settle: the
/// delete travels inside the checkpoint's state.
fn checkpoint_folds_settle(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    let Action::InstallCheckpoint { from, .. } = *a else {
        return false;
    };
    let f = &s.nodes[from as usize];
    (1..=f.base).any(|p| f.log.at(p).settles().is_some())
}

/// Messages in flight: a progress report sent before an epoch change (a
/// handoff's commit, a recovery's activation) reaches the controller after
/// it; the controller answers with a refusal instead of taking it.
fn stale_report_refused(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    matches!(
        *a,
        Action::Deliver {
            msg: crate::net::Msg::Progress { epoch, .. },
        } if epoch < s.record.epoch
    )
}

/// Messages in flight: the owner receives an acknowledgement that the copy
/// sent before it restarted, after it heard of the suspension, and does not
/// count it.
fn stale_ack_ignored(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::Deliver {
        msg: crate::net::Msg::Ack { to, from, inc, .. },
    } = *a
    else {
        return false;
    };
    let sv = &s.nodes[to as usize].serving;
    sv.active && inc < sv.floor_of(from.node()) && t.nodes[to as usize].serving == *sv
}

/// Messages in flight: the controller re-admits a suspended copy on the
/// owner's report while the copy is down again (finding 21: the controller
/// has no exact failure detector).
fn rejoin_while_down(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    matches!(*a, Action::Rejoin { node } if !s.nodes[node as usize].alive)
}

/// Messages in flight: an acknowledgement the copy marked while it knew
/// itself suspended reaches the owner after the record re-admitted it, and
/// the owner mutes the copy again (finding 22: the mark is the copy's own
/// knowledge, which lags the record; its next acknowledgement unmutes it).
fn late_suspended_mark(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    let Action::Deliver {
        msg:
            crate::net::Msg::Ack {
                to,
                from,
                admitted: false,
                ..
            },
    } = *a
    else {
        return false;
    };
    !s.record.suspended.contains(from)
        && !s.nodes[to as usize].serving.muted.contains(from)
        && t.nodes[to as usize].serving.muted.contains(from)
}

/// After an rf increase the owner confirms on the grown W.
fn confirm_with_new_w(m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    confirm_advances(s, a, t)
        .is_some_and(|n| s.nodes[n as usize].serving.w == majority(m.cfg.rf_max()))
}

/// The availability half of "W comes from the configured rf": with a learner
/// assigned and a follower down, the queue still confirms a new publish.
fn confirm_with_learner_and_follower_down(
    _m: &MoveModel,
    s: &State,
    a: &Action,
    t: &State,
) -> bool {
    // The newly confirmed entry is one the down follower never stored, so
    // the confirm cannot have leaned on its earlier acknowledgement.
    let Some(n) = confirm_advances(s, a, t) else {
        return false;
    };
    let log = &t.nodes[n as usize].log;
    let tail = t.nodes[n as usize].serving.confirmed;
    !s.record.learners.is_empty()
        && s.record.followers.iter().any(|f| {
            let nd = &s.nodes[f.node() as usize];
            !nd.alive && !nd.log.covers(log, tail)
        })
}

/// Note 1, lost follower replaced: a copy whose disk is gone is swapped out
/// for a new copy that joined by step 0.
fn lost_follower_replaced(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    matches!(a, Action::Swap { .. }) && t.record.leaving.iter().any(|l| !s.current(l))
}

/// Drain: after handing off its ownership, the old owner's copy moves off.
fn drained_node_leaves(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    *a == Action::RemoveLeaving && s.record.leaving.iter().any(|l| l.node() == 0)
}

/// A move whose target went down or lost its disk after the swap has a way
/// out: the leaving copy, still replicating and eligible, is swapped back in
/// (note 1: "if T fails between steps 1 and 2, R is still in the eligible
/// set and still holds its data"); the liveness properties show the move
/// then ends.
fn swapped_back(_m: &MoveModel, _s: &State, a: &Action, _t: &State) -> bool {
    *a == Action::SwapBack
}

/// Note 1's recovery story, step 08: after a recovery cancelled a move, the
/// move is retried under the new epoch and completes.
fn retried_move_completes(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    *a == Action::RemoveLeaving
        && s.budget.retries > 0
        && s.record.epoch > 1
        && s.record.mv.replaces.is_empty()
}

/// Finding 10: a recovery activates on a quorum of receipts that includes a
/// follower suspended when it opened.
fn suspended_receipt_activates(_m: &MoveModel, s: &State, a: &Action, t: &State) -> bool {
    matches!(a, Action::ActivateRecovery { .. })
        && s.record
            .suspended
            .inter(s.record.recovery.installed)
            .iter()
            .any(|x| !t.record.suspended.contains(x))
}

/// A follower that restarted, was suspended and crashed again before it
/// rejoined comes back on its disk.
fn suspended_restarts_again(_m: &MoveModel, s: &State, a: &Action, _t: &State) -> bool {
    let Action::Restart {
        node,
        fresh_disk: false,
    } = *a
    else {
        return false;
    };
    s.record.suspended.contains(s.slot(node))
}

// ---- eventually (terminal states) ------------------------------------------------

/// How many copies may be down while the partition must still make
/// progress: recovery needs E - W + 1 seals (so at most W - 1 eligible
/// copies down) and W quorum receipts from the rf counted copies (so at most
/// rf - W counted copies down). Both hold only within min(W - 1, rf - W):
/// 1 at rf 3 and at rf 4, 2 at rf 5. W and rf are the ones the owner
/// confirms on.
pub fn tolerated(s: &State) -> u8 {
    let rf = s.record.rf_served;
    let w = majority(rf);
    (w - 1).min(rf - w)
}

/// Copies that are down: instances of the record (owner, followers, the
/// eligible set) whose node is down or whose disk is gone.
pub fn copies_down(s: &State) -> u8 {
    let r = &s.record;
    r.eligible
        .union(r.followers)
        .with(r.owner)
        .iter()
        .filter(|i| !s.current(*i) || !s.nodes[i.node() as usize].alive)
        .count() as u8
}

/// Whether a terminal state is one the progress properties speak to: at
/// most [`tolerated`] copies are down. A state whose network is full is not
/// one: it is terminal only because the model takes no step from it, and it
/// already breaks "messages in flight stay below the network's capacity"
/// (the spec's bag has no such stop).
pub fn within_tolerance(_m: &MoveModel, s: &State) -> bool {
    copies_down(s) <= tolerated(s) && !s.net.is_full()
}

/// A started move completes or is cancelled (by the operator, or by the
/// controller for a reason) while at most [`tolerated`] copies are down.
fn move_settles(_m: &MoveModel, s: &State) -> bool {
    s.record.mv.phase == MovePhase::None
}

/// A started handoff commits (and the new owner activates) or is cancelled
/// while at most [`tolerated`] copies are down.
fn handoff_settles(_m: &MoveModel, s: &State) -> bool {
    s.record.handoff.phase == HandoffPhase::None
}

/// A pending recovery activates while at most [`tolerated`] copies are
/// down: seals from E - W + 1 eligible copies and receipts from W counted
/// copies, a suspended follower's included (finding 10).
fn recovery_settles(_m: &MoveModel, s: &State) -> bool {
    !s.record.recovery.pending
}

/// Once faults stop and the partition is whole again, its owner has
/// confirmed every entry it holds: an entry the owner accepted is confirmed
/// or, if a recovery came between, discarded with the old owner's tail, but
/// never left waiting in a partition that is whole (finding 32: a
/// re-admitted copy whose acknowledgements all said suspended is never asked
/// again, and the owner's last entry waits for it). The runtime's healing
/// phase asks the same of every simulated run.
fn accepted_confirmed(m: &MoveModel, s: &State) -> bool {
    !partition_whole(m, s)
        || s.current_owner()
            .is_some_and(|o| s.nodes[o as usize].serving.confirmed >= s.nodes[o as usize].log.len)
}

/// Within the tolerance, with at least rf nodes up to hold the copies.
fn whole_in_scope(m: &MoveModel, s: &State) -> bool {
    let up = s.nodes.iter().filter(|n| n.alive).count() as u8;
    within_tolerance(m, s) && up >= s.record.rf
}

/// Once faults stop, the partition is whole again: an owner serving at the
/// record's epoch and rf counted copies in all, each alive on its current
/// disk and not suspended, nothing leaving and no learner, whenever at most
/// [`tolerated`] copies are down and at least rf nodes are up to hold them
/// (note 1: a lost follower is replaced by step 0 and a swap).
fn partition_whole(_m: &MoveModel, s: &State) -> bool {
    let r = &s.record;
    let counted = r.followers.with(r.owner);
    s.current_owner().is_some()
        && counted.len() == r.rf
        && counted
            .iter()
            .all(|i| s.current(i) && s.nodes[i.node() as usize].alive)
        && r.suspended.is_empty()
        && r.leaving.is_empty()
        && r.learners.is_empty()
}

/// The controller never refuses a returning process for good: once faults
/// stop, a node is down only if no restart is left to bring it back (note 1:
/// "at most W - 1 rejoin at once" delays a restart, it does not forbid it).
fn restarts_admitted(m: &MoveModel, s: &State) -> bool {
    s.budget.restarts >= m.cfg.restarts || s.nodes[..m.cfg.nodes as usize].iter().all(|n| n.alive)
}

/// Within the tolerance, with a node up whose current disk holds no copy.
fn planned_in_scope(m: &MoveModel, s: &State) -> bool {
    let r = &s.record;
    let replicas = r
        .followers
        .union(r.learners)
        .union(r.eligible)
        .union(r.leaving)
        .with(r.owner);
    within_tolerance(m, s)
        && (0..m.cfg.nodes).any(|n| s.nodes[n as usize].alive && !replicas.contains(s.slot(n)))
}

/// Every planned move (the budget of follower moves and rf increases, plus
/// one retry for each planned move a recovery or a lost target cancelled)
/// was started while a node is free to take a copy: a move is retried after
/// the recovery activates (note 1, recovery story, step 08).
fn planned_moves_done(m: &MoveModel, s: &State) -> bool {
    s.budget.learner_adds >= m.cfg.moves + m.cfg.rf_increases + s.budget.retries
}
