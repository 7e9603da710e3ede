//! Eager writes (`SimConfig::eager_writes`): a writer acting on stale or
//! early knowledge. A real controller or owner acts on a record it read a
//! while ago, or on a report that is out of date; the store's guard is the
//! net that must refuse what the record no longer allows. At some
//! fault-phase steps the simulator makes one guarded write the nodes would
//! make only once its guard held, without checking the guard first, with
//! arguments a stale controller would take from the current record:
//!
//! - a recovery is pending: a node the record assigns nothing joins as a
//!   move's learner (`AddLearner`, its own write, as `Node::join`), as a
//!   planner that read the record before the recovery opened;
//! - a move's learner: `AdmitLearner`, or `Swap` skipping the admission;
//! - an admitted learner: `Swap`;
//! - a swapped or switched move: `RemoveLeaving`, before the owner's
//!   switch or before the target covers its boundary;
//! - a suspended copy: `Rejoin`.
//!
//! The facts a write names (a copy's durable prefix, the owner's confirmed
//! tail) are those of the record's owner serving at the record's epoch, as
//! its acknowledgements say at that step, and only as a progress report
//! carries them: a copy's progress is reported once it holds the owner's
//! confirmed tail (the spec's `known`; the owner's own writes wait for the
//! same), so a copy behind it is named as holding nothing. The writer is
//! early, never lying. With no such owner only the join is tried. A write the store
//! takes is traced as the same event the node's own write is (the shared
//! vocabulary), so a correct run's trace still validates; a refused one
//! changed nothing and is not traced. The correct store refuses or takes a
//! legitimate write; a mutant that relaxes a guard lets a bad write
//! through, and the run's checks or the trace validator must catch it.

use super::Sim;
use crate::control::{ControlError, ControlPlane, FileControlPlane};
use crate::node::NodeError;
use crate::trace::Event;
use livemove_impl::store::{MovePhase, Record, Write};
use livemove_impl::NodeId;

/// Percent of fault-phase steps that try an eager write, while any of the
/// run's `eager_writes` is left.
pub const EAGER_PCT: u64 = 3;

/// One eager write the record makes plausible.
enum Attempt {
    /// A free node on `usize` joins as a learner.
    Join(usize),
    /// A write of the control plane's, and the event it is traced as.
    Write(Write, Event),
}

impl Sim<'_> {
    /// Whether the run has eager writes left to try.
    pub(super) fn eager_left(&self) -> bool {
        self.eager_attempts < self.cfg.eager_writes
    }

    /// Try one eager write, if the record makes one plausible (else
    /// nothing, and none of the run's eager writes is spent).
    pub(super) fn eager_write(&mut self) -> Result<(), NodeError> {
        let record = self.read_record()?;
        let candidates = self.eager_candidates(&record);
        if candidates.is_empty() {
            return Ok(());
        }
        let pick = self.world.rng.below(candidates.len() as u64) as usize;
        let attempt = candidates
            .into_iter()
            .nth(pick)
            .expect("the pick is below the count");
        self.eager_attempts += 1;
        match attempt {
            Attempt::Join(i) => {
                let node = self.nodes[i]
                    .as_mut()
                    .expect("invariant broken: a join candidate is down");
                if node.join(&mut self.world)? {
                    self.eager_accepted += 1;
                }
            }
            Attempt::Write(w, event) => {
                let mut cp =
                    FileControlPlane::open(&self.store).map_err(|source| NodeError::Control {
                        node: NodeId(1),
                        source,
                    })?;
                cp.set_mutants(self.cfg.mutants);
                match cp.write(record.version, &w) {
                    Ok(_) => {
                        self.eager_accepted += 1;
                        self.world.trace_event(event);
                    }
                    Err(ControlError::Refused { .. }) => {}
                    Err(source) => {
                        return Err(NodeError::Control {
                            node: NodeId(1),
                            source,
                        })
                    }
                }
            }
        }
        Ok(())
    }

    /// The writes a stale writer might try on `r`.
    fn eager_candidates(&self, r: &Record) -> Vec<Attempt> {
        let mut out = Vec::new();
        if r.recovery.is_some() {
            for (i, n) in self.nodes.iter().enumerate() {
                if n.as_ref()
                    .is_some_and(|n| !n.is_restarting() && !r.is_assigned(n.storage()))
                {
                    out.push(Attempt::Join(i));
                }
            }
        }
        // The facts: the record's owner, serving at the record's epoch.
        let Some((s, own)) = self.nodes[r.owner.node.index()]
            .as_ref()
            .filter(|n| n.storage() == r.owner)
            .and_then(|n| n.serving().map(|s| (s, n.replica())))
            .filter(|(s, _)| s.epoch() == r.epoch)
        else {
            return out;
        };
        let owner_confirmed = s.confirmed_tail();
        // What a report says of `copy`: its progress, once it holds the
        // owner's confirmed tail; nothing before.
        let reported = |copy| match s.covered(own, copy) {
            d if d >= owner_confirmed => d,
            _ => 0,
        };
        if let Some(m) = r.move_task.as_ref().filter(|m| !m.promotion) {
            let durable = reported(m.target);
            let target = m.target.node;
            let swap = crate::node::swap_leaving(r, m).map(|leaving| {
                Attempt::Write(
                    Write::Swap {
                        target: m.target,
                        leaving,
                        durable,
                        owner_confirmed,
                    },
                    Event::Swap {
                        target,
                        leaving: leaving.node,
                    },
                )
            });
            match m.phase {
                MovePhase::Learner => {
                    out.push(Attempt::Write(
                        Write::AdmitLearner {
                            target: m.target,
                            durable,
                            owner_confirmed,
                        },
                        Event::AdmitLearner { node: target },
                    ));
                    out.extend(swap);
                }
                MovePhase::Admitted => out.extend(swap),
                MovePhase::Swapped | MovePhase::Switched => {
                    if let Some(l) = r.leaving {
                        out.push(Attempt::Write(
                            Write::RemoveLeaving {
                                target_durable: durable,
                            },
                            Event::RemoveLeaving { node: l.node },
                        ));
                    }
                }
            }
        }
        for copy in &r.suspended {
            out.push(Attempt::Write(
                Write::Rejoin {
                    storage: *copy,
                    durable: reported(*copy),
                    owner_confirmed,
                },
                Event::Rejoin { node: copy.node },
            ));
        }
        out
    }
}
