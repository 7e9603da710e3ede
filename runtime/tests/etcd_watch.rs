//! The etcd control plane's watch (`EtcdControlPlane::known_unchanged`)
//! against a private etcd per test (`support/etcd.rs`): another client's
//! write is seen at its revision; a watch cut from etcd (a proxy between,
//! `support/proxy.rs`) falls back to reads and, back, has the write it
//! missed and nothing it had seen; a watch broken by an etcd restart comes
//! back; compacted revisions neither hide a change nor force a read; the
//! newest revision seen never goes back. (A compaction that cancels a
//! stream is a race between two requests of the thread: the unit tests in
//! `control/etcd/watch.rs` take it on the gateway's own lines.)

mod support;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use livemove_impl::store::{Record, Write};
use livemove_impl::{NodeId, StorageId};
use livemove_runtime::control::{
    ControlPlane, EtcdConfig, EtcdControlPlane, WatchError, WatchStatus,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const KEY: &str = "/livemove/watch/record";

/// How long the watch may take to come up, notice a write or a broken
/// stream, on a loaded machine (its backoff is at most a second).
const WAIT_MS_MAX: u64 = 15_000;
/// Pause between two looks at the watch.
const POLL_MS: u64 = 2;

fn s(node: u8) -> StorageId {
    StorageId::first(NodeId(node))
}

fn plane(endpoint: &str) -> EtcdControlPlane {
    EtcdControlPlane::new(EtcdConfig {
        endpoint: endpoint.to_string(),
        key: KEY.into(),
    })
}

/// A plane shared with a sampler that looks at its watch every
/// `POLL_MS` and fails the test if the newest revision ever goes back.
struct Watched {
    plane: Arc<Mutex<EtcdControlPlane>>,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<Vec<WatchStatus>>>,
}

impl Watched {
    fn new(plane: EtcdControlPlane) -> Watched {
        let plane = Arc::new(Mutex::new(plane));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, st) = (Arc::clone(&plane), Arc::clone(&stop));
        let sampler = std::thread::spawn(move || {
            let mut seen: Vec<WatchStatus> = Vec::new();
            while !st.load(Ordering::Relaxed) {
                if let Some(now) = p.lock().unwrap().watch_status() {
                    if seen.last() != Some(&now) {
                        seen.push(now);
                    }
                }
                std::thread::sleep(Duration::from_millis(POLL_MS));
            }
            seen
        });
        Watched {
            plane,
            stop,
            sampler: Some(sampler),
        }
    }

    fn known_unchanged(&self) -> bool {
        self.plane.lock().unwrap().known_unchanged()
    }

    fn read(&self) -> Record {
        self.plane.lock().unwrap().read().unwrap()
    }

    fn status(&self) -> WatchStatus {
        self.plane
            .lock()
            .unwrap()
            .watch_status()
            .expect("the watch was started")
    }

    /// Wait until `done` holds of the watch's status (asking
    /// `known_unchanged` meanwhile, which starts the watch).
    fn wait(&self, what: &str, done: impl Fn(&WatchStatus) -> bool) -> WatchStatus {
        let start = Instant::now();
        loop {
            self.known_unchanged();
            if let Some(st) = self.plane.lock().unwrap().watch_status() {
                if done(&st) {
                    return st;
                }
            }
            if start.elapsed() >= Duration::from_millis(WAIT_MS_MAX) {
                let st = self.plane.lock().unwrap().watch_status();
                panic!("{what}: not within {WAIT_MS_MAX} ms; {st:?}");
            }
            std::thread::sleep(Duration::from_millis(POLL_MS));
        }
    }

    /// Stop the sampler; check the newest revision never went back, and
    /// return every status it saw.
    fn finish(mut self) -> Vec<WatchStatus> {
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.sampler.take().unwrap().join().unwrap();
        for pair in seen.windows(2) {
            assert!(
                pair[1].newest_revision >= pair[0].newest_revision,
                "the newest revision went back: {:?} then {:?}",
                pair[0],
                pair[1]
            );
        }
        seen
    }
}

/// POST `body` to the gateway's `path` as another client.
fn post(endpoint: &str, path: &str, body: Value) -> Value {
    let text = ureq::post(&format!("{endpoint}{path}"))
        .send_string(&body.to_string())
        .unwrap()
        .into_string()
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The key's mod revision now.
fn mod_revision(endpoint: &str, key: &str) -> i64 {
    let r = post(endpoint, "/v3/kv/range", json!({ "key": B64.encode(key) }));
    r["kvs"][0]["mod_revision"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Put `key` as another client; the store revision after it.
fn put_other(endpoint: &str, key: &str, value: &str) -> i64 {
    let r = post(
        endpoint,
        "/v3/kv/put",
        json!({ "key": B64.encode(key), "value": B64.encode(value) }),
    );
    r["header"]["revision"].as_str().unwrap().parse().unwrap()
}

/// Another writer's guarded write of the record; the key's mod revision
/// after it.
fn write_other(endpoint: &str, write: &Write) -> i64 {
    let mut other = plane(endpoint);
    let r = other.read().unwrap();
    other.write(r.version, write).unwrap();
    mod_revision(endpoint, KEY)
}

fn toggle(r: &Record) -> Write {
    if r.paused {
        Write::Resume
    } else {
        Write::Pause
    }
}

#[test]
fn another_clients_writes_are_seen_at_their_revisions_and_the_record_read_again() {
    let Some(etcd) = support::etcd::Etcd::start("another_clients_writes") else {
        return;
    };
    let endpoint = etcd.endpoint();
    let mut cp = plane(&endpoint);
    cp.create(&Record::initial(s(1), [s(2), s(3)], 3)).unwrap();
    let w = Watched::new(cp);
    w.wait("the watch comes up", |st| st.up);
    assert!(w.known_unchanged());
    for i in 0..5 {
        let current = w.read();
        let revision = write_other(&endpoint, &toggle(&current));
        let st = w.wait("the write is seen", |st| st.newest_revision == revision);
        assert!(st.up, "{st:?}");
        assert!(!w.known_unchanged(), "write {i}: changed since the read");
        // Writes of other keys are no events of this one.
        put_other(&endpoint, "/livemove/other", "x");
        assert_eq!(w.status().newest_revision, revision);
        w.read();
        assert!(w.known_unchanged(), "write {i}: read again");
    }
    let seen = w.finish();
    let last = seen.last().unwrap();
    assert_eq!(last.events, 5, "{last:?}");
    assert_eq!(last.last_error, None, "{last:?}");
}

/// The path to etcd cut while etcd stays up: the watch goes down and the
/// plane's node reads; back, the range before the new stream finds the
/// write made while it was cut (not replayed as an event: the stream
/// starts past it, current at once), and nothing seen before comes again;
/// the newest revision seen stays where it was across a stream opened
/// again with nothing new.
#[test]
fn a_watch_cut_from_etcd_has_what_it_missed_and_nothing_it_had_seen() {
    let Some(etcd) = support::etcd::Etcd::start("watch_cut") else {
        return;
    };
    let direct = etcd.endpoint();
    let proxy = support::proxy::Proxy::start(etcd.client_addr());
    let mut cp = plane(&proxy.url());
    cp.create(&Record::initial(s(1), [s(2), s(3)], 3)).unwrap();
    let w = Watched::new(cp);
    w.wait("the watch comes up", |st| st.up);
    let r1 = write_other(&direct, &Write::Pause);
    w.wait("the first write is seen", |st| st.newest_revision == r1);
    w.read();
    assert!(w.known_unchanged());

    proxy.cut();
    let down = w.wait("the cut is noticed", |st| !st.up);
    assert!(!w.known_unchanged(), "down: the plane's node reads");
    let error = down.last_error.expect("why it is down");
    for name in [proxy.url().as_str(), KEY] {
        assert!(error.to_string().contains(name), "{error}");
    }
    let r2 = write_other(&direct, &Write::Resume);
    put_other(&direct, "/livemove/other", "x");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(w.status().newest_revision, r1, "nothing through the cut");
    assert!(!w.status().up);

    proxy.restore();
    let back = w.wait("the write made during the cut is seen", |st| {
        st.up && st.newest_revision == r2
    });
    assert_eq!(back.events, 1, "one event, the first write: {back:?}");
    assert!(!w.known_unchanged(), "changed since the plane's read");
    assert!(!w.read().paused);
    assert!(w.known_unchanged());

    // Once more with nothing written meanwhile: the newest revision stays.
    proxy.cut();
    w.wait("the second cut is noticed", |st| !st.up);
    proxy.restore();
    let again = w.wait("back up", |st| st.up);
    assert_eq!(again.newest_revision, r2, "{again:?}");
    assert!(w.known_unchanged(), "nothing changed");
    w.finish();
}

/// etcd itself killed and started again: the watch goes down (the plane's
/// node reads meanwhile), comes back on the restarted etcd, and a write
/// right after the restart is seen whether it lands before the stream is
/// open again or after.
#[test]
fn a_watch_broken_by_an_etcd_restart_falls_back_to_reads_and_comes_back() {
    let Some(mut etcd) = support::etcd::Etcd::start("watch_restart") else {
        return;
    };
    let endpoint = etcd.endpoint();
    let mut cp = plane(&endpoint);
    cp.create(&Record::initial(s(1), [s(2), s(3)], 3)).unwrap();
    let w = Watched::new(cp);
    let first = w.wait("the watch comes up", |st| st.up);
    assert!(w.known_unchanged());

    etcd.stop();
    let down = w.wait("the break is noticed", |st| !st.up);
    assert!(!w.known_unchanged(), "down: the plane's node reads");
    let error = down.last_error.clone().expect("why it is down");
    assert!(
        matches!(
            error,
            WatchError::Stream { .. } | WatchError::Connect { .. }
        ),
        "{error:?}"
    );
    for name in [endpoint.as_str(), KEY] {
        assert!(error.to_string().contains(name), "{error}");
    }

    // A write right after the restart, before the watch may be back: the
    // new stream starts after the last revision seen, so etcd replays it.
    etcd.start_again();
    let revision = write_other(&endpoint, &Write::Pause);
    let back = w.wait("the write made around the reconnection is seen", |st| {
        st.newest_revision == revision && st.up
    });
    assert!(back.streams > first.streams, "{back:?}");
    assert!(!w.known_unchanged(), "changed since the plane's read");
    assert!(w.read().paused);
    assert!(w.known_unchanged(), "read again, and the watch is up");
    w.finish();
}

/// Each stream starts past the store's revision after a range of the key,
/// so compactions do not reach the watch: one started after the revisions
/// since the plane's read were compacted is up with no read needed, and a
/// write made while the watch was cut, with a compaction past it, is
/// seen; so is nothing when nothing changed across an etcd restart and a
/// compaction.
#[test]
fn compacted_revisions_neither_hide_a_change_nor_force_a_read() {
    let Some(mut etcd) = support::etcd::Etcd::start("watch_compacted") else {
        return;
    };
    let direct = etcd.endpoint();
    let proxy = support::proxy::Proxy::start(etcd.client_addr());
    let compact_now = |key_value: &str| {
        let mut now = 0;
        for i in 0..3 {
            now = put_other(&direct, "/livemove/other", &format!("{key_value} {i}"));
        }
        post(
            &direct,
            "/v3/kv/compaction",
            json!({ "revision": now.to_string() }),
        );
        now
    };
    let mut cp = plane(&proxy.url());
    cp.create(&Record::initial(s(1), [s(2), s(3)], 3)).unwrap();
    let now = compact_now("before the watch");
    let w = Watched::new(cp);
    let st = w.wait("the watch comes up", |st| st.up);
    assert_eq!(st.last_error, None, "{st:?}");
    assert!(st.next_revision > now, "{st:?}");
    assert!(w.known_unchanged(), "nothing changed: no read needed");

    proxy.cut();
    w.wait("the cut is noticed", |st| !st.up);
    let r = write_other(&direct, &Write::Pause);
    let now = compact_now("during the cut");
    assert!(now > r);
    proxy.restore();
    w.wait("the write behind the compaction is seen", |st| {
        st.up && st.newest_revision == r
    });
    assert!(!w.known_unchanged());
    assert!(w.read().paused);
    assert!(w.known_unchanged());

    let before = w.status();
    etcd.stop();
    w.wait("the break is noticed", |st| !st.up);
    etcd.start_again();
    compact_now("after the restart");
    let back = w.wait("back up", |st| st.up && st.streams > before.streams);
    assert_eq!(back.newest_revision, r, "{back:?}");
    assert!(w.known_unchanged(), "nothing changed: no read needed");
    w.finish();
}
