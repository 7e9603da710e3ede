//! Benchmarks of the two hot paths: the owner's confirm path and a
//! learner's checkpoint replay.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use livemove_impl::owner::{RecordView, Serving};
use livemove_impl::replica::catchup::checksum;
use livemove_impl::replica::{Ack, CatchUp, Checkpoint, LogIdentity, Replica, TaskId};
use livemove_impl::{Epoch, Mutants, NodeId, Op, StorageId};
use std::collections::BTreeMap;

const LOG_LEN: u64 = 10_000;

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

/// Install a checkpoint at 0 and replay 10,000 records (with one delete in ten).
fn replica_replay(c: &mut Criterion) {
    let source = LogIdentity {
        storage: id(1),
        epoch: Epoch(1),
    };
    let data = BTreeMap::new();
    let cp = Checkpoint {
        task: TaskId(1),
        source,
        boundary: 0,
        checksum: checksum(0, &data),
        data,
    };
    let ops: Vec<Op> = (1..=LOG_LEN)
        .map(|p| {
            if p % 10 == 0 {
                Op::Delete { key: p - 5 }
            } else {
                Op::Put { key: p, value: p }
            }
        })
        .collect();
    c.bench_function("replica_replay/10k_records", |b| {
        b.iter(|| {
            let mut t = CatchUp::new(TaskId(1), source);
            t.install_checkpoint(&cp).unwrap();
            for (i, op) in ops.iter().enumerate() {
                t.replay(TaskId(1), source, i as u64 + 1, *op).unwrap();
            }
            black_box(t.position())
        })
    });
}

criterion_group!(benches, confirm_path, replica_replay);
criterion_main!(benches);
