//! Catch-up of a learner against note 2's estimate. Three TCP nodes (rf 3)
//! on 127.0.0.1 with their logs and the file control plane on the target
//! directory's disk; the owner holds D entries; a fourth node joins as a
//! move's learner while a client publishes at rate r, and the time from
//! its join to its admission (it covers the owner's confirmed tail) is
//! measured. Note 2: a copy of D at effective bandwidth b takes D/b, and
//! the backlog B = r D/b that piles up meanwhile takes B/(a - r) more at
//! apply rate a (a > r). With r = 0 the run gives b (= a: the runtime
//! ships the log and the backlog alike, one entry per append); each row
//! with r > 0 is predicted from it and measured. Prints a table. Run with
//! `cargo bench -p livemove-runtime --bench catchup`.

use livemove_impl::store::{MovePhase, Record};
use livemove_impl::{NodeId, StorageId};
use livemove_runtime::control::{ControlPlane, FileControlPlane};
use std::time::{Duration, Instant};

mod support;
use support::{free_ports, start, P};

/// Entries the owner holds before the learner joins.
const D: u64 = 400;

/// One run: D entries, then a learner joins while a client publishes at
/// `rate` a second; seconds from the join to the admission.
async fn run(rate: f64) -> f64 {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = dir.path();
    let s = |n| StorageId::first(NodeId(n));
    let mut control = FileControlPlane::open(root.join("record.json")).unwrap();
    control
        .create(&Record::initial(s(1), [s(2), s(3)], 3))
        .unwrap();
    let addrs = free_ports(4);
    let mut nodes = Vec::new();
    for n in 1..=4 {
        nodes.push(start(root, &addrs, n).await);
    }
    let owner = &nodes[0];
    // D entries, 50 at a time (group commit), all confirmed.
    let mut key = 0;
    while key < D {
        let mut last = 0;
        for _ in 0..50 {
            key += 1;
            last = owner.publish(P, key).await.unwrap();
        }
        owner.wait_confirmed(P, last).await.unwrap();
    }
    let joined = Instant::now();
    assert!(nodes[3].join(P, None).await.unwrap(), "the learner joins");
    let admitted = loop {
        let r = control.read().unwrap();
        if r.move_task
            .as_ref()
            .is_some_and(|m| m.phase != MovePhase::Learner)
        {
            break joined.elapsed();
        }
        if rate > 0.0 {
            let due = Duration::from_secs_f64(key.saturating_sub(D) as f64 / rate);
            if joined.elapsed() >= due {
                key += 1;
                let _ = owner.publish(P, key).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(
            joined.elapsed() < Duration::from_secs(120),
            "no admission in 120 s"
        );
    };
    for n in nodes {
        n.kill().await;
    }
    admitted.as_secs_f64()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let base = rt.block_on(run(0.0));
    let b = D as f64 / base;
    println!("catch-up of a learner: D = {D} entries on the owner, then a join; b = a = D / (time at r = 0)");
    println!(
        "| r (entries/s) | r / a | predicted D/b + B/(a - r) | measured | measured / predicted |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: |");
    println!("| 0 | 0 | {base:.2} s (b = {b:.0} entries/s) | {base:.2} s | 1.00 |");
    for frac in [0.25, 0.5] {
        let r = frac * b;
        let backlog = r * base;
        let predicted = base + backlog / (b - r);
        let measured = rt.block_on(run(r));
        println!(
            "| {r:.0} | {frac} | {predicted:.2} s | {measured:.2} s | {:.2} |",
            measured / predicted
        );
    }
}
