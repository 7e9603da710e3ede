//! The bug zoo run by the model checker: each mutant on the configuration
//! that shows it, caught only by an outcome property (a lost or forked
//! confirm, a stale owner's confirm, an unreachable outcome the correct
//! protocol reaches, a stuck move, handoff or recovery).

use crate::checker::{self, Options, Report};
use crate::config::Cfg;
use crate::mutant::Mutant;
use crate::properties::Class;
use crate::protocol::MoveModel;
use std::time::Instant;

/// The configuration on which each mutant is checked.
pub fn config_for(m: Mutant) -> &'static str {
    match m {
        Mutant::WFromAssignment => "rf-increase",
        Mutant::LearnerCounts => "join-and-move",
        Mutant::SwapBeforeAdmission => "join-and-move",
        Mutant::RemoveBeforeBoundary => "join-and-move",
        Mutant::RecoveryKeepsMove => "recovery-during-move",
        Mutant::HandoffWithoutBarrier => "handoff",
        Mutant::NoSealFencing => "zombie-recovery",
        Mutant::SmallSealQuorum => "zombie-recovery",
        Mutant::PromoteWithoutCatchup => "rf-increase",
        Mutant::RejoinCountsEarly => "restart-rejoin",
        Mutant::StorageIdentityIgnored => "fresh-disk-zombie",
        Mutant::SealWithNewW => "rf-increase",
        Mutant::CoversByLength => "lost-follower-replaced",
        Mutant::AdoptWBeforeCatchup => "rf-increase",
        Mutant::NoSwapBack => "target-lost-after-swap",
        Mutant::ReceiptsSkipSuspended => "suspended-during-recovery",
        Mutant::RestartCountsOwnSuspension => "crashes-rf3",
        Mutant::NoRetryAfterCancel => "retry-after-recovery",
        Mutant::NoReplacement => "lost-follower-replaced",
        Mutant::LearnerKeepsOldEpoch => "learner-after-two-recoveries",
        Mutant::StaleAckCounts => "suspended-during-recovery-net",
        Mutant::DuplicateAppendAppliesTwice => "handoff-net",
        Mutant::RefusalIgnored => "handoff-net",
        Mutant::StaleProgressAdmits => "disk-lost-replaced-net",
        Mutant::ActivationForgetsReceipts => "target-becomes-owner-net",
        Mutant::SwapBackOfOwner => "recovery-during-move-net-small",
        Mutant::ReportWindowIgnoresRefusal => "target-becomes-owner-net",
        Mutant::TruncateBeforeConfirm => "retention-faults",
        Mutant::CheckpointOverwritesNewer => "retention",
        Mutant::CheckpointWithoutEpochTag => "retention-faults",
        Mutant::RetryWithoutProducerId => "publish-retry",
        Mutant::OldOwnerServesAfterCommit => "handoff",
        Mutant::AskUpdatesRoute => "client-handoff",
        Mutant::NoHopLimit => "client-handoff",
        Mutant::AckBeforeConfirm => "client-recovery",
        Mutant::ReplayAcceptsGap => "retention",
        Mutant::SettleAckedBeforeConfirm => "settle-recovery",
        Mutant::HandoffKeepsStaleTail => "zombie-handed-back",
        Mutant::RecoveryTrustsLastTag => "three-recoveries",
        Mutant::OwnerIgnoresReadmission => "readmitted-silent-net",
    }
}

#[derive(Clone, Debug)]
pub struct ZooRow {
    pub mutant: Mutant,
    pub config: Option<&'static str>,
    /// The outcome property the mutant violates (shortest counterexample first).
    pub property: Option<&'static str>,
    /// Counterexample length; `None` for an unreached outcome.
    pub len: Option<usize>,
}

impl ZooRow {
    pub fn caught(&self) -> bool {
        self.property.is_some()
    }
}

pub struct Zoo {
    pub correct_passes: bool,
    pub rows: Vec<ZooRow>,
    pub seconds: f64,
}

/// The zoo's rule over (property, counterexample length) candidates: the
/// shortest counterexample, else an unreached outcome (no length); the first
/// in report order on a tie.
pub fn shortest(
    candidates: impl IntoIterator<Item = (&'static str, Option<usize>)>,
) -> Option<(&'static str, Option<usize>)> {
    let mut best: Option<(&'static str, Option<usize>)> = None;
    for (name, len) in candidates {
        let better = match (best, len) {
            (None, _) | (Some((_, None)), Some(_)) => true,
            (Some((_, Some(b))), Some(l)) => l < b,
            _ => false,
        };
        if better {
            best = Some((name, len));
        }
    }
    best
}

/// The outcome property a mutant's report is caught by, under the zoo's rule.
pub fn outcome_of(r: &Report) -> Option<(&'static str, Option<usize>)> {
    shortest(
        r.results
            .iter()
            .filter(|p| p.class == Class::Outcome && !p.ok())
            .map(|p| (p.name, p.path.as_ref().map(|x| x.steps.len()))),
    )
}

/// The rule property a rule-only mutant's report is caught by: a violated
/// rule while every outcome property holds (were an outcome harmed, the
/// mutant would not be rule-only, and this says nothing).
pub fn rule_of(r: &Report) -> Option<(&'static str, Option<usize>)> {
    if outcome_of(r).is_some() {
        return None;
    }
    shortest(
        r.results
            .iter()
            .filter(|p| p.class == Class::Rule && !p.ok())
            .map(|p| (p.name, p.path.as_ref().map(|x| x.steps.len()))),
    )
}

/// Check one mutant on its configuration.
pub fn check_mutant(mutant: Mutant) -> ZooRow {
    let name = config_for(mutant);
    let m = MoveModel::new(Cfg::named(name).with_mutant(Some(mutant)));
    let r = checker::check(&m, Options::default());
    let best = if mutant.rule_only() {
        rule_of(&r)
    } else {
        outcome_of(&r)
    };
    ZooRow {
        mutant,
        config: Some(name),
        property: best.map(|b| b.0),
        len: best.and_then(|b| b.1),
    }
}

/// Run the whole zoo, and the correct protocol on every config it uses.
pub fn run(progress: &mut dyn FnMut(&str)) -> Zoo {
    let start = Instant::now();
    let mut configs: Vec<&str> = Mutant::ALL.iter().map(|m| config_for(*m)).collect();
    configs.sort();
    configs.dedup();
    let mut correct_passes = true;
    for c in configs {
        let r = checker::check(&MoveModel::new(Cfg::named(c)), Options::default());
        progress(&format!(
            "correct protocol on {c}: {}",
            if r.passed() { "passes" } else { "FAILS" }
        ));
        correct_passes &= r.passed();
    }
    let rows = Mutant::ALL
        .iter()
        .map(|m| {
            let row = check_mutant(*m);
            progress(&format!("{m}: {}", row.property.unwrap_or("MISSED")));
            row
        })
        .collect();
    Zoo {
        correct_passes,
        rows,
        seconds: start.elapsed().as_secs_f64(),
    }
}
