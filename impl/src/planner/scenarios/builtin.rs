//! The built-in scenarios. Each builds a cluster and, where it needs one,
//! a history or a per-round event; the numbers come from running it.

use super::{Event, Scenario};
use crate::planner::limits::cooldown::{History, LastMove};
use crate::planner::view::{ClusterView, NodeIx, NodeSpec, PartitionSpec, Placement};

/// One GiB: every built-in partition's history.
pub const HISTORY_BYTES: u64 = 1 << 30;

/// A standard node: capacity 1, applies at 50 MB/s, copies at 100 MB/s.
pub fn node(domain: u32) -> NodeSpec {
    NodeSpec {
        domain,
        capacity: 1.0,
        apply_bps: 50e6,
        bandwidth_bps: 100e6,
        draining: false,
    }
}

/// A standard partition: 1 GiB of history, 1 MB/s in, traffic 1.
pub fn partition() -> PartitionSpec {
    PartitionSpec {
        history_bytes: HISTORY_BYTES,
        incoming_bps: 1e6,
        traffic: 1.0,
    }
}

/// `partitions` partitions with three copies each on nodes p, p+1, p+2
/// (mod `placed`), so every one of the first `placed` nodes owns and follows
/// the same number; nodes from `placed` on start empty. Node i is in
/// domain i mod `domains`.
pub fn uniform(placed: u32, extra: u32, domains: u32, partitions: u32) -> ClusterView {
    let nodes = (0..placed + extra).map(|i| node(i % domains)).collect();
    let placement = (0..partitions)
        .map(|p| Placement {
            owner: p % placed,
            followers: vec![(p + 1) % placed, (p + 2) % placed],
        })
        .collect();
    ClusterView {
        nodes,
        partitions: vec![partition(); partitions as usize],
        placement,
        transfers: Vec::new(),
        retained: Vec::new(),
        recovery_pending: false,
        paused: false,
        now_secs: 0.0,
    }
}

fn scenario(name: &'static str, about: &'static str, view: ClusterView) -> Scenario {
    let h = History::new(view.nodes.len(), view.partitions.len());
    Scenario {
        name,
        about,
        view,
        history: h,
        event: Event::None,
    }
}

/// Note 2's example: 1,000 partitions on 10 nodes, one node added.
pub fn add_one_node() -> Scenario {
    scenario(
        "add-one-node",
        "1,000 partitions (rf 3) on 10 nodes in 5 racks, one empty node joins in a sixth",
        uniform(10, 1, 5, 1000).with_domain(10, 5),
    )
}

/// Two more nodes on ten: 20% more.
pub fn add_20_percent() -> Scenario {
    scenario(
        "add-20-percent",
        "1,000 partitions on 10 nodes in 5 racks, two empty nodes join (one rack each)",
        uniform(10, 2, 5, 1000)
            .with_domain(10, 5)
            .with_domain(11, 6),
    )
}

/// Drain one node: handoffs off it first, then its follower copies.
pub fn drain_node() -> Scenario {
    let mut v = uniform(10, 0, 5, 1000);
    v.nodes[0].draining = true;
    v.nodes[0].capacity = 0.0;
    scenario(
        "drain-node",
        "1,000 partitions on 10 nodes, node 0 drained to empty",
        v,
    )
}

/// Capacities 1x, 2x, 4x holding equal counts at the start.
pub fn mixed_capacities() -> Scenario {
    let mut v = uniform(12, 0, 4, 1000);
    for (i, n) in v.nodes.iter_mut().enumerate() {
        n.capacity = [1.0, 2.0, 4.0][i % 3];
    }
    scenario(
        "mixed-capacities",
        "1,000 partitions on 12 nodes of capacity 1x/2x/4x (4 each, 4 racks), equal counts at the start",
        v,
    )
}

/// One partition carries 40 times the traffic of the others and takes
/// 60 MB/s in: only the two fast nodes could catch up on a copy of it.
pub fn hot_partition() -> Scenario {
    let mut v = uniform(10, 0, 5, 1000);
    v.partitions[0].traffic = 40.0;
    v.partitions[0].incoming_bps = 60e6;
    for n in [8, 9] {
        v.nodes[n].apply_bps = 200e6;
    }
    scenario(
        "hot-partition",
        "10 balanced nodes, partition 0 at 40x traffic and 60 MB/s in (above the 50 MB/s apply rate of 8 nodes)",
        v,
    )
}

/// Node 3 just received 30 copies from node 7: it is over the band, 7 under.
pub fn just_received() -> Scenario {
    let (to, from): (NodeIx, NodeIx) = (3, 7);
    // One rack per node: what holds node 3's copies back is the cooldown,
    // not a rack.
    let mut v = uniform(10, 0, 10, 1000);
    let mut h = History::new(10, 1000);
    let mut moved = 0;
    for p in 0..v.placement.len() {
        if moved == 30 {
            break;
        }
        let pl = &v.placement[p];
        if pl.followers.contains(&from) && !pl.holds(to) {
            let pl = &mut v.placement[p];
            let slot = pl
                .followers
                .iter()
                .position(|&f| f == from)
                .expect("follows");
            pl.followers[slot] = to;
            h.last_copy_move[p] = Some(LastMove {
                from,
                to,
                at_secs: 0.0,
            });
            moved += 1;
        }
    }
    assert_eq!(
        moved, 30,
        "the uniform placement has 30 followed copies on node 7 that node 3 lacks"
    );
    h.node_received_secs[to as usize] = Some(0.0);
    let mut s = scenario(
        "just-received",
        "10 nodes (a rack each); node 3 just received 30 copies from node 7: none leaves node 3 within its cooldown, none goes back",
        v,
    );
    s.history = h;
    s
}

/// Note 2's example with a recovery pending throughout.
pub fn recovery_pending() -> Scenario {
    let mut s = add_one_node();
    s.name = "recovery-pending";
    s.about = "add-one-node with a recovery pending somewhere in the cluster: nothing is planned";
    s.event = Event::RecoveryPending;
    s
}

/// A balanced cluster whose traffic moves +-10% every round.
pub fn steady_noise() -> Scenario {
    let mut s = scenario(
        "steady-noise",
        "10 balanced nodes, every partition's traffic redrawn within +-10% each round",
        uniform(10, 0, 5, 1000),
    );
    s.event = Event::TrafficNoise { frac: 0.1, seed: 7 };
    s
}

/// Three racks, three copies: every partition has one copy per rack, so a
/// copy can only move within its rack; one node joins each rack.
pub fn failure_domains() -> Scenario {
    scenario(
        "failure-domains",
        "1,000 partitions on 12 nodes in 3 racks (one copy per rack), one empty node joins each rack",
        uniform(12, 3, 3, 1000).with_domain(12, 0).with_domain(13, 1).with_domain(14, 2),
    )
}

impl ClusterView {
    /// Put node `n` in domain `d` (scenario building).
    pub fn with_domain(mut self, n: usize, d: u32) -> ClusterView {
        self.nodes[n].domain = d;
        self
    }
}
