//! Which slot each subtask runs in, under slot sharing.
//!
//! Per slot sharing group a job needs as many slots as the highest parallelism in the
//! group; slot `k` of a group hosts subtask `k` of every vertex of the group (a slot
//! holds at most one subtask of each vertex). Groups take consecutive runs of the job's
//! allocated slots, in group-name order.

use crate::resource_manager::slot_table::SlotRef;
use std::collections::{BTreeMap, HashMap};
use weir_graph::{slots_required, JobGraph};

/// (vertex index, subtask index) → the slot it runs in; `None` if `slots` is shorter
/// than the job needs.
pub fn assign_slots(job_graph: &JobGraph, slots: &[SlotRef]) -> Option<HashMap<(usize, u32), SlotRef>> {
    let groups: BTreeMap<String, u32> = slots_required(job_graph);
    let mut offset = BTreeMap::new();
    let mut next = 0u32;
    for (group, n) in &groups {
        offset.insert(group.clone(), next);
        next += n;
    }
    if (slots.len() as u32) < next {
        return None;
    }
    let mut out = HashMap::new();
    for (vi, v) in job_graph.vertices.iter().enumerate() {
        let base = *offset.get(&v.slot_sharing_group)?;
        for i in 0..v.parallelism {
            out.insert((vi, i), slots[(base + i) as usize].clone());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_graph::{ChainingStrategy, ExecutionConfig, NodeKind, Partitioner, StreamEdge, StreamGraph, StreamNode};

    fn node(id: u32, p: u32, group: &str) -> StreamNode {
        StreamNode {
            id,
            name: format!("n{id}"),
            kind: if id == 0 { NodeKind::Source } else { NodeKind::Operator },
            parallelism: p,
            parallelism_configured: false,
            source_splits: None,
            max_parallelism: None,
            chaining_strategy: ChainingStrategy::Always,
            slot_sharing_group: group.into(),
            uid: None,
            keyed: false,
        }
    }

    fn slots(n: u32) -> Vec<SlotRef> {
        (0..n)
            .map(|i| SlotRef {
                resource_id: format!("tm{}", i % 2),
                slot_index: i / 2,
            })
            .collect()
    }

    #[test]
    fn subtask_k_of_every_vertex_shares_slot_k_of_its_group() {
        let g = StreamGraph {
            job_name: "j".into(),
            config: ExecutionConfig::default(),
            nodes: vec![node(0, 1, "default"), node(1, 4, "default"), node(2, 2, "x")],
            edges: vec![
                StreamEdge {
                    source: 0,
                    target: 1,
                    partitioner: Partitioner::Rebalance,
                    input: 0,
                },
                StreamEdge {
                    source: 1,
                    target: 2,
                    partitioner: Partitioner::Rebalance,
                    input: 0,
                },
            ],
        };
        let jg = JobGraph::from_stream_graph(&g).unwrap();
        assert!(assign_slots(&jg, &slots(5)).is_none());
        let s = slots(6);
        let a = assign_slots(&jg, &s).unwrap();
        let v = |node: u32| jg.vertex_by_node(node).unwrap();
        assert_eq!(a[&(v(0), 0)], a[&(v(1), 0)]);
        assert_eq!(a[&(v(1), 3)], s[3]);
        // Group "x" comes after "default" (4 slots) in name order.
        assert_eq!(a[&(v(2), 0)], s[4]);
        assert_eq!(a[&(v(2), 1)], s[5]);
    }
}
