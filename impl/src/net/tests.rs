use super::*;
use crate::entry::Op;

fn entry(key: u64, epoch: u64) -> Entry {
    Entry {
        epoch: Epoch(epoch),
        op: Op::Put { key, value: key },
    }
}

fn id(n: u8) -> StorageId {
    StorageId::first(NodeId(n))
}

fn append(from: u8, to: u8) -> Msg {
    Msg::Append {
        from: NodeId(from),
        to: id(to),
        epoch: Epoch(1),
        pos: 1,
        prev: None,
        entry: entry(1, 1),
    }
}

#[test]
fn messages_travel_as_json_tagged_by_kind_with_the_shared_field_names() {
    let msgs = [
        append(1, 2),
        Msg::Ack {
            to: NodeId(1),
            epoch: Epoch(2),
            from: id(3),
            inc: 4,
            pos: 2,
            entry: entry(2, 2),
            admitted: false,
        },
        Msg::Refuse {
            to: NodeId(1),
            epoch: Epoch(3),
        },
        Msg::Suspend {
            to: NodeId(1),
            from: id(2),
            inc: 1,
        },
        progress(),
    ];
    for m in msgs {
        let json = serde_json::to_value(m).unwrap();
        assert_eq!(json["kind"], m.kind()[..1].to_uppercase() + &m.kind()[1..]);
        assert_eq!(serde_json::from_value::<Msg>(json).unwrap(), m);
    }
    let json = serde_json::to_value(append(1, 2)).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["entry", "epoch", "from", "kind", "pos", "prev", "to"]
    );
}

fn progress() -> Msg {
    Msg::Progress {
        from: id(1),
        epoch: Epoch(2),
        of: StorageId {
            node: NodeId(3),
            disk: 1,
        },
        pos: 2,
        confirmed: 1,
    }
}

#[test]
fn a_progress_report_names_the_reporter_the_copy_and_both_positions() {
    let json = serde_json::to_value(progress()).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["confirmed", "epoch", "from", "kind", "of", "pos"]);
    assert_eq!(progress().dest(), Endpoint::Controller);
    assert_eq!(progress().source(), Some(NodeId(1)));
}

#[test]
fn an_unknown_field_is_refused_on_the_wire() {
    let mut json = serde_json::to_value(Msg::Refuse {
        to: NodeId(1),
        epoch: Epoch(2),
    })
    .unwrap();
    json["extra"] = 1.into();
    let e = serde_json::from_value::<Msg>(json).unwrap_err();
    assert!(e.to_string().contains("extra"), "{e}");
}

#[test]
fn the_in_flight_set_is_a_multiset() {
    let mut f = InFlight::default();
    f.push(append(1, 2)).unwrap();
    f.push(append(1, 2)).unwrap();
    assert_eq!(f.count(&append(1, 2)), 2);
    f.take(&append(1, 2)).unwrap();
    assert_eq!(f.count(&append(1, 2)), 1);
    assert_eq!(
        f.take(&append(1, 3)),
        Err(NetError::NotInFlight { msg: append(1, 3) })
    );
    assert_eq!(f.len(), 1);
}

#[test]
fn a_message_counts_on_its_own_link_either_way_and_a_refusal_on_every_link_of_its_destination() {
    let mut f = InFlight::default();
    f.push(append(1, 2)).unwrap();
    assert_eq!(f.on_link(NodeId(1), NodeId(2)), 1);
    assert_eq!(f.on_link(NodeId(2), NodeId(1)), 1);
    assert_eq!(f.on_link(NodeId(1), NodeId(3)), 0);
    f.push(Msg::Refuse {
        to: NodeId(1),
        epoch: Epoch(2),
    })
    .unwrap();
    assert_eq!(f.on_link(NodeId(1), NodeId(3)), 1);
    assert_eq!(f.on_link(NodeId(3), NodeId(1)), 1);
    assert_eq!(f.on_link(NodeId(2), NodeId(3)), 0);
}

#[test]
fn a_report_to_the_controller_is_on_no_link_between_nodes() {
    let mut f = InFlight::default();
    f.push(progress()).unwrap();
    for (a, b) in [(1, 2), (1, 3), (3, 1), (2, 3)] {
        assert_eq!(f.on_link(NodeId(a), NodeId(b)), 0, "n{a} <-> n{b}");
    }
}

#[test]
fn the_in_flight_set_refuses_beyond_its_bound() {
    let mut f = InFlight::default();
    for _ in 0..IN_FLIGHT_MAX {
        f.push(append(1, 2)).unwrap();
    }
    assert_eq!(
        f.push(append(1, 2)),
        Err(NetError::Full { max: IN_FLIGHT_MAX })
    );
    assert_eq!(f.len(), IN_FLIGHT_MAX);
}
