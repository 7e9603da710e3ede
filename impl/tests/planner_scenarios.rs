//! The built-in scenarios, run end to end through the simulation, with
//! their outcomes pinned so that a change in the planner shows here.

use livemove_impl::planner::scenarios::{self, Report, Scenario, NAMES};
use livemove_impl::planner::sim::Sim;
use livemove_impl::planner::{NodeIx, Policy};

fn run(name: &str) -> Report {
    let s = scenarios::by_name(name).unwrap();
    // Plan times are not what these tests check; a constant clock keeps them out.
    scenarios::run(&s, &Policy::default(), &mut || 0.0).unwrap()
}

fn owned_per_node(s: &Sim) -> Vec<u32> {
    let mut owned = vec![0; s.view.nodes.len()];
    for pl in &s.view.placement {
        owned[pl.owner as usize] += 1;
    }
    owned
}

/// Run a scenario round by round and hand back the simulation.
fn simulate(s: &Scenario, rounds: u64) -> Sim {
    let mut sim = Sim::new(
        s.view.clone(),
        s.history.clone(),
        Policy::default(),
        scenarios::ROUND_SECS,
    );
    for round in 1..=rounds {
        if round > 1 {
            sim.advance();
        }
        sim.round(&mut || 0.0).unwrap();
    }
    sim
}

fn assert_never_broken(r: &Report) {
    assert!(r.peak_transfers <= r.limits.cluster_max, "{r:?}");
    assert!(r.peak_node_incoming <= r.limits.node_incoming_max, "{r:?}");
    assert!(r.peak_node_outgoing <= r.limits.node_outgoing_max, "{r:?}");
    assert_eq!(r.cooldown_violations, 0, "{r:?}");
    assert_eq!(r.domain_violations, 0, "{r:?}");
    assert_eq!(r.moves_while_held, 0, "{r:?}");
    assert!(r.settled, "{r:?}");
}

#[test]
fn note_2_one_node_added_ends_at_91_on_each_old_node_and_90_on_the_new_one() {
    let s = scenarios::by_name("add-one-node").unwrap();
    let sim = simulate(&s, 400);
    let owned = owned_per_node(&sim);
    assert_eq!(owned[..10], [91; 10], "{owned:?}");
    assert_eq!(owned[10], 90, "{owned:?}");
}

#[test]
fn add_one_node_meets_its_lower_bound_of_90_handoffs_and_272_follower_moves() {
    let r = run("add-one-node");
    assert_never_broken(&r);
    assert_eq!(
        (r.handoffs_lower_bound, r.follower_moves_lower_bound),
        (90, 272)
    );
    assert_eq!((r.handoffs, r.follower_moves), (90, 272));
    assert_eq!((r.moves, r.moves_lower_bound), (362, 362));
    assert_eq!(r.bytes_moved, 272 * scenarios::builtin::HISTORY_BYTES);
    assert_eq!((r.reversals, r.moved_twice), (0, 0));
    assert_eq!((r.owned_range, r.copies_range), ((90, 91), (272, 273)));
}

#[test]
fn add_20_percent_has_the_owned_bound_166_and_stays_within_1_05_of_the_bound() {
    let r = run("add-20-percent");
    assert_never_broken(&r);
    assert_eq!(r.handoffs_lower_bound, 166);
    assert_eq!((r.moves, r.moves_lower_bound), (666, 664));
    assert!(r.moves as f64 <= 1.05 * r.moves_lower_bound as f64);
    assert_eq!((r.reversals, r.moved_twice), (0, 0));
    assert_eq!((r.owned_range, r.copies_range), ((83, 84), (250, 250)));
}

#[test]
fn drain_empties_the_node_without_reversals() {
    let r = run("drain-node");
    assert_never_broken(&r);
    assert_eq!(r.left_on_draining, 0);
    assert_eq!(r.reversals, 0);
    assert_eq!((r.moves, r.moves_lower_bound), (526, 400));
    assert_eq!((r.follower_moves, r.handoffs), (330, 196));
}

#[test]
fn mixed_capacities_end_near_their_shares() {
    let r = run("mixed-capacities");
    assert_never_broken(&r);
    assert_eq!((r.moves, r.moves_lower_bound), (962, 947));
    // Shares of 3,000 copies by capacity 1, 2, 4 out of 28: 107, 214, 429.
    assert_eq!(r.copies_range, (107, 429));
    assert_eq!(r.reversals, 0);
}

#[test]
fn a_hot_partition_is_balanced_by_handoffs_of_other_partitions() {
    let r = run("hot-partition");
    assert_never_broken(&r);
    assert_eq!((r.follower_moves, r.handoffs), (0, 8));
    assert!(r.max_over_mean < 1.07, "{r:?}");
    assert_eq!(r.reversals, 0);
}

#[test]
fn a_node_that_just_received_is_not_drained_within_its_cooldown_and_nothing_goes_back() {
    let s = scenarios::by_name("just-received").unwrap();
    let policy = Policy::default();
    let cooldown_rounds = (policy.node_cooldown_secs / scenarios::ROUND_SECS) as u64;
    let mut sim = Sim::new(
        s.view.clone(),
        s.history.clone(),
        policy,
        scenarios::ROUND_SECS,
    );
    let mut first_move_off_3 = None;
    for round in 1..=200u64 {
        if round > 1 {
            sim.advance();
        }
        let (plan, _) = sim.round(&mut || 0.0).unwrap();
        for m in &plan.moves {
            if m.from == 3 {
                first_move_off_3.get_or_insert(round);
            }
            // The 30 copies came from node 7: none goes back.
            let received = s.history.last_copy_move[m.partition as usize].is_some();
            assert!(
                !(received && m.to == 7),
                "partition {} went back to 7",
                m.partition
            );
        }
    }
    // Round r plans at (r - 1) * 10 s; the cooldown ends at 300 s.
    assert_eq!(first_move_off_3, Some(cooldown_rounds + 1));
    let r = run("just-received");
    assert_never_broken(&r);
    assert_eq!((r.moves, r.moves_lower_bound, r.reversals), (30, 29, 0));
}

#[test]
fn nothing_is_planned_while_a_recovery_is_pending() {
    let r = run("recovery-pending");
    assert_eq!((r.moves, r.moves_while_held), (0, 0));
    assert_eq!(r.held_rounds, scenarios::QUIET_ROUNDS);
    assert_eq!(r.moves_lower_bound, 362, "the cluster does need work");
}

#[test]
fn traffic_noise_within_the_band_moves_nothing() {
    let r = run("steady-noise");
    assert_eq!(r.moves, 0);
    assert_eq!(r.rounds, 0);
    assert!(
        r.max_over_mean > 1.0,
        "the noise did change the scores: {r:?}"
    );
}

#[test]
fn failure_domains_hold_every_round_while_the_cluster_balances() {
    let r = run("failure-domains");
    assert_never_broken(&r);
    assert!(r.refused_domain > 0, "the constraint never bound: {r:?}");
    assert_eq!((r.moves, r.moves_lower_bound), (798, 795));
    assert_eq!((r.owned_range, r.copies_range), ((66, 67), (200, 200)));
}

#[test]
fn every_named_scenario_exists_and_unknown_names_are_refused_with_the_list() {
    for n in NAMES {
        assert_eq!(scenarios::by_name(n).unwrap().name, n);
    }
    let e = scenarios::by_name("add-two").unwrap_err().to_string();
    assert!(
        e.contains("add-two") && e.contains("failure-domains"),
        "{e}"
    );
}

#[test]
fn a_synthetic_cluster_is_reproducible_from_its_seed_and_checked() {
    let a = scenarios::synthetic(40, 400, 3).unwrap();
    let b = scenarios::synthetic(40, 400, 3).unwrap();
    assert_eq!(a.view, b.view);
    let empty: Vec<NodeIx> = (36..40).collect();
    for pl in &a.view.placement {
        assert!(pl.copies().all(|c| !empty.contains(&c)));
    }
    let r = scenarios::run(&a, &Policy::default(), &mut || 0.0).unwrap();
    assert_never_broken(&r);
    assert_eq!(r.reversals, 0);
    assert!(scenarios::synthetic(3, 10, 1).is_err());
    assert!(scenarios::synthetic(10, 0, 1).is_err());
}

#[test]
fn the_hot_partition_stays_put_and_its_owner_sheds_other_ownership() {
    let s = scenarios::by_name("hot-partition").unwrap();
    let hot_owner = s.view.placement[0].owner;
    let mut sim = Sim::new(
        s.view.clone(),
        s.history.clone(),
        Policy::default(),
        scenarios::ROUND_SECS,
    );
    let mut sources = Vec::new();
    for round in 1..=100u64 {
        if round > 1 {
            sim.advance();
        }
        let (plan, _) = sim.round(&mut || 0.0).unwrap();
        sources.extend(
            plan.moves
                .iter()
                .map(|m| (m.from, m.partition, m.is_handoff())),
        );
    }
    // Only handoffs of ordinary partitions: six off the hot partition's
    // owner, two more by the followers that received them.
    assert_eq!(sources.len(), 8, "{sources:?}");
    assert!(
        sources.iter().all(|&(_, p, handoff)| p != 0 && handoff),
        "{sources:?}"
    );
    assert_eq!(
        sources
            .iter()
            .filter(|&&(from, _, _)| from == hot_owner)
            .count(),
        6
    );
}
