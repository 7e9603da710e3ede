//! Producer retries across an owner change (note 2: "does timeout retry
//! cause duplicate effects?"): the story the zoo's shortest counterexample
//! does not tell. The producer's publish is confirmed, its acknowledgement
//! is lost, the owner crashes and a recovery activates a new owner that
//! holds the message at the old epoch; the producer, timed out, retries.

use livemove_model::properties::confirmed_once;
use livemove_model::{Action, Cfg, MoveModel, Mutant};

mod common;
use common::run;

use Action::*;

/// Publish on n1, confirm it on n1 and n2, crash n1, recover onto n2.
const TO_THE_NEW_OWNER: [Action; 10] = [
    Publish { node: 0 },
    Replicate { from: 0, to: 1 },
    Confirm { node: 0 },
    Crash { node: 0 },
    OpenRecovery { zombie: false },
    Seal { node: 1 },
    Seal { node: 2 },
    InstallRecovered { node: 1 },
    InstallRecovered { node: 2 },
    ActivateRecovery { candidate: 1 },
];

/// The retry at the new owner, then its replication and confirm.
const RETRY_AND_CONFIRM: [Action; 3] = [
    RetryPublish { node: 1 },
    Replicate { from: 1, to: 2 },
    Confirm { node: 1 },
];

fn model(mutant: Option<Mutant>) -> MoveModel {
    MoveModel::new(Cfg::named("publish-retry").with_mutant(mutant))
}

#[test]
fn a_retry_after_recovery_is_answered_from_the_recovered_history() {
    let m = model(None);
    let states = run(&m, &TO_THE_NEW_OWNER);
    let owner = *states.last().expect("a path");
    assert_eq!(owner.nodes[1].log.len, 1, "n2 holds m1@e1");
    assert_eq!(owner.nodes[1].serving.epoch, 2, "n2 serves at e2");
    let after = m
        .apply(&owner, RetryPublish { node: 1 })
        .expect("the retry is taken");
    assert_eq!(after.nodes[1].log, owner.nodes[1].log, "nothing appended");
    assert_eq!(after.budget.publish_retries, 1);
    // Nothing left to replicate or confirm: the message stands once.
    assert!(m.apply(&after, Replicate { from: 1, to: 2 }).is_err());
    assert!(confirmed_once(&m, &after));
}

#[test]
fn without_the_producer_id_the_retry_is_confirmed_a_second_time() {
    let m = model(Some(Mutant::RetryWithoutProducerId));
    let mut path = TO_THE_NEW_OWNER.to_vec();
    path.extend(RETRY_AND_CONFIRM);
    let states = run(&m, &path);
    let first_bad = states
        .iter()
        .position(|s| !confirmed_once(&m, s))
        .expect("the mutant confirms m1 twice");
    assert_eq!(first_bad, path.len(), "at the final confirm");
    let last = states.last().expect("a path");
    assert_eq!(last.confirmed.len, 2);
    assert_eq!(last.confirmed.at(1).msg(), last.confirmed.at(2).msg());
    // The correct protocol refuses the same path at its replication step:
    // the retry appended nothing, so n2 has nothing to ship.
    let correct = model(None);
    let mut s = run(&correct, &TO_THE_NEW_OWNER)[TO_THE_NEW_OWNER.len()];
    s = correct
        .apply(&s, RETRY_AND_CONFIRM[0])
        .expect("the retry is taken");
    assert!(correct.apply(&s, RETRY_AND_CONFIRM[1]).is_err());
}
