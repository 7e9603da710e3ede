//! What durability costs on this machine: the raw fsync'd append rate of a
//! plain file (the floor every confirm pays), the disk log's append with one
//! and with 64 entries per fsync, a guarded write through each control
//! plane, and framing a message. Run with `cargo bench -p livemove-runtime`;
//! the etcd row needs `etcd` on PATH and is left out without it.

#[path = "../tests/support/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use criterion::{criterion_group, criterion_main, Criterion};
use livemove_impl::replica::{LogStorage, Persist};
use livemove_impl::store::{Record, Write};
use livemove_impl::{Entry, Epoch, NodeId, Op, StorageId};
use livemove_runtime::control::{ControlPlane, EtcdConfig, EtcdControlPlane, FileControlPlane};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::wire::{decode_payload, encode_frame, LENGTH_BYTES};
use std::io::Write as _;

/// Entries per batch in the batched append row.
const BATCH_ENTRIES: u64 = 64;

fn scratch() -> tempfile::TempDir {
    // Benchmarks run on the disk the target directory is on, not tmpfs.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn entry(key: u64) -> Entry {
    Entry {
        epoch: Epoch(1),
        op: Op::Put { key, value: key },
    }
}

fn appends(c: &mut Criterion) {
    let dir = scratch();
    let mut raw = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.path().join("raw"))
        .unwrap();
    // A disk-log record of one entry is 17 bytes; the raw row writes as many.
    c.bench_function("raw write 17 B + fdatasync", |b| {
        b.iter(|| {
            raw.write_all(&[7u8; 17]).unwrap();
            raw.sync_data().unwrap();
        })
    });

    let (mut log, _) = DiskLog::open(dir.path().join("one")).unwrap();
    c.bench_function("disk log: 1 entry per fsync", |b| {
        b.iter(|| {
            let pos = log.len() + 1;
            log.apply(&[Persist::Append {
                pos,
                entry: entry(pos),
            }])
            .unwrap();
        })
    });

    let (mut log, _) = DiskLog::open(dir.path().join("batch")).unwrap();
    c.bench_function("disk log: 64 entries per fsync", |b| {
        b.iter(|| {
            let from = log.len() + 1;
            let batch: Vec<Persist> = (from..from + BATCH_ENTRIES)
                .map(|pos| Persist::Append {
                    pos,
                    entry: entry(pos),
                })
                .collect();
            log.apply(&batch).unwrap();
        })
    });
}

fn toggle(cp: &mut dyn ControlPlane) {
    let r = cp.read().unwrap();
    let w = if r.paused {
        Write::Resume
    } else {
        Write::Pause
    };
    cp.write(r.version, &w).unwrap();
}

fn initial() -> Record {
    let s = |n| StorageId {
        node: NodeId(n),
        disk: 0,
    };
    Record::initial(s(1), [s(2), s(3)], 3)
}

fn control_planes(c: &mut Criterion) {
    let dir = scratch();
    let mut file = FileControlPlane::open(dir.path().join("record.json")).unwrap();
    file.create(&initial()).unwrap();
    c.bench_function("file control plane: read + guarded write", |b| {
        b.iter(|| toggle(&mut file))
    });
    if let Some(server) = etcd::Etcd::start("bench etcd control plane") {
        let mut cp = EtcdControlPlane::new(EtcdConfig {
            endpoint: server.endpoint(),
            key: "/livemove/bench".into(),
        });
        cp.create(&initial()).unwrap();
        c.bench_function("etcd control plane: read + guarded write", |b| {
            b.iter(|| toggle(&mut cp))
        });
    }
}

fn framing(c: &mut Criterion) {
    let record = initial();
    c.bench_function("wire: encode + decode a record frame", |b| {
        b.iter(|| {
            let frame = encode_frame(&record, 0).unwrap();
            let back: Record = decode_payload(&frame[LENGTH_BYTES..], 0).unwrap();
            back
        })
    });
}

criterion_group!(benches, appends, control_planes, framing);
criterion_main!(benches);
