//! Production-style implementation of live replica moves for one replicated
//! queue partition: a deterministic, `Clone`, sans-IO core.
//!
//! No clock, no randomness and no I/O inside: time and ids are inputs,
//! durable changes are outputs (`replica::Persist`, `store::RecordStorage`).
//!
//! - `store`: the coordination record and its guarded writes, durable behind
//!   `RecordStorage` (in memory or an fsynced file), resumable by phase.
//! - `replica`: a storage instance's log with epoch tags, fencing, sealing,
//!   truncation of divergent suffixes; retention: a checkpoint base, taking
//!   and installing checkpoints, which is note 2's `Target` (the state a
//!   checkpoint carries, its checksum, gap-rejecting idempotent replay).
//! - `owner`: admission, publish, the confirm path, switch and final boundaries.
//! - `recovery`, `handoff`: the rules those drivers share.
//! - `routing`: client topology cache, MOVED/ASK, hop limit, deadline, and
//!   how a node answers a routed request.
//! - `operator`: pause/resume, list/request/cancel moves.
//! - `planner`: the rebalance planner over many partitions: load scores,
//!   band, limits, cooldowns, failure domains, lower bounds, scenarios.
//! - `net`: the messages (append, ack, refuse, suspend, progress) and
//!   the multiset of messages in flight.
//! - `controller`: what the controller knows of progress: the owner's
//!   reports, taken at the record's epoch.
//! - `cluster`: an in-memory cluster with one method per shared action, the
//!   surface conformance drives; atomic delivery, or a router whose
//!   messages in flight a driver delivers, drops and duplicates; a client
//!   of the queue that publishes through MOVED and ASK (`with_client`).
//! - `mutant`: the bug zoo, off by default.
//!
//! Action names in tracing spans and events are the shared vocabulary
//! (`publish`, `replicate`, `confirm`, `add_learner`, ... `activate_recovery`).
//!
//! ```
//! use livemove_impl::{Cluster, ClusterConfig, NodeId, Outcome};
//!
//! let mut c = Cluster::new(ClusterConfig::atomic(4, 3));
//! c.publish(NodeId(1)).unwrap();
//! c.replicate(NodeId(1), NodeId(2)).unwrap();
//! assert_eq!(c.confirm(NodeId(1)).unwrap(), Outcome::Confirmed { tail: 1 });
//! // A refused action names its precondition and changes nothing.
//! let before = c.snapshot();
//! assert!(c.remove_leaving().is_err());
//! assert_eq!(c.snapshot(), before);
//! ```
//!
//! With messages in flight the driver is the network:
//!
//! ```
//! use livemove_impl::{Cluster, ClusterConfig, Msg, NodeId, Outcome};
//!
//! let mut c = Cluster::new(ClusterConfig::networked(4, 3));
//! c.publish(NodeId(1)).unwrap();
//! let Outcome::Sent { msg: append } = c.replicate(NodeId(1), NodeId(2)).unwrap() else {
//!     unreachable!()
//! };
//! c.duplicate(&append).unwrap();
//! let Outcome::Delivered { reply: Some(ack), .. } = c.deliver(&append).unwrap() else {
//!     unreachable!()
//! };
//! assert!(matches!(ack, Msg::Ack { pos: 1, admitted: true, .. }));
//! // The second copy is recognised: the replica still holds one entry.
//! c.deliver(&append).unwrap();
//! assert_eq!(c.node(NodeId(2)).unwrap().replica().len(), 1);
//! // Nothing counts until the acknowledgement arrives.
//! assert!(c.confirm(NodeId(1)).is_err());
//! c.deliver(&ack).unwrap();
//! assert_eq!(c.confirm(NodeId(1)).unwrap(), Outcome::Confirmed { tail: 1 });
//! // A message that is not in flight is refused.
//! assert!(c.deliver(&append).is_err());
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cluster;
pub mod controller;
pub mod entry;
pub mod handoff;
pub mod ids;
pub mod mutant;
pub mod net;
pub mod operator;
pub mod owner;
pub mod planner;
pub mod recovery;
pub mod replica;
pub mod routing;
pub mod store;

pub use cluster::{Cluster, ClusterConfig, ClusterError, ClusterState, Delivery, Outcome};
pub use entry::{Entry, Op};
pub use ids::{write_quorum, Epoch, NodeId, Position, ProducerId, StorageId, Version};
pub use mutant::{Mutant, Mutants};
pub use net::{Endpoint, InFlight, Msg, NetError};

// A harness may drive clusters from several threads.
const _: fn() = || {
    fn send_sync<T: Send + Sync + Clone + 'static>() {}
    send_sync::<Cluster>();
};
