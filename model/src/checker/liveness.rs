//! Acyclicity of the reachable state graph, by Kahn's algorithm.
//!
//! The `eventually` properties are checked on terminal states. That is sound
//! only if every maximal path is finite, i.e. the reachable graph has no
//! cycle; the budgets are meant to guarantee it, and this check makes sure.

use super::Visited;
use crate::protocol::MoveModel;

/// A state on a cycle, if the reachable graph has one.
pub(crate) fn find_cycle(m: &MoveModel, v: &Visited) -> Option<u32> {
    let n = v.states.len();
    let mut indegree = vec![0u32; n];
    let mut succ = Vec::new();
    for s in &v.states {
        succ.clear();
        m.successors(s, &mut succ);
        for (_, t) in &succ {
            let j = v.find(t).expect("successor of a visited state was visited");
            indegree[j as usize] += 1;
        }
    }
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&i| indegree[i as usize] == 0)
        .collect();
    let mut done = 0usize;
    while let Some(i) = queue.pop() {
        done += 1;
        succ.clear();
        m.successors(&v.states[i as usize], &mut succ);
        for (_, t) in &succ {
            let j = v.find(t).expect("successor was visited") as usize;
            indegree[j] -= 1;
            if indegree[j] == 0 {
                queue.push(j as u32);
            }
        }
    }
    if done == n {
        None
    } else {
        (0..n as u32).find(|&i| indegree[i as usize] > 0)
    }
}
