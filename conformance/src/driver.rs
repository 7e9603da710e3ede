//! The driver: one function per model action, each calling the
//! implementation's in-memory cluster.
//!
//! Node ids: the model numbers nodes from 0 (printed `n1`), the
//! implementation from 1 (`NodeId(1)` is `n1`). [`to_impl`] and [`to_model`]
//! are the only places the two meet.

use crate::messages::to_impl_msg;
use livemove_impl::{
    Cluster, ClusterConfig, ClusterError, Mutant as ImplMutant, NodeId, Outcome, ProducerId,
};
use livemove_model::types::{ClientId as ModelClient, NodeId as ModelNode};
use livemove_model::{Action, Cfg, Mutant};

/// What one driven action returned.
pub type Driven = Result<Outcome, ClusterError>;

/// Model node index to implementation node id.
pub fn to_impl(n: ModelNode) -> NodeId {
    NodeId(n + 1)
}

/// Implementation node id to model node index.
pub fn to_model(n: NodeId) -> ModelNode {
    assert!(n.0 >= 1, "implementation node ids are 1-based, got {n}");
    n.0 - 1
}

/// The implementation's switch for a model mutant (the two zoos share names).
pub fn impl_mutant(m: Mutant) -> ImplMutant {
    m.name()
        .parse()
        .unwrap_or_else(|_| panic!("the implementation has no mutant `{m}`"))
}

/// A fresh cluster shaped like `cfg` (nodes, initial rf, networked
/// delivery when the config has messages in flight), with the
/// implementation mutant `mutant` switched on. The controller's plan holds
/// the config's planned moves (follower moves and rf increases): the
/// model's budget `learner_adds < moves + rf_increases + retries` is that
/// plan, which the implementation keeps itself. A config with a client
/// (`client_hops` > 0) gets the implementation's client of the queue with
/// that hop limit, which the implementation keeps itself too.
pub fn cluster_for(cfg: &Cfg, mutant: Option<Mutant>) -> Cluster {
    let config = if cfg.net {
        ClusterConfig::networked(cfg.nodes, cfg.rf)
    } else {
        ClusterConfig::atomic(cfg.nodes, cfg.rf)
    };
    let mut c = Cluster::new(config).with_planned_moves(cfg.moves + cfg.rf_increases);
    if cfg.client_hops > 0 {
        c = c.with_clients(cfg.client_hops, cfg.clients);
    }
    match mutant {
        Some(m) => c.with_mutant(impl_mutant(m)),
        None => c,
    }
}

/// Drive one model action against the cluster.
pub fn step(c: &mut Cluster, a: Action) -> Driven {
    match a {
        Action::ReportProgress { from, of } => report_progress(c, from, of),
        Action::Deliver { msg } => c.deliver(&to_impl_msg(&msg)),
        Action::Drop { msg } => c.drop_msg(&to_impl_msg(&msg)),
        Action::Duplicate { msg } => c.duplicate(&to_impl_msg(&msg)),
        Action::Publish { node } => publish(c, node),
        Action::Replicate { from, to } => replicate(c, from, to),
        Action::Confirm { node } => confirm(c, node),
        Action::AddLearner { target } => add_learner(c, target),
        Action::AdmitLearner { target } => admit_learner(c, target),
        Action::Swap { target, leaving } => swap(c, target, leaving),
        Action::OwnerSwitch => owner_switch(c),
        Action::RemoveLeaving => remove_leaving(c),
        Action::CancelMove => cancel_move(c),
        Action::AbortMove => c.abort_move(),
        Action::SwapBack => c.swap_back(),
        Action::PromoteLearner { target } => promote_learner(c, target),
        Action::CloseAdmission { to } => close_admission(c, to),
        Action::ReportFinalBoundary => report_final_boundary(c),
        Action::CommitHandoff => commit_handoff(c),
        Action::ActivateOwner => activate_owner(c),
        Action::CancelHandoff => cancel_handoff(c),
        Action::AbortHandoff => c.abort_handoff(),
        Action::Crash { node } => crash(c, node),
        Action::Restart { node, fresh_disk } => restart(c, node, fresh_disk),
        Action::Rejoin { node } => rejoin(c, node),
        Action::NoticeRejoin { node } => notice_rejoin(c, node),
        Action::NoticeReadmission { node } => notice_readmission(c, node),
        Action::OpenRecovery { zombie } => open_recovery(c, zombie),
        Action::Seal { node } => seal(c, node),
        Action::InstallRecovered { node } => install_recovered(c, node),
        Action::ActivateRecovery { candidate } => activate_recovery(c, candidate),
        Action::Truncate { node } => truncate(c, node),
        Action::InstallCheckpoint { from, to } => install_checkpoint(c, from, to),
        Action::RetryPublish { node } => retry_publish(c, node),
        Action::ClientPublish { client } => c.client_publish(producer(client)),
        Action::ClientRetry { client } => c.client_retry(producer(client)),
        Action::AnswerClient { client } => c.answer_client(producer(client)),
        Action::AckClient { client } => c.ack_client(producer(client)),
        Action::ClientTimeout { client } => c.client_timeout(producer(client)),
        Action::Settle { node } => settle(c, node),
    }
}

/// `ReportProgress{from, of}`.
pub fn report_progress(c: &mut Cluster, from: ModelNode, of: ModelNode) -> Driven {
    c.report_progress(to_impl(from), to_impl(of))
}

/// `Publish{node}`.
pub fn publish(c: &mut Cluster, node: ModelNode) -> Driven {
    c.publish(to_impl(node))
}

/// `RetryPublish{node}`.
pub fn retry_publish(c: &mut Cluster, node: ModelNode) -> Driven {
    c.retry_publish(to_impl(node))
}

/// The model's client `k` (0-based, `c1` first) as the implementation's
/// producer id (1-based). The five client actions go to the cluster's
/// methods of the same names with it: `ClientPublish` (the budget is the
/// harness's), `ClientRetry` (so is the retry budget), `AnswerClient`,
/// `AckClient` and `ClientTimeout` (when is the harness's choice: the node
/// is down, or the answer or acknowledgement is late).
pub fn producer(k: ModelClient) -> ProducerId {
    ProducerId(k + 1)
}

/// `Settle{node}`: the consumer settles the oldest message `node`
/// delivered (the settle budget is the harness's).
pub fn settle(c: &mut Cluster, node: ModelNode) -> Driven {
    c.settle(to_impl(node))
}

/// `Replicate{from, to}`.
pub fn replicate(c: &mut Cluster, from: ModelNode, to: ModelNode) -> Driven {
    c.replicate(to_impl(from), to_impl(to))
}

/// `Confirm{node}`.
pub fn confirm(c: &mut Cluster, node: ModelNode) -> Driven {
    c.confirm(to_impl(node))
}

/// `AddLearner{target}`.
pub fn add_learner(c: &mut Cluster, target: ModelNode) -> Driven {
    c.add_learner(to_impl(target))
}

/// `AdmitLearner{target}`.
pub fn admit_learner(c: &mut Cluster, target: ModelNode) -> Driven {
    c.admit_learner(to_impl(target))
}

/// `Swap{target, leaving}`.
pub fn swap(c: &mut Cluster, target: ModelNode, leaving: ModelNode) -> Driven {
    c.swap(to_impl(target), to_impl(leaving))
}

/// `OwnerSwitch`.
pub fn owner_switch(c: &mut Cluster) -> Driven {
    c.owner_switch()
}

/// `RemoveLeaving`.
pub fn remove_leaving(c: &mut Cluster) -> Driven {
    c.remove_leaving()
}

/// `CancelMove`: the operator's request (its budget is the harness's).
pub fn cancel_move(c: &mut Cluster) -> Driven {
    c.cancel_move()
}

/// `PromoteLearner{target}`.
pub fn promote_learner(c: &mut Cluster, target: ModelNode) -> Driven {
    c.promote_learner(to_impl(target))
}

/// `CloseAdmission{to}`.
pub fn close_admission(c: &mut Cluster, to: ModelNode) -> Driven {
    c.close_admission(to_impl(to))
}

/// `ReportFinalBoundary`.
pub fn report_final_boundary(c: &mut Cluster) -> Driven {
    c.report_final_boundary()
}

/// `CommitHandoff`.
pub fn commit_handoff(c: &mut Cluster) -> Driven {
    c.commit_handoff()
}

/// `ActivateOwner`.
pub fn activate_owner(c: &mut Cluster) -> Driven {
    c.activate_owner()
}

/// `CancelHandoff`.
pub fn cancel_handoff(c: &mut Cluster) -> Driven {
    c.cancel_handoff()
}

/// `Crash{node}`.
pub fn crash(c: &mut Cluster, node: ModelNode) -> Driven {
    c.crash(to_impl(node))
}

/// `Restart{node, fresh_disk}`.
pub fn restart(c: &mut Cluster, node: ModelNode, fresh_disk: bool) -> Driven {
    c.restart(to_impl(node), fresh_disk)
}

/// `Rejoin{node}`.
pub fn rejoin(c: &mut Cluster, node: ModelNode) -> Driven {
    c.rejoin(to_impl(node))
}

/// `NoticeRejoin{node}`: the copy reads the record and learns of its
/// re-admission (messages in flight only).
pub fn notice_rejoin(c: &mut Cluster, node: ModelNode) -> Driven {
    c.notice_rejoin(to_impl(node))
}

/// `NoticeReadmission{node}`: the record's owner reads the record and
/// unmutes the copies it re-admitted (messages in flight only; finding 35).
pub fn notice_readmission(c: &mut Cluster, node: ModelNode) -> Driven {
    c.notice_readmission(to_impl(node))
}

/// `OpenRecovery{zombie}`. Whether the owner crashed or is only suspected
/// is the failure detector's truth, which the harness plays: the
/// implementation's controller opens the same recovery either way.
pub fn open_recovery(c: &mut Cluster, _zombie: bool) -> Driven {
    c.open_recovery()
}

/// `Seal{node}`.
pub fn seal(c: &mut Cluster, node: ModelNode) -> Driven {
    c.seal(to_impl(node))
}

/// `InstallRecovered{node}`.
pub fn install_recovered(c: &mut Cluster, node: ModelNode) -> Driven {
    c.install_recovered(to_impl(node))
}

/// `Truncate{node}`: the owner checkpoints at its confirmed tail (the
/// truncation budget is the harness's).
pub fn truncate(c: &mut Cluster, node: ModelNode) -> Driven {
    c.truncate(to_impl(node))
}

/// `InstallCheckpoint{from, to}`.
pub fn install_checkpoint(c: &mut Cluster, from: ModelNode, to: ModelNode) -> Driven {
    c.install_checkpoint(to_impl(from), to_impl(to))
}

/// `ActivateRecovery{candidate}`.
pub fn activate_recovery(c: &mut Cluster, candidate: ModelNode) -> Driven {
    c.activate_recovery(to_impl(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_map_both_ways() {
        for n in 0..5u8 {
            assert_eq!(to_model(to_impl(n)), n);
        }
        assert_eq!(to_impl(0), NodeId(1));
    }
}
