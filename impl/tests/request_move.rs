//! The operator's move request takes step 0 under the same precondition as
//! `AddLearner`: the record's owner serves at the record's epoch.

use livemove_impl::{Cluster, ClusterConfig, ClusterError, NodeId};

#[test]
fn a_move_is_refused_while_the_owner_does_not_serve() {
    let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
    c.crash(NodeId(1)).expect("the owner crashes");
    let before = c.record().clone();
    let e = c
        .request_move(NodeId(4), NodeId(3))
        .expect_err("no owner serves");
    assert!(matches!(e, ClusterError::OwnerNotServing { .. }), "{e:?}");
    assert_eq!(c.record(), &before, "a refused request writes nothing");
}

#[test]
fn a_move_is_recorded_while_the_owner_serves() {
    let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
    c.request_move(NodeId(4), NodeId(3))
        .expect("the owner serves at the record's epoch");
}
