//! A plan is a sequence of the protocol's own operations: the planner's
//! moves for one partition run, operation by operation, through the
//! implementation's cluster and its guarded writes.

use livemove_impl::planner::{
    plan, ClusterView, History, NodeIx, NodeSpec, Op, PartitionSpec, Placement, Policy,
};
use livemove_impl::{Cluster, ClusterConfig, NodeId, StorageId};

/// Planner node index `i` is the cluster's node `n(i + 1)`.
fn node(i: NodeIx) -> NodeId {
    NodeId(u8::try_from(i + 1).expect("small cluster"))
}

/// The planner's view of `c` (one partition, one rack per node), with
/// `draining` marked.
fn view_of(c: &Cluster, draining: NodeIx) -> ClusterView {
    let r = c.record();
    let ix = |s: StorageId| NodeIx::from(s.node.0) - 1;
    ClusterView {
        nodes: (0..4)
            .map(|i| NodeSpec {
                domain: i,
                capacity: if i == draining { 0.0 } else { 1.0 },
                apply_bps: 50e6,
                bandwidth_bps: 100e6,
                draining: i == draining,
            })
            .collect(),
        partitions: vec![PartitionSpec {
            history_bytes: 1 << 20,
            incoming_bps: 1e3,
            traffic: 1.0,
        }],
        placement: vec![Placement {
            owner: ix(r.owner),
            followers: r.followers.iter().map(|&f| ix(f)).collect(),
        }],
        transfers: Vec::new(),
        retained: Vec::new(),
        recovery_pending: r.recovery_pending(),
        paused: r.paused,
        now_secs: 0.0,
    }
}

/// Run one planned operation through the cluster, replicating as the
/// controller's workers would between the writes.
fn execute(c: &mut Cluster, op: Op) {
    let owner = node(NodeIx::from(c.record().owner.node.0) - 1);
    let catch_up = |c: &mut Cluster, to: NodeId| while c.replicate(owner, to).is_ok() {};
    match op {
        Op::AddLearner { target, .. } => {
            c.add_learner(node(target)).unwrap();
            catch_up(c, node(target));
            c.admit_learner(node(target)).unwrap();
        }
        Op::Swap {
            target, leaving, ..
        } => {
            c.swap(node(target), node(leaving)).unwrap();
            c.owner_switch().unwrap();
            catch_up(c, node(target));
        }
        Op::Remove { .. } => {
            c.remove_leaving().unwrap();
        }
        Op::Handoff { to, .. } => {
            c.close_admission(node(to)).unwrap();
            c.report_final_boundary().unwrap();
            c.commit_handoff().unwrap();
            c.activate_owner().unwrap();
        }
    }
}

fn traffic(c: &mut Cluster) {
    let owner = c.record().owner.node;
    let followers: Vec<NodeId> = c.record().followers.iter().map(|f| f.node).collect();
    for _ in 0..3 {
        c.publish(owner).unwrap();
        for &f in &followers {
            c.replicate(owner, f).unwrap();
        }
    }
    c.confirm(owner).unwrap();
}

#[test]
fn a_drained_follower_moves_by_add_learner_swap_remove_through_the_cluster() {
    let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
    traffic(&mut c);
    let follower = NodeIx::from(c.record().followers.iter().next().unwrap().node.0) - 1;
    let p = plan(
        &view_of(&c, follower),
        &History::new(4, 1),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(p.moves.len(), 1, "{p:?}");
    let ops = p.moves[0].ops.clone();
    let names: Vec<&str> = ops.iter().map(Op::name).collect();
    assert_eq!(names, ["add_learner", "swap", "remove"]);
    for op in ops {
        execute(&mut c, op);
    }
    let r = c.record();
    assert!(!r.is_assigned(StorageId::first(node(follower))));
    assert!(r.followers.contains(&StorageId::first(NodeId(4))));
    assert!(r.move_task.is_none());
    // The planner, asked again, has nothing left to do off the drained node.
    let again = plan(
        &view_of(&c, follower),
        &History::new(4, 1),
        &Policy::default(),
    )
    .unwrap();
    assert!(again.moves.iter().all(|m| m.from != follower), "{again:?}");
}

#[test]
fn a_drained_owner_hands_off_to_a_follower_through_the_cluster() {
    let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
    traffic(&mut c);
    let owner = NodeIx::from(c.record().owner.node.0) - 1;
    let p = plan(&view_of(&c, owner), &History::new(4, 1), &Policy::default()).unwrap();
    let first = &p.moves[0];
    assert!(first.is_handoff(), "{p:?}");
    let to = first.to;
    execute(&mut c, first.ops[0]);
    assert_eq!(c.record().owner, StorageId::first(node(to)));
    assert!(c
        .record()
        .followers
        .contains(&StorageId::first(node(owner))));
    // The new owner serves.
    c.publish(node(to)).unwrap();
}

#[test]
fn a_paused_record_plans_nothing() {
    let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
    c.pause().unwrap();
    let p = plan(&view_of(&c, 1), &History::new(4, 1), &Policy::default()).unwrap();
    assert!(p.moves.is_empty());
    assert_eq!(p.hold, Some(livemove_impl::planner::Hold::Paused));
}
