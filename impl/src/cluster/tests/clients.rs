//! The queue's client through the cluster (note 2: MOVED, ASK, the hop
//! limit, retries after a timeout, acknowledgement after the confirm).

use super::*;
use crate::ids::ProducerId;
use crate::mutant::Mutant;
use crate::routing::{Attempt, ClientReply, Redirect, Route};

const P1: ProducerId = ProducerId(1);

/// One of the cluster's client operations, for producer `p`.
type ClientOp = fn(&mut Cluster, ProducerId) -> Result<Outcome, ClusterError>;

/// Three nodes at rf 3 with a client whose requests follow two answers.
fn with_client() -> Cluster {
    Cluster::new(ClusterConfig::atomic(3, 3)).with_client(2)
}

fn route(owner: u8, epoch: u64) -> Route {
    Route {
        owner: n(owner),
        epoch: Epoch(epoch),
    }
}

fn attempt(node: u8, epoch: u64, asking: bool) -> Attempt {
    Attempt {
        node: n(node),
        epoch: Epoch(epoch),
        asking,
    }
}

fn client(c: &Cluster) -> &QueueClient {
    c.client(P1).expect("the cluster has a client")
}

/// n1 hands off to n2 and the handoff commits; n2 is not active yet.
fn committed(c: &mut Cluster) {
    c.close_admission(n(2)).unwrap();
    c.report_final_boundary().unwrap();
    c.commit_handoff().unwrap();
}

/// Note 2's slot-8 story through a real handoff: between the commit and
/// the activation the old owner answers ASK (this request only, the stable
/// route stays), the inactive new owner asks to try again, and the request
/// gives up at the hop limit; after the activation the old owner answers
/// MOVED, the route moves forward, and the new owner accepts and, once it
/// confirmed, acknowledges.
#[test]
fn note2_slot_8_ask_then_moved_through_a_handoff() {
    let mut c = with_client();
    assert_eq!(client(&c).route(), Some(route(1, 1)));
    committed(&mut c);
    assert_eq!(
        c.client_publish(P1).unwrap(),
        Outcome::ClientSent {
            key: 1,
            to: attempt(1, 1, false)
        }
    );
    let ask = ClientReply::Redirect(Redirect::Ask {
        node: n(2),
        epoch: Epoch(2),
    });
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientRedirected {
            reply: ask,
            next: attempt(2, 2, true)
        }
    );
    assert_eq!(
        client(&c).route(),
        Some(route(1, 1)),
        "an ASK leaves the stable route as it was"
    );
    // n2 is committed but not active: try again, along the stable route.
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientRedirected {
            reply: ClientReply::TryAgain,
            next: attempt(1, 1, false)
        }
    );
    assert_eq!(client(&c).request().unwrap().hops(), 2);
    // The third answer is one past the limit of two: the request gives up.
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientGaveUp { key: 1, hops: 2 }
    );
    assert!(client(&c).request().is_none());
    assert_eq!(client(&c).pending(), Some(1), "m1 waits for a retry");

    c.activate_owner().unwrap();
    c.client_retry(P1).unwrap();
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientRedirected {
            reply: ClientReply::Redirect(Redirect::Moved(route(2, 2))),
            next: attempt(2, 2, false)
        }
    );
    assert_eq!(
        client(&c).route(),
        Some(route(2, 2)),
        "MOVED moves the route"
    );
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientAccepted {
            node: n(2),
            key: 1,
            pos: 1,
            epoch: Epoch(2),
            appended: true
        }
    );
    assert_eq!(
        refused(&mut c, |c| c.ack_client(P1)),
        ClusterError::NotConfirmed {
            node: n(2),
            pos: 1,
            tail: 0
        }
    );
    c.replicate(n(2), n(1)).unwrap();
    c.confirm(n(2)).unwrap();
    assert_eq!(
        c.ack_client(P1).unwrap(),
        Outcome::ClientAcked {
            key: 1,
            node: n(2),
            pos: 1
        }
    );
    let cl = client(&c);
    assert!(cl.acked().contains(&1));
    assert_eq!((cl.pending(), cl.request().is_none()), (None, true));
    assert_eq!(
        refused(&mut c, |c| c.client_retry(P1)),
        ClusterError::NothingUnacknowledged
    );
}

/// Note 2: "redirects and forwards must also limit the number of hops".
/// While admission is closed for a handoff, every answer is a try-again;
/// the request gives up at the limit, and every answer before it cost one
/// hop.
#[test]
fn a_request_gives_up_at_the_hop_limit() {
    let mut c = with_client();
    c.close_admission(n(2)).unwrap();
    c.client_publish(P1).unwrap();
    for hops in 1..=2 {
        assert_eq!(
            c.answer_client(P1).unwrap(),
            Outcome::ClientRedirected {
                reply: ClientReply::TryAgain,
                next: attempt(1, 1, false)
            }
        );
        assert_eq!(client(&c).request().unwrap().hops(), hops);
    }
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientGaveUp { key: 1, hops: 2 }
    );
    assert_eq!(
        refused(&mut c, |c| c.answer_client(P1)),
        ClusterError::NoRequestInFlight
    );
}

/// Under `no_hop_limit` the same request goes on past the limit.
#[test]
fn under_no_hop_limit_the_request_goes_on() {
    let mut c = with_client().with_mutant(Mutant::NoHopLimit);
    c.close_admission(n(2)).unwrap();
    c.client_publish(P1).unwrap();
    for _ in 0..5 {
        assert!(matches!(
            c.answer_client(P1).unwrap(),
            Outcome::ClientRedirected { .. }
        ));
    }
    assert_eq!(client(&c).request().unwrap().hops(), 5);
}

/// Under `ask_updates_route` an ASK rewrites the stable route.
#[test]
fn under_ask_updates_route_an_ask_rewrites_the_route() {
    let mut c = with_client().with_mutant(Mutant::AskUpdatesRoute);
    committed(&mut c);
    c.client_publish(P1).unwrap();
    c.answer_client(P1).unwrap();
    assert_eq!(client(&c).route(), Some(route(2, 2)));
}

#[test]
fn without_a_client_the_client_operations_are_refused() {
    let ops: [ClientOp; 5] = [
        Cluster::client_publish,
        Cluster::client_retry,
        Cluster::answer_client,
        Cluster::ack_client,
        Cluster::client_timeout,
    ];
    let mut c = cluster();
    assert!(c.client(P1).is_none());
    for op in ops {
        assert_eq!(
            refused(&mut c, |c| op(c, P1)),
            ClusterError::NoClient { producer: P1 }
        );
    }
    // A cluster with one client has no `c2` (and no `c0`).
    let mut c = with_client();
    for p in [ProducerId(0), ProducerId(2)] {
        for op in ops {
            assert_eq!(
                refused(&mut c, |c| op(c, p)),
                ClusterError::NoClient { producer: p }
            );
        }
    }
}

/// Two producers through one handoff's cutover (note 2: clients "will see
/// the new state at different times"): `c1` is answered ASK at the old
/// owner and keeps its route; `c2`, sent after the activation, is answered
/// MOVED and learns the new owner; each is acknowledged its own message,
/// and neither key is taken for the other's.
#[test]
fn two_producers_see_the_cutover_at_different_times() {
    let p2 = ProducerId(2);
    let mut c = cluster().with_clients(2, 2);
    committed(&mut c);
    c.client_publish(P1).unwrap();
    assert!(matches!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientRedirected {
            reply: ClientReply::Redirect(Redirect::Ask { .. }),
            ..
        }
    ));
    c.activate_owner().unwrap();
    c.client_publish(p2).unwrap();
    assert!(matches!(
        c.answer_client(p2).unwrap(),
        Outcome::ClientRedirected {
            reply: ClientReply::Redirect(Redirect::Moved(_)),
            ..
        }
    ));
    assert_eq!(c.client(P1).unwrap().route(), Some(route(1, 1)));
    assert_eq!(c.client(p2).unwrap().route(), Some(route(2, 2)));
    for p in [P1, p2] {
        assert!(matches!(
            c.answer_client(p).unwrap(),
            Outcome::ClientAccepted { appended: true, .. }
        ));
    }
    let keys: Vec<u64> = [P1, p2]
        .map(|p| c.client(p).unwrap().request().unwrap().key())
        .to_vec();
    assert_eq!(keys, vec![1, 2], "each producer carries its own key");
    for _ in 0..4 {
        for from in [2, 1, 3] {
            for to in [1, 2, 3] {
                if from != to {
                    let _ = c.replicate(n(from), n(to));
                }
            }
        }
    }
    let _ = c.confirm(n(2));
    for p in [P1, p2] {
        c.ack_client(p).unwrap();
    }
    assert_eq!(
        c.client(P1)
            .unwrap()
            .acked()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(
        c.client(p2)
            .unwrap()
            .acked()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        vec![2]
    );
}

/// One request at a time; nothing to retry before a message ended
/// unacknowledged; nothing to acknowledge before an acceptance.
#[test]
fn the_client_keeps_one_request_in_flight() {
    let mut c = with_client();
    assert_eq!(
        refused(&mut c, |c| c.client_retry(P1)),
        ClusterError::NothingUnacknowledged
    );
    assert_eq!(
        refused(&mut c, |c| c.client_timeout(P1)),
        ClusterError::NoRequestInFlight
    );
    c.client_publish(P1).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.client_publish(P1)),
        ClusterError::RequestInFlight { key: 1 }
    );
    assert_eq!(
        refused(&mut c, |c| c.client_retry(P1)),
        ClusterError::RequestInFlight { key: 1 }
    );
    assert_eq!(
        refused(&mut c, |c| c.ack_client(P1)),
        ClusterError::NothingAccepted
    );
    c.answer_client(P1).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.answer_client(P1)),
        ClusterError::RequestAccepted { node: n(1) }
    );
}

/// The acknowledgement waits for the accepting node's confirm; under
/// `ack_before_confirm` it comes at the append.
#[test]
fn the_acknowledgement_waits_for_the_confirm() {
    let mut c = with_client();
    c.client_publish(P1).unwrap();
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientAccepted {
            node: n(1),
            key: 1,
            pos: 1,
            epoch: Epoch(1),
            appended: true
        }
    );
    assert_eq!(
        refused(&mut c, |c| c.ack_client(P1)),
        ClusterError::NotConfirmed {
            node: n(1),
            pos: 1,
            tail: 0
        }
    );
    c.replicate(n(1), n(2)).unwrap();
    c.confirm(n(1)).unwrap();
    assert_eq!(
        c.ack_client(P1).unwrap(),
        Outcome::ClientAcked {
            key: 1,
            node: n(1),
            pos: 1
        }
    );

    let mut c = with_client().with_mutant(Mutant::AckBeforeConfirm);
    c.client_publish(P1).unwrap();
    c.answer_client(P1).unwrap();
    assert!(matches!(
        c.ack_client(P1).unwrap(),
        Outcome::ClientAcked { pos: 1, .. }
    ));
}

/// A node that accepted and then crashed acknowledges nothing; the client
/// times out instead.
#[test]
fn an_accepting_node_that_is_down_does_not_acknowledge() {
    let mut c = with_client();
    c.client_publish(P1).unwrap();
    c.answer_client(P1).unwrap();
    c.replicate(n(1), n(2)).unwrap();
    c.confirm(n(1)).unwrap();
    c.crash(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.ack_client(P1)),
        ClusterError::NodeDown { node: n(1) }
    );
    assert!(matches!(
        c.client_timeout(P1).unwrap(),
        Outcome::ClientTimedOut { key: 1, .. }
    ));
}

/// A request at a node that is down gets no answer: the client times out,
/// refreshes its route from the record (here: the recovery's new owner),
/// and its retry is answered from the new owner's history.
#[test]
fn a_timeout_refreshes_the_route_and_the_retry_is_answered_from_the_history() {
    let mut c = with_client();
    c.client_publish(P1).unwrap();
    c.answer_client(P1).unwrap();
    for i in [2, 3] {
        c.replicate(n(1), n(i)).unwrap();
    }
    c.confirm(n(1)).unwrap();
    recovered_on_n2(&mut c);
    assert!(matches!(
        refused(&mut c, |c| c.ack_client(P1)),
        ClusterError::NodeDown { .. }
    ));
    assert_eq!(
        c.client_timeout(P1).unwrap(),
        Outcome::ClientTimedOut {
            key: 1,
            route: route(2, 2)
        }
    );
    assert_eq!(client(&c).route(), Some(route(2, 2)));
    c.client_retry(P1).unwrap();
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientAccepted {
            node: n(2),
            key: 1,
            pos: 1,
            epoch: Epoch(1),
            appended: false
        }
    );
    assert_eq!(c.node(n(2)).unwrap().replica().len(), 1);
    // Confirmed by the recovery (its tail is n2's confirmed tail).
    c.ack_client(P1).unwrap();
}

/// A request at a node that is down is not answered.
#[test]
fn a_node_that_is_down_does_not_answer() {
    let mut c = with_client();
    c.crash(n(1)).unwrap();
    c.client_publish(P1).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.answer_client(P1)),
        ClusterError::NodeDown { node: n(1) }
    );
    // The record still names n1 at epoch 1: the refresh changes nothing.
    assert_eq!(
        c.client_timeout(P1).unwrap(),
        Outcome::ClientTimedOut {
            key: 1,
            route: route(1, 1)
        }
    );
}

/// The refresh at a timeout only moves the route forward in epoch: a route
/// learned from a MOVED at the record's epoch stays.
#[test]
fn a_timeout_never_moves_the_route_back() {
    let mut c = with_client();
    committed(&mut c);
    c.activate_owner().unwrap();
    c.client_publish(P1).unwrap();
    c.answer_client(P1).unwrap(); // MOVED n2@2
    assert_eq!(client(&c).route(), Some(route(2, 2)));
    c.client_timeout(P1).unwrap();
    assert_eq!(client(&c).route(), Some(route(2, 2)));
}

/// The stale-epoch refusal: a node that serves at a newer epoch than the
/// request's refuses it with MOVED to itself at its epoch. n1, suspected
/// while alive, seals and becomes the recovery's candidate at epoch 2; the
/// client's route still says n1@1.
#[test]
fn a_node_serving_at_a_newer_epoch_refuses_a_stale_request_with_moved_to_itself() {
    let mut c = with_client();
    c.open_recovery().unwrap();
    for i in [1, 2] {
        c.seal(n(i)).unwrap();
    }
    for i in [1, 2] {
        c.install_recovered(n(i)).unwrap();
    }
    c.activate_recovery(n(1)).unwrap();
    assert_eq!(c.record().epoch, Epoch(2));
    let view = c.server_view(n(1)).unwrap();
    assert_eq!(
        view.serving.map(|s| s.epoch),
        Some(Epoch(2)),
        "n1 serves at epoch 2"
    );
    c.client_publish(P1).unwrap();
    assert_eq!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientRedirected {
            reply: ClientReply::Redirect(Redirect::Moved(route(1, 2))),
            next: attempt(1, 2, false)
        }
    );
    assert_eq!(
        c.node(n(1)).unwrap().replica().len(),
        0,
        "refused, not executed"
    );
    assert!(matches!(
        c.answer_client(P1).unwrap(),
        Outcome::ClientAccepted {
            pos: 1,
            appended: true,
            ..
        }
    ));
}

/// The view a node answers from: its serving state, the record's owner,
/// and the ASK window of a committed handoff (closed by a pending
/// recovery).
#[test]
fn the_server_view_follows_the_record_and_the_serving_state() {
    let mut c = with_client();
    committed(&mut c);
    let v = c.server_view(n(1)).unwrap();
    assert_eq!(v.record_owner, route(2, 2));
    assert_eq!(v.handoff_to, Some(route(2, 2)));
    assert_eq!(
        v.serving.map(|s| (s.epoch, s.admission_open)),
        Some((Epoch(1), false))
    );
    let v = c.server_view(n(2)).unwrap();
    assert_eq!((v.serving, v.handoff_to), (None, None));
    // A recovery opened on the committed handoff: no ASK window.
    c.open_recovery().unwrap();
    assert_eq!(c.server_view(n(1)).unwrap().handoff_to, None);
    c.crash(n(3)).unwrap();
    assert_eq!(
        c.server_view(n(3)).unwrap_err(),
        ClusterError::NodeDown { node: n(3) }
    );
}
