//! Acyclicity of the reachable state graph, by Kahn's algorithm.
//!
//! The `eventually` properties are checked on terminal states. That is sound
//! only if every maximal path is finite, i.e. the reachable graph has no
//! cycle; the budgets are meant to guarantee it, and this check makes sure.

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

/// A state on a cycle, if the reachable graph has one.
pub(crate) fn find_cycle(g: &Graph) -> Option<u32> {
    let n = g.ends.len();
    let mut indegree = vec![0u32; n];
    for &j in &g.targets {
        indegree[j as usize] += 1;
    }
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&i| indegree[i as usize] == 0)
        .collect();
    let mut done = 0usize;
    while let Some(i) = queue.pop() {
        done += 1;
        for &j in g.successors(i as usize) {
            indegree[j as usize] -= 1;
            if indegree[j as usize] == 0 {
                queue.push(j);
            }
        }
    }
    if done == n {
        None
    } else {
        (0..n as u32).find(|&i| indegree[i as usize] > 0)
    }
}
