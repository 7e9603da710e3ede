//! What the TCP benchmarks share: free ports and a node hosting the one
//! partition whose record is `<root>/record.json`.

use livemove_impl::{Mutants, NodeId};
use livemove_runtime::control::FileControlPlane;
use livemove_runtime::partition::Partition;
use livemove_runtime::tcp::{PartitionConfig, TcpNode, TcpNodeConfig};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

/// The one partition the nodes host.
pub const P: Partition = Partition(0);

/// `n` free ports on 127.0.0.1, as nodes n1..n<n>.
pub fn free_ports(n: u8) -> BTreeMap<NodeId, SocketAddr> {
    let ls: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    ls.iter()
        .enumerate()
        .map(|(i, l)| (NodeId(i as u8 + 1), l.local_addr().unwrap()))
        .collect()
}

/// Node `n` on `<root>/n<n>`, untraced, with a 20 ms resend timer.
pub async fn start(root: &Path, addrs: &BTreeMap<NodeId, SocketAddr>, n: u8) -> TcpNode {
    let id = NodeId(n);
    TcpNode::start(TcpNodeConfig {
        id,
        data: root.join(format!("n{n}")),
        mutants: Mutants::NONE,
        listen: addrs[&id],
        peers: addrs.clone(),
        partitions: vec![PartitionConfig {
            partition: P,
            control: Box::new(FileControlPlane::open(root.join("record.json")).unwrap()),
            trace: None,
            step: None,
        }],
        tick: Duration::from_millis(20),
        clock: Instant::now(),
        fault_requests: false,
        crash: None,
    })
    .await
    .unwrap()
}
