//! A run's fault schedule, drawn from its seed alone (no clock, no
//! operating-system randomness), so a seed names the same kills, pauses,
//! move and handoff in the same order every time; what the processes are
//! doing when each lands is up to the machine.

use crate::cluster::name;
use livemove_impl::planner::scenarios::rng::Rng;
use livemove_runtime::partition::Partition;

/// A number in `lo..=hi` from the implementation's seeded generator
/// (SplitMix64, the planner scenarios' own).
fn range(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    assert!(lo <= hi, "an empty range {lo}..={hi}");
    lo + rng.next_u64() % (hi - lo + 1)
}

/// One step of the fault phase, `after_ms` after the previous one ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// SIGKILL process `who` (a node, or the controller), and start it
    /// again on its data directory `down_ms` later; a node is started
    /// with `--crash-at persist:K` when `arm` is `Some(K)`, to die inside
    /// its K-th batch of more than one step if it gets that far.
    Kill {
        who: u8,
        after_ms: u64,
        down_ms: u64,
        arm: Option<u64>,
    },
    /// Ask the node that holds no copy of the partition to join it (a
    /// planned move).
    Move { partition: Partition, after_ms: u64 },
    /// Ask the partition's owner to hand it over to its lowest follower
    /// that is not suspended.
    HandOff { partition: Partition, after_ms: u64 },
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Step::Kill {
                who,
                after_ms,
                down_ms,
                arm,
            } => {
                write!(f, "+{after_ms} ms kill {} (down {down_ms} ms", name(who))?;
                match arm {
                    Some(k) => write!(f, ", back at persist:{k})"),
                    None => write!(f, ")"),
                }
            }
            Step::Move {
                partition,
                after_ms,
            } => write!(f, "+{after_ms} ms move on {partition}"),
            Step::HandOff {
                partition,
                after_ms,
            } => write!(f, "+{after_ms} ms handoff of {partition}"),
        }
    }
}

/// The pause before a step, in milliseconds.
const AFTER_MS: (u64, u64) = (200, 1_200);
/// How long a killed process stays down, in milliseconds: from shorter
/// than the controller's lease (an owner back in time opens its own
/// recovery) to longer (the controller opens it).
const DOWN_MS: (u64, u64) = (100, 1_600);

/// The K of `persist:K` a restarted node is armed with, at most.
const ARM_K_MAX: u64 = 2;

/// `kills` kills of random processes among `nodes` nodes and the
/// controller (a node twice as likely as the controller), with one move
/// and one handoff, each of a random partition of `partitions`, put in at
/// random places.
pub fn plan(seed: u64, kills: usize, nodes: u8, partitions: u32) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let after = |rng: &mut Rng| range(rng, AFTER_MS.0, AFTER_MS.1);
    let mut steps: Vec<Step> = (0..kills)
        .map(|_| {
            // The controller one time in 2 * nodes + 1, each node two.
            let who = range(&mut rng, 0, 2 * u64::from(nodes)).div_ceil(2) as u8;
            let after_ms = after(&mut rng);
            let down_ms = range(&mut rng, DOWN_MS.0, DOWN_MS.1);
            // A node comes back armed one time in three.
            let arm = range(&mut rng, 1, 3 * ARM_K_MAX);
            Step::Kill {
                who,
                after_ms,
                down_ms,
                arm: (who != 0 && arm <= ARM_K_MAX).then_some(arm),
            }
        })
        .collect();
    let partition = |rng: &mut Rng| Partition(range(rng, 0, u64::from(partitions) - 1) as u32);
    let at = range(&mut rng, 0, steps.len() as u64) as usize;
    let step = Step::Move {
        partition: partition(&mut rng),
        after_ms: after(&mut rng),
    };
    steps.insert(at, step);
    let at = range(&mut rng, 0, steps.len() as u64) as usize;
    let step = Step::HandOff {
        partition: partition(&mut rng),
        after_ms: after(&mut rng),
    };
    steps.insert(at, step);
    steps
}

#[test]
fn a_seed_names_one_schedule() {
    assert_eq!(plan(7, 5, 4, 2), plan(7, 5, 4, 2));
    assert_ne!(plan(7, 5, 4, 2), plan(8, 5, 4, 2));
    let p = plan(1, 5, 4, 2);
    assert_eq!(p.len(), 7);
    assert_eq!(
        p.iter().filter(|s| matches!(s, Step::Kill { .. })).count(),
        5
    );
    // Every process is drawn, the controller (0) too.
    let mut drawn = std::collections::BTreeSet::new();
    for seed in 0..50 {
        for s in plan(seed, 5, 4, 2) {
            if let Step::Kill { who, .. } = s {
                drawn.insert(who);
            }
        }
    }
    assert_eq!(drawn, (0..=4).collect());
}
