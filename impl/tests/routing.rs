//! Properties of client routing: Moved never moves the cache backwards in
//! epoch (and is learned even at the hop limit), Ask never changes it, the
//! hop limit and the deadline hold.

use arbitrary::{Arbitrary, Unstructured};
use livemove_impl::routing::{
    answer, ClientReply, Next, PartitionId, Redirect, RequestDriver, Route, RoutingError, Served,
    ServerView, TopologyCache,
};
use livemove_impl::{Epoch, NodeId};
use proptest::prelude::*;

#[derive(Debug, Arbitrary)]
enum Reply {
    Moved { owner: u8, epoch: u8 },
    Ask { node: u8, epoch: u8 },
    TryAgain,
    Ok,
}

const P: PartitionId = PartitionId(8);

fn cache_at(owner: u8, epoch: u64) -> TopologyCache {
    let mut c = TopologyCache::default();
    c.learn(
        P,
        Route {
            owner: NodeId(owner),
            epoch: Epoch(epoch),
        },
    );
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn moved_only_moves_forward_and_ask_never_changes_the_cache(
        chunks in proptest::collection::vec(any::<[u8; 8]>(), 0..32),
        hops_max in 1u8..8,
        timeout_ms in 1u64..40,
    ) {
        let replies: Vec<Reply> = chunks.iter().filter_map(|c| Reply::arbitrary(&mut Unstructured::new(c)).ok()).collect();
        let mut cache = cache_at(1, 3);
        let (mut d, _) = RequestDriver::start(&cache, P, 0, timeout_ms, hops_max).unwrap();
        let mut now_ms = 0;
        for r in replies {
            now_ms += 1;
            let before = cache.get(P).unwrap();
            let reply = match r {
                Reply::Moved { owner, epoch } => ClientReply::Redirect(Redirect::Moved(Route {
                    owner: NodeId(owner),
                    epoch: Epoch(u64::from(epoch)),
                })),
                Reply::Ask { node, epoch } => ClientReply::Redirect(Redirect::Ask {
                    node: NodeId(node),
                    epoch: Epoch(u64::from(epoch)),
                }),
                Reply::TryAgain => ClientReply::TryAgain,
                Reply::Ok => ClientReply::Ok,
            };
            let next = d.on_reply(&mut cache, reply, now_ms);
            let after = cache.get(P).unwrap();
            prop_assert!(after.epoch >= before.epoch, "cache moved back: {:?} -> {:?}", before, after);
            if matches!(reply, ClientReply::Redirect(Redirect::Ask { .. })) {
                prop_assert_eq!(after, before, "ASK changed the cache");
            }
            if let ClientReply::Redirect(Redirect::Moved(route)) = reply {
                // Learned whether or not the request goes on.
                if route.epoch > before.epoch {
                    prop_assert_eq!(after, route);
                }
            }
            match next {
                Ok(Next::Done) => break,
                Ok(Next::Retry(a)) => {
                    prop_assert!(d.hops() <= hops_max);
                    prop_assert!(now_ms < timeout_ms);
                    if matches!(reply, ClientReply::Redirect(Redirect::Ask { .. })) {
                        prop_assert!(a.asking);
                    } else {
                        prop_assert!(!a.asking);
                    }
                }
                Err(RoutingError::HopLimit { hops }) => {
                    prop_assert_eq!(hops, hops_max);
                    break;
                }
                Err(RoutingError::DeadlineExceeded { .. }) => {
                    prop_assert!(now_ms >= timeout_ms);
                    break;
                }
                Err(e) => prop_assert!(false, "unexpected {e}"),
            }
        }
    }
}

/// The ping-pong of a handoff's cutover cannot loop past the hop limit:
/// the old owner (admission closed, its handoff committed) answers ASK for
/// the new owner, which is not active yet and asks to try again along the
/// stable route, back at the old owner.
#[test]
fn ping_pong_between_two_nodes_stops_at_the_hop_limit() {
    let mut cache = cache_at(1, 3);
    let (mut d, mut a) = RequestDriver::start(&cache, P, 0, 1_000, 4).unwrap();
    let new_owner = Route {
        owner: NodeId(2),
        epoch: Epoch(4),
    };
    let old = ServerView {
        node: NodeId(1),
        serving: Some(Served {
            epoch: Epoch(3),
            admission_open: false,
        }),
        record_owner: new_owner,
        handoff_to: Some(new_owner),
    };
    let new = ServerView {
        node: NodeId(2),
        serving: None,
        record_owner: new_owner,
        handoff_to: None,
    };
    let mut hops = 0;
    loop {
        let v = if a.node == NodeId(1) { old } else { new };
        match d.on_reply(&mut cache, answer(&v, &a), hops) {
            Ok(Next::Retry(next)) => a = next,
            Ok(Next::Done) => panic!("served by nobody"),
            Err(e) => {
                assert_eq!(e, RoutingError::HopLimit { hops: 4 });
                break;
            }
        }
        hops += 1;
        assert!(hops <= 4);
        assert_eq!(
            cache.get(P),
            Some(Route {
                owner: NodeId(1),
                epoch: Epoch(3)
            })
        );
    }
}

/// A MOVED is learned even by the request that gives up on it.
#[test]
fn a_moved_at_the_hop_limit_still_moves_the_route() {
    let mut cache = cache_at(1, 3);
    let (mut d, _) = RequestDriver::start(&cache, P, 0, 1_000, 0).unwrap();
    let moved = ClientReply::Redirect(Redirect::Moved(Route {
        owner: NodeId(2),
        epoch: Epoch(4),
    }));
    assert_eq!(
        d.on_reply(&mut cache, moved, 1),
        Err(RoutingError::HopLimit { hops: 0 })
    );
    assert_eq!(cache.get(P).unwrap().owner, NodeId(2));
}

/// Note 2's Redis example: ASK gives a one-time retry plan; MOVED updates the slot.
#[test]
fn note2_ask_is_one_shot_and_moved_updates_the_route() {
    let mut cache = cache_at(1, 3); // "S"
    let (mut d, _) = RequestDriver::start(&cache, P, 0, 100, 5).unwrap();
    let ask = ClientReply::Redirect(Redirect::Ask {
        node: NodeId(2),
        epoch: Epoch(4),
    });
    assert_eq!(
        d.on_reply(&mut cache, ask, 1),
        Ok(Next::Retry(livemove_impl::routing::Attempt {
            node: NodeId(2),
            epoch: Epoch(4),
            asking: true
        }))
    );
    assert_eq!(cache.get(P).unwrap().owner, NodeId(1));
    let moved = ClientReply::Redirect(Redirect::Moved(Route {
        owner: NodeId(2),
        epoch: Epoch(4),
    }));
    d.on_reply(&mut cache, moved, 2).unwrap();
    assert_eq!(cache.get(P).unwrap().owner, NodeId(2));
}

/// Stale epochs are refused where writes are accepted, with the current route.
#[test]
fn owner_refuses_a_stale_epoch_with_moved() {
    let view = ServerView {
        node: NodeId(2),
        serving: Some(Served {
            epoch: Epoch(5),
            admission_open: true,
        }),
        record_owner: Route {
            owner: NodeId(2),
            epoch: Epoch(5),
        },
        handoff_to: None,
    };
    let stale = livemove_impl::routing::Attempt {
        node: NodeId(2),
        epoch: Epoch(4),
        asking: false,
    };
    assert_eq!(
        answer(&view, &stale),
        ClientReply::Redirect(Redirect::Moved(Route {
            owner: NodeId(2),
            epoch: Epoch(5)
        }))
    );
    let fresh = livemove_impl::routing::Attempt {
        epoch: Epoch(5),
        ..stale
    };
    assert_eq!(answer(&view, &fresh), ClientReply::Ok);
}
