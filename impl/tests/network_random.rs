//! Random walks over a cluster with networked delivery: the driver mixes
//! the actions (progress reports to the controller among them) with
//! deliveries, losses and duplicates of whatever is in flight, in any
//! order. A refused step never changes anything; under the
//! correct protocol there is one confirmed history, the serving owner at
//! the record's epoch holds it, and no copy holds one message twice.

use livemove_impl::{Cluster, ClusterConfig, ClusterError, Entry, Msg, NodeId, Op, Outcome};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

fn n(i: u8) -> NodeId {
    NodeId(i % 4 + 1)
}

/// One step decoded from four bytes; network steps name the message by
/// its index in flight (modulo), so they are mostly enabled.
fn step(c: &mut Cluster, b: [u8; 4]) -> (String, Result<Outcome, ClusterError>) {
    let (x, y) = (b[1], b[2]);
    let pick = |c: &Cluster| -> Option<Msg> {
        let v: Vec<Msg> = c.in_flight().iter().copied().collect();
        (!v.is_empty()).then(|| v[usize::from(b[3]) % v.len()])
    };
    let net = |c: &mut Cluster, f: fn(&mut Cluster, &Msg) -> Result<Outcome, ClusterError>| {
        match pick(c) {
            Some(m) => (format!("{m}"), f(c, &m)),
            // Nothing in flight: a delivery of a message never sent.
            None => {
                let m = Msg::Refuse {
                    to: n(x),
                    epoch: livemove_impl::Epoch(9),
                };
                (format!("absent {m}"), f(c, &m))
            }
        }
    };
    match b[0] % 43 {
        0..=5 => ("publish".into(), c.publish(n(x))),
        6..=11 => ("replicate".into(), c.replicate(n(x), n(y))),
        12..=14 => ("confirm".into(), c.confirm(n(x))),
        15..=24 => net(c, Cluster::deliver),
        25 => net(c, Cluster::drop_msg),
        26 => net(c, Cluster::duplicate),
        27 => ("crash".into(), c.crash(n(x))),
        28 => ("restart".into(), c.restart(n(x), y % 5 == 0)),
        29 => ("rejoin".into(), c.rejoin(n(x))),
        30 => ("close_admission".into(), c.close_admission(n(x))),
        31 => ("report_final_boundary".into(), c.report_final_boundary()),
        32 => ("commit_handoff".into(), c.commit_handoff()),
        33 => ("activate_owner".into(), c.activate_owner()),
        34 => ("open_recovery".into(), c.open_recovery()),
        35 | 36 => ("seal".into(), c.seal(n(x))),
        37 | 38 => ("install_recovered".into(), c.install_recovered(n(x))),
        39 => ("activate_recovery".into(), c.activate_recovery(n(x))),
        40 | 41 => ("report_progress".into(), c.report_progress(n(x), n(y))),
        _ => ("notice_rejoin".into(), c.notice_rejoin(n(x))),
    }
}

fn key(e: &Entry) -> u64 {
    match e.op {
        Op::Put { key, .. } | Op::Delete { key } => key,
        Op::Missing => 0,
    }
}

fn walk(steps: &[[u8; 4]]) -> Result<(), String> {
    let mut c = Cluster::new(ClusterConfig::networked(4, 3));
    let mut confirmed: BTreeMap<usize, Entry> = BTreeMap::new();
    let mut lost_disks = false;
    for (i, b) in steps.iter().enumerate() {
        let before = c.clone();
        let (what, got) = step(&mut c, *b);
        match got {
            Err(e) => {
                if c != before {
                    return Err(format!(
                        "step {i} {what} refused ({e}) but changed the cluster"
                    ));
                }
            }
            Ok(out) => {
                lost_disks |= matches!(out, Outcome::Restarted { .. }) && b[2] % 5 == 0;
                for nd in c.nodes() {
                    let tail = nd.serving().map_or(0, |s| s.confirmed_tail()) as usize;
                    for (p, e) in nd.replica().entries()[..tail].iter().enumerate() {
                        if let Some(prev) = confirmed.insert(p + 1, *e) {
                            if prev != *e {
                                return Err(format!(
                                    "step {i} {what}: two entries confirmed at {}",
                                    p + 1
                                ));
                            }
                        }
                    }
                    let mut seen = BTreeSet::new();
                    if !nd.replica().entries().iter().all(|e| seen.insert(key(e))) {
                        return Err(format!(
                            "step {i} {what}: {} holds one message twice",
                            nd.id()
                        ));
                    }
                }
                let r = c.record();
                let owner = c.nodes().iter().find(|nd| {
                    nd.serving()
                        .is_some_and(|s| s.epoch() == r.epoch && s.me() == r.owner)
                });
                if let (Some(o), false) = (owner, lost_disks) {
                    for (p, e) in &confirmed {
                        if o.replica().entries().get(p - 1) != Some(e) {
                            return Err(format!(
                                "step {i} {what}: owner {} lacks confirmed {p}",
                                o.id()
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn messages_in_any_order_keep_one_confirmed_history(steps in proptest::collection::vec(any::<[u8; 4]>(), 0..200)) {
        if let Err(e) = walk(&steps) {
            prop_assert!(false, "{e}");
        }
    }
}

/// The walks reach what they are for: deliveries that are late and
/// repeated, and confirms over delivered acknowledgements.
#[test]
fn a_fixed_walk_confirms_over_delivered_acknowledgements() {
    let mut c = Cluster::new(ClusterConfig::networked(4, 3));
    let mut confirms = 0;
    for i in 0..400u32 {
        let b = (i.wrapping_mul(2_654_435_761)).to_le_bytes();
        let b = [b[0] % 27, b[1], b[2], b[3]];
        if let (_, Ok(Outcome::Confirmed { .. })) = step(&mut c, b) {
            confirms += 1;
        }
    }
    assert!(
        confirms > 0,
        "no confirm in 400 steps of serving and delivery"
    );
}
