//! Framed connections over in-memory duplex streams: messages round-trip,
//! and every kind of bad frame is a typed error naming its offset, after
//! which the connection is closed.

use livemove_impl::store::{Record, Write};
use livemove_impl::{NodeId, StorageId};
use livemove_runtime::wire::{
    encode_frame, Connection, FrameError, FRAME_BYTES_MAX, LENGTH_BYTES, WIRE_VERSION,
};
use std::collections::BTreeMap;
use tokio::io::{duplex, AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Duplex buffer: larger than any frame written in one go here, smaller
/// than the maximum frame.
const DUPLEX_BYTES: usize = 64 * 1024;

fn s(node: u8) -> StorageId {
    StorageId {
        node: NodeId(node),
        disk: 0,
    }
}

/// A write whose map is keyed by storage instances: the reason the payload
/// is postcard and not JSON.
fn commit_handoff() -> Write {
    Write::CommitHandoff {
        durable: BTreeMap::from([(s(1), 40), (s(2), 39), (s(3), 40)]),
    }
}

/// A framed connection and the raw other end of its stream.
fn raw_pair() -> (Connection<DuplexStream>, DuplexStream) {
    let (a, b) = duplex(DUPLEX_BYTES);
    (Connection::new(a), b)
}

/// After an error the connection refuses further use and the peer sees the
/// stream end.
async fn assert_closed(conn: &mut Connection<DuplexStream>, peer: &mut DuplexStream) {
    assert!(!conn.is_open());
    assert!(matches!(
        conn.recv::<Write>().await,
        Err(FrameError::Closed)
    ));
    let mut rest = Vec::new();
    peer.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty(), "the closing side wrote {rest:?}");
}

#[tokio::test]
async fn messages_round_trip_in_order_and_a_clean_close_ends_the_stream() {
    let (a, b) = duplex(DUPLEX_BYTES);
    let (mut tx, mut rx) = (Connection::new(a), Connection::new(b));
    let record = Record::initial(s(1), [s(2), s(3)], 3);
    tx.send(&commit_handoff()).await.unwrap();
    tx.send(&Write::Pause).await.unwrap();
    tx.send(&record).await.unwrap();
    drop(tx);
    assert_eq!(rx.recv::<Write>().await.unwrap(), Some(commit_handoff()));
    assert_eq!(rx.recv::<Write>().await.unwrap(), Some(Write::Pause));
    assert_eq!(rx.recv::<Record>().await.unwrap(), Some(record));
    assert_eq!(rx.recv::<Write>().await.unwrap(), None);
}

#[tokio::test]
async fn an_unknown_version_names_the_frame_offset_and_closes_the_connection() {
    let (mut conn, mut peer) = raw_pair();
    let good = encode_frame(&Write::Pause, 0).unwrap();
    let mut bad = encode_frame(&Write::Resume, good.len() as u64).unwrap();
    bad[LENGTH_BYTES] = WIRE_VERSION + 8;
    peer.write_all(&good).await.unwrap();
    peer.write_all(&bad).await.unwrap();
    assert_eq!(conn.recv::<Write>().await.unwrap(), Some(Write::Pause));
    match conn.recv::<Write>().await {
        Err(FrameError::UnknownVersion {
            offset,
            version,
            supported,
        }) => {
            assert_eq!(offset, good.len() as u64);
            assert_eq!((version, supported), (WIRE_VERSION + 8, WIRE_VERSION));
        }
        other => panic!("expected an unknown version, got {other:?}"),
    }
    assert_closed(&mut conn, &mut peer).await;
}

#[tokio::test]
async fn a_malformed_payload_names_where_decoding_stopped() {
    let (mut conn, mut peer) = raw_pair();
    // Variant index 100 (a one-byte varint): no such `Write`.
    let payload = [100u8, 1, 2, 3];
    let len = (1 + payload.len()) as u32;
    peer.write_all(&len.to_be_bytes()).await.unwrap();
    peer.write_all(&[WIRE_VERSION]).await.unwrap();
    peer.write_all(&payload).await.unwrap();
    let err = conn.recv::<Write>().await.unwrap_err();
    match &err {
        FrameError::Malformed {
            offset,
            payload_offset,
            payload_len,
            ..
        } => assert_eq!((*offset, *payload_offset, *payload_len), (0, 1, 4), "{err}"),
        other => panic!("expected a malformed payload, got {other:?}"),
    }
    assert_closed(&mut conn, &mut peer).await;
}

#[tokio::test]
async fn trailing_bytes_after_a_message_are_malformed() {
    let (mut conn, mut peer) = raw_pair();
    let mut frame = encode_frame(&Write::Pause, 0).unwrap();
    frame.extend_from_slice(&[7, 7]);
    let len = (frame.len() - LENGTH_BYTES) as u32;
    frame[..LENGTH_BYTES].copy_from_slice(&len.to_be_bytes());
    peer.write_all(&frame).await.unwrap();
    let err = conn.recv::<Write>().await.unwrap_err();
    assert!(
        err.to_string().contains("2 bytes left after the message"),
        "{err}"
    );
    assert_closed(&mut conn, &mut peer).await;
}

#[tokio::test]
async fn a_frame_cut_short_is_truncated_with_the_bytes_that_arrived() {
    let frame = encode_frame(&commit_handoff(), 0).unwrap();
    // Every cut inside the frame: within the length prefix or the body.
    for cut in 1..frame.len() {
        let (mut conn, mut peer) = raw_pair();
        peer.write_all(&frame[..cut]).await.unwrap();
        peer.shutdown().await.unwrap();
        let needed = if cut < LENGTH_BYTES {
            LENGTH_BYTES
        } else {
            frame.len()
        };
        match conn.recv::<Write>().await {
            Err(FrameError::Truncated {
                offset: 0,
                needed: n,
                got,
            }) => assert_eq!((n, got), (needed as u64, cut as u64), "cut at {cut}"),
            other => panic!("cut at {cut}: expected truncation, got {other:?}"),
        }
        assert!(!conn.is_open());
    }
}

#[tokio::test]
async fn an_oversized_frame_is_refused_before_its_body_is_read() {
    let (mut conn, mut peer) = raw_pair();
    peer.write_all(&(FRAME_BYTES_MAX + 1).to_be_bytes())
        .await
        .unwrap();
    match conn.recv::<Write>().await {
        Err(FrameError::TooLarge { offset, len, max }) => {
            assert_eq!(
                (offset, len, max),
                (0, u64::from(FRAME_BYTES_MAX) + 1, FRAME_BYTES_MAX)
            );
        }
        other => panic!("expected too large, got {other:?}"),
    }
    assert_closed(&mut conn, &mut peer).await;
}

#[tokio::test]
async fn an_oversized_message_is_refused_on_send_and_nothing_is_written() {
    let (a, b) = duplex(DUPLEX_BYTES);
    let (mut tx, mut rx) = (Connection::new(a), Connection::new(b));
    let huge = vec![0u8; FRAME_BYTES_MAX as usize];
    match tx.send(&huge).await {
        Err(FrameError::TooLarge { offset: 0, len, .. }) => {
            assert!(len > u64::from(FRAME_BYTES_MAX), "{len}")
        }
        other => panic!("expected too large, got {other:?}"),
    }
    // The stream stays in step: the next message is the first one received.
    assert!(tx.is_open());
    tx.send(&Write::Pause).await.unwrap();
    drop(tx);
    assert_eq!(rx.recv::<Write>().await.unwrap(), Some(Write::Pause));
    assert_eq!(rx.recv::<Write>().await.unwrap(), None);
}

#[tokio::test]
async fn an_empty_frame_has_no_version_byte() {
    let (mut conn, mut peer) = raw_pair();
    peer.write_all(&0u32.to_be_bytes()).await.unwrap();
    assert!(matches!(
        conn.recv::<Write>().await,
        Err(FrameError::Empty { offset: 0 })
    ));
    assert_closed(&mut conn, &mut peer).await;
}

#[test]
fn json_cannot_carry_a_commit_handoff_which_is_why_frames_are_postcard() {
    let err = serde_json::to_string(&commit_handoff()).unwrap_err();
    assert!(err.to_string().contains("key must be a string"), "{err}");
}

#[test]
fn every_message_survives_a_frame_in_its_wire_form() {
    use livemove_impl::{Entry, Epoch, Msg, NodeId, Op, StorageId};
    use livemove_runtime::wire::{decode_payload, PeerMsg};
    let e = |k| Entry {
        epoch: Epoch(2),
        op: Op::Put { key: k, value: k },
    };
    let s = StorageId {
        node: NodeId(3),
        disk: 1,
    };
    let msgs = [
        Msg::Append {
            from: NodeId(1),
            to: s,
            epoch: Epoch(2),
            pos: 2,
            prev: Some(e(1)),
            entry: e(2),
        },
        Msg::Ack {
            to: NodeId(1),
            epoch: Epoch(2),
            from: s,
            inc: 4,
            pos: 2,
            entry: e(2),
            admitted: false,
        },
        Msg::Refuse {
            to: NodeId(1),
            epoch: Epoch(3),
        },
        Msg::Suspend {
            to: NodeId(1),
            from: s,
            inc: 4,
        },
        Msg::Progress {
            from: StorageId::first(NodeId(1)),
            epoch: Epoch(2),
            of: s,
            pos: 2,
            confirmed: 1,
        },
    ];
    for m in msgs {
        let frame = encode_frame(&PeerMsg::from(m), 0).unwrap();
        let back: PeerMsg = decode_payload(&frame[LENGTH_BYTES..], 0).unwrap();
        assert_eq!(Msg::from(back), m);
    }
    // The implementation's own form needs a self-describing format: this
    // is why the wire form exists.
    let frame = encode_frame(&msgs[0], 0).unwrap();
    assert!(decode_payload::<Msg>(&frame[LENGTH_BYTES..], 0).is_err());
}

/// A producer's retry (`RoutedOp::PublishRetry`) and its answer
/// (`Reply::Retried`) go through a frame; they were appended last to their
/// enums, so every older request and answer keeps its bytes (a node of the
/// previous build decodes them as before, and refuses only the new ones
/// as malformed).
#[test]
fn a_publish_retry_and_its_answer_round_trip_and_older_frames_keep_their_bytes() {
    use livemove_impl::Epoch;
    use livemove_runtime::partition::Partition;
    use livemove_runtime::tcp::{Frame, Reply, RoutedOp};
    use livemove_runtime::wire::decode_payload;
    fn payload<T: serde::Serialize>(m: &T) -> Vec<u8> {
        let frame = encode_frame(m, 0).unwrap();
        assert_eq!(frame[LENGTH_BYTES], WIRE_VERSION);
        frame[LENGTH_BYTES + 1..].to_vec()
    }
    fn round_trip<T>(m: T)
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let frame = encode_frame(&m, 0).unwrap();
        assert_eq!(decode_payload::<T>(&frame[LENGTH_BYTES..], 0).unwrap(), m);
    }
    let routed = |op| Frame::Routed {
        partition: Partition(0),
        epoch: Epoch(2),
        asking: false,
        op,
    };
    let retry = routed(RoutedOp::PublishRetry { key: 7 });
    round_trip(retry);
    let answer = Reply::Retried {
        pos: 3,
        entry_epoch: Epoch(1),
        held: true,
    };
    round_trip(answer.clone());

    // Frame::Routed is variant 11; its op's tag follows partition 0,
    // epoch 2 and asking false.
    assert_eq!(
        payload(&routed(RoutedOp::Publish { key: 7 })),
        [11, 0, 2, 0, 0, 7]
    );
    assert_eq!(payload(&routed(RoutedOp::Settle)), [11, 0, 2, 0, 1]);
    assert_eq!(payload(&retry), [11, 0, 2, 0, 2, 7]);
    assert_eq!(payload(&Reply::Published { pos: 5 }), [0, 5]);
    assert_eq!(payload(&Reply::TryAgain), [9]);
    assert_eq!(payload(&answer), [10, 3, 1, 1]);
}
