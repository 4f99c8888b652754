use super::*;
use crate::pipelined_region::tests::job_in;
use crate::scheduling_strategy::RegionSchedulingStrategy;
use crate::stream_graph::Partitioner;
use weir_core::RuntimeExecutionMode::Batch;

/// A strategy over a batch chain of `parallelisms` joined by `partitioners` (every edge
/// blocking, every region one subtask), with everything handed out so far.
fn strategy(parallelisms: &[u32], partitioners: &[Partitioner]) -> RegionSchedulingStrategy {
    let jg = job_in(Batch, parallelisms, partitioners);
    RegionSchedulingStrategy::new(PipelinedRegions::compute(&jg))
}

/// Finishes `subtask` and returns what becomes releasable.
fn finish(s: &mut RegionSchedulingStrategy, subtask: SubtaskRef) -> Vec<ResultPartitionRef> {
    s.on_finished(subtask);
    s.partitions_to_release(subtask)
}

/// Hands out what is schedulable, then finishes `subtasks` in order; returns what
/// became releasable.
fn run_stage(s: &mut RegionSchedulingStrategy, subtasks: &[SubtaskRef]) -> Vec<ResultPartitionRef> {
    let _ = s.schedulable();
    subtasks.iter().flat_map(|t| finish(s, *t)).collect()
}

fn partition(edge: usize, producer: SubtaskRef) -> ResultPartitionRef {
    ResultPartitionRef { edge, producer }
}

fn region(s: &RegionSchedulingStrategy, subtask: SubtaskRef) -> usize {
    s.regions().region_index(subtask).unwrap()
}

#[test]
fn an_all_to_all_partition_is_released_when_its_last_consumer_region_finished() {
    // source (2) --hash--> sum (2) --hash--> sink (1)
    let mut s = strategy(&[2, 2, 1], &[Partitioner::Hash, Partitioner::Hash]);
    assert!(finish(&mut s, (0, 0)).is_empty(), "a producer releases nothing");
    assert!(finish(&mut s, (0, 1)).is_empty());
    assert!(finish(&mut s, (1, 0)).is_empty(), "sum 1 still reads both sources");
    assert_eq!(
        finish(&mut s, (1, 1)),
        vec![partition(0, (0, 0)), partition(0, (0, 1))],
        "both source partitions are read by no one any more"
    );
    assert!(s.is_released(partition(0, (0, 0))));
    assert!(!s.is_released(partition(1, (1, 0))), "the sink has not finished");
    assert_eq!(finish(&mut s, (2, 0)), vec![partition(1, (1, 0)), partition(1, (1, 1))]);
    assert!(s.partitions_to_release((2, 0)).is_empty(), "handed out once");
}

#[test]
fn a_pointwise_partition_is_released_when_its_own_consumer_finished() {
    // source (2) --forward--> map (2): each map reads one source.
    let mut s = strategy(&[2, 2], &[Partitioner::Forward]);
    finish(&mut s, (0, 0));
    finish(&mut s, (0, 1));
    assert_eq!(finish(&mut s, (1, 1)), vec![partition(0, (0, 1))]);
    assert!(!s.is_released(partition(0, (0, 0))));
    assert_eq!(finish(&mut s, (1, 0)), vec![partition(0, (0, 0))]);
}

#[test]
fn a_failed_consumer_keeps_its_inputs_and_reruns_alone() {
    let mut s = strategy(&[2, 2], &[Partitioner::Hash]);
    assert!(run_stage(&mut s, &[(0, 0), (0, 1)]).is_empty());
    assert!(run_stage(&mut s, &[(1, 0)]).is_empty());
    // Sum 1 fails: nothing was released, so only its own region restarts.
    let scope = s.regions_to_restart(&[(1, 1)], &BTreeSet::new());
    assert_eq!(scope, BTreeSet::from([region(&s, (1, 1))]));
    s.on_failover(&scope);
    s.reset(&scope);
    assert_eq!(s.schedulable(), vec![region(&s, (1, 1))]);
    assert_eq!(finish(&mut s, (1, 1)), vec![partition(0, (0, 0)), partition(0, (0, 1))]);
}

#[test]
fn resetting_a_finished_consumer_of_released_partitions_reruns_their_producers_first() {
    // source (1) --forward--> sum (1) --forward--> sink (1)
    let mut s = strategy(&[1, 1, 1], &[Partitioner::Forward, Partitioner::Forward]);
    assert!(run_stage(&mut s, &[(0, 0)]).is_empty());
    assert_eq!(run_stage(&mut s, &[(1, 0)]), vec![partition(0, (0, 0))]);
    let _ = s.schedulable();
    // The sink fails and the sum's results were lost with its TaskManager: the sum
    // must run again, and it reads the released source partition, so the source too.
    let lost = BTreeSet::from([(1, 0)]);
    let scope = s.regions_to_restart(&[(2, 0)], &lost);
    let (source, sum, sink) = (region(&s, (0, 0)), region(&s, (1, 0)), region(&s, (2, 0)));
    assert_eq!(scope, BTreeSet::from([source, sum, sink]));
    s.on_failover(&scope);
    s.reset(&scope);
    assert!(!s.is_released(partition(0, (0, 0))), "the source writes it anew");
    assert_eq!(s.schedulable(), vec![source]);
    assert!(finish(&mut s, (0, 0)).is_empty());
    assert_eq!(s.schedulable(), vec![sum]);
    assert_eq!(finish(&mut s, (1, 0)), vec![partition(0, (0, 0))]);
}

#[test]
fn a_consumer_waiting_for_its_restart_keeps_the_partitions_it_will_read_again() {
    // source (1) --hash--> sum (2): sum 0 finished, then its TaskManager is lost while
    // sum 1 still runs; sum 1 finishing must not release what sum 0 reruns on.
    let mut s = strategy(&[1, 2], &[Partitioner::Hash]);
    run_stage(&mut s, &[(0, 0)]);
    assert!(run_stage(&mut s, &[(1, 0)]).is_empty());
    let scope = s.regions_to_restart(&[(1, 0)], &BTreeSet::from([(1, 0)]));
    assert_eq!(scope, BTreeSet::from([region(&s, (1, 0))]));
    s.on_failover(&scope);
    assert!(finish(&mut s, (1, 1)).is_empty(), "sum 0 will read the source again");
    s.reset(&scope);
    assert_eq!(s.schedulable(), vec![region(&s, (1, 0))]);
    assert_eq!(finish(&mut s, (1, 0)), vec![partition(0, (0, 0))]);
}

#[test]
fn a_partition_whose_consumers_are_undecided_or_whose_producer_has_not_finished_is_kept() {
    let mut jg = job_in(Batch, &[1, 1], &[Partitioner::Hash]);
    let mut release = RegionPartitionReleaseStrategy::new();
    let regions = PipelinedRegions::compute(&jg);
    let consumer = regions.region_index((1, 0)).unwrap();
    let only_consumer = BTreeSet::from([(1, 0)]);
    assert!(
        release
            .on_region_finished(&regions, consumer, &only_consumer)
            .is_empty(),
        "the producer has not finished"
    );
    // The adaptive batch scheduler has not decided the consumer: nobody reads the
    // producer's partition yet, so finishing the producer releases nothing.
    jg.vertices[1].parallelism = 0;
    let undecided = PipelinedRegions::compute(&jg);
    assert_eq!(undecided.consumer_regions(partition(0, (0, 0))).count(), 0);
    let producer = undecided.region_index((0, 0)).unwrap();
    let finished = BTreeSet::from([(0, 0)]);
    assert!(release.on_region_finished(&undecided, producer, &finished).is_empty());
    assert!(!release.is_released(partition(0, (0, 0))));
}

#[test]
fn a_global_failover_forgets_every_release() {
    let mut s = strategy(&[1, 1], &[Partitioner::Forward]);
    finish(&mut s, (0, 0));
    assert_eq!(finish(&mut s, (1, 0)), vec![partition(0, (0, 0))]);
    s.reset_all();
    assert!(!s.is_released(partition(0, (0, 0))));
    assert!(s.regions_to_restart(&[(1, 0)], &BTreeSet::new()).len() == 1);
}
