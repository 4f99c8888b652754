use super::*;
use crate::pipelined_region::tests::job_in;
use crate::pipelined_region::{PipelinedRegions, UNDECIDED_SUBTASK};
use crate::scheduling_strategy::RegionSchedulingStrategy;
use weir_core::key_group::{assign_key_to_parallel_operator, assign_to_key_group};
use weir_core::RuntimeExecutionMode::Batch;

fn ends(producers: u32, consumers: u32, max: u32) -> EdgeEnds {
    EdgeEnds {
        producer_parallelism: producers,
        consumer_parallelism: consumers,
        consumer_max_parallelism: max,
        consumer_adaptive: true,
    }
}

#[test]
fn every_key_reaches_the_subtask_whose_key_group_range_holds_it() {
    let jg = job_in(Batch, &[2, 2], &[Partitioner::Hash]);
    let edge = &jg.edges[0];
    for (max, p) in [(128, 1), (128, 3), (128, 5), (2, 1), (2, 2), (7, 3)] {
        let subpartitions = edge_num_subpartitions(edge, ends(2, p, max), 0);
        assert_eq!(subpartitions, max, "one subpartition per key group");
        for key_hash in -500i32..500 {
            // The producer's key-group partitioner over `max` channels.
            let channel = assign_key_to_parallel_operator(key_hash, max, subpartitions);
            assert_eq!(channel, assign_to_key_group(key_hash, max), "channel = key group");
            let readers: Vec<u32> = (0..p)
                .filter(|i| edge_consumed_subpartitions(edge, ends(2, p, max), *i).contains(&(1, channel)))
                .collect();
            assert_eq!(readers.len(), 1, "key {key_hash}: exactly one reader at p={p}");
            let owner = KeyGroupRange::for_subtask(max, p, readers[0]);
            assert!(owner.contains(channel), "the reader owns key group {channel}");
        }
    }
}

#[test]
fn consumer_ranges_cover_every_subpartition_of_every_producer_once() {
    let jg = job_in(Batch, &[3, 2], &[Partitioner::Rebalance]);
    let e = ends(3, 5, 128);
    let mut read: Vec<(u32, u32)> = (0..5)
        .flat_map(|i| edge_consumed_subpartitions(&jg.edges[0], e, i))
        .collect();
    read.sort_unstable();
    let all: Vec<(u32, u32)> = (0..3).flat_map(|p| (0..128).map(move |s| (p, s))).collect();
    assert_eq!(read, all);
    assert_eq!(key_group_subpartitions(128, 3, 1), 43..86);
}

#[test]
fn a_broadcast_input_is_one_subpartition_read_by_every_subtask() {
    let jg = job_in(Batch, &[2, 2], &[Partitioner::Broadcast]);
    assert_eq!(edge_num_subpartitions(&jg.edges[0], ends(2, 3, 128), 1), 1);
    for i in 0..3 {
        assert_eq!(
            edge_consumed_subpartitions(&jg.edges[0], ends(2, 3, 128), i),
            vec![(0, 0), (1, 0)]
        );
    }
}

#[test]
fn a_vertex_the_user_set_keeps_its_parallelism() {
    let mut jg = job_in(Batch, &[2, 2, 2], &[Partitioner::Hash, Partitioner::Hash]);
    jg.vertices[1].parallelism_configured = true;
    assert_eq!(adaptive_vertices(&jg), BTreeSet::from([0, 2]));
    let e = EdgeEnds {
        consumer_adaptive: false,
        ..ends(2, 3, 128)
    };
    assert_eq!(edge_num_subpartitions(&jg.edges[0], e, 0), 3, "wired as usual");
    assert_eq!(edge_consumed_subpartitions(&jg.edges[0], e, 2), vec![(0, 2), (1, 2)]);
}

#[test]
fn rescale_edges_and_forward_edges_to_fixed_vertices_are_not_adaptive() {
    let jg = job_in(Batch, &[2, 2, 2], &[Partitioner::Hash, Partitioner::Rescale]);
    assert_eq!(adaptive_vertices(&jg), BTreeSet::from([0]));
    let mut jg = job_in(Batch, &[2, 2, 2], &[Partitioner::Hash, Partitioner::Forward]);
    jg.vertices[2].parallelism_configured = true;
    assert_eq!(adaptive_vertices(&jg), BTreeSet::from([0]));
}

#[test]
fn a_forward_consumer_takes_its_producers_parallelism() {
    let forward = FinishedInput {
        input: AdaptiveInput::Forward,
        producer_parallelism: 3,
        subpartition_bytes: vec![1 << 30],
    };
    assert_eq!(
        decide_vertex_parallelism(&AdaptiveParallelismOptions::default(), 128, &[forward]),
        3
    );
}

#[test]
fn bytes_decide_the_parallelism_capped_by_the_key_groups() {
    let input = |bytes: u64| FinishedInput {
        input: AdaptiveInput::KeyGroups,
        producer_parallelism: 2,
        subpartition_bytes: vec![bytes / 4; 4],
    };
    let o = AdaptiveParallelismOptions {
        avg_data_volume_per_task: 1000,
        max_parallelism: 128,
        ..AdaptiveParallelismOptions::default()
    };
    assert_eq!(decide_vertex_parallelism(&o, 128, &[input(400)]), 1);
    assert_eq!(decide_vertex_parallelism(&o, 128, &[input(4_000)]), 4);
    assert_eq!(decide_vertex_parallelism(&o, 3, &[input(40_000)]), 3);
}

#[test]
fn consumers_of_an_undecided_vertex_wait_until_the_regions_are_recomputed() {
    // source (2) --hash--> aggregate (undecided) --hash--> sink (1, set by the user)
    let mut jg = job_in(Batch, &[2, 2, 1], &[Partitioner::Hash, Partitioner::Hash]);
    jg.vertices[1].parallelism = 0;
    let regions = PipelinedRegions::compute(&jg);
    let sink = regions.region_index((2, 0)).unwrap();
    assert_eq!(
        regions.blocking_inputs(sink).collect::<Vec<_>>(),
        vec![(1, UNDECIDED_SUBTASK)]
    );
    let mut s = RegionSchedulingStrategy::new(regions);
    assert_eq!(s.schedulable().len(), 2, "only the sources");
    s.on_finished((0, 0));
    s.on_finished((0, 1));
    assert!(s.schedulable().is_empty(), "the sink waits for the undecided vertex");

    jg.vertices[1].parallelism = 1;
    s.replace_regions(PipelinedRegions::compute(&jg));
    let agg = s.regions().region_index((1, 0)).unwrap();
    assert_eq!(s.schedulable(), vec![agg], "sources stay handed out and finished");
    s.on_finished((1, 0));
    let sink = s.regions().region_index((2, 0)).unwrap();
    assert_eq!(s.schedulable(), vec![sink]);
}
