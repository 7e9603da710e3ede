//! Producer retries through the cluster (note 2: "does timeout retry cause
//! duplicate effects?"): the owner's history is the producer's record.

use super::*;
use crate::mutant::Mutant;

/// m1 confirmed on n1, n2 and n3; n1 crashes and a recovery activates n2.
fn recovered_with_m1(mut c: Cluster) -> Cluster {
    publish_to(&mut c, 1, 1, &[2, 3]);
    c.confirm(n(1)).unwrap();
    recovered_on_n2(&mut c);
    c
}

#[test]
fn a_retry_with_nothing_published_is_refused() {
    let mut c = cluster();
    assert_eq!(
        refused(&mut c, |c| c.retry_publish(n(1))),
        ClusterError::NothingToRetry
    );
}

#[test]
fn a_retry_the_owner_holds_is_answered_with_its_position() {
    let mut c = cluster();
    c.publish(n(1)).unwrap();
    assert_eq!(
        c.retry_publish(n(1)).unwrap(),
        Outcome::Deduplicated {
            pos: 1,
            epoch: Epoch(1)
        }
    );
    assert_eq!(c.node(n(1)).unwrap().replica().len(), 1);
}

#[test]
fn a_retry_after_recovery_is_answered_from_the_recovered_history() {
    let mut c = recovered_with_m1(cluster());
    assert_eq!(
        c.retry_publish(n(2)).unwrap(),
        Outcome::Deduplicated {
            pos: 1,
            epoch: Epoch(1)
        }
    );
    assert_eq!(c.node(n(2)).unwrap().replica().len(), 1);
}

#[test]
fn a_retry_to_a_node_that_does_not_serve_is_refused() {
    let mut c = cluster();
    c.publish(n(1)).unwrap();
    assert_eq!(
        refused(&mut c, |c| c.retry_publish(n(2))),
        ClusterError::NotServing { node: n(2) }
    );
}

#[test]
fn under_retry_without_producer_id_the_retry_is_appended_again() {
    let mut c = recovered_with_m1(cluster().with_mutant(Mutant::RetryWithoutProducerId));
    assert_eq!(
        c.retry_publish(n(2)).unwrap(),
        Outcome::Published {
            pos: 2,
            epoch: Epoch(2)
        }
    );
}
