//! The node alone, driven by hand through a recording environment: what it
//! persists before it sends, what it sends, what a restart does.

use livemove_impl::store::Record;
use livemove_impl::store::Write;
use livemove_impl::Version;
use livemove_impl::{Epoch, Msg, Mutant, Mutants, NodeId, Position, StorageId};
use livemove_runtime::control::{ControlError, ControlPlane, FileControlPlane, Registration};
use livemove_runtime::disk_log::DiskLog;
use livemove_runtime::node::{Env, Node, NodeConfig, NodeError};
use livemove_runtime::trace::Event;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Records what the node sends and traces.
#[derive(Default)]
struct Recorder {
    sent: Vec<Msg>,
    events: Vec<Event>,
    now: u64,
}

impl Env for Recorder {
    fn now_ms(&self) -> u64 {
        self.now
    }
    fn send(&mut self, msg: Msg) {
        self.sent.push(msg);
    }
    fn tracing(&self) -> bool {
        true
    }
    fn trace(&mut self, event: Event) {
        self.events.push(event);
    }
}

fn s(n: u8) -> StorageId {
    StorageId::first(NodeId(n))
}

fn setup(root: &Path) -> PathBuf {
    let store = root.join("record.json");
    FileControlPlane::open(&store)
        .unwrap()
        .create(&Record::initial(s(1), [s(2), s(3)], 3))
        .unwrap();
    store
}

fn boot(root: &Path, n: u8, env: &mut Recorder) -> Result<Node, NodeError> {
    boot_with(root, n, Mutants::NONE, env)
}

fn boot_with(root: &Path, n: u8, mutants: Mutants, env: &mut Recorder) -> Result<Node, NodeError> {
    boot_resending(root, n, mutants, 0, env)
}

fn boot_resending(
    root: &Path,
    n: u8,
    mutants: Mutants,
    resend_ms: u64,
    env: &mut Recorder,
) -> Result<Node, NodeError> {
    let cp = FileControlPlane::open(root.join("record.json")).unwrap();
    Node::boot(
        NodeConfig {
            id: NodeId(n),
            data: root.join(format!("n{n}")),
            mutants,
            resend_ms,
            reread_ticks: 1,
            crash: None,
        },
        Box::new(cp),
        env,
    )
}

fn on_disk(root: &Path, n: u8) -> usize {
    let (_, rec) = DiskLog::open(root.join(format!("n{n}"))).unwrap();
    rec.state.entries.len()
}

#[test]
fn a_publish_is_on_the_owners_disk_before_its_appends_are_sent() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    assert_eq!(owner.publish(7, &mut env).unwrap(), 1);
    assert_eq!(on_disk(dir.path(), 1), 1);
    let to: Vec<StorageId> = env
        .sent
        .iter()
        .map(|m| match m {
            Msg::Append { to, pos: 1, .. } => *to,
            other => panic!("only appends of position 1, got {other}"),
        })
        .collect();
    assert_eq!(to, [s(2), s(3)]);
    assert!(matches!(
        env.events[0],
        Event::Publish { pos: 1, key: 7, .. }
    ));
}

/// The appends sent, as (copy, position).
fn appends(sent: &[Msg]) -> Vec<(u8, Position)> {
    sent.iter()
        .filter_map(|m| match m {
            Msg::Append { to, pos, .. } => Some((to.node.0, *pos)),
            _ => None,
        })
        .collect()
}

/// With a resend interval, an append in flight is not sent again on each
/// tick and publish until the interval has passed; an acknowledgement
/// still moves its copy on at once. Without one (the simulator's), every
/// publish sends a lagging copy its next append again.
#[test]
fn an_append_in_flight_is_sent_again_only_after_the_resend_interval() {
    for resend_ms in [100, 0] {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        let mut env = Recorder::default();
        let mut owner = boot_resending(dir.path(), 1, Mutants::NONE, resend_ms, &mut env).unwrap();
        let mut f2 = boot(dir.path(), 2, &mut env).unwrap();
        owner.publish(1, &mut env).unwrap();
        let to_f2 = env.sent[0];
        assert_eq!(appends(&env.sent), [(2, 1), (3, 1)]);
        env.sent.clear();
        env.now = 50;
        owner.on_tick(&mut env).unwrap();
        let within = appends(&env.sent);
        env.sent.clear();
        env.now = 150;
        owner.on_tick(&mut env).unwrap();
        assert_eq!(appends(&env.sent), [(2, 1), (3, 1)], "resent after it");
        env.sent.clear();
        // n2 takes position 1 and acknowledges; n3 lags.
        f2.on_msg(to_f2, &mut env).unwrap();
        let ack = env.sent.pop().expect("an ack");
        env.now = 160;
        owner.on_msg(ack, &mut env).unwrap();
        env.sent.clear();
        env.now = 170;
        owner.publish(2, &mut env).unwrap();
        let on_publish = appends(&env.sent);
        if resend_ms > 0 {
            assert_eq!(within, [], "nothing again within the interval");
            assert_eq!(
                on_publish,
                [(2, 2)],
                "n2 moves on, n3's append is in flight"
            );
        } else {
            assert_eq!(within, [(2, 1), (3, 1)], "every tick resends");
            assert_eq!(on_publish, [(2, 2), (3, 1)], "every publish resends");
        }
    }
}

/// The file control plane, counting its reads of the record; while
/// `lie` is set it claims the record unchanged whatever happened.
struct CountingReads {
    inner: FileControlPlane,
    reads: Arc<AtomicUsize>,
    lie: Arc<AtomicBool>,
}

impl CountingReads {
    fn open(root: &Path) -> (CountingReads, Arc<AtomicUsize>, Arc<AtomicBool>) {
        let reads = Arc::new(AtomicUsize::new(0));
        let lie = Arc::new(AtomicBool::new(false));
        let cp = CountingReads {
            inner: FileControlPlane::open(root.join("record.json")).unwrap(),
            reads: reads.clone(),
            lie: lie.clone(),
        };
        (cp, reads, lie)
    }
}

impl ControlPlane for CountingReads {
    fn location(&self) -> String {
        self.inner.location()
    }
    fn create(&mut self, initial: &Record) -> Result<Record, ControlError> {
        self.inner.create(initial)
    }
    fn read(&mut self) -> Result<Record, ControlError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.read()
    }
    fn write(&mut self, expected: Version, write: &Write) -> Result<Record, ControlError> {
        self.inner.write(expected, write)
    }
    fn known_unchanged(&mut self) -> bool {
        self.lie.load(Ordering::Relaxed) || self.inner.known_unchanged()
    }
    fn register(&mut self, node: NodeId, disk: Option<u32>) -> Result<Registration, ControlError> {
        self.inner.register(node, disk)
    }
}

/// The steps of one tick (recovery, re-admission, handoff, move for an
/// owner; recovery and activation for a follower) read the record once
/// between them, and the next tick reads it again.
#[test]
fn the_steps_of_a_tick_share_one_read_of_the_record() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    for n in [1, 2] {
        let (cp, reads, _) = CountingReads::open(dir.path());
        let cfg = NodeConfig {
            id: NodeId(n),
            data: dir.path().join(format!("n{n}")),
            mutants: Mutants::NONE,
            resend_ms: 0,
            reread_ticks: 1,
            crash: None,
        };
        let mut node = Node::boot(cfg, Box::new(cp), &mut env).unwrap();
        assert_eq!(node.serving().is_some(), n == 1);
        reads.store(0, Ordering::Relaxed);
        node.on_tick(&mut env).unwrap();
        assert_eq!(reads.load(Ordering::Relaxed), 1, "n{n}: one read a tick");
        node.on_tick(&mut env).unwrap();
        assert_eq!(
            reads.load(Ordering::Relaxed),
            2,
            "n{n}: the next tick reads again"
        );
    }
}

/// Node `n` on a counting control plane, re-reading every
/// `reread_ticks` ticks.
fn boot_counted(
    root: &Path,
    n: u8,
    reread_ticks: u32,
    env: &mut Recorder,
) -> (Node, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let (cp, reads, lie) = CountingReads::open(root);
    let cfg = NodeConfig {
        id: NodeId(n),
        data: root.join(format!("n{n}")),
        mutants: Mutants::NONE,
        resend_ms: 0,
        reread_ticks,
        crash: None,
    };
    let node = Node::boot(cfg, Box::new(cp), env).unwrap();
    reads.store(0, Ordering::Relaxed);
    (node, reads, lie)
}

/// A tick whose control plane knows the record unchanged reads nothing;
/// the tick after another writer's write reads it once and acts on it
/// (the owner re-admits the copy the write suspended); the owner's own
/// write leaves nothing to read on the next tick.
#[test]
fn a_tick_reads_the_record_only_after_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let store = setup(dir.path());
    let mut env = Recorder::default();
    let (mut owner, reads, _) = boot_counted(dir.path(), 1, 1_000, &mut env);
    for _ in 0..5 {
        owner.on_tick(&mut env).unwrap();
    }
    assert_eq!(reads.load(Ordering::Relaxed), 0, "nothing changed");
    let mut other = FileControlPlane::open(&store).unwrap();
    let r = other.read().unwrap();
    other
        .write(r.version, &Write::Suspend { storage: s(2) })
        .unwrap();
    owner.on_tick(&mut env).unwrap();
    assert_eq!(reads.load(Ordering::Relaxed), 1, "the changed record read");
    assert!(
        env.events.contains(&Event::Rejoin { node: NodeId(2) }),
        "acted on in the same tick: {:?}",
        env.events
    );
    owner.on_tick(&mut env).unwrap();
    assert_eq!(
        reads.load(Ordering::Relaxed),
        1,
        "its own re-admission is the record it holds"
    );
    assert!(other.read().unwrap().suspended.is_empty());
}

/// Without a change, a tick still reads the record every
/// `reread_ticks` ticks: a lost notification only delays.
#[test]
fn the_record_is_read_again_every_reread_ticks_without_a_change() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    for n in [1, 2] {
        let (mut node, reads, _) = boot_counted(dir.path(), n, 4, &mut env);
        let mut per_tick = Vec::new();
        for _ in 0..12 {
            let before = reads.load(Ordering::Relaxed);
            node.on_tick(&mut env).unwrap();
            per_tick.push(reads.load(Ordering::Relaxed) - before);
        }
        assert_eq!(per_tick, [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1], "n{n}");
    }
}

/// A write refused as stale reads the record on the next step even when
/// the control plane claims it unchanged (here it lies; a watch can lag):
/// a restarted follower whose suspension was refused because the owner
/// re-admitted another copy meanwhile commits it on its next tick.
#[test]
fn a_write_refused_as_stale_reads_the_record_whatever_the_plane_claims() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    drop(boot(dir.path(), 2, &mut env).unwrap());
    drop(boot(dir.path(), 3, &mut env).unwrap());
    let f2 = boot(dir.path(), 2, &mut env).unwrap();
    assert!(f2.is_suspended());
    // n3 comes back while n2 is suspended: its suspension waits.
    let (mut f3, reads, lie) = boot_counted(dir.path(), 3, 1_000, &mut env);
    assert!(f3.is_restarting());
    // The owner re-admits n2; n3's plane claims nothing changed.
    lie.store(true, Ordering::Relaxed);
    owner.on_tick(&mut env).unwrap();
    assert!(env.events.contains(&Event::Rejoin { node: NodeId(2) }));
    f3.on_tick(&mut env).unwrap();
    assert!(
        f3.is_restarting(),
        "its suspension at the old version: stale"
    );
    assert_eq!(reads.load(Ordering::Relaxed), 0, "it believed the plane");
    f3.on_tick(&mut env).unwrap();
    assert_eq!(reads.load(Ordering::Relaxed), 1, "the refusal made it read");
    assert!(!f3.is_restarting() && f3.is_suspended());
}

#[test]
fn a_follower_acknowledges_only_what_is_on_its_disk_and_the_owner_confirms_on_w() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    let mut f2 = boot(dir.path(), 2, &mut env).unwrap();
    owner.publish(1, &mut env).unwrap();
    let append = env.sent[0];
    env.sent.clear();
    f2.on_msg(append, &mut env).unwrap();
    assert_eq!(on_disk(dir.path(), 2), 1, "durable before the ack leaves");
    let ack = env.sent.pop().expect("an ack");
    assert!(
        matches!(
            ack,
            Msg::Ack {
                pos: 1,
                admitted: true,
                inc: 0,
                ..
            }
        ),
        "{ack}"
    );
    owner.on_msg(ack, &mut env).unwrap();
    assert_eq!(owner.serving().unwrap().confirmed_tail(), 1);
    assert!(env.events.contains(&Event::Confirm {
        node: NodeId(1),
        tail: 1
    }));
}

#[test]
fn a_restarted_owner_does_not_serve_again_without_a_recovery() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    owner.publish(1, &mut env).unwrap();
    drop(owner);
    let mut again = boot(dir.path(), 1, &mut env).unwrap();
    assert_eq!(again.inc(), 1);
    assert_eq!(again.replica().len(), 1, "its log came back from the disk");
    assert!(matches!(
        again.publish(2, &mut env),
        Err(NodeError::NotServing { .. })
    ));
}

#[test]
fn a_second_restarted_follower_waits_until_the_first_is_readmitted() {
    let dir = tempfile::tempdir().unwrap();
    let store = setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    drop(boot(dir.path(), 2, &mut env).unwrap());
    drop(boot(dir.path(), 3, &mut env).unwrap());
    env.sent.clear();

    // n2 comes back: suspended, and it tells the owner.
    let mut f2 = boot(dir.path(), 2, &mut env).unwrap();
    assert!(f2.is_suspended() && !f2.is_restarting());
    assert_eq!(
        env.sent,
        [Msg::Suspend {
            to: NodeId(1),
            from: s(2),
            inc: 1
        }]
    );
    // n3 comes back too: W - 1 = 1 follower is suspended already.
    let mut f3 = boot(dir.path(), 3, &mut env).unwrap();
    assert!(f3.is_restarting());
    let before = env.sent.len();
    f3.on_msg(
        Msg::Refuse {
            to: NodeId(3),
            epoch: Epoch(9),
        },
        &mut env,
    )
    .unwrap();
    assert_eq!(env.sent.len(), before, "a restarting process takes nothing");
    f3.on_tick(&mut env).unwrap();
    assert!(f3.is_restarting(), "still refused");

    // The owner hears the notice, and on its tick re-admits n2, which
    // covers the confirmed tail (0).
    let notice = env.sent[0];
    owner.on_msg(notice, &mut env).unwrap();
    owner.on_tick(&mut env).unwrap();
    let record = FileControlPlane::open(&store).unwrap().read().unwrap();
    assert!(record.suspended.is_empty(), "{record:?}");
    assert!(env.events.contains(&Event::Rejoin { node: NodeId(2) }));
    f2.on_tick(&mut env).unwrap();
    assert!(!f2.is_suspended());

    // Now n3's restart commits.
    f3.on_tick(&mut env).unwrap();
    assert!(!f3.is_restarting() && f3.is_suspended());
    assert!(env.events.contains(&Event::Restart {
        node: NodeId(3),
        inc: 1,
        suspended: true,
        fresh_disk: false,
    }));
}

/// Finding 22: the copy marks its acknowledgements from what it knows of
/// its suspension, which lags the record. It traces `NoticeRejoin` exactly
/// when it reads its re-admission, once.
#[test]
fn a_readmitted_copy_traces_its_notice_once_and_marks_its_acknowledgements_from_it() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    let _f3 = boot(dir.path(), 3, &mut env).unwrap();
    drop(boot(dir.path(), 2, &mut env).unwrap());
    let mut f2 = boot(dir.path(), 2, &mut env).unwrap();
    let notice = *env.sent.last().unwrap();
    assert!(matches!(notice, Msg::Suspend { .. }), "{notice}");
    let notices = |env: &Recorder| {
        env.events
            .iter()
            .filter(|e| matches!(e, Event::NoticeRejoin { .. }))
            .count()
    };
    // Still suspended in the record: its tick changes nothing.
    f2.on_tick(&mut env).unwrap();
    assert!(f2.is_suspended());
    assert_eq!(notices(&env), 0);

    owner.on_msg(notice, &mut env).unwrap();
    owner.on_tick(&mut env).unwrap();
    assert!(env.events.contains(&Event::Rejoin { node: NodeId(2) }));

    // Re-admitted, but the copy has not read the record yet: what it
    // acknowledges now is still marked suspended.
    env.sent.clear();
    owner.publish(1, &mut env).unwrap();
    let append = env
        .sent
        .iter()
        .copied()
        .find(|m| matches!(m, Msg::Append { to, .. } if *to == s(2)))
        .unwrap();
    f2.on_msg(append, &mut env).unwrap();
    assert!(
        matches!(
            env.sent.last(),
            Some(Msg::Ack {
                admitted: false,
                ..
            })
        ),
        "{:?}",
        env.sent.last()
    );
    assert_eq!(notices(&env), 0);

    // Its tick reads the record: the flag flips, and that is traced once.
    f2.on_tick(&mut env).unwrap();
    assert!(!f2.is_suspended());
    assert_eq!(
        env.events.last(),
        Some(&Event::NoticeRejoin { node: NodeId(2) })
    );
    f2.on_tick(&mut env).unwrap();
    assert_eq!(notices(&env), 1, "traced only when the flag flips");
    f2.on_msg(append, &mut env).unwrap();
    assert!(
        matches!(env.sent.last(), Some(Msg::Ack { admitted: true, .. })),
        "{:?}",
        env.sent.last()
    );
}

/// Finding 35: the owner reads re-admissions from the record on its tick.
/// The suspension notice muted n2; the owner's own re-admission of it is
/// read back in the same tick, n2 is unmuted and the event names it. Under
/// `owner_ignores_readmission` the owner reads the same record, unmutes
/// nothing, and its event says so on every tick.
#[test]
fn the_owner_unmutes_a_copy_the_record_readmitted_and_traces_which() {
    for mutants in [
        Mutants::NONE,
        Mutants::only(Mutant::OwnerIgnoresReadmission),
    ] {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        let mut env = Recorder::default();
        let mut owner = boot_with(dir.path(), 1, mutants, &mut env).unwrap();
        let _f3 = boot(dir.path(), 3, &mut env).unwrap();
        drop(boot(dir.path(), 2, &mut env).unwrap());
        let _f2 = boot(dir.path(), 2, &mut env).unwrap();
        let notice = *env.sent.last().unwrap();
        owner.on_msg(notice, &mut env).unwrap();
        assert!(owner.serving().unwrap().muted().contains(&s(2)));
        let readings = |env: &Recorder| -> Vec<Event> {
            env.events
                .iter()
                .filter(|e| matches!(e, Event::NoticeReadmission { .. }))
                .cloned()
                .collect()
        };
        owner.on_tick(&mut env).unwrap();
        assert!(env.events.contains(&Event::Rejoin { node: NodeId(2) }));
        owner.on_tick(&mut env).unwrap();
        let muted = owner.serving().unwrap().muted().contains(&s(2));
        if mutants == Mutants::NONE {
            assert!(!muted);
            assert_eq!(
                readings(&env),
                [Event::NoticeReadmission {
                    node: NodeId(1),
                    copies: vec![s(2)]
                }],
                "read once: nothing is muted after it"
            );
        } else {
            assert!(muted);
            let empty = Event::NoticeReadmission {
                node: NodeId(1),
                copies: vec![],
            };
            assert_eq!(readings(&env), [empty.clone(), empty]);
        }
    }
}

#[test]
fn a_storage_file_that_is_not_a_number_stops_the_node_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    std::fs::create_dir_all(dir.path().join("n2")).unwrap();
    std::fs::write(dir.path().join("n2/disk"), "two").unwrap();
    let e = boot(dir.path(), 2, &mut Recorder::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("n2/disk"), "{e}");
    assert!(e.contains("`two` is not a disk number"), "{e}");
}

#[test]
fn a_log_without_its_storage_file_is_refused_rather_than_taken_for_a_new_instance() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    owner.publish(1, &mut env).unwrap();
    drop(owner);
    std::fs::remove_file(dir.path().join("n1/disk")).unwrap();
    let e = boot(dir.path(), 1, &mut env).unwrap_err();
    assert!(matches!(e, NodeError::MissingStorageId { .. }), "{e}");
    assert!(e.to_string().contains("n1/disk is missing"), "{e}");
}

/// Each start takes the next incarnation from the control plane, on the
/// same disk or on an empty one; an empty directory is a new storage
/// instance, the record is told the old one is lost, and the restart is
/// traced as one on a fresh disk.
#[test]
fn a_node_back_on_an_empty_disk_is_a_new_instance_and_its_old_one_is_marked_lost() {
    let dir = tempfile::tempdir().unwrap();
    let store = setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    owner.publish(1, &mut env).unwrap();
    let f = boot(dir.path(), 2, &mut env).unwrap();
    assert_eq!((f.storage(), f.inc()), (s(2), 0));
    drop(f);
    // Back on its disk: the same instance, the next incarnation.
    let f = boot(dir.path(), 2, &mut env).unwrap();
    assert_eq!((f.storage(), f.inc()), (s(2), 1));
    drop(f);
    // The disk is lost: the next incarnation on a new instance.
    std::fs::remove_dir_all(dir.path().join("n2")).unwrap();
    env.events.clear();
    let f = boot(dir.path(), 2, &mut env).unwrap();
    let fresh = StorageId {
        node: NodeId(2),
        disk: 1,
    };
    assert_eq!((f.storage(), f.inc()), (fresh, 2));
    assert!(!f.is_restarting() && !f.is_suspended());
    assert_eq!(f.replica().len(), 0);
    assert_eq!(
        env.events,
        [Event::Restart {
            node: NodeId(2),
            inc: 2,
            suspended: false,
            fresh_disk: true,
        }]
    );
    let r = FileControlPlane::open(&store).unwrap().read().unwrap();
    assert!(r.lost.contains(&s(2)), "{r:?}");
    // The old instance was suspended by the restart on its disk, and stays
    // so: it is never counted again (finding 36).
    assert!(r.suspended.contains(&s(2)), "{r:?}");
    assert!(
        r.followers.contains(&s(2)) && !r.is_assigned(fresh),
        "{r:?}"
    );
    // The owner reads the record and stops shipping to the lost instance.
    env.sent.clear();
    owner.on_tick(&mut env).unwrap();
    assert!(
        env.sent
            .iter()
            .all(|m| !matches!(m, Msg::Append { to, .. } if *to == s(2))),
        "{:?}",
        env.sent
    );
    assert!(env
        .sent
        .iter()
        .any(|m| matches!(m, Msg::Append { to, .. } if *to == s(3))));
}

/// A start that died between registering an empty directory's disk and
/// writing it leaves a disk number no data ever held: the next start on an
/// empty directory takes the one after, and still marks the instance the
/// record names lost.
#[test]
fn a_disk_registered_by_a_start_that_died_is_skipped_and_the_named_one_marked_lost() {
    let dir = tempfile::tempdir().unwrap();
    let store = setup(dir.path());
    let mut env = Recorder::default();
    drop(boot(dir.path(), 2, &mut env).unwrap());
    std::fs::remove_dir_all(dir.path().join("n2")).unwrap();
    // The start that died: registered disk 1, wrote nothing.
    let reg = FileControlPlane::open(&store)
        .unwrap()
        .register(NodeId(2), None)
        .unwrap();
    assert_eq!((reg.disk, reg.inc), (1, 1));
    let f = boot(dir.path(), 2, &mut env).unwrap();
    assert_eq!((f.storage().disk, f.inc()), (2, 2));
    assert!(!f.is_restarting());
    let r = FileControlPlane::open(&store).unwrap().read().unwrap();
    assert!(r.lost.contains(&s(2)), "{r:?}");
}

/// A directory that holds an instance the node has since replaced is
/// refused at start, naming both disks, and nothing is registered.
#[test]
fn a_replaced_disk_put_back_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    drop(boot(dir.path(), 2, &mut env).unwrap());
    let old = dir.path().join("n2-old");
    std::fs::rename(dir.path().join("n2"), &old).unwrap();
    drop(boot(dir.path(), 2, &mut env).unwrap());
    std::fs::remove_dir_all(dir.path().join("n2")).unwrap();
    std::fs::rename(&old, dir.path().join("n2")).unwrap();
    let e = boot(dir.path(), 2, &mut env).unwrap_err().to_string();
    assert!(e.contains("holds disk 0, but disk 1 is registered"), "{e}");
    // Nothing changed: the replacement's directory still starts.
    std::fs::remove_dir_all(dir.path().join("n2")).unwrap();
    let f = boot(dir.path(), 2, &mut env).unwrap();
    assert_eq!(f.storage().disk, 2);
}

/// Group commit: a batch of publishes is on the owner's disk, in order,
/// before any of it is traced or shipped; a node that does not serve
/// refuses each key of a batch on its own.
#[test]
fn a_batch_of_publishes_is_durable_in_order_before_any_is_traced_or_sent() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut owner = boot(dir.path(), 1, &mut env).unwrap();
    env.events.clear();
    let answers = owner.publish_batch(&[7, 8, 9], &mut env).unwrap();
    let positions: Vec<u64> = answers.into_iter().map(Result::unwrap).collect();
    assert_eq!(positions, vec![1, 2, 3]);
    assert_eq!(on_disk(dir.path(), 1), 3);
    let (_, rec) = DiskLog::open(dir.path().join("n1")).unwrap();
    let keys: Vec<_> = rec
        .state
        .entries
        .iter()
        .map(|e| match e.op {
            livemove_impl::Op::Put { key, .. } => key,
            ref other => panic!("a put, got {other:?}"),
        })
        .collect();
    assert_eq!(keys, vec![7, 8, 9]);
    let published: Vec<(u64, u64)> = env
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Publish { pos, key, .. } => Some((*pos, *key)),
            _ => None,
        })
        .collect();
    assert_eq!(published, vec![(1, 7), (2, 8), (3, 9)]);
    // The copies are shipped the entry after what they acknowledged: the
    // first of the batch, one append each.
    assert!(env
        .sent
        .iter()
        .all(|m| matches!(m, Msg::Append { pos: 1, .. })));

    let mut follower = boot(dir.path(), 2, &mut env).unwrap();
    let answers = follower.publish_batch(&[10, 11], &mut env).unwrap();
    assert_eq!(answers.len(), 2);
    assert!(answers
        .iter()
        .all(|a| matches!(a, Err(NodeError::NotServing { node: NodeId(2) }))));
    assert_eq!(on_disk(dir.path(), 2), 0);
}

/// Deliver every message sent so far to the node it is for, until none is
/// left (at most `rounds` rounds).
fn deliver_all(nodes: &mut [Node], env: &mut Recorder, rounds: usize) {
    for _ in 0..rounds {
        let sent = std::mem::take(&mut env.sent);
        if sent.is_empty() {
            return;
        }
        for m in sent {
            if let livemove_impl::Endpoint::Node(to) = m.dest() {
                let n = nodes.iter_mut().find(|n| n.id() == to).unwrap();
                n.on_msg(m, env).unwrap();
            }
        }
    }
}

fn record(root: &Path) -> Record {
    FileControlPlane::open(root.join("record.json"))
        .unwrap()
        .read()
        .unwrap()
}

/// Note 2's routing on the server side, from each node's own view: the
/// owner serves a request at its epoch; in the window between a handoff's
/// commit and the new owner's activation the old owner answers ASK for the
/// new owner at the new epoch, a follower that read the record MOVED, and
/// the new owner try-again; once the new owner serves, it serves at the new
/// epoch and the old owner, having read the record, answers MOVED.
#[test]
fn routed_answers_through_a_handoff_ask_in_its_window_then_moved() {
    use livemove_impl::routing::{answer, Attempt, ClientReply, Redirect, Route};
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let mut env = Recorder::default();
    let mut nodes: Vec<Node> = (1..=3)
        .map(|n| boot(dir.path(), n, &mut env).unwrap())
        .collect();
    let at = |n: u8, epoch: u64| Attempt {
        node: NodeId(n),
        epoch: Epoch(epoch),
        asking: false,
    };
    let moved = |n: u8, epoch: u64| {
        ClientReply::Redirect(Redirect::Moved(Route {
            owner: NodeId(n),
            epoch: Epoch(epoch),
        }))
    };
    assert_eq!(answer(&nodes[0].server_view(), &at(1, 1)), ClientReply::Ok);
    assert_eq!(answer(&nodes[0].server_view(), &at(1, 0)), moved(1, 1));
    assert_eq!(answer(&nodes[1].server_view(), &at(2, 0)), moved(1, 1));
    nodes[0].publish(1, &mut env).unwrap();
    deliver_all(&mut nodes, &mut env, 10);

    // n1 hands over to n2; its ticks drain, report F and commit once its
    // acknowledgements show n2 at F. n2 does not tick: it stays committed
    // and not active.
    assert!(nodes[0].hand_off(NodeId(2), &mut env).unwrap());
    for _ in 0..10 {
        if record(dir.path())
            .handoff
            .is_some_and(|h| h.phase == livemove_impl::store::HandoffPhase::Committed)
        {
            break;
        }
        nodes[0].on_tick(&mut env).unwrap();
        deliver_all(&mut nodes, &mut env, 10);
    }
    let r = record(dir.path());
    assert_eq!((r.owner, r.epoch), (s(2), Epoch(2)), "{r:?}");
    assert_eq!(
        answer(&nodes[0].server_view(), &at(1, 1)),
        ClientReply::Redirect(Redirect::Ask {
            node: NodeId(2),
            epoch: Epoch(2)
        }),
        "the old owner in the window: this request only, to the new owner"
    );
    nodes[2].on_tick(&mut env).unwrap();
    assert_eq!(answer(&nodes[2].server_view(), &at(3, 1)), moved(2, 2));
    let asking = Attempt {
        asking: true,
        ..at(2, 2)
    };
    assert_eq!(
        answer(&nodes[1].server_view(), &asking),
        ClientReply::TryAgain,
        "committed, not active yet"
    );

    // n2 activates on its tick; n1 reads the record on its own.
    nodes[1].on_tick(&mut env).unwrap();
    deliver_all(&mut nodes, &mut env, 10);
    assert_eq!(answer(&nodes[1].server_view(), &asking), ClientReply::Ok);
    assert_eq!(answer(&nodes[1].server_view(), &at(2, 1)), moved(2, 2));
    nodes[0].on_tick(&mut env).unwrap();
    assert_eq!(answer(&nodes[0].server_view(), &at(1, 1)), moved(2, 2));
}
