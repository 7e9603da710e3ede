//! One suite of control-plane behaviours, run against each backend: the
//! embedded file store and etcd (a private server per test, see
//! `support/etcd.rs`).

mod support;

use base64::Engine as _;
use livemove_impl::store::{Record, StoreError, Write};
use livemove_impl::{NodeId, StorageId, Version};
use livemove_runtime::control::{
    ControlError, ControlPlane, EtcdConfig, EtcdControlPlane, FileControlPlane, Registration,
};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Rounds of the two-writer race; each round commits exactly one write.
const RACE_ROUNDS: u64 = 20;

/// How long a plane may take to know its record unchanged (etcd: its
/// watch coming up) or to notice another writer's write (etcd: the
/// watch's event), on a loaded machine.
const NOTICE_MS_MAX: u64 = 10_000;
/// Pause between two looks at `known_unchanged`.
const NOTICE_POLL_MS: u64 = 5;

fn s(node: u8) -> StorageId {
    StorageId {
        node: NodeId(node),
        disk: 0,
    }
}

fn initial() -> Record {
    Record::initial(s(1), [s(2), s(3)], 3)
}

/// The write that changes the record whatever its pause state: pause when
/// running, resume when paused.
fn toggle(r: &Record) -> Write {
    if r.paused {
        Write::Resume
    } else {
        Write::Pause
    }
}

/// One backend holding one record, able to open further writers on it.
trait Backend {
    /// A new writer on the same record (another process, in effect).
    fn open(&self) -> Box<dyn ControlPlane>;
    /// Make the store forget everything but what is durable.
    fn restart(&mut self);
    /// Overwrite the stored record with `bytes`.
    fn store_garbage(&self, bytes: &[u8]);
    /// What a corrupt-record error must name.
    fn garbage_location(&self) -> String;
}

struct FileBackend {
    dir: tempfile::TempDir,
}

impl FileBackend {
    fn start(_test: &str) -> Option<Self> {
        Some(FileBackend {
            dir: tempfile::tempdir().unwrap(),
        })
    }
    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("record.json")
    }
}

impl Backend for FileBackend {
    fn open(&self) -> Box<dyn ControlPlane> {
        Box::new(FileControlPlane::open(self.path()).unwrap())
    }
    fn restart(&mut self) {
        // The file store keeps nothing in memory between calls: reopening
        // is the restart.
    }
    fn store_garbage(&self, bytes: &[u8]) {
        std::fs::write(self.path(), bytes).unwrap();
    }
    fn garbage_location(&self) -> String {
        self.path().display().to_string()
    }
}

struct EtcdBackend {
    etcd: support::etcd::Etcd,
}

const KEY: &str = "/livemove/partition/0/record";

impl EtcdBackend {
    fn start(test: &str) -> Option<Self> {
        support::etcd::Etcd::start(test).map(|etcd| EtcdBackend { etcd })
    }
}

impl Backend for EtcdBackend {
    fn open(&self) -> Box<dyn ControlPlane> {
        Box::new(EtcdControlPlane::new(EtcdConfig {
            endpoint: self.etcd.endpoint(),
            key: KEY.into(),
        }))
    }
    fn restart(&mut self) {
        self.etcd.restart();
    }
    fn store_garbage(&self, bytes: &[u8]) {
        let b64 = base64::engine::general_purpose::STANDARD;
        let body = serde_json::json!({ "key": b64.encode(KEY), "value": b64.encode(bytes) });
        ureq::post(&format!("{}/v3/kv/put", self.etcd.endpoint()))
            .send_string(&body.to_string())
            .unwrap();
    }
    fn garbage_location(&self) -> String {
        format!("key {KEY} at mod revision")
    }
}

fn create_returns_the_initial_record_and_later_creates_return_the_stored_one(b: &mut dyn Backend) {
    let mut cp = b.open();
    assert_eq!(cp.create(&initial()).unwrap(), initial());
    let other = Record::initial(s(4), [s(5)], 2);
    assert_eq!(b.open().create(&other).unwrap(), initial());
    assert_eq!(cp.read().unwrap(), initial());
}

fn read_before_create_is_a_not_created_error(b: &mut dyn Backend) {
    let err = b.open().read().unwrap_err();
    assert!(matches!(err, ControlError::NotCreated { .. }), "{err}");
}

fn a_write_at_the_committed_version_commits_the_next_version(b: &mut dyn Backend) {
    let mut cp = b.open();
    cp.create(&initial()).unwrap();
    let next = cp.write(Version(1), &Write::Pause).unwrap();
    assert_eq!(next.version, Version(2));
    assert!(next.paused);
    assert_eq!(b.open().read().unwrap(), next);
}

fn a_write_at_a_stale_version_is_refused_and_changes_nothing(b: &mut dyn Backend) {
    let mut cp = b.open();
    cp.create(&initial()).unwrap();
    let committed = b.open().write(Version(1), &Write::Pause).unwrap();
    let err = cp.write(Version(1), &Write::Pause).unwrap_err();
    assert_eq!(err.stale_version(), Some((Version(1), Version(2))), "{err}");
    assert_eq!(cp.read().unwrap(), committed);
}

fn a_failed_precondition_is_refused_with_the_store_error(b: &mut dyn Backend) {
    let mut cp = b.open();
    cp.create(&initial()).unwrap();
    let err = cp.write(Version(1), &Write::Resume).unwrap_err();
    assert!(
        matches!(
            err,
            ControlError::Refused {
                source: StoreError::NoChange { .. },
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(cp.read().unwrap(), initial());
}

/// What one writer saw in one round of the race.
#[derive(Debug, PartialEq, Eq)]
enum Round {
    /// It committed `read + 1`.
    Won,
    /// It was refused: the other writer committed `read + 1`.
    Stale,
    /// Anything else, described.
    Other(String),
}

fn of_two_concurrent_writers_exactly_one_wins_each_version(b: &mut dyn Backend) {
    b.open().create(&initial()).unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let mut cp = b.open();
            let barrier = Arc::clone(&barrier);
            // No panics inside: a writer that stopped early would leave the
            // other waiting at the barrier, and the test would hang instead
            // of failing.
            std::thread::spawn(move || {
                (0..RACE_ROUNDS)
                    .map(|_| {
                        // Both writers read the same version before either writes.
                        let read = cp.read();
                        barrier.wait();
                        let round = match read {
                            Err(e) => Round::Other(format!("read: {e}")),
                            Ok(read) => match cp.write(read.version, &toggle(&read)) {
                                Ok(r) if r.version.0 == read.version.0 + 1 => Round::Won,
                                Err(e)
                                    if e.stale_version()
                                        == Some((read.version, Version(read.version.0 + 1))) =>
                                {
                                    Round::Stale
                                }
                                Ok(r) => Round::Other(format!("committed {}", r.version)),
                                Err(e) => Round::Other(e.to_string()),
                            },
                        };
                        barrier.wait();
                        round
                    })
                    .collect::<Vec<Round>>()
            })
        })
        .collect();
    let rounds: Vec<Vec<Round>> = writers.into_iter().map(|t| t.join().unwrap()).collect();
    for (i, (a, b)) in rounds[0].iter().zip(&rounds[1]).enumerate() {
        let one_won = matches!(
            (a, b),
            (Round::Won, Round::Stale) | (Round::Stale, Round::Won)
        );
        assert!(one_won, "round {i}: writers saw {a:?} and {b:?}");
    }
    assert_eq!(rounds[0].len() as u64, RACE_ROUNDS);
    assert_eq!(b.open().read().unwrap().version, Version(1 + RACE_ROUNDS));
}

fn a_restart_sees_the_last_committed_record(b: &mut dyn Backend) {
    let mut cp = b.open();
    cp.create(&initial()).unwrap();
    cp.write(Version(1), &Write::Pause).unwrap();
    let last = cp.write(Version(2), &Write::Resume).unwrap();
    drop(cp);
    b.restart();
    let mut cp = b.open();
    assert_eq!(cp.read().unwrap(), last);
    assert_eq!(
        cp.write(Version(3), &Write::Pause).unwrap().version,
        Version(4)
    );
}

fn a_garbage_record_is_a_corrupt_error_naming_where(b: &mut dyn Backend) {
    let mut cp = b.open();
    cp.create(&initial()).unwrap();
    b.store_garbage(b"{\"version\": 7, oops");
    for err in [
        cp.read().unwrap_err(),
        cp.write(Version(1), &Write::Pause).unwrap_err(),
    ] {
        let msg = err.to_string();
        assert!(matches!(err, ControlError::Corrupt { .. }), "{msg}");
        assert!(msg.contains(&b.garbage_location()), "{msg}");
        assert!(msg.contains("line 1 column"), "{msg}");
    }
}

/// Wait until `cp.known_unchanged()` is `want`; panic naming `when` if it
/// is not within `NOTICE_MS_MAX`.
fn wait_known(cp: &mut dyn ControlPlane, want: bool, when: &str) {
    let start = Instant::now();
    while cp.known_unchanged() != want {
        assert!(
            start.elapsed() < Duration::from_millis(NOTICE_MS_MAX),
            "{when}: known_unchanged not {want} within {NOTICE_MS_MAX} ms"
        );
        std::thread::sleep(Duration::from_millis(NOTICE_POLL_MS));
    }
}

/// `known_unchanged`: nothing is known before the plane returned a
/// record; then the record is known unchanged (on etcd once the watch is
/// up) until another writer commits, and not known again until the plane
/// reads; its own committed write keeps it known, and a write of its
/// refused as stale does not make it known.
fn a_write_by_another_writer_is_noticed_until_the_record_is_read_again(b: &mut dyn Backend) {
    let mut cp = b.open();
    assert!(!cp.known_unchanged(), "nothing returned yet");
    cp.create(&initial()).unwrap();
    wait_known(&mut *cp, true, "after its create");
    b.open().write(Version(1), &Write::Pause).unwrap();
    wait_known(&mut *cp, false, "after another writer's write");
    std::thread::sleep(Duration::from_millis(50));
    assert!(!cp.known_unchanged(), "not known until it reads");
    assert!(cp.read().unwrap().paused);
    wait_known(&mut *cp, true, "after reading the write");
    cp.write(Version(2), &Write::Resume).unwrap();
    assert!(cp.known_unchanged(), "its own write is the record it holds");
    b.open().write(Version(3), &Write::Pause).unwrap();
    wait_known(&mut *cp, false, "after another writer's second write");
    assert!(cp.write(Version(3), &Write::Resume).is_err(), "stale");
    std::thread::sleep(Duration::from_millis(50));
    assert!(!cp.known_unchanged(), "a refused write returned no record");
    assert_eq!(cp.read().unwrap().version, Version(4));
    wait_known(&mut *cp, true, "after reading the second write");
}

/// Registrations: a node's first start gets disk 0 and incarnation 0; each
/// later start the next incarnation, on its disk or on an empty directory
/// (a new disk); two nodes count apart; a directory holding a disk the node
/// has replaced, or one it never registered, is refused and changes
/// nothing; registrations survive a restart of the store.
fn registrations_hand_out_disks_and_incarnations_per_node(b: &mut dyn Backend) {
    let mut cp = b.open();
    cp.create(&initial()).unwrap();
    let reg = |disk, inc| Registration { disk, inc };
    let (n2, n3) = (NodeId(2), NodeId(3));
    assert_eq!(cp.register(n2, None).unwrap(), reg(0, 0));
    assert_eq!(cp.register(n3, None).unwrap(), reg(0, 0));
    assert_eq!(cp.register(n2, Some(0)).unwrap(), reg(0, 1));
    assert_eq!(cp.register(n2, None).unwrap(), reg(1, 2));
    let stale = cp.register(n2, Some(0)).unwrap_err();
    assert!(
        matches!(
            stale,
            ControlError::StaleDisk {
                disk: 0,
                registered: Some(1),
                ..
            }
        ),
        "{stale}"
    );
    assert!(
        stale
            .to_string()
            .contains("node n2's data directory holds disk 0, but disk 1 is registered"),
        "{stale}"
    );
    let never = cp.register(NodeId(4), Some(0)).unwrap_err();
    assert!(
        never.to_string().contains("but the node never registered"),
        "{never}"
    );
    drop(cp);
    b.restart();
    let mut cp = b.open();
    assert_eq!(cp.register(n2, Some(1)).unwrap(), reg(1, 3));
    assert_eq!(cp.register(n3, Some(0)).unwrap(), reg(0, 1));
    assert_eq!(cp.register(NodeId(4), None).unwrap(), reg(0, 0));
}

/// The suite, as one test per behaviour for each backend.
macro_rules! suite {
    ($backend:ident, $module:ident) => {
        mod $module {
            use super::*;
            suite!(@tests $backend,
                create_returns_the_initial_record_and_later_creates_return_the_stored_one,
                read_before_create_is_a_not_created_error,
                a_write_at_the_committed_version_commits_the_next_version,
                a_write_at_a_stale_version_is_refused_and_changes_nothing,
                a_failed_precondition_is_refused_with_the_store_error,
                of_two_concurrent_writers_exactly_one_wins_each_version,
                a_restart_sees_the_last_committed_record,
                a_garbage_record_is_a_corrupt_error_naming_where,
                registrations_hand_out_disks_and_incarnations_per_node,
                a_write_by_another_writer_is_noticed_until_the_record_is_read_again);
        }
    };
    (@tests $backend:ident, $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                if let Some(mut b) = $backend::start(concat!(stringify!($backend), "::", stringify!($name))) {
                    super::$name(&mut b);
                }
            }
        )*
    };
}

suite!(FileBackend, file);
suite!(EtcdBackend, etcd);

#[test]
fn an_unreachable_etcd_is_an_error_naming_the_endpoint() {
    // A port just released by the kernel: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut cp = EtcdControlPlane::new(EtcdConfig {
        endpoint: endpoint.clone(),
        key: KEY.into(),
    });
    let err = cp.read().unwrap_err();
    assert!(matches!(err, ControlError::Etcd { .. }), "{err}");
    assert!(err.to_string().contains(&endpoint), "{err}");
}
