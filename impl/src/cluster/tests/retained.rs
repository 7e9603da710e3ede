//! Retained copies (note 1, "After removal"): a removed copy keeps its
//! data through a grace period, a move back starts from it, and it is
//! discarded only after the grace period and never while a move, a
//! recovery or a handoff is pending.

use super::*;
use crate::cluster::RetainedCopy;

const GRACE: u64 = 60_000;

fn cluster_of(nodes: u8) -> Cluster {
    Cluster::new(ClusterConfig::atomic(nodes, 3).with_retained_grace_ms(GRACE))
}

/// The whole move of the follower on `from` to `to` with `k` entries
/// published first; the owner n1 replicates to every other copy.
fn move_follower(c: &mut Cluster, from: u8, to: u8) {
    c.add_learner(n(to)).unwrap();
    catch_up(c, 1, to);
    c.admit_learner(n(to)).unwrap();
    let leaving = c.storage_of(n(from)).unwrap();
    let target = c.storage_of(n(to)).unwrap();
    c.swap(target.node, leaving.node).unwrap();
    c.owner_switch().unwrap();
    catch_up(c, 1, to);
    c.remove_leaving().unwrap();
}

/// Replicates from n1 to `to` until it refuses; how many it took.
fn replicates_to_catch_up(c: &mut Cluster, to: u8) -> usize {
    let mut k = 0;
    while c.replicate(n(1), n(to)).is_ok() {
        k += 1;
    }
    k
}

/// n3 moved to n4 after 6 confirmed entries: n3's copy is retained.
fn removed_n3(nodes: u8) -> Cluster {
    let mut c = cluster_of(nodes);
    publish_to(&mut c, 1, 6, &[2, 3]);
    c.confirm(n(1)).unwrap();
    move_follower(&mut c, 3, 4);
    c
}

#[test]
fn a_removed_copy_is_retained_with_its_data() {
    let mut c = removed_n3(4);
    assert_eq!(
        c.retained(),
        vec![RetainedCopy {
            node: n(3),
            storage: s(3),
            len: 6,
            since_ms: 0,
            grace_left_ms: GRACE,
        }]
    );
    c.advance_clock(1_000);
    assert_eq!(c.retained()[0].grace_left_ms, GRACE - 1_000);
    // Nothing else is retained: every other copy is assigned.
    for i in [1, 2, 4] {
        let e = refused(&mut c, |c| c.discard_retained(n(i)));
        assert!(matches!(e, ClusterError::NotRetained { .. }), "{e}");
    }
}

#[test]
fn discard_waits_for_the_grace_period() {
    let mut c = removed_n3(4);
    let e = refused(&mut c, |c| c.discard_retained(n(3)));
    assert_eq!(
        e,
        ClusterError::GraceNotOver {
            storage: s(3),
            left_ms: GRACE
        }
    );
    c.advance_clock(GRACE - 1);
    let e = refused(&mut c, |c| c.discard_retained(n(3)));
    assert_eq!(
        e,
        ClusterError::GraceNotOver {
            storage: s(3),
            left_ms: 1
        }
    );
    c.advance_clock(1);
    let fresh = StorageId {
        node: n(3),
        disk: 1,
    };
    assert_eq!(
        c.discard_retained(n(3)).unwrap(),
        Outcome::Discarded {
            storage: s(3),
            fresh
        }
    );
    assert!(c.retained().is_empty());
    let node = c.node(n(3)).unwrap();
    assert_eq!(
        (node.disk(), node.replica().id(), node.replica().len()),
        (1, fresh, 0)
    );
    // The deletion is durable: a restart on the same disk finds it empty.
    c.crash(n(3)).unwrap();
    c.restart(n(3), false).unwrap();
    assert_eq!(c.node(n(3)).unwrap().replica().len(), 0);
    let e = refused(&mut c, |c| c.discard_retained(n(3)));
    assert_eq!(
        e,
        ClusterError::NotRetained {
            node: n(3),
            storage: fresh
        }
    );
}

#[test]
fn a_down_node_discards_nothing() {
    let mut c = removed_n3(4);
    c.advance_clock(GRACE);
    c.crash(n(3)).unwrap();
    let e = refused(&mut c, |c| c.discard_retained(n(3)));
    assert_eq!(e, ClusterError::NodeDown { node: n(3) });
    // Its grace period kept running while it was down.
    c.restart(n(3), false).unwrap();
    assert!(c.discard_retained(n(3)).is_ok());
}

#[test]
fn discard_waits_while_a_move_is_pending() {
    let mut c = removed_n3(5);
    c.advance_clock(GRACE);
    // A second move (n2 to n5) starts: until it ends or is cancelled the
    // retained copy stays.
    c.add_learner(n(5)).unwrap();
    let e = refused(&mut c, |c| c.discard_retained(n(3)));
    assert_eq!(
        e,
        ClusterError::RetainedInUse {
            storage: s(3),
            pending: "a move"
        }
    );
    c.replicate(n(1), n(5)).unwrap();
    c.cancel_move().unwrap();
    // The cancelled learner's data is retained now too, from this moment.
    let retained: Vec<_> = c
        .retained()
        .iter()
        .map(|r| (r.node, r.len, r.since_ms))
        .collect();
    assert_eq!(retained, vec![(n(3), 6, 0), (n(5), 1, GRACE)]);
    assert!(c.discard_retained(n(3)).is_ok());
    let e = refused(&mut c, |c| c.discard_retained(n(5)));
    assert!(
        matches!(e, ClusterError::GraceNotOver { left_ms: GRACE, .. }),
        "{e}"
    );
}

#[test]
fn discard_waits_while_a_recovery_is_pending() {
    let mut c = removed_n3(4);
    c.advance_clock(GRACE);
    c.crash(n(1)).unwrap();
    c.open_recovery().unwrap();
    let e = refused(&mut c, |c| c.discard_retained(n(3)));
    assert_eq!(
        e,
        ClusterError::RetainedInUse {
            storage: s(3),
            pending: "a recovery"
        }
    );
}

#[test]
fn a_move_back_starts_from_the_retained_prefix() {
    let mut kept = removed_n3(4);
    // Two more entries after the removal, which n3 does not have.
    publish_to(&mut kept, 1, 2, &[2, 4]);
    kept.confirm(n(1)).unwrap();
    let mut discarded = kept.clone();
    discarded.advance_clock(GRACE);
    discarded.discard_retained(n(3)).unwrap();

    // Move n4 back onto n3 in both.
    let mut took = Vec::new();
    for c in [&mut kept, &mut discarded] {
        c.add_learner(n(3)).unwrap();
        took.push(replicates_to_catch_up(c, 3));
        c.admit_learner(n(3)).unwrap();
        let back = c.storage_of(n(3)).unwrap();
        assert!(c.record().eligible.contains(&back));
    }
    // The retained copy needed only the two entries it missed; the
    // discarded one all eight.
    assert_eq!(took, vec![2, 8]);
    assert_eq!(kept.record().learners, [s(3)].into());
    assert!(kept.retained().is_empty());
    assert_eq!(
        discarded.record().learners,
        [StorageId {
            node: n(3),
            disk: 1
        }]
        .into()
    );
}

#[test]
fn discard_waits_while_a_handoff_is_pending() {
    let mut c = removed_n3(4);
    c.advance_clock(GRACE);
    c.close_admission(n(2)).unwrap();
    let e = refused(&mut c, |c| c.discard_retained(n(3)));
    assert_eq!(
        e,
        ClusterError::RetainedInUse {
            storage: s(3),
            pending: "a handoff"
        }
    );
    c.cancel_handoff().unwrap();
    assert!(c.discard_retained(n(3)).is_ok());
}

/// A config read from JSON without the field gets the default grace period.
#[test]
fn the_grace_period_defaults_to_an_hour() {
    let cfg: ClusterConfig = serde_json::from_str(r#"{"nodes": 4, "rf": 3}"#).unwrap();
    assert_eq!(cfg.retained_grace_ms, 3_600_000);
    assert_eq!(ClusterConfig::atomic(4, 3).retained_grace_ms, 3_600_000);
}
