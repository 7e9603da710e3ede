//! The band around the mean that opens a rebalancing episode, and the
//! margin rule every move must pass.
//!
//! Detection is looser than fixing (as in Cruise Control): an episode opens
//! only when some node leaves CockroachDB's band (share +- max(5% of the
//! share, 2 items)), and then moves continue while each lowers the spread
//! by the margin, which settles nodes within about one item of their share.
//! Noise inside the band never opens an episode, so a settled cluster stays
//! still.

use crate::planner::policy::Policy;
use crate::planner::score::{Loads, COPIES, DIMS, OWNED};
use crate::planner::view::NodeIx;

/// Where a node stands against the detection band in one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Above the band.
    Over,
    /// Inside it.
    Within,
    /// Below it.
    Under,
}

/// Node `n`'s standing in dimension `d`. Count dimensions use CockroachDB's
/// integer thresholds: over above ceil(share + slack), under below
/// floor(share - slack).
pub fn standing(loads: &Loads, policy: &Policy, n: NodeIx, d: usize) -> Standing {
    let n = n as usize;
    let x = loads.x[n][d];
    let share = loads.capacity[n] * loads.mean[d];
    if loads.capacity[n] == 0.0 {
        return if x > 0.0 {
            Standing::Over
        } else {
            Standing::Within
        };
    }
    let slack = (policy.band_frac * share).max(policy.band_floor_items * loads.unit[d]);
    let (hi, lo) = if d == OWNED || d == COPIES {
        ((share + slack).ceil(), (share - slack).floor())
    } else {
        (share + slack, share - slack)
    };
    if x > hi + 1e-9 {
        Standing::Over
    } else if x < lo - 1e-9 {
        Standing::Under
    } else {
        Standing::Within
    }
}

/// Whether any node is outside the band in any dimension: an episode opens.
pub fn out_of_band(loads: &Loads, policy: &Policy) -> bool {
    (0..loads.x.len() as NodeIx).any(|n| {
        (0..DIMS).any(|d| loads.mean[d] > 0.0 && standing(loads, policy, n, d) != Standing::Within)
    })
}

/// Whether dimension `d` is balanced only outside a dead zone (history and
/// traffic), as opposed to one item either side of the share (counts).
pub fn has_dead_zone(d: usize) -> bool {
    d != OWNED && d != COPIES
}

/// Half the width of node `n`'s dead zone in dimension `d`: the fixing band,
/// max(`fix_frac` of the share, one mean item).
fn dead_zone(loads: &Loads, n: usize, d: usize) -> f64 {
    (loads.fix_frac * loads.capacity[n] * loads.mean[d]).max(loads.unit[d])
}

/// Node `n`'s contribution to the spread in dimension `d` at load `x`.
fn penalty(loads: &Loads, n: usize, d: usize, x: f64) -> f64 {
    let m = loads.mean[d];
    let c = loads.capacity[n];
    let w = loads.weights[d];
    if m <= 0.0 {
        return 0.0;
    }
    if c == 0.0 {
        return w * DRAIN_PRICE * x.abs() / m;
    }
    let mut dev = x - c * m;
    if has_dead_zone(d) {
        let z = dead_zone(loads, n, d);
        dev = dev.signum() * (dev.abs() - z).max(0.0);
    }
    w * dev * dev / (c * m * m)
}

/// The spread: sum over dimensions and nodes of weight times capacity times
/// the squared distance of the node's per-capacity load from the mean, in
/// units of the mean. In history and traffic only the distance beyond the
/// fixing band counts: those dimensions are fixed to within a few percent,
/// counts to within one item. A draining node's load counts at a fixed high
/// price per unit so that moving it off always lowers the spread.
pub fn spread(loads: &Loads) -> f64 {
    (0..loads.x.len())
        .map(|n| {
            (0..DIMS)
                .map(|d| penalty(loads, n, d, loads.x[n][d]))
                .sum::<f64>()
        })
        .sum()
}

/// The price per mean unit of load left on a draining node: far above what
/// any ordinary move changes, so draining comes first.
pub const DRAIN_PRICE: f64 = 1e6;

/// How much taking `k` off node `n` (negative: putting it on) lowers `n`'s
/// penalty in dimension `d`, and the own term of that side. The own term is
/// defined so that the margin rule stays "moving (1 + margin) times as much
/// would not widen the spread", which for a quadratic penalty is exactly
/// gain >= margin x own. A draining node's side is linear and has none.
fn side(loads: &Loads, n: usize, d: usize, k: f64) -> (f64, f64) {
    let x = loads.x[n][d];
    let g = penalty(loads, n, d, x) - penalty(loads, n, d, x - k);
    if loads.margin <= 0.0 || loads.capacity[n] == 0.0 {
        return (g, 0.0);
    }
    let s = 1.0 + loads.margin;
    let far = penalty(loads, n, d, x) - penalty(loads, n, d, x - s * k);
    (g, (s * g - far) / (s * loads.margin))
}

/// How much moving `w` from `a` to `b` lowers the spread, and the move's own
/// weight term (what the margin is measured in).
pub fn improvement(loads: &Loads, a: NodeIx, b: NodeIx, w: &[f64; DIMS]) -> (f64, f64) {
    let (a, b) = (a as usize, b as usize);
    let (ca, cb) = (loads.capacity[a], loads.capacity[b]);
    assert!(cb > 0.0, "a draining node is never a target (node {b})");
    let mut gain = 0.0;
    let mut own = 0.0;
    for (d, &k) in w.iter().enumerate() {
        let m = loads.mean[d];
        if m <= 0.0 || k == 0.0 {
            continue;
        }
        let quadratic = !has_dead_zone(d);
        // Source side.
        if ca == 0.0 || !quadratic {
            let (g, o) = side(loads, a, d, k);
            gain += g;
            own += o;
        } else {
            let q = loads.weights[d] / (ca * m * m);
            gain += q * (2.0 * k * (loads.x[a][d] - ca * m) - k * k);
            own += q * k * k;
        }
        // Target side.
        if quadratic {
            let q = loads.weights[d] / (cb * m * m);
            gain -= q * (2.0 * k * (loads.x[b][d] - cb * m) + k * k);
            own += q * k * k;
        } else {
            let (g, o) = side(loads, b, d, -k);
            gain += g;
            own += o;
        }
    }
    (gain, own)
}

/// One node's share of `improvement`, precomputed so a round can score many
/// candidate moves between the same nodes with a few multiplications each.
/// Count dimensions: `linear[d]` = 2 w_d (x - c m) / (c m^2), `scale[d]` =
/// w_d / (c m^2). Dead-zone dimensions: the load, its share, the zone and
/// the same scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Terms {
    linear: [f64; DIMS],
    scale: [f64; DIMS],
    x: [f64; DIMS],
    share: [f64; DIMS],
    zone: [f64; DIMS],
    margin: f64,
}

/// `n`'s terms; `n` must have capacity (a draining node uses `improvement`).
pub fn terms(loads: &Loads, n: NodeIx) -> Terms {
    let i = n as usize;
    let c = loads.capacity[i];
    assert!(c > 0.0, "terms of a node without capacity (node {n})");
    let mut t = Terms {
        linear: [0.0; DIMS],
        scale: [0.0; DIMS],
        x: loads.x[i],
        share: [0.0; DIMS],
        zone: [0.0; DIMS],
        margin: loads.margin,
    };
    for d in 0..DIMS {
        let m = loads.mean[d];
        if m > 0.0 {
            let q = loads.weights[d] / (c * m * m);
            t.scale[d] = q;
            t.share[d] = c * m;
            t.linear[d] = 2.0 * q * (loads.x[i][d] - c * m);
            if has_dead_zone(d) {
                t.zone[d] = dead_zone(loads, i, d);
            }
        }
    }
    t
}

impl Terms {
    fn penalty(&self, d: usize, x: f64) -> f64 {
        let dev = x - self.share[d];
        let beyond = (dev.abs() - self.zone[d]).max(0.0);
        self.scale[d] * beyond * beyond
    }

    /// `side` for a dead-zone dimension.
    fn side(&self, d: usize, k: f64) -> (f64, f64) {
        let x = self.x[d];
        let p = self.penalty(d, x);
        let g = p - self.penalty(d, x - k);
        if self.margin <= 0.0 {
            return (g, 0.0);
        }
        let s = 1.0 + self.margin;
        let far = p - self.penalty(d, x - s * k);
        (g, (s * g - far) / (s * self.margin))
    }
}

/// `improvement` from precomputed terms of the source `a` and the target `b`.
pub fn improvement_from(loads: &Loads, a: &Terms, b: &Terms, w: &[f64; DIMS]) -> (f64, f64) {
    let (mut gain, mut own) = (0.0, 0.0);
    for (d, &k) in w.iter().enumerate() {
        if k == 0.0 || loads.mean[d] <= 0.0 {
            continue;
        }
        if has_dead_zone(d) {
            let (ga, oa) = a.side(d, k);
            let (gb, ob) = b.side(d, -k);
            gain += ga + gb;
            own += oa + ob;
        } else {
            let sq = k * k * (a.scale[d] + b.scale[d]);
            gain += k * (a.linear[d] - b.linear[d]) - sq;
            own += sq;
        }
    }
    (gain, own)
}

/// The margin rule: the spread must drop by at least `margin` times the
/// move's own weight term. For equal capacities and one count dimension at
/// margin 1 this is Elasticsearch's rule: the source ends at or above the
/// target, so a 273/272 pair never swaps back and forth.
pub fn passes_margin(policy: &Policy, gain: f64, own: f64) -> bool {
    gain > 0.0 && gain + 1e-9 >= policy.margin * own
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::scenarios::builtin::uniform;
    use crate::planner::score::{COPIES, HISTORY};

    /// Loads of `copies` copies per node, nothing else varying.
    fn loads(copies: &[f64]) -> Loads {
        let mut l = Loads::compute(&uniform(3, 0, 3, 3), &Policy::default());
        let n = copies.len();
        l.x = copies.iter().map(|&c| [0.0, c, 0.0, 0.0]).collect();
        l.capacity = vec![1.0; n];
        l.capacity_total = n as f64;
        l.total = [0.0, copies.iter().sum(), 0.0, 0.0];
        l.mean = l.total.map(|t| t / n as f64);
        l
    }

    const ONE_COPY: [f64; DIMS] = [0.0, 1.0, 0.0, 0.0];

    #[test]
    fn a_273_272_pair_does_not_move_but_a_274_272_pair_does() {
        let p = Policy::default();
        let (g, own) = improvement(&loads(&[273.0, 272.0]), 0, 1, &ONE_COPY);
        assert!(!passes_margin(&p, g, own));
        let (g, own) = improvement(&loads(&[274.0, 272.0]), 0, 1, &ONE_COPY);
        assert!(passes_margin(&p, g, own));
    }

    #[test]
    fn improvement_equals_the_change_in_spread() {
        let mut l = loads(&[300.0, 280.0, 250.0]);
        let before = spread(&l);
        let (g, _) = improvement(&l, 0, 2, &ONE_COPY);
        l.shift(0, 2, &ONE_COPY);
        assert!((before - spread(&l) - g).abs() < 1e-12);
    }

    /// Loads where node 0 carries `hist` history weight and the others
    /// share the rest evenly (counts all equal).
    fn history_loads(hist: &[f64]) -> Loads {
        let mut l = loads(&vec![100.0; hist.len()]);
        for (row, &h) in l.x.iter_mut().zip(hist) {
            row[HISTORY] = h;
        }
        l.total[HISTORY] = hist.iter().sum();
        l.mean[HISTORY] = l.total[HISTORY] / hist.len() as f64;
        l.unit[HISTORY] = 0.5;
        l
    }

    #[test]
    fn history_inside_the_fixing_band_does_not_drive_a_move_but_beyond_it_does() {
        let p = Policy::default();
        let w = [0.0, 0.0, 0.5, 0.0];
        // Mean 50, fixing band +-1.25: 51 and 49 are inside it.
        let (g, own) = improvement(&history_loads(&[51.0, 49.0, 50.0]), 0, 1, &w);
        assert!(!passes_margin(&p, g, own), "gain {g} own {own}");
        let (g, own) = improvement(&history_loads(&[54.0, 46.0, 50.0]), 0, 1, &w);
        assert!(passes_margin(&p, g, own), "gain {g} own {own}");
    }

    #[test]
    fn improvement_equals_the_change_in_spread_with_a_dead_zone() {
        let mut l = history_loads(&[54.0, 46.0, 50.0]);
        let w = [0.0, 1.0, 0.5, 0.0];
        let before = spread(&l);
        let (g, _) = improvement(&l, 0, 1, &w);
        let (g2, _) = improvement_from(&l, &terms(&l, 0), &terms(&l, 1), &w);
        l.shift(0, 1, &w);
        assert!((before - spread(&l) - g).abs() < 1e-12);
        assert!((g - g2).abs() < 1e-12);
    }

    #[test]
    fn precomputed_terms_give_the_same_improvement() {
        let l = loads(&[300.0, 280.0, 250.0]);
        let w = [0.0, 1.0, 0.0, 0.0];
        let (g, own) = improvement(&l, 0, 2, &w);
        let (g2, own2) = improvement_from(&l, &terms(&l, 0), &terms(&l, 2), &w);
        assert!((g - g2).abs() < 1e-15 && (own - own2).abs() < 1e-15);
    }

    #[test]
    fn the_detection_band_is_cockroachdbs_5_percent_with_a_floor_of_2() {
        let p = Policy::default();
        // Mean 100: over above ceil(105), under below floor(95).
        let l = loads(&[106.0, 100.0, 94.0]);
        assert_eq!(standing(&l, &p, 0, COPIES), Standing::Over);
        assert_eq!(standing(&l, &p, 1, COPIES), Standing::Within);
        assert_eq!(standing(&l, &p, 2, COPIES), Standing::Under);
        let l = loads(&[105.0, 100.0, 95.0]);
        assert!(!out_of_band(&l, &p));
        // Mean 10: 5% is half a copy, the floor of 2 holds instead.
        let l = loads(&[12.0, 10.0, 8.0]);
        assert!(!out_of_band(&l, &p));
        let l = loads(&[13.0, 10.0, 7.0]);
        assert!(out_of_band(&l, &p));
    }
}
