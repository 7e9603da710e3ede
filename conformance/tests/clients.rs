//! The client of the queue (note 2: MOVED, ASK, the hop limit): note 2's
//! slot-8 story through a real handoff, a retry answered from a recovered
//! history, and finding 26 (an acknowledgement from an owner a recovery
//! superseded). The model and the implementation must agree on every step
//! and on every action either one refuses along the way.

mod common;
use common::{N1, N2, N3};
use livemove_model::state::ReqPhase;
use livemove_model::Action;

use Action::*;

/// The ASK between the commit and the activation, the try-again at the
/// inactive new owner, the request that gives up at the hop limit, then the
/// retry's MOVED after the activation, the acceptance, and the
/// acknowledgement once the new owner confirmed.
#[test]
fn note2_slot_8_ask_then_moved_through_a_handoff() {
    let steps = [
        CloseAdmission { to: N2 },
        ReportFinalBoundary,
        CommitHandoff,
        ClientPublish { client: 0 },
        AnswerClient { client: 0 },
        AnswerClient { client: 0 },
        AnswerClient { client: 0 },
        ActivateOwner,
        ClientRetry { client: 0 },
        AnswerClient { client: 0 },
        AnswerClient { client: 0 },
        Replicate { from: N2, to: N1 },
        Confirm { node: N2 },
        AckClient { client: 0 },
    ];
    let (_, s) = common::replay_in_lockstep("client-handoff", &steps);
    let c = s.clients[0];
    assert_eq!((c.route_node, c.route_epoch), (N2, 2));
    assert!(c.is_acked(1));
    assert_eq!(c.phase, ReqPhase::Idle);
}

/// The owner crashes after confirming m1; the client's request at it gets
/// no answer, it times out, refreshes its route to the recovery's owner,
/// and its retry is answered from that owner's history.
#[test]
fn a_retry_after_recovery_is_answered_from_the_history() {
    let steps = [
        ClientPublish { client: 0 },
        AnswerClient { client: 0 },
        Replicate { from: N1, to: N2 },
        Replicate { from: N1, to: N3 },
        Confirm { node: N1 },
        Crash { node: N1 },
        OpenRecovery { zombie: false },
        Seal { node: N2 },
        Seal { node: N3 },
        InstallRecovered { node: N2 },
        InstallRecovered { node: N3 },
        ActivateRecovery { candidate: N2 },
        ClientTimeout { client: 0 },
        ClientRetry { client: 0 },
        AnswerClient { client: 0 },
        AckClient { client: 0 },
    ];
    let (_, s) = common::replay_in_lockstep("client-recovery", &steps);
    assert_eq!(s.nodes[N2 as usize].log.len, 1, "no duplicate");
    assert!(s.clients[0].is_acked(1));
}

/// Finding 26: zombie n1 confirmed m1 before the seals and acknowledges it
/// after n2 activated; both sides let it.
#[test]
fn a_zombie_acknowledges_what_it_confirmed_before_the_seals() {
    let steps = [
        OpenRecovery { zombie: true },
        Seal { node: N2 },
        ClientPublish { client: 0 },
        AnswerClient { client: 0 },
        Replicate { from: N1, to: N3 },
        Confirm { node: N1 },
        Seal { node: N3 },
        InstallRecovered { node: N2 },
        InstallRecovered { node: N3 },
        ActivateRecovery { candidate: N2 },
        AckClient { client: 0 },
    ];
    let (_, s) = common::replay_in_lockstep("client-recovery", &steps);
    assert!(s.clients[0].is_acked(1));
    assert_eq!(s.record.epoch, 2);
}
