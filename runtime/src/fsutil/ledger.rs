//! The durability ledger: what a power loss would leave of the files in a
//! watched directory, for the simulator's power losses (`sim`).
//!
//! A kill leaves everything the process wrote in the kernel's page cache,
//! so it cannot tell an fsync made from one missed. A power loss can: what
//! was written to a file after its last fsync may be gone, and a file
//! created or renamed in a directory that was not fsynced since may be
//! missing, or still have its old name and content. The ledger remembers,
//! per file, its content at its last fsync, and per watched directory the
//! names (and the files they name) at its last fsync; `power_loss` rewrites
//! the directory to that state, keeping a seeded part of what was written
//! after it.
//!
//! The ledger sees the file system only through the calls of `fsutil` and
//! the disk log that create, rename and fsync (`opened`, `renamed`,
//! `sync_file`, `sync_dir`), and it is one per thread: the simulator
//! installs it (`install`) on the thread that runs every node of a run.
//! With no ledger installed each of those calls costs one thread-local
//! read, beside an fsync. A watched directory itself is taken as durable
//! (it stands for a disk's mount point).
//!
//! The ledger also carries the test switch that skips one kind of fsync
//! (`SyncPoint`): the call is then not made at all, as if the code lacked
//! it, and the ledger records nothing durable for it. Only an installed
//! ledger can switch an fsync off, so the nodes outside the simulator always
//! make every one. Under the simulator the switch reaches every fsync of
//! its thread, the file store's record too, which stands for a replicated
//! store and which no power loss reaches.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// One kind of fsync the code makes, named so a test can skip it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPoint {
    /// The disk log's `sync_data` after appending records (`flush`).
    Append,
    /// The disk log's `sync_all` after cutting a divergent suffix or a
    /// torn tail.
    Truncate,
    /// The fsync of a replacement's temporary file before its rename
    /// (`atomic_replace`).
    ReplaceFile,
    /// The fsync of the directory after a replacement's rename
    /// (`atomic_replace`).
    ReplaceDir,
    /// The fsync of the directory after the disk log's segment is created.
    CreateDir,
}

impl SyncPoint {
    /// Every sync point, in the order of their names.
    pub const ALL: [SyncPoint; 5] = [
        SyncPoint::Append,
        SyncPoint::Truncate,
        SyncPoint::ReplaceFile,
        SyncPoint::ReplaceDir,
        SyncPoint::CreateDir,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SyncPoint::Append => "append",
            SyncPoint::Truncate => "truncate",
            SyncPoint::ReplaceFile => "replace-file",
            SyncPoint::ReplaceDir => "replace-dir",
            SyncPoint::CreateDir => "create-dir",
        }
    }
}

impl std::str::FromStr for SyncPoint {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SyncPoint::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = SyncPoint::ALL.iter().map(|p| p.name()).collect();
                format!("`{s}` is not a sync point ({})", names.join(", "))
            })
    }
}

/// A file as the ledger knows it: numbered when it is created, so a name
/// that a rename moves to another file is told apart from it.
type FileId = u64;

#[derive(Debug, Default)]
struct Dir {
    /// The names now, and the file each names.
    live: BTreeMap<OsString, FileId>,
    /// The names at the directory's last fsync.
    durable: BTreeMap<OsString, FileId>,
}

#[derive(Debug, Default)]
struct Ledger {
    skip: Option<SyncPoint>,
    dirs: BTreeMap<PathBuf, Dir>,
    /// Each file's content at its last fsync; a file never fsynced has
    /// none durable.
    synced: BTreeMap<FileId, Vec<u8>>,
    next_id: FileId,
}

thread_local! {
    static LEDGER: RefCell<Option<Ledger>> = const { RefCell::new(None) };
}

/// The installed ledger, removed from the thread when dropped.
#[derive(Debug)]
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        LEDGER.with(|l| *l.borrow_mut() = None);
    }
}

/// Install a ledger on this thread, with `skip` switched off if given.
///
/// Panics if one is installed already: two runs on one thread at once
/// would share it.
pub fn install(skip: Option<SyncPoint>) -> Installed {
    LEDGER.with(|l| {
        let mut l = l.borrow_mut();
        assert!(
            l.is_none(),
            "invariant broken: a durability ledger is already installed on this thread"
        );
        *l = Some(Ledger {
            skip,
            ..Ledger::default()
        });
    });
    Installed(())
}

fn with<R>(f: impl FnOnce(&mut Ledger) -> R) -> Option<R> {
    LEDGER.with(|l| l.borrow_mut().as_mut().map(f))
}

fn split(path: &Path) -> Option<(PathBuf, OsString)> {
    Some((
        path.parent()?.to_path_buf(),
        path.file_name()?.to_os_string(),
    ))
}

/// Whether the installed ledger switches `point` off.
pub fn skips(point: SyncPoint) -> bool {
    with(|l| l.skip == Some(point)).unwrap_or(false)
}

/// Watch `dir` (it exists): what is in it now is taken as durable.
pub fn watch(dir: &Path) -> io::Result<()> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_file() {
            files.push((e.file_name(), std::fs::read(e.path())?));
        }
    }
    with(|l| {
        let mut d = Dir::default();
        for (name, bytes) in files {
            let id = l.new_id();
            l.synced.insert(id, bytes);
            d.live.insert(name.clone(), id);
            d.durable.insert(name, id);
        }
        l.dirs.insert(dir.to_path_buf(), d);
    });
    Ok(())
}

/// Stop watching `dir` (its disk is gone).
pub fn forget(dir: &Path) {
    with(|l| l.dirs.remove(dir));
}

/// A file at `path` was opened with `create`: a new file unless the name
/// held one already.
pub fn opened(path: &Path) {
    let Some((dir, name)) = split(path) else {
        return;
    };
    with(|l| {
        if l.dirs
            .get(&dir)
            .is_some_and(|d| !d.live.contains_key(&name))
        {
            let id = l.new_id();
            l.dirs.get_mut(&dir).expect("watched").live.insert(name, id);
        }
    });
}

/// `from` was renamed to `to` (in the same directory).
pub fn renamed(from: &Path, to: &Path) {
    let (Some((dir, from)), Some((to_dir, to))) = (split(from), split(to)) else {
        return;
    };
    assert_eq!(
        dir, to_dir,
        "invariant broken: the ledger follows renames within one directory only"
    );
    with(|l| {
        if let Some(d) = l.dirs.get_mut(&dir) {
            if let Some(id) = d.live.remove(&from) {
                d.live.insert(to, id);
            }
        }
    });
}

/// Fsync `file` (at `path`) for `point`, `sync_data` or `sync_all`: unless
/// the installed ledger skips `point`; the ledger records its content
/// durable.
pub fn sync_file(file: &File, path: &Path, point: SyncPoint, data_only: bool) -> io::Result<()> {
    if skips(point) {
        return Ok(());
    }
    if data_only {
        file.sync_data()?;
    } else {
        file.sync_all()?;
    }
    let Some((dir, name)) = split(path) else {
        return Ok(());
    };
    let watched = with(|l| l.dirs.get(&dir).and_then(|d| d.live.get(&name).copied()));
    if let Some(Some(id)) = watched {
        let bytes = std::fs::read(path)?;
        with(|l| l.synced.insert(id, bytes));
    }
    Ok(())
}

/// Fsync the directory `dir` for `point`, unless the installed ledger
/// skips it; the ledger records its names durable.
pub fn sync_dir(dir: &Path, point: SyncPoint) -> io::Result<()> {
    if skips(point) {
        return Ok(());
    }
    File::open(dir)?.sync_all()?;
    with(|l| {
        if let Some(d) = l.dirs.get_mut(dir) {
            d.durable = d.live.clone();
        }
    });
    Ok(())
}

/// What one power loss did to a directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PowerLoss {
    /// Files whose name or content is not what it was before it.
    pub files_changed: u64,
    /// Bytes written and never fsynced that are gone.
    pub bytes_lost: u64,
}

/// How much of a file's unsynced tail survives, drawn with `below(n)`
/// (uniform in `0..n`): none, all, or a prefix, possibly cut mid-record.
fn surviving_tail(extra: usize, below: &mut dyn FnMut(u64) -> u64) -> usize {
    match below(3) {
        0 => 0,
        1 => extra,
        _ => below(extra as u64) as usize,
    }
}

/// The machine holding `dir` loses power (no process writes to it now):
/// rewrite `dir` to what a disk would hold afterwards. A seeded choice
/// (`below`) decides whether the names written since the directory's last
/// fsync survive (all of them) or not (none), and, per file, how much of
/// what was written after its last fsync survives.
///
/// Panics if `dir` is not watched, or when it cannot be rewritten: the
/// simulator owns it.
pub fn power_loss(dir: &Path, below: &mut dyn FnMut(u64) -> u64) -> PowerLoss {
    let (names, synced, current) = with(|l| {
        let d = l.dirs.get(dir).unwrap_or_else(|| {
            panic!(
                "invariant broken: power loss of {}, which the ledger does not watch",
                dir.display()
            )
        });
        let names = if below(2) == 0 {
            d.durable.clone()
        } else {
            d.live.clone()
        };
        let synced: BTreeMap<FileId, Vec<u8>> = names
            .values()
            .map(|id| (*id, l.synced.get(id).cloned().unwrap_or_default()))
            .collect();
        (names, synced, d.live.clone())
    })
    .expect("invariant broken: power loss without a durability ledger installed");
    let fail = |what: &str, e: io::Error| -> ! {
        panic!(
            "invariant broken: power loss cannot {what} in {}: {e}",
            dir.display()
        )
    };
    // What each live file holds now, by file.
    let mut now: BTreeMap<FileId, Vec<u8>> = BTreeMap::new();
    for (name, id) in &current {
        match std::fs::read(dir.join(name)) {
            Ok(b) => {
                now.insert(*id, b);
            }
            Err(e) => fail("read a file", e),
        }
    }
    let mut after: BTreeMap<OsString, (FileId, Vec<u8>)> = BTreeMap::new();
    let mut report = PowerLoss::default();
    for (name, id) in &names {
        let mut bytes = synced[id].clone();
        if let Some(cur) = now.get(id) {
            if cur.len() > bytes.len() && cur.starts_with(&bytes) {
                let extra = cur.len() - bytes.len();
                let keep = surviving_tail(extra, below);
                bytes.extend_from_slice(&cur[bytes.len()..bytes.len() + keep]);
                report.bytes_lost += (extra - keep) as u64;
            } else if *cur != bytes {
                report.bytes_lost += cur.len() as u64;
            }
        }
        if current.get(name) != Some(id) || now.get(id) != Some(&bytes) {
            report.files_changed += 1;
        }
        after.insert(name.clone(), (*id, bytes));
    }
    for (name, id) in &current {
        if !after.contains_key(name) {
            report.files_changed += 1;
            if !after.values().any(|(kept, _)| kept == id) {
                report.bytes_lost += now[id].len() as u64;
            }
        }
        if let Err(e) = std::fs::remove_file(dir.join(name)) {
            fail("remove a file", e);
        }
    }
    for (name, (_, bytes)) in &after {
        if let Err(e) = std::fs::write(dir.join(name), bytes) {
            fail("write a file", e);
        }
    }
    with(|l| {
        let d = l.dirs.get_mut(dir).expect("watched above");
        d.live = after.iter().map(|(n, (id, _))| (n.clone(), *id)).collect();
        d.durable = d.live.clone();
        for (id, bytes) in after.into_values() {
            l.synced.insert(id, bytes);
        }
    });
    report
}

impl Ledger {
    fn new_id(&mut self) -> FileId {
        self.next_id += 1;
        self.next_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    /// A `below` that gives `answers` in order, each checked against its
    /// bound.
    fn scripted(answers: &[(u64, u64)]) -> impl FnMut(u64) -> u64 + '_ {
        let mut next = answers.iter();
        move |n| {
            let &(bound, answer) = next.next().expect("a draw more than scripted");
            assert_eq!(n, bound, "the draw's bound");
            answer
        }
    }

    fn create(path: &Path) -> File {
        let f = File::create(path).unwrap();
        opened(path);
        f
    }

    /// A directory watched with one file `f` holding `abc`, fsynced, and
    /// `def` appended after the fsync.
    fn appended_after_sync(dir: &Path) -> PathBuf {
        watch(dir).unwrap();
        let path = dir.join("f");
        let mut f = create(&path);
        sync_dir(dir, SyncPoint::CreateDir).unwrap();
        f.write_all(b"abc").unwrap();
        sync_file(&f, &path, SyncPoint::Append, true).unwrap();
        f.write_all(b"def").unwrap();
        path
    }

    #[test]
    fn what_was_written_after_the_last_fsync_goes_in_full_in_part_or_not() {
        for (tail, kept) in [
            (vec![(3, 0)], &b"abc"[..]),
            (vec![(3, 1)], b"abcdef"),
            (vec![(3, 2), (3, 2)], b"abcde"),
            (vec![(3, 2), (3, 0)], b"abc"),
        ] {
            let _l = install(None);
            let tmp = tempfile::tempdir().unwrap();
            let path = appended_after_sync(tmp.path());
            let mut draws = vec![(2, 0)];
            draws.extend(tail);
            let lost = power_loss(tmp.path(), &mut scripted(&draws));
            assert_eq!(std::fs::read(&path).unwrap(), kept);
            assert_eq!(lost.bytes_lost, 6 - kept.len() as u64);
            assert_eq!(lost.files_changed, u64::from(kept.len() < 6));
        }
    }

    #[test]
    fn a_file_whose_directory_was_not_fsynced_since_its_creation_may_be_missing() {
        for (names, present) in [(0, false), (1, true)] {
            let _l = install(None);
            let tmp = tempfile::tempdir().unwrap();
            watch(tmp.path()).unwrap();
            let path = tmp.path().join("f");
            let mut f = create(&path);
            f.write_all(b"abc").unwrap();
            sync_file(&f, &path, SyncPoint::Append, true).unwrap();
            let lost = power_loss(tmp.path(), &mut scripted(&[(2, names)]));
            assert_eq!(path.exists(), present);
            assert_eq!(lost.files_changed, u64::from(!present));
            assert_eq!(lost.bytes_lost, if present { 0 } else { 3 });
        }
    }

    #[test]
    fn a_rename_whose_directory_was_not_fsynced_may_leave_the_old_content() {
        for (names, content) in [(0, &b"old"[..]), (1, b"new")] {
            let _l = install(Some(SyncPoint::ReplaceDir));
            let tmp = tempfile::tempdir().unwrap();
            watch(tmp.path()).unwrap();
            let path = tmp.path().join("f");
            let mut f = create(&path);
            f.write_all(b"old").unwrap();
            sync_file(&f, &path, SyncPoint::ReplaceFile, false).unwrap();
            sync_dir(tmp.path(), SyncPoint::CreateDir).unwrap();
            // The replacement's directory fsync is switched off.
            super::super::atomic_replace(&path, b"new").unwrap();
            power_loss(tmp.path(), &mut scripted(&[(2, names)]));
            assert_eq!(std::fs::read(&path).unwrap(), content);
            assert!(!tmp.path().join("f.tmp").exists());
        }
    }

    #[test]
    fn with_every_fsync_made_a_power_loss_changes_nothing() {
        for names in [0, 1] {
            let _l = install(None);
            let tmp = tempfile::tempdir().unwrap();
            watch(tmp.path()).unwrap();
            let path = tmp.path().join("f");
            super::super::atomic_replace(&path, b"one").unwrap();
            super::super::atomic_replace(&path, b"two").unwrap();
            let lost = power_loss(tmp.path(), &mut scripted(&[(2, names)]));
            assert_eq!(lost, PowerLoss::default());
            assert_eq!(std::fs::read(&path).unwrap(), b"two");
        }
    }

    #[test]
    fn a_skipped_fsync_is_neither_made_nor_recorded_and_only_under_a_ledger() {
        assert!(!skips(SyncPoint::Append), "no ledger: every fsync is made");
        let _l = install(Some(SyncPoint::Append));
        assert!(skips(SyncPoint::Append) && !skips(SyncPoint::Truncate));
        let tmp = tempfile::tempdir().unwrap();
        let path = appended_after_sync(tmp.path());
        // `abc` was "fsynced" with the append point switched off.
        let lost = power_loss(tmp.path(), &mut scripted(&[(2, 0), (3, 0)]));
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        assert_eq!(lost.bytes_lost, 6);
    }

    #[test]
    fn sync_points_are_named_on_the_command_line_and_a_bad_name_is_refused() {
        for p in SyncPoint::ALL {
            assert_eq!(p.name().parse::<SyncPoint>(), Ok(p));
        }
        let e = "fsync".parse::<SyncPoint>().unwrap_err();
        assert!(
            e.contains("`fsync` is not a sync point (append, truncate"),
            "{e}"
        );
    }

    /// One step of a random walk over a segment-like file and a replaced
    /// one.
    #[derive(Clone, Debug)]
    enum Op {
        /// Append bytes to `log`, fsynced or not.
        Append(Vec<u8>, bool),
        /// Replace `small` atomically.
        Replace(Vec<u8>),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            (proptest::collection::vec(any::<u8>(), 1..16), any::<bool>())
                .prop_map(|(b, s)| Op::Append(b, s)),
            proptest::collection::vec(any::<u8>(), 0..8).prop_map(Op::Replace),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// With every fsync made, whatever the seeded choices: a replaced
        /// file keeps its last content, and an appended one its content at
        /// its last fsync followed by a prefix of what was appended after.
        #[test]
        fn a_power_loss_keeps_what_was_fsynced_and_a_prefix_of_the_rest(
            ops in proptest::collection::vec(op(), 1..12),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let _l = install(None);
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            watch(dir).unwrap();
            let log = dir.join("log");
            let mut f = std::fs::OpenOptions::new().append(true).create(true).open(&log).unwrap();
            opened(&log);
            sync_dir(dir, SyncPoint::CreateDir).unwrap();
            let (mut written, mut synced, mut small) = (Vec::new(), Vec::new(), None);
            for op in &ops {
                match op {
                    Op::Append(b, sync) => {
                        f.write_all(b).unwrap();
                        written.extend_from_slice(b);
                        if *sync {
                            sync_file(&f, &log, SyncPoint::Append, true).unwrap();
                            synced = written.clone();
                        }
                    }
                    Op::Replace(b) => {
                        super::super::atomic_replace(&dir.join("small"), b).unwrap();
                        small = Some(b.clone());
                    }
                }
            }
            let mut state = seed;
            let lost = power_loss(dir, &mut |n| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) % n
            });
            let after = std::fs::read(&log).unwrap();
            proptest::prop_assert!(after.starts_with(&synced) && written.starts_with(&after));
            proptest::prop_assert_eq!(lost.bytes_lost, (written.len() - after.len()) as u64);
            proptest::prop_assert_eq!(std::fs::read(dir.join("small")).ok(), small);
            proptest::prop_assert!(!dir.join("small.tmp").exists());
        }
    }
}
