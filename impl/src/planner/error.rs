//! Errors of the planner's API boundary: a view that cannot be planned on
//! names what is wrong and where.

use crate::planner::view::{NodeIx, PartIx};

/// Why a view, a scenario or a synthetic cluster was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The view has no nodes.
    #[error("the cluster has no nodes")]
    NoNodes,
    /// `placement` and `partitions` differ in length.
    #[error("{placement} placements for {partitions} partitions")]
    PlacementLength {
        /// Placements given.
        placement: usize,
        /// Partitions given.
        partitions: usize,
    },
    /// A node's capacity or rates are out of range.
    #[error("node {node}: {reason}")]
    BadNode {
        /// The node.
        node: NodeIx,
        /// What is wrong.
        reason: &'static str,
    },
    /// A placement names a node that does not exist.
    #[error("partition {partition}: no node {node}")]
    UnknownNode {
        /// The partition.
        partition: PartIx,
        /// The node named.
        node: NodeIx,
    },
    /// A transfer names a partition that does not exist.
    #[error("transfer of unknown partition {partition}")]
    UnknownPartition {
        /// The partition named.
        partition: PartIx,
    },
    /// A node holds two copies of one partition.
    #[error("partition {partition}: node {node} holds two copies")]
    DuplicateCopy {
        /// The partition.
        partition: PartIx,
        /// The node.
        node: NodeIx,
    },
    /// A transfer's target already holds a copy, or its leaving node is not a follower.
    #[error("partition {partition}: transfer to {target} replacing {leaving} does not fit the placement")]
    BadTransfer {
        /// The partition.
        partition: PartIx,
        /// The joining node.
        target: NodeIx,
        /// The leaving node.
        leaving: NodeIx,
    },
    /// Two transfers of one partition (the protocol runs one move at a time).
    #[error("partition {partition}: two transfers in flight")]
    TwoTransfers {
        /// The partition.
        partition: PartIx,
    },
    /// No built-in scenario has this name.
    #[error("unknown scenario `{name}`; known: {known}")]
    UnknownScenario {
        /// The name given.
        name: String,
        /// The names there are.
        known: String,
    },
    /// A synthetic cluster's parameters are out of range.
    #[error("synthetic cluster: {reason}")]
    BadSynthetic {
        /// What is wrong.
        reason: String,
    },
}
