//! Known divergences: disagreements traced to a simplification of the model
//! that we believe is wrong. They are reported, never hidden: each run lists
//! them apart from the unexplained ones, with their trace, and they do not
//! fail the run only because the finding is documented
//! (`docs/protocol.md`, Findings) and awaits a model change.
//!
//! [`CONFIRM_READS_ATOMICALLY`]: the model's `Confirm` reads the durable logs of
//! the counted copies and the record's suspended set at the confirm step
//! ("acknowledgements are atomic reads"), on the premise that a copy only
//! ever gains the owner's entry through `Replicate` from that owner. Three
//! reachable cases break it: a copy that receives a zombie owner's entry
//! through `InstallRecovered` (it never acknowledged it to the zombie, yet
//! the model counts it); a copy that acknowledged an entry and then lost its
//! disk (the model no longer counts an acknowledgement the owner did
//! receive); a copy that acknowledged an entry to a zombie and was then
//! suspended while the zombie is cut off from the record (the model no
//! longer counts it). The implementation counts the acknowledgements it
//! received, against the record as it last saw it. A confirm divergence is
//! this one only if the model's own confirm rule, evaluated on the
//! implementation's acknowledgements (and, while a recovery is pending, the
//! zombie's view of the suspended set) instead of reads, predicts exactly
//! what the implementation did, and every acknowledgement it used is still
//! true of the copy's disk or comes from a disk that is gone.
//!
use crate::driver::to_impl;
use livemove_impl::{Cluster, StorageId};
use livemove_model::state::State;
use livemove_model::{Action, MoveModel};

/// The model counts disk content where the implementation counts acknowledgements.
pub const CONFIRM_READS_ATOMICALLY: &str = "confirm-reads-atomically";

/// The known divergence that explains a disagreement on `a` from model
/// state `s`, given the implementation after the step.
pub fn classify(m: &MoveModel, s: &State, a: Action, c: &Cluster) -> Option<&'static str> {
    let Action::Confirm { node } = a else {
        return None;
    };
    let predicted = confirm_on_acks(m, s, node, c)?;
    let done = c.nodes()[node as usize]
        .serving()
        .map(|sv| sv.confirmed_tail())?;
    (u64::from(predicted) == done).then_some(CONFIRM_READS_ATOMICALLY)
}

/// The model's confirm rule for owner `n` in `s`, with evidence from the
/// implementation owner's acknowledgements.
fn confirm_on_acks(m: &MoveModel, s: &State, n: u8, c: &Cluster) -> Option<u8> {
    let nd = &s.nodes[n as usize];
    let sv = nd.serving;
    if !sv.active {
        return None;
    }
    let node = &c.nodes()[n as usize];
    let isv = node.serving()?;
    let own = node.replica();
    let mut counted = m.counted_for_confirm(s, n);
    if s.record.recovery.pending {
        // A zombie is cut off from the record: it counts against the
        // suspended set it last saw.
        counted = sv.counted;
        for x in &isv.view().suspended {
            counted = counted.without(crate::abstraction::slot(*x));
        }
    }
    let w = m.effective_w(s, n);
    let mut p = nd.log.len;
    while p > sv.confirmed {
        if nd.log.at(p).epoch() == sv.epoch {
            let mut copies = 1u8;
            for x in counted.iter().filter(|x| *x != s.slot(n)) {
                let sid = StorageId {
                    node: to_impl(x.node()),
                    disk: u32::from(x.gen()),
                };
                if isv.covered(own, sid) < u64::from(p) {
                    continue;
                }
                let true_of_disk =
                    s.current(x) && m.covers(&s.nodes[x.node() as usize].log, &nd.log, p);
                if !true_of_disk && s.current(x) {
                    // A stale acknowledgement: not this known divergence.
                    return None;
                }
                copies += 1;
            }
            if copies >= w {
                return Some(p);
            }
        }
        p -= 1;
    }
    Some(sv.confirmed)
}
