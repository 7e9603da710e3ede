use super::*;

fn id(n: u8, disk: u32) -> StorageId {
    StorageId {
        node: NodeId(n),
        disk,
    }
}

fn report(from: StorageId, epoch: u64, of: StorageId, pos: Position) -> Report {
    Report {
        from,
        epoch: Epoch(epoch),
        of,
        pos,
        confirmed: 1,
    }
}

#[test]
fn a_report_from_the_records_owner_at_its_epoch_is_taken() {
    let mut k = Known::default();
    let v = k.on_report(
        id(1, 0),
        Epoch(1),
        &report(id(1, 0), 1, id(2, 0), 2),
        Mutants::NONE,
    );
    assert_eq!(v, ReportVerdict::Taken);
    assert_eq!(k.epoch(), Some(Epoch(1)));
    assert_eq!((k.confirmed(), k.reported(id(2, 0))), (1, 2));
    assert!(k.fresh(Epoch(1), Mutants::NONE).is_ok());
}

#[test]
fn a_report_from_an_older_epoch_is_answered_with_the_records_epoch() {
    let mut k = Known::default();
    let v = k.on_report(
        id(2, 0),
        Epoch(2),
        &report(id(1, 0), 1, id(3, 0), 2),
        Mutants::NONE,
    );
    assert_eq!(
        v,
        ReportVerdict::Refuse {
            to: NodeId(1),
            epoch: Epoch(2)
        }
    );
    assert_eq!(k, Known::default(), "nothing taken");
}

#[test]
fn a_report_from_another_instance_at_the_records_epoch_is_ignored() {
    let mut k = Known::default();
    let v = k.on_report(
        id(1, 1),
        Epoch(1),
        &report(id(1, 0), 1, id(2, 0), 2),
        Mutants::NONE,
    );
    assert_eq!(v, ReportVerdict::Ignored);
    assert_eq!(k, Known::default());
}

#[test]
fn a_new_epochs_first_report_forgets_the_earlier_owners() {
    let mut k = Known::default();
    k.on_report(
        id(1, 0),
        Epoch(1),
        &report(id(1, 0), 1, id(2, 0), 2),
        Mutants::NONE,
    );
    assert_eq!(
        k.fresh(Epoch(2), Mutants::NONE),
        Err(ControllerError::NoReport {
            record_epoch: Epoch(2),
            known_epoch: Some(Epoch(1))
        }),
        "knowledge of epoch 1 is not read at epoch 2"
    );
    k.on_report(
        id(2, 0),
        Epoch(2),
        &report(id(2, 0), 2, id(3, 0), 1),
        Mutants::NONE,
    );
    assert_eq!(k.reported(id(2, 0)), 0, "epoch 1's report is gone");
    assert_eq!(k.reported(id(3, 0)), 1);
}

#[test]
fn progress_is_per_instance_a_fresh_disk_starts_from_nothing() {
    let mut k = Known::default();
    k.on_report(
        id(1, 0),
        Epoch(1),
        &report(id(1, 0), 1, id(2, 0), 2),
        Mutants::NONE,
    );
    assert_eq!(k.pos(id(2, 1), Mutants::NONE), 0);
}

#[test]
fn stale_progress_admits_keeps_progress_per_node_and_across_epochs() {
    let m = Mutants::only(Mutant::StaleProgressAdmits);
    let mut k = Known::default();
    k.on_report(id(1, 0), Epoch(1), &report(id(1, 0), 1, id(2, 0), 2), m);
    assert_eq!(
        k.pos(id(2, 1), m),
        2,
        "the lost instance speaks for the fresh one"
    );
    assert!(
        k.fresh(Epoch(2), m).is_ok(),
        "an epoch-1 report acts at epoch 2"
    );
    k.on_report(id(2, 0), Epoch(2), &report(id(2, 0), 2, id(3, 0), 1), m);
    assert_eq!(k.reported(id(2, 0)), 2, "kept across the epoch change");
    assert!(
        Known::default().fresh(Epoch(1), m).is_err(),
        "nothing reported yet"
    );
}

#[test]
fn knowledge_round_trips_through_json() {
    let mut k = Known::default();
    k.on_report(
        id(1, 0),
        Epoch(1),
        &report(id(1, 0), 1, id(2, 1), 2),
        Mutants::NONE,
    );
    let json = serde_json::to_string(&k).unwrap();
    assert_eq!(serde_json::from_str::<Known>(&json).unwrap(), k);
}
