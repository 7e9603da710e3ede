//! Client routing (note 2: MOVED, ASK, the hop limit): note 2's slot-8
//! story through a real handoff, the one-shot ASK, and finding 26 (an
//! acknowledgement from an owner a recovery superseded is truthful).

use livemove_model::properties::{acked_after_confirm, ask_keeps_route, no_acked_publish_lost};
use livemove_model::protocol::Reply;
use livemove_model::state::ReqPhase;
use livemove_model::{Action, Cfg, MoveModel, Mutant};

mod common;
use common::run;

use Action::*;

fn model(cfg: &str, mutant: Option<Mutant>) -> MoveModel {
    MoveModel::new(Cfg::named(cfg).with_mutant(mutant))
}

/// n1 hands off to n2 and the handoff commits; n2 is not active yet.
const COMMITTED: [Action; 3] = [CloseAdmission { to: 1 }, ReportFinalBoundary, CommitHandoff];

#[test]
fn ask_then_moved_through_a_handoff() {
    let m = model("client-handoff", None);
    let mut path = COMMITTED.to_vec();
    path.push(ClientPublish { client: 0 });
    let s = *run(&m, &path).last().expect("a path");
    assert_eq!((s.clients[0].route_node, s.clients[0].route_epoch), (0, 1));
    // The old owner of the committed handoff: ASK the new owner at e2.
    assert_eq!(m.reply(&s, 0), Some(Reply::Ask { node: 1, epoch: 2 }));
    let t = m.apply(&s, AnswerClient { client: 0 }).expect("answered");
    assert_eq!(
        (t.clients[0].at, t.clients[0].epoch, t.clients[0].asking),
        (1, 2, true)
    );
    assert_eq!(
        (t.clients[0].route_node, t.clients[0].route_epoch),
        (0, 1),
        "the stable route still names n1@e1"
    );
    assert!(ask_keeps_route(&m, &s, &AnswerClient { client: 0 }, &t));
    // n2 is committed but not active: try again, along the stable route.
    assert_eq!(m.reply(&t, 0), Some(Reply::TryAgain));
    let u = m.apply(&t, AnswerClient { client: 0 }).expect("answered");
    assert_eq!(
        (u.clients[0].at, u.clients[0].asking, u.clients[0].hops),
        (0, false, 2)
    );
    // The hop limit is 2: the next answer ends the request.
    let v = m.apply(&u, AnswerClient { client: 0 }).expect("answered");
    assert_eq!(v.clients[0].phase, ReqPhase::Idle);
    assert_eq!(v.clients[0].msg, 1, "m1 waits for a retry");
    // After the activation, the old owner answers MOVED and the route moves.
    let w = m.apply(&v, ActivateOwner).expect("activates");
    let x = m.apply(&w, ClientRetry { client: 0 }).expect("retries");
    assert_eq!(m.reply(&x, 0), Some(Reply::Moved { node: 1, epoch: 2 }));
    let y = m.apply(&x, AnswerClient { client: 0 }).expect("answered");
    assert_eq!((y.clients[0].route_node, y.clients[0].route_epoch), (1, 2));
    assert_eq!(m.reply(&y, 0), Some(Reply::Accept));
    let z = m.apply(&y, AnswerClient { client: 0 }).expect("accepted");
    assert_eq!(z.clients[0].phase, ReqPhase::Accepted);
    // Not acknowledged before n2 confirms m1.
    assert!(m.apply(&z, AckClient { client: 0 }).is_err());
    let mut s = z;
    for a in [
        Replicate { from: 1, to: 0 },
        Confirm { node: 1 },
        AckClient { client: 0 },
    ] {
        s = m
            .apply(&s, a)
            .unwrap_or_else(|g| panic!("{a} disabled: {g}"));
    }
    assert!(s.clients[0].is_acked(1));
    assert!(no_acked_publish_lost(&m, &s));
}

#[test]
fn a_client_that_takes_an_ask_for_a_move_rewrites_its_route() {
    let m = model("client-handoff", Some(Mutant::AskUpdatesRoute));
    let mut path = COMMITTED.to_vec();
    path.push(ClientPublish { client: 0 });
    let s = *run(&m, &path).last().expect("a path");
    let t = m.apply(&s, AnswerClient { client: 0 }).expect("answered");
    assert_eq!((t.clients[0].route_node, t.clients[0].route_epoch), (1, 2));
    assert!(!ask_keeps_route(&m, &s, &AnswerClient { client: 0 }, &t));
}

/// Finding 26: a zombie owner acknowledges a publish it confirmed before
/// the seals, after a recovery made another node the record's owner.
const ZOMBIE_ACK: [Action; 11] = [
    OpenRecovery { zombie: true },
    Seal { node: 1 },
    ClientPublish { client: 0 },
    AnswerClient { client: 0 },
    Replicate { from: 0, to: 2 },
    Confirm { node: 0 },
    Seal { node: 2 },
    InstallRecovered { node: 1 },
    InstallRecovered { node: 2 },
    ActivateRecovery { candidate: 1 },
    AckClient { client: 0 },
];

#[test]
fn an_acknowledgement_from_a_superseded_owner_is_truthful() {
    let m = model("client-recovery", None);
    let states = run(&m, &ZOMBIE_ACK);
    let before = states[ZOMBIE_ACK.len() - 1];
    let after = states[ZOMBIE_ACK.len()];
    // The acknowledging node is not the owner serving at the record's epoch...
    assert_eq!(before.clients[0].at, 0);
    assert_eq!(before.current_owner(), Some(1));
    assert_eq!(before.record.epoch, 2);
    // ...yet what it acknowledges is confirmed and held by the new owner.
    assert!(after.clients[0].is_acked(1));
    assert!(acked_after_confirm(
        &m,
        &before,
        &AckClient { client: 0 },
        &after
    ));
    assert!(no_acked_publish_lost(&m, &after));
    assert_eq!(after.nodes[1].log.at(1).msg(), 1);
}

#[test]
fn an_acknowledgement_before_the_confirm_is_caught() {
    let m = model("client-recovery", Some(Mutant::AckBeforeConfirm));
    let states = run(
        &m,
        &[
            ClientPublish { client: 0 },
            AnswerClient { client: 0 },
            AckClient { client: 0 },
        ],
    );
    let (before, after) = (states[2], states[3]);
    assert!(after.clients[0].is_acked(1));
    assert!(!acked_after_confirm(
        &m,
        &before,
        &AckClient { client: 0 },
        &after
    ));
    assert!(!no_acked_publish_lost(&m, &after));
    // The correct protocol refuses the acknowledgement there.
    let correct = model("client-recovery", None);
    let s = run(
        &correct,
        &[ClientPublish { client: 0 }, AnswerClient { client: 0 }],
    )[2];
    assert!(correct.apply(&s, AckClient { client: 0 }).is_err());
}

/// An ASK-directed request is accepted when the new owner activates before
/// it arrives: the ASK carried the new epoch, the stable route still names
/// the old owner.
#[test]
fn an_ask_directed_request_is_accepted_once_the_new_owner_serves() {
    let m = model("client-handoff", None);
    let mut path = COMMITTED.to_vec();
    path.extend([
        ClientPublish { client: 0 },
        AnswerClient { client: 0 },
        ActivateOwner,
    ]);
    let s = *run(&m, &path).last().expect("a path");
    assert_eq!(
        (s.clients[0].at, s.clients[0].epoch, s.clients[0].asking),
        (1, 2, true)
    );
    assert_eq!(m.reply(&s, 0), Some(Reply::Accept));
    let t = m.apply(&s, AnswerClient { client: 0 }).expect("accepted");
    assert_eq!(t.clients[0].phase, ReqPhase::Accepted);
    assert_eq!((t.clients[0].route_node, t.clients[0].route_epoch), (0, 1));
    assert_eq!(t.nodes[1].log.at(1).msg(), 1, "n2 appended m1 at e2");
    assert_eq!(t.nodes[1].log.at(1).epoch(), 2);
}

/// Two producers, each with its own request: c2's message is a message of
/// its own (appended beside c1's, never taken for a retry of it), and c2's
/// retry after a timeout is found in the owner's history by its own id
/// while c1's message sits beside it. A client the config does not have is
/// disabled by name.
#[test]
fn two_producers_publish_and_retry_each_their_own_message() {
    let m = model("two-clients", None);
    let path = [
        ClientPublish { client: 0 },
        AnswerClient { client: 0 },
        ClientPublish { client: 1 },
        AnswerClient { client: 1 },
    ];
    let s = *run(&m, &path).last().expect("a path");
    let log = &s.nodes[0].log;
    assert_eq!(
        (log.len, log.at(1).msg(), log.at(2).msg()),
        (2, 1, 2),
        "each producer's message is its own entry"
    );
    assert_eq!((s.clients[0].msg, s.clients[1].msg), (1, 2));
    // c2 times out (its acknowledgement is late) and retries: the owner
    // finds m2 in its history and appends nothing.
    let retried = run(
        &m,
        &[
            &path[..],
            &[
                ClientTimeout { client: 1 },
                ClientRetry { client: 1 },
                AnswerClient { client: 1 },
            ],
        ]
        .concat(),
    );
    let t = retried.last().expect("a path");
    assert_eq!(t.nodes[0].log, s.nodes[0].log, "the retry appended nothing");
    assert_eq!(t.clients[1].phase, ReqPhase::Accepted);
    // One client configs have no c2.
    let one = model("client-handoff", None);
    assert_eq!(
        one.apply(&one.init(), ClientPublish { client: 1 }),
        Err(livemove_model::protocol::Disabled("the client exists"))
    );
}
