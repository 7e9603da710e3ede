//! The compact mode (fingerprints, parent links, whole states only in the
//! frontier) and the exact mode (every state whole in an arena) explore the
//! same graph in the same order: every count, verdict and path agrees, on
//! every `ci` configuration and on every mutant of the bug zoo (violations,
//! and the cycles some mutants make, included). So do one and several
//! workers, a frontier in memory or on disk, and acyclicity checked by the
//! progress measure or by every edge.

use livemove_model::checker::{check, Acyclicity, AcyclicityCheck, Mode, Options, Report};
use livemove_model::{zoo, Cfg, MoveModel, Mutant};

/// Everything a report says, except timing and storage.
fn summary(r: &Report) -> String {
    let mut out = format!(
        "unique {} total {} edges {} depth {} complete {} acyclic {:?} terminals {} after faults {}\n",
        r.unique_states,
        r.total_states,
        r.edges,
        r.max_depth,
        r.complete,
        r.acyclic,
        r.terminal_states,
        r.terminal_states_after_faults
    );
    for p in &r.results {
        let path = p.path.as_ref().map(|x| {
            x.steps
                .iter()
                .map(|(a, _)| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        });
        out += &format!(
            "  {} {:?} in scope {:?} path {:?}\n",
            p.name, p.status, p.terminals_checked, path
        );
    }
    out
}

fn run(m: &MoveModel, mode: Mode, max_states: Option<usize>) -> Report {
    run_within(m, mode, max_states, None)
}

fn run_within(
    m: &MoveModel,
    mode: Mode,
    max_states: Option<usize>,
    memory: Option<usize>,
) -> Report {
    run_with(m, mode, max_states, memory, 1)
}

fn run_with(
    m: &MoveModel,
    mode: Mode,
    max_states: Option<usize>,
    memory: Option<usize>,
    workers: usize,
) -> Report {
    run_checking(m, mode, max_states, memory, workers, AcyclicityCheck::Auto)
}

fn run_checking(
    m: &MoveModel,
    mode: Mode,
    max_states: Option<usize>,
    memory: Option<usize>,
    workers: usize,
    acyclicity: AcyclicityCheck,
) -> Report {
    let r = check(
        m,
        Options {
            mode,
            max_states,
            memory,
            workers,
            acyclicity,
            ..Options::default()
        },
    );
    assert_eq!(r.mode, mode);
    r
}

/// The compact search once more with acyclicity checked the other way
/// than `auto` chose (by every edge where it used the measure, by the
/// measure where it kept every edge): the same report. Returns how the
/// `auto` run and the other one checked it.
fn other_acyclicity_agrees(
    m: &MoveModel,
    what: &str,
    compact: &Report,
) -> (Option<Acyclicity>, Option<Acyclicity>) {
    let by_measure = matches!(compact.acyclicity, Some(Acyclicity::Measure { .. }));
    let other = if by_measure {
        AcyclicityCheck::Edges
    } else {
        AcyclicityCheck::Measure
    };
    let r = run_checking(m, Mode::Compact, None, None, 1, other);
    assert_eq!(
        summary(compact),
        summary(&r),
        "{what}: acyclicity by {other:?} changed the report"
    );
    (compact.acyclicity.clone(), r.acyclicity)
}

/// Check `m` in both modes, the compact one with one and with `workers`
/// workers, and return the exact and the compact (one worker) reports.
fn agree(m: &MoveModel, what: &str, workers: usize) -> (Report, Report) {
    let exact = run(m, Mode::Exact, None);
    let compact = run(m, Mode::Compact, None);
    assert_eq!(
        summary(&exact),
        summary(&compact),
        "{what}: the modes differ"
    );
    let parallel = run_with(m, Mode::Compact, None, None, workers);
    assert_eq!(
        summary(&compact),
        summary(&parallel),
        "{what}: {workers} workers differ from one"
    );
    // Paths are rebuilt by replay in compact mode: the states must match too.
    for (e, c) in exact.results.iter().zip(&compact.results) {
        if let (Some(ep), Some(cp)) = (&e.path, &c.path) {
            assert_eq!(ep.init, cp.init, "{what}: `{}` starts elsewhere", e.name);
            assert!(
                ep.steps.iter().zip(&cp.steps).all(|(x, y)| x.1 == y.1),
                "{what}: a state on the path of `{}` differs",
                e.name
            );
        }
    }
    assert!(exact.collision_probability.is_none());
    assert!(compact.collision_probability.is_some());
    (exact, compact)
}

/// Every `ci` config in both modes and with two workers (`agree`), and
/// once more with a memory budget of one byte, which sends all but the first
/// chunk of every frontier to disk (with one worker or two, alternately):
/// the search is the same. One pass over
/// the group serves all three, and restart-rejoin's reports give the bytes
/// per state of both visited sets.
#[test]
fn both_modes_and_a_frontier_on_disk_agree_on_every_ci_config() {
    let cfgs = Cfg::resolve("ci").expect("ci group");
    // Two configs at a time: the searches below are mostly one-threaded.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(cfg) = cfgs.get(i) else { break };
                let name = cfg.name.clone();
                let m = MoveModel::new(cfg.clone());
                let (exact, in_memory) = agree(&m, &name, 2);
                assert!(in_memory.passed(), "{name} fails in compact mode");
                let (auto, other) = other_acyclicity_agrees(&m, &name, &in_memory);
                match (cfg.net, auto, other) {
                    // Every step atomic: the measure holds on every edge,
                    // and no edge leaves it unchanged.
                    (
                        false,
                        Some(Acyclicity::Measure { flat_edges: 0 }),
                        Some(Acyclicity::Edges { why }),
                    ) => {
                        assert_eq!(why, "asked for", "{name}");
                    }
                    // Messages in flight: every edge by default; asked for
                    // the measure, it holds (flat edges checked) or falls
                    // (and every edge is checked after all).
                    (true, Some(Acyclicity::Edges { .. }), Some(_)) => {}
                    (net, auto, other) => {
                        panic!("{name} (net {net}): acyclicity {auto:?}, then {other:?}")
                    }
                }
                // On disk with one worker and with two, every other config:
                // two workers take the next batch from the frontier (from
                // disk) before the current batch's new states join it.
                let on_disk = run_with(&m, Mode::Compact, None, Some(1), 1 + i % 2);
                assert_eq!(
                    summary(&in_memory),
                    summary(&on_disk),
                    "{name}: a frontier on disk changed the search"
                );
                assert_eq!(in_memory.footprint.frontier_disk_bytes, 0);
                let spilled = on_disk.footprint.frontier_disk_bytes > 0;
                let bytes = |r: &Report| r.footprint.visited_bytes as f64 / r.unique_states as f64;
                let per_state = (bytes(&exact), bytes(&in_memory));
                done.lock().unwrap().push((name, spilled, per_state));
            });
        }
    });
    let done = done.into_inner().unwrap();
    assert_eq!(done.len(), cfgs.len(), "every ci config was checked");
    let spilled = done.iter().filter(|(_, s, _)| *s).count();
    assert!(
        spilled >= 5,
        "only {spilled} ci configs spilled their frontier"
    );
    // A fingerprint table between 8/10 and 8/9 full, and the records
    // buffer: parent links and the fingerprints in index order are on disk.
    let (_, _, (exact, compact)) = done
        .iter()
        .find(|(name, _, _)| name == "restart-rejoin")
        .expect("restart-rejoin is in ci");
    assert!(*compact < 12.0, "compact: {compact:.1} bytes per state");
    assert!(
        *exact > 5.0 * compact,
        "exact {exact:.1} vs compact {compact:.1} bytes per state"
    );
}

#[test]
fn both_modes_agree_on_every_mutant() {
    let mut cyclic = 0;
    let mut violated = 0;
    let mut fell_or_flat = Vec::new();
    for mutant in Mutant::ALL {
        let config = zoo::config_for(mutant);
        let m = MoveModel::new(Cfg::named(config).with_mutant(Some(mutant)));
        let what = format!("{mutant} on {config}");
        let (_, r) = agree(&m, &what, 3);
        cyclic += (r.acyclic == Some(false)) as usize;
        violated += (!r.passed()) as usize;
        // A cycle never passes for acyclic: the measure falls along it or
        // its flat edges hold it, and every edge is checked instead.
        let (auto, _) = other_acyclicity_agrees(&m, &what, &r);
        if r.acyclic == Some(false) {
            let Some(Acyclicity::Edges { why }) = auto else {
                panic!("{what}: a cycle, and acyclicity {auto:?}")
            };
            fell_or_flat.push(format!("{mutant}: {why}"));
        }
    }
    // The comparison covers failing searches, not only passing ones.
    assert_eq!(violated, Mutant::ALL.len(), "every mutant is caught");
    assert!(
        cyclic > 0,
        "no mutant makes a cycle: the cycle path is untested"
    );
    // Each way a cycle shows: the measure falls along it, it lies within
    // flat edges (a hop count that stops counting), or messages are in
    // flight and every edge is kept anyway.
    assert_eq!(
        fell_or_flat,
        [
            "no_seal_fencing: the measure fell along a `InstallRecovered` edge",
            "storage_identity_ignored: the measure fell along a `InstallRecovered` edge",
            "refusal_ignored: messages in flight: a delivery that changes nothing leaves the \
             measure unchanged, and not every one is counted",
            "no_hop_limit: the flat edges hold a cycle",
        ],
        "how each cycle was found"
    );
    assert_eq!(fell_or_flat.len(), cyclic);
}

#[test]
fn both_modes_stop_at_the_same_state_cap() {
    let m = MoveModel::new(Cfg::named("recovery-during-move"));
    let exact = run(&m, Mode::Exact, Some(50_000));
    let compact = run(&m, Mode::Compact, Some(50_000));
    assert!(!compact.complete && !compact.passed());
    assert_eq!(summary(&exact), summary(&compact));
    // The cap falls inside a batch: the states after it are not counted.
    let parallel = run_with(&m, Mode::Compact, Some(50_000), None, 2);
    assert_eq!(summary(&exact), summary(&parallel));
}

#[test]
fn the_collision_estimate_is_the_birthday_bound() {
    use livemove_model::checker::collision_probability;
    assert_eq!(collision_probability(1), 0.0);
    // 2^32 states: 2^32 (2^32 - 1) / 2^65, just under a half.
    let p = collision_probability(1 << 32);
    assert!((p - 0.5).abs() < 1e-9, "{p}");
}
