//! Confirm latency on loopback against durability floors: three TCP nodes
//! (rf 3, W 2) on 127.0.0.1 with their disk logs and file control plane on
//! the target directory's disk, on a tokio runtime with one worker thread
//! per node; one iteration publishes one message on the owner and waits
//! until it is confirmed (the owner's fsync, one round trip, the first
//! follower's fsync). The floors, measured in the same run: one 17-byte
//! write and `fdatasync` of a plain file, and one append to a disk log,
//! each back to back from one thread. Run with
//! `cargo bench -p livemove-runtime --bench confirm`.

use criterion::{criterion_group, criterion_main, Criterion};
use livemove_impl::replica::{LogStorage, Persist};
use livemove_impl::store::Record;
use livemove_impl::{Entry, Epoch, NodeId, Op, StorageId};
use livemove_runtime::control::{ControlPlane, FileControlPlane};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::tcp::TcpNode;
use std::io::Write as _;

mod support;
use support::{free_ports, start, P};

fn confirm(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut raw = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.path().join("raw"))
        .unwrap();
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
            let entry = Entry {
                epoch: Epoch(1),
                op: Op::Put {
                    key: pos,
                    value: pos,
                },
            };
            log.apply(&[Persist::Append { pos, entry }]).unwrap();
        })
    });

    let s = |n| StorageId::first(NodeId(n));
    FileControlPlane::open(dir.path().join("record.json"))
        .unwrap()
        .create(&Record::initial(s(1), [s(2), s(3)], 3))
        .unwrap();
    // One worker per node, so that the nodes' fsyncs (blocking calls on
    // their tasks) overlap as they would in three processes.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(3)
        .enable_all()
        .build()
        .unwrap();
    let addrs = free_ports(3);
    let nodes: Vec<TcpNode> = rt.block_on(async {
        let mut v = Vec::new();
        for n in 1..=3 {
            v.push(start(dir.path(), &addrs, n).await);
        }
        v
    });
    let mut key = 0;
    c.bench_function(
        "tcp, 3 nodes on loopback: publish and wait for its confirm",
        |b| {
            b.iter(|| {
                key += 1;
                rt.block_on(async {
                    let pos = nodes[0].publish(P, key).await.unwrap();
                    nodes[0].wait_confirmed(P, pos).await.unwrap();
                })
            })
        },
    );
    // Throughput of one partition: a window of publishes from concurrent
    // clients (each `tcp::client::publish` on a connection of its own to the
    // owner's port), then the wait for the last one's confirm; criterion
    // reports publishes per second.
    const WINDOW: u64 = 64;
    let owner = addrs[&NodeId(1)];
    let mut group = c.benchmark_group("tcp, 3 nodes on loopback: throughput");
    group.throughput(criterion::Throughput::Elements(WINDOW));
    group.bench_function(
        format!("{WINDOW} client publishes in flight, wait for the last confirm"),
        |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut sent = tokio::task::JoinSet::new();
                    for _ in 0..WINDOW {
                        key += 1;
                        let k = key;
                        sent.spawn(async move {
                            livemove_runtime::tcp::client::NodeClient::new(owner)
                                .publish(P, k)
                                .await
                        });
                    }
                    let mut last = 0;
                    while let Some(p) = sent.join_next().await {
                        last = last.max(p.unwrap().unwrap());
                    }
                    nodes[0].wait_confirmed(P, last).await.unwrap();
                })
            })
        },
    );
    group.finish();
    rt.block_on(async {
        for n in nodes {
            n.kill().await;
        }
    });
}

criterion_group!(benches, confirm);
criterion_main!(benches);
