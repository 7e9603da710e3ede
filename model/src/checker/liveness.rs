//! Acyclicity of the reachable state graph, by Kahn's algorithm.
//!
//! The `eventually` properties are checked on terminal states. That is sound
//! only if every maximal path is finite, i.e. the reachable graph has no
//! cycle; the budgets are meant to guarantee it, and this check makes sure.

use super::edges::EdgeStream;
use std::io;

/// The reachable graph as a compressed adjacency list: the successors of
/// state `i` are `targets[ends[i - 1]..ends[i]]` (from 0 for state 0).
#[derive(Default)]
pub(crate) struct Graph {
    pub targets: Vec<u32>,
    pub ends: Vec<usize>,
}

impl Graph {
    fn successors(&self, i: usize) -> &[u32] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.targets[start..self.ends[i]]
    }
}

/// A state on a cycle, if the reachable graph has one: the smallest state
/// Kahn's algorithm cannot remove.
pub(crate) fn find_cycle(g: &Graph) -> Option<u32> {
    kahn_remaining(g).first().copied()
}

/// The states Kahn's algorithm cannot remove from `g` (those on a cycle and
/// those a cycle reaches), in index order.
fn kahn_remaining(g: &Graph) -> Vec<u32> {
    let n = g.ends.len();
    let mut indegree = vec![0u32; n];
    for &j in &g.targets {
        indegree[j as usize] += 1;
    }
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&i| indegree[i as usize] == 0)
        .collect();
    while let Some(i) = queue.pop() {
        indegree[i as usize] = REMOVED;
        for &j in g.successors(i as usize) {
            indegree[j as usize] -= 1;
            if indegree[j as usize] == 0 {
                queue.push(j);
            }
        }
    }
    (0..n as u32)
        .filter(|&i| indegree[i as usize] != REMOVED)
        .collect()
}

/// Marks a state Kahn's algorithm has removed.
const REMOVED: u32 = u32::MAX;

/// The cyclic core of a graph: the states Kahn's algorithm cannot remove
/// (those on a cycle and those a cycle reaches), sorted by index, and the
/// edges among them in local indices (every successor of a core state is in
/// the core).
pub(crate) struct Core {
    pub states: Vec<u32>,
    pub graph: Graph,
}

impl Core {
    /// The core of `g` given the states left by Kahn's algorithm.
    fn of(g: &Graph, states: Vec<u32>) -> Core {
        let local = |j: u32| {
            states
                .binary_search(&j)
                .expect("a core state's successor is in the core")
        };
        let mut graph = Graph::default();
        for &i in &states {
            graph
                .targets
                .extend(g.successors(i as usize).iter().map(|&j| local(j) as u32));
            graph.ends.push(graph.targets.len());
        }
        Core { states, graph }
    }

    /// A state on a cycle all of whose states satisfy `keep` (indexed like
    /// `states`), as an index of the whole graph: the smallest such, or
    /// `None` if every cycle leaves `keep` somewhere. States of the induced
    /// subgraph are pruned from both ends (no kept predecessor left, no kept
    /// successor left) until only cycles and the paths between them remain.
    pub fn cycle_within(&self, keep: &[bool]) -> Option<u32> {
        let n = self.states.len();
        let mut alive = keep.to_vec();
        let mut indeg = vec![0u32; n];
        let mut outdeg = vec![0u32; n];
        for i in (0..n).filter(|&i| alive[i]) {
            for &j in self.graph.successors(i) {
                if alive[j as usize] {
                    indeg[j as usize] += 1;
                    outdeg[i] += 1;
                }
            }
        }
        // Predecessor lists of the kept subgraph, for pruning from the end.
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        for i in (0..n).filter(|&i| alive[i]) {
            for &j in self.graph.successors(i) {
                if alive[j as usize] {
                    preds[j as usize].push(i as u32);
                }
            }
        }
        let mut queue: Vec<usize> = (0..n)
            .filter(|&i| alive[i] && (indeg[i] == 0 || outdeg[i] == 0))
            .collect();
        while let Some(i) = queue.pop() {
            if !alive[i] {
                continue;
            }
            alive[i] = false;
            for &j in self.graph.successors(i) {
                let j = j as usize;
                if alive[j] {
                    indeg[j] -= 1;
                    if indeg[j] == 0 {
                        queue.push(j);
                    }
                }
            }
            for &p in &preds[i] {
                let p = p as usize;
                if alive[p] {
                    outdeg[p] -= 1;
                    if outdeg[p] == 0 {
                        queue.push(p);
                    }
                }
            }
        }
        (0..n).find(|&i| alive[i]).map(|i| self.states[i])
    }
}

/// The cyclic core of an in-memory graph (empty if it is acyclic).
pub(crate) fn core(g: &Graph) -> Core {
    Core::of(g, kahn_remaining(g))
}

/// The cyclic core of a graph held as an adjacency stream of `n` states,
/// loaded into memory: called only once a cycle is known to exist (only
/// mutants make one), so the whole graph is loaded for it.
pub(crate) fn core_stream(s: &mut EdgeStream, n: usize) -> io::Result<Core> {
    let mut g = Graph::default();
    let mut count = 0usize;
    walk(s, |w| match w {
        Word::State(_) => {
            if count > 0 {
                g.ends.push(g.targets.len());
            }
            count += 1;
        }
        Word::Successor(j) => g.targets.push(j),
    })?;
    if count > 0 {
        g.ends.push(g.targets.len());
    }
    assert_eq!(
        count, n,
        "invariant broken: the adjacency stream has {count} states, not {n}"
    );
    Ok(core(&g))
}

/// One word of an adjacency stream, read.
enum Word {
    /// The next state, by index.
    State(usize),
    /// A successor of the last state.
    Successor(u32),
}

/// Walk a degree-prefixed adjacency stream: each state in index order, then
/// each of its successors.
fn walk(s: &mut EdgeStream, mut f: impl FnMut(Word)) -> io::Result<()> {
    let mut next = 0usize;
    let mut left = 0u32;
    s.for_each(|w| {
        if left == 0 {
            f(Word::State(next));
            next += 1;
            left = w;
        } else {
            left -= 1;
            f(Word::Successor(w));
        }
    })
}

/// [`find_cycle`] over an adjacency stream of `n` states, with 4 bytes of
/// memory per state. One pass counts in-degrees; then each pass removes, in
/// index order, every state whose in-degree is zero when reached. In
/// breadth-first order most edges point forward, so a pass removes most of
/// what is left; a state stays for another pass only behind an edge that
/// points back. Passes stop when everything is removed (acyclic), when a
/// pass removes nothing (what is left is cycles and what they reach), or
/// when at most an eighth is left, which is loaded and finished by Kahn's
/// algorithm in memory. The states left at the end are the same as with
/// [`find_cycle`], so the answer (the smallest such index) is too.
pub(crate) fn find_cycle_stream(s: &mut EdgeStream, n: usize) -> io::Result<Option<u32>> {
    let mut indegree: Vec<u32> = Vec::with_capacity(n);
    super::scratch::huge_pages(&indegree);
    indegree.resize(n, 0);
    walk(s, |w| {
        if let Word::Successor(j) = w {
            indegree[j as usize] += 1;
        }
    })?;
    let mut removed = 0usize;
    loop {
        let before = removed;
        let mut removing = false;
        walk(s, |w| match w {
            Word::State(i) => {
                removing = indegree[i] == 0;
                if removing {
                    indegree[i] = REMOVED;
                    removed += 1;
                }
            }
            Word::Successor(j) => {
                if removing {
                    indegree[j as usize] -= 1;
                }
            }
        })?;
        if removed == n {
            return Ok(None);
        }
        if removed == before {
            return Ok((0..n as u32).find(|&i| indegree[i as usize] != REMOVED));
        }
        if n - removed <= n / 8 {
            break;
        }
    }
    // The rest, as a compressed adjacency list over the remaining states
    // (every successor of a remaining state remains: its edge still counts).
    let mut rest: Vec<u32> = Vec::new();
    let mut rest_ends: Vec<usize> = Vec::new();
    let mut targets: Vec<u32> = Vec::new();
    let mut keep = false;
    walk(s, |w| match w {
        Word::State(i) => {
            keep = indegree[i] != REMOVED;
            if keep {
                rest.push(i as u32);
                rest_ends.push(targets.len());
            }
        }
        Word::Successor(j) => {
            if keep {
                targets.push(j);
            }
        }
    })?;
    rest_ends.remove(0);
    rest_ends.push(targets.len());
    let g = Graph {
        targets,
        ends: rest_ends,
    };
    let local = |j: u32| {
        rest.binary_search(&j)
            .expect("a remaining state's successor remains")
    };
    let mut queue: Vec<u32> = rest
        .iter()
        .copied()
        .filter(|&i| indegree[i as usize] == 0)
        .collect();
    while let Some(i) = queue.pop() {
        indegree[i as usize] = REMOVED;
        for &j in g.successors(local(i)) {
            indegree[j as usize] -= 1;
            if indegree[j as usize] == 0 {
                queue.push(j);
            }
        }
    }
    Ok(rest
        .iter()
        .copied()
        .find(|&i| indegree[i as usize] != REMOVED))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random graph on `n` states, mostly forward edges (as breadth-first
    /// order gives), some backward, and as a stream spilled to disk.
    fn random_graph(n: usize, back: u64, seed: u64) -> (Graph, EdgeStream) {
        let mut x = seed | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut g = Graph::default();
        let mut s = EdgeStream::with_limits(64, 128);
        for i in 0..n {
            let degree = rnd() % 4;
            s.push(degree as u32);
            for _ in 0..degree {
                let j = if rnd() % 1000 < back {
                    rnd() as usize % (i + 1)
                } else {
                    i + 1 + rnd() as usize % 8
                };
                let j = j.min(n - 1) as u32;
                g.targets.push(j);
                s.push(j);
            }
            g.ends.push(g.targets.len());
        }
        (g, s)
    }

    #[test]
    fn the_streamed_check_finds_what_the_in_memory_one_finds() {
        let mut cyclic = 0;
        for seed in 0..200u64 {
            let back = [0, 1, 5, 50][seed as usize % 4];
            let (g, mut s) = random_graph(2000, back, seed + 1);
            assert!(s.on_disk(), "the test graph should spill to disk");
            let want = find_cycle(&g);
            cyclic += want.is_some() as usize;
            assert_eq!(
                find_cycle_stream(&mut s, 2000).unwrap(),
                want,
                "seed {seed}"
            );
        }
        // Both outcomes are exercised.
        assert!((20..180).contains(&cyclic), "{cyclic} of 200 graphs cyclic");
    }

    fn graph(adj: &[&[u32]]) -> Graph {
        let mut g = Graph::default();
        for succ in adj {
            g.targets.extend_from_slice(succ);
            g.ends.push(g.targets.len());
        }
        g
    }

    #[test]
    fn a_cycle_counts_only_if_every_state_on_it_is_kept() {
        // 0 -> 1 <-> 2 (a cycle), 0 -> 3 <-> 4 (another), 2 -> 5 (terminal).
        let g = graph(&[&[1, 3], &[2], &[1, 5], &[4], &[3], &[]]);
        let core = core(&g);
        assert_eq!(
            core.states,
            vec![1, 2, 3, 4, 5],
            "the core is the cycles and what they reach"
        );
        let keep =
            |set: &[u32]| -> Vec<bool> { core.states.iter().map(|i| set.contains(i)).collect() };
        assert_eq!(core.cycle_within(&keep(&[1, 2, 3, 4, 5])), Some(1));
        assert_eq!(
            core.cycle_within(&keep(&[2, 3, 4, 5])),
            Some(3),
            "1 left the first cycle"
        );
        assert_eq!(core.cycle_within(&keep(&[1, 2, 4, 5])), Some(1));
        assert_eq!(
            core.cycle_within(&keep(&[2, 4, 5])),
            None,
            "each cycle leaves the set"
        );
        assert_eq!(
            core.cycle_within(&keep(&[5])),
            None,
            "a terminal state is no cycle"
        );
    }

    #[test]
    fn the_streamed_core_is_the_in_memory_core() {
        for seed in 0..40u64 {
            let (g, mut s) = random_graph(2000, 5, seed + 1);
            let want = core(&g);
            let got = core_stream(&mut s, 2000).unwrap();
            assert_eq!(got.states, want.states, "seed {seed}");
            assert_eq!(got.graph.targets, want.graph.targets, "seed {seed}");
        }
    }
}
