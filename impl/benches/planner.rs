//! Plan time per round at 1,000 nodes x 100,000 partitions (three copies
//! each, the last 100 nodes just joined empty): the first round of the
//! scale-out, when every source and target is fresh, and a round in the
//! middle of it, with transfers in flight and the planner's memory filled.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use livemove_impl::planner::scenarios::{synthetic, ROUND_SECS};
use livemove_impl::planner::sim::Sim;
use livemove_impl::planner::{plan, History, Policy};
use std::time::Duration;

const NODES: u32 = 1_000;
const PARTITIONS: u32 = 100_000;
const SEED: u64 = 1;
/// Rounds run before the mid-run measurement.
const WARM_ROUNDS: u64 = 40;

fn plan_round(c: &mut Criterion) {
    let view = synthetic::synthetic(NODES, PARTITIONS, SEED).expect("valid synthetic cluster");
    let policy = Policy::default();
    let history = History::new(view.nodes.len(), view.partitions.len());
    let mut g = c.benchmark_group("planner_1000_nodes_100k_partitions");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("first_round", |b| {
        b.iter(|| plan(black_box(&view), black_box(&history), &policy).unwrap())
    });
    let mut sim = Sim::new(view.clone(), history.clone(), policy, ROUND_SECS);
    for round in 1..=WARM_ROUNDS {
        if round > 1 {
            sim.advance();
        }
        sim.round(&mut || 0.0).unwrap();
    }
    sim.advance();
    g.bench_function("mid_run_round", |b| {
        b.iter(|| plan(black_box(&sim.view), black_box(&sim.history), &policy).unwrap())
    });
    g.finish();
}

criterion_group!(benches, plan_round);
criterion_main!(benches);
