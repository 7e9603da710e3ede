//! Benchmarks of the two hot paths: the owner's confirm path and a
//! learner's checkpoint replay.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use livemove_impl::owner::{RecordView, Serving};
use livemove_impl::replica::{Ack, Append, CheckpointBase, CheckpointOffer, Replica};
use livemove_impl::{Entry, Epoch, Mutants, NodeId, Op, StorageId};

const LOG_LEN: u64 = 10_000;
const CHECKPOINT_LEN: u64 = 1_000;

fn id(n: u8) -> StorageId {
    StorageId::first(NodeId(n))
}

/// One publish, acknowledgements from two followers, one confirm: the
/// per-message work of an owner with rf 3.
fn confirm_path(c: &mut Criterion) {
    let mut own = Replica::new(id(1));
    let mut s = Serving::activate(
        id(1),
        Epoch(1),
        [id(1), id(2), id(3)].into(),
        2,
        0,
        RecordView::default(),
    );
    let mut key = 0;
    c.bench_function("confirm_path/publish_ack_confirm", |b| {
        b.iter(|| {
            key += 1;
            let (pos, _) = s
                .publish(&mut own, Op::Put { key, value: key }, Mutants::NONE)
                .unwrap();
            for f in [2, 3] {
                s.handle_ack(Ack {
                    from: id(f),
                    pos,
                    epoch: Epoch(1),
                });
            }
            black_box(s.confirm(&own, Mutants::NONE).unwrap())
        })
    });
}

/// Install a checkpoint of 1,000 records and replay 10,000 more (with one
/// settle in ten) onto a learner: its catch-up on the replica's own path.
fn replica_replay(c: &mut Criterion) {
    let entry = |p: u64| Entry {
        epoch: Epoch(1),
        op: if p.is_multiple_of(10) {
            Op::Delete { key: p - 5 }
        } else {
            Op::Put { key: p, value: p }
        },
    };
    let base = CHECKPOINT_LEN;
    let cp = CheckpointOffer::new(
        Epoch(1),
        CheckpointBase {
            pos: base,
            epoch: Epoch(1),
        },
        (1..=base).map(entry).collect(),
    );
    let tail: Vec<Append> = (base + 1..=base + LOG_LEN)
        .map(|p| Append {
            sender: id(1),
            epoch: Epoch(1),
            prev_pos: p - 1,
            prev_epoch: Some(Epoch(1)),
            entry: entry(p),
        })
        .collect();
    c.bench_function("replica_replay/checkpoint_then_10k_records", |b| {
        b.iter(|| {
            let mut r = Replica::new(id(2));
            r.install_checkpoint(&cp, Mutants::NONE).unwrap();
            for msg in &tail {
                r.handle_append(msg, Mutants::NONE).unwrap();
            }
            black_box(r.len())
        })
    });
}

criterion_group!(benches, confirm_path, replica_replay);
criterion_main!(benches);
