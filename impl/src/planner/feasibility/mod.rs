//! Catch-up feasibility (note 2): a copy of D bytes over bandwidth b takes
//! D/b; the backlog B that built up meanwhile at incoming rate r is worked
//! off at a - r, where a is the target's apply rate. If a <= r waiting
//! never catches up, and the move is refused with that reason.

use serde::{Deserialize, Serialize};

/// A catch-up estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CatchUp {
    /// D/b: the snapshot copy.
    pub snapshot_secs: f64,
    /// B: the backlog accumulated during the snapshot, bytes.
    pub backlog_bytes: f64,
    /// B/(a - r): working off the backlog.
    pub backlog_secs: f64,
    /// The whole estimate, D/b + B/(a - r).
    pub total_secs: f64,
}

/// Why a catch-up cannot finish.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("target applies {apply_bps} B/s, not faster than the partition's incoming {incoming_bps} B/s: it never catches up")]
pub struct Infeasible {
    /// a.
    pub apply_bps: f64,
    /// r.
    pub incoming_bps: f64,
}

/// Estimate the catch-up of `bytes` (D) at bandwidth `bandwidth_bps` (b),
/// apply rate `apply_bps` (a) and incoming rate `incoming_bps` (r).
pub fn estimate(
    bytes: f64,
    bandwidth_bps: f64,
    apply_bps: f64,
    incoming_bps: f64,
) -> Result<CatchUp, Infeasible> {
    if apply_bps <= incoming_bps {
        return Err(Infeasible {
            apply_bps,
            incoming_bps,
        });
    }
    let snapshot_secs = bytes / bandwidth_bps;
    let backlog_bytes = incoming_bps * snapshot_secs;
    let backlog_secs = backlog_bytes / (apply_bps - incoming_bps);
    Ok(CatchUp {
        snapshot_secs,
        backlog_bytes,
        backlog_secs,
        total_secs: snapshot_secs + backlog_secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_is_snapshot_time_plus_backlog_over_the_rate_margin() {
        // 10 GB at 100 MB/s is 100 s; 10 MB/s incoming leaves 1 GB of
        // backlog, worked off at 50 - 10 = 40 MB/s in 25 s.
        let c = estimate(10e9, 100e6, 50e6, 10e6).unwrap();
        assert_eq!(c.snapshot_secs, 100.0);
        assert_eq!(c.backlog_bytes, 1e9);
        assert_eq!(c.backlog_secs, 25.0);
        assert_eq!(c.total_secs, 125.0);
    }

    #[test]
    fn an_apply_rate_not_above_the_incoming_rate_is_refused() {
        let e = estimate(1e9, 100e6, 10e6, 10e6).unwrap_err();
        assert_eq!(e.apply_bps, 10e6);
        assert!(e.to_string().contains("never catches up"), "{e}");
    }
}
