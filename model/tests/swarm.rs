//! Swarm mode: seeded random walks find a known bug with a short, replayable
//! trace, find nothing in the correct protocol, and give the same result for
//! the same seed whatever the number of workers.

use livemove_model::checker::swarm::{SwarmOptions, SwarmReport};
use livemove_model::checker::{check_swarm, Path};
use livemove_model::properties::{self, Check};
use livemove_model::{Cfg, MoveModel, Mutant};

fn swarm(m: &MoveModel, searches: usize, seed: u64, workers: usize) -> SwarmReport {
    check_swarm(
        m,
        SwarmOptions {
            searches,
            depth: 60,
            seed,
            workers,
        },
    )
}

/// Everything a swarm report says, except timing.
fn summary(r: &SwarmReport) -> String {
    let mut out = format!(
        "visited {} distinct {} terminal walks {}\n",
        r.states_visited, r.distinct_fingerprints, r.terminal_walks
    );
    for v in &r.violations {
        let steps: Vec<String> = v.path.steps.iter().map(|(a, _)| a.to_string()).collect();
        out += &format!(
            "  {} search {} seed {} hits {} found {} path {}\n",
            v.name,
            v.search,
            v.search_seed,
            v.searches_hit,
            v.found_len,
            steps.join(", ")
        );
    }
    for s in &r.reached {
        out += &format!("  reached {} by {}\n", s.name, s.searches_hit);
    }
    out
}

/// Every step of `p` is what the model's `apply` gives.
fn replays(m: &MoveModel, p: &Path) -> bool {
    let mut s = m.init();
    p.init == s
        && p.steps.iter().all(|(a, t)| {
            let ok = m.apply(&s, *a) == Ok(*t);
            s = *t;
            ok
        })
}

#[test]
fn swarm_finds_remove_before_boundary_with_a_shrunk_trace() {
    let m =
        MoveModel::new(Cfg::named("join-and-move").with_mutant(Some(Mutant::RemoveBeforeBoundary)));
    let r = swarm(&m, 2000, 1, 2);
    let lost = r
        .violations
        .iter()
        .find(|v| v.name == "no confirmed entry is lost")
        .expect("the swarm finds the lost entry");
    // The walk that found it took 11 steps; shrinking gets it to 8, the
    // shortest counterexample the exhaustive checker reports (zoo.rs).
    assert_eq!((lost.search, lost.found_len), (87, 11));
    assert_eq!(lost.path.steps.len(), 8);
    assert!(replays(&m, &lost.path));
    let p = properties::for_cfg(&m.cfg)
        .into_iter()
        .find(|p| p.name == lost.name)
        .expect("the property applies");
    let Check::State(holds) = p.check else {
        panic!("`{}` is a state property", p.name)
    };
    let last = lost.path.steps.last().expect("non-empty").1;
    assert!(!holds(&m, &last), "the shrunk trace ends in a violation");
    assert!(!r.passed());
}

#[test]
fn swarm_finds_no_violation_in_the_correct_protocol_on_ci() {
    for cfg in Cfg::resolve("ci").expect("ci is a group") {
        let m = MoveModel::new(cfg);
        let r = swarm(&m, 500, 7, 2);
        assert!(r.passed(), "{}: {}", m.cfg.name, summary(&r));
        // Every walk comes to rest within the depth bound on these configs,
        // so every `eventually` property was checked at 500 terminal states.
        assert_eq!(r.terminal_walks, 500, "{}", m.cfg.name);
        assert!(
            !r.reached.is_empty(),
            "{}: no walk reached anything",
            m.cfg.name
        );
        let pinned = match m.cfg.name.as_str() {
            "join-and-move" => Some((6146, 573)),
            "join-and-move-net" => Some((12645, 4921)),
            _ => None,
        };
        if let Some(p) = pinned {
            assert_eq!(
                (r.states_visited, r.distinct_fingerprints),
                p,
                "{}: walks or fingerprints changed",
                m.cfg.name
            );
        }
    }
}

#[test]
fn same_seed_gives_the_same_result_whatever_the_workers() {
    let m = MoveModel::new(Cfg::named("handoff").with_mutant(Some(Mutant::HandoffWithoutBarrier)));
    let one = summary(&swarm(&m, 1000, 42, 1));
    let two = summary(&swarm(&m, 1000, 42, 2));
    let again = summary(&swarm(&m, 1000, 42, 2));
    assert_eq!(one, two);
    assert_eq!(two, again);
    assert!(one.contains("search"), "{one}");
    let other = summary(&swarm(&m, 1000, 43, 2));
    assert_ne!(one, other, "another seed walks other paths");
}
