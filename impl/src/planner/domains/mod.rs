//! Failure domains: no plan puts two counted copies of a partition in one
//! rack or zone when the cluster has enough domains for all of them.
//!
//! The check is on the counted set after the move: the leaving copy stops
//! counting at the swap, the same write that makes the target count, so a
//! replacement inside one rack is allowed and never doubles up.

use crate::planner::view::{ClusterView, NodeIx, PartIx};
use std::collections::BTreeSet;

/// How many distinct domains the non-draining nodes span.
pub fn domain_count(view: &ClusterView) -> usize {
    view.nodes
        .iter()
        .filter(|n| !n.draining)
        .map(|n| n.domain)
        .collect::<BTreeSet<_>>()
        .len()
}

/// Whether moving `p`'s copy from `leaving` to `target` keeps its counted
/// copies in distinct domains. `enough` says whether the cluster has a
/// domain for every copy; without that the constraint cannot hold and is
/// not applied.
pub fn move_keeps_domains(
    view: &ClusterView,
    p: PartIx,
    leaving: NodeIx,
    target: NodeIx,
    enough: bool,
) -> bool {
    if !enough {
        return true;
    }
    let d = view.nodes[target as usize].domain;
    view.placement[p as usize]
        .copies()
        .filter(|&c| c != leaving)
        .all(|c| view.nodes[c as usize].domain != d)
}

/// Partitions whose counted copies share a domain although the cluster has
/// enough domains: what must stay zero.
pub fn violations(view: &ClusterView) -> usize {
    let enough_for = domain_count(view);
    view.placement
        .iter()
        .filter(|pl| {
            let k = 1 + pl.followers.len();
            let ds: BTreeSet<u32> = pl.copies().map(|c| view.nodes[c as usize].domain).collect();
            k <= enough_for && ds.len() < k
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::scenarios::builtin::uniform;

    #[test]
    fn a_copy_may_not_join_a_domain_that_holds_another_copy_but_may_replace_one() {
        // Nodes 0..5 in domains 0, 1, 2, 0, 1, 2; partition 0 on 0, 1, 2.
        let v = uniform(3, 3, 3, 3);
        assert!(
            !move_keeps_domains(&v, 0, 1, 3, true),
            "node 3 shares domain 0 with the owner"
        );
        assert!(
            move_keeps_domains(&v, 0, 1, 4, true),
            "node 4 replaces node 1 within domain 1"
        );
        assert!(
            move_keeps_domains(&v, 0, 1, 3, false),
            "not enough domains: not applied"
        );
        assert_eq!(violations(&v), 0);
    }

    #[test]
    fn two_copies_in_one_domain_count_as_a_violation_only_when_avoidable() {
        let mut v = uniform(3, 0, 3, 3);
        v.nodes[1].domain = 0;
        assert_eq!(domain_count(&v), 2);
        assert_eq!(
            violations(&v),
            0,
            "two domains cannot hold three copies apart"
        );
        v.nodes.push(crate::planner::scenarios::builtin::node(5));
        assert_eq!(violations(&v), 3);
    }
}
