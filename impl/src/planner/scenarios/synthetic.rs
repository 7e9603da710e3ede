//! Synthetic clusters: `nodes` nodes of which the last tenth (at least one)
//! just joined empty, `partitions` partitions of random size and traffic
//! placed at random on the others, three copies in three distinct racks.

use super::builtin::node;
use super::rng::Rng;
use crate::planner::error::PlanError;
use crate::planner::view::{ClusterView, NodeIx, PartitionSpec, Placement};

/// Most nodes a synthetic cluster may have (node indices are u32; beyond
/// this a plan round is no longer interactive).
pub const NODES_MAX: u32 = 100_000;
/// Most partitions a synthetic cluster may have.
pub const PARTITIONS_MAX: u32 = 10_000_000;
/// Copies per partition.
pub const RF: usize = 3;

/// Build the synthetic cluster for `nodes`, `partitions` and `seed`.
pub fn synthetic(nodes: u32, partitions: u32, seed: u64) -> Result<ClusterView, PlanError> {
    if !(4..=NODES_MAX).contains(&nodes) {
        return Err(PlanError::BadSynthetic {
            reason: format!("--nodes {nodes}: need 4 to {NODES_MAX} (three old nodes in three racks plus one new)"),
        });
    }
    if !(1..=PARTITIONS_MAX).contains(&partitions) {
        return Err(PlanError::BadSynthetic {
            reason: format!("--partitions {partitions}: need 1 to {PARTITIONS_MAX}"),
        });
    }
    let joined = (nodes / 10).max(1);
    let old = nodes - joined;
    let racks = (nodes / 10).clamp(3, 20).min(old);
    let mut rng = Rng::new(seed);
    let nodes_v = (0..nodes).map(|i| node(i % racks)).collect();
    let mut parts = Vec::with_capacity(partitions as usize);
    let mut placement = Vec::with_capacity(partitions as usize);
    for _ in 0..partitions {
        let gib = 0.1 + 1.9 * rng.unit();
        let traffic = 0.2 + 1.8 * rng.unit();
        parts.push(PartitionSpec {
            history_bytes: (gib * (1u64 << 30) as f64) as u64,
            incoming_bps: traffic * 1e6,
            traffic,
        });
        let mut copies: Vec<NodeIx> = Vec::with_capacity(RF);
        // Rejection sampling stays short: at least three racks among the old nodes.
        while copies.len() < RF {
            let c = rng.below(old);
            if copies.iter().all(|&o| o % racks != c % racks) {
                copies.push(c);
            }
        }
        placement.push(Placement {
            owner: copies[0],
            followers: copies[1..].to_vec(),
        });
    }
    Ok(ClusterView {
        nodes: nodes_v,
        partitions: parts,
        placement,
        transfers: Vec::new(),
        retained: Vec::new(),
        recovery_pending: false,
        paused: false,
        now_secs: 0.0,
    })
}
