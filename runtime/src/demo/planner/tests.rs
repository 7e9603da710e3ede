use super::*;
use crate::demo::placement;
use livemove_impl::planner::{plan, History, Plan};
use livemove_impl::StorageId;

fn initial(nodes: u8, partitions: u32, rf: u8) -> BTreeMap<Partition, Record> {
    (0..partitions)
        .map(Partition)
        .map(|p| {
            let (owner, followers) = placement(p, nodes - 1, rf);
            let r = Record::initial(
                StorageId::first(owner),
                followers.into_iter().map(StorageId::first),
                rf,
            );
            (p, r)
        })
        .collect()
}

/// Apply a round's moves to the records as if each ran to its end.
fn apply(records: &mut BTreeMap<Partition, Record>, plan: &Plan) {
    for m in &plan.moves {
        let r = records.get_mut(&partition(m.partition)).unwrap();
        let (from, to) = (StorageId::first(node(m.from)), StorageId::first(node(m.to)));
        if m.is_handoff() {
            assert!(r.followers.remove(&to), "{m:?}");
            r.followers.insert(r.owner);
            r.owner = to;
        } else {
            assert!(r.followers.remove(&from), "{m:?}");
            assert!(r.followers.insert(to), "{m:?}");
        }
    }
}

fn rounds(nodes: u8, partitions: u32) -> (Vec<Plan>, BTreeMap<Partition, Record>) {
    let mut records = initial(nodes, partitions, 3);
    let policy = policy(4);
    let mut history = History::new(usize::from(nodes), partitions as usize);
    let mut plans = Vec::new();
    for round in 0..16 {
        let now = f64::from(round);
        let v = view(&records, nodes, 5.0, now);
        let p = plan(&v, &history, &policy).unwrap();
        history.record(&p, now);
        if p.moves.is_empty() {
            return (plans, records);
        }
        apply(&mut records, &p);
        plans.push(p);
    }
    panic!("no convergence in 16 rounds")
}

fn show(plans: &[Plan]) -> Vec<Vec<String>> {
    plans
        .iter()
        .map(|p| {
            p.moves
                .iter()
                .map(|m| {
                    format!(
                        "{} {} {}->{}",
                        partition(m.partition),
                        if m.is_handoff() { "handoff" } else { "move" },
                        node(m.from),
                        node(m.to)
                    )
                })
                .collect()
        })
        .collect()
}

/// The demo's first round on 5 nodes and 5 partitions, and every round after it when each runs to its
/// end: three copies onto n5, one off each of n1, n2 and n3, then p0's
/// ownership; every node ends with 3 copies and 1 partition owned.
#[test]
fn five_partitions_take_three_copies_then_one_ownership_onto_the_new_node() {
    let (plans, records) = rounds(5, 5);
    assert_eq!(
        show(&plans),
        [
            vec!["p2 move n1->n5", "p0 move n2->n5", "p1 move n3->n5"],
            vec!["p0 handoff n1->n5"],
        ]
    );
    for (n, c) in balance(&records, 5) {
        assert_eq!(c, (3, 1), "{n}");
    }
}

/// Four partitions (the cluster `tests/demo.rs` runs): a copy off n1 and
/// one off n2 onto n5, then nothing more: every node within one copy of
/// its share (2.4), every owner count within the band.
#[test]
fn four_partitions_take_two_copies_onto_the_new_node() {
    let (plans, records) = rounds(5, 4);
    assert_eq!(show(&plans), [vec!["p2 move n1->n5", "p0 move n2->n5"]]);
    let copies: Vec<u32> = balance(&records, 5).values().map(|c| c.0).collect();
    assert_eq!(copies, [2, 2, 3, 3, 2]);
}

/// Two partitions on five nodes are inside the detection band (share 1.2
/// copies, band 2 items): the planner proposes nothing.
#[test]
fn two_partitions_are_inside_the_band_and_nothing_moves() {
    let (plans, _) = rounds(5, 2);
    assert!(plans.is_empty(), "{:?}", show(&plans));
}

/// The demo's default cluster (32 partitions): every round within the
/// demo's 4 moves in flight, follower moves before handoffs, every node
/// within one copy and one ownership of its share at the end.
#[test]
fn the_default_cluster_converges_within_the_moves_in_flight() {
    let (plans, records) = rounds(5, 32);
    assert_eq!(plans.len(), 7, "{:?}", show(&plans));
    let mut handoffs_began = false;
    for p in &plans {
        let moves = p.moves.iter().filter(|m| !m.is_handoff()).count();
        assert!(moves <= 4, "{:?}", show(&plans));
        assert!(!(handoffs_began && moves > 0), "{:?}", show(&plans));
        handoffs_began |= moves < p.moves.len();
    }
    for (n, (copies, owned)) in balance(&records, 5) {
        assert!((19..=20).contains(&copies), "{n}: {copies} copies");
        assert!((6..=7).contains(&owned), "{n}: {owned} owned");
    }
}

/// A move in flight is the planner's transfer (it counts against the
/// limits), and a recovery pending anywhere holds the round.
#[test]
fn a_move_in_flight_is_a_transfer_and_a_recovery_holds_the_round() {
    let mut records = initial(5, 5, 3);
    let r = records.get_mut(&Partition(0)).unwrap();
    r.move_task = Some(livemove_impl::store::Move {
        target: StorageId::first(NodeId(5)),
        leaving: Some(StorageId::first(NodeId(2))),
        phase: livemove_impl::store::MovePhase::Learner,
        promotion: false,
        boundary: None,
        replaces: None,
    });
    r.learners.insert(StorageId::first(NodeId(5)));
    let v = view(&records, 5, 5.0, 0.0);
    assert_eq!(v.transfers.len(), 1);
    assert_eq!((v.transfers[0].target, v.transfers[0].leaving), (4, 1));
    let p = plan(&v, &History::new(5, 5), &policy(4)).unwrap();
    assert!(p.moves.iter().all(|m| m.partition != 0), "{:?}", show(&[p]));

    let mut records = initial(5, 5, 3);
    let r = records.get_mut(&Partition(3)).unwrap();
    r.recovery = Some(livemove_impl::store::PendingRecovery {
        epoch: r.epoch,
        seal_quorum: 2,
        sealed: Default::default(),
        installed: Default::default(),
        tail: None,
        evidence: None,
    });
    let v = view(&records, 5, 5.0, 0.0);
    let p = plan(&v, &History::new(5, 5), &policy(4)).unwrap();
    assert!(p.moves.is_empty());
    assert_eq!(p.hold, Some(livemove_impl::planner::Hold::RecoveryPending));
}
