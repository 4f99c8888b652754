//! What an operator knows about the subtask it runs in.

use super::metric_group::{Counter, OperatorMetricGroup};
use super::processing_time::ProcessingTimeService;
use crate::checkpoint::StateRegistry;
use std::cell::RefCell;
use std::rc::Rc;
use weir_core::KeyGroupRange;
use weir_state::incremental::SharedStateTransfer;
use weir_state::{KeyedStateStoreFactory, RestoredState, ResultSubpartitionState};

/// Something holding buffered output that the task flushes on the buffer timeout.
pub trait Flushable {
    /// Hands every partially filled buffer to the network.
    fn flush(&mut self) -> Result<(), crate::error::TaskError>;
    /// Records written so far.
    fn records_out(&self) -> u64 {
        0
    }
    /// Bytes of records written so far.
    fn bytes_out(&self) -> u64 {
        0
    }
    /// The last watermark sent (`i64::MIN` before the first).
    fn output_watermark(&self) -> i64 {
        i64::MIN
    }
    /// The usage of the output's buffer pool (none without a network output).
    fn output_pool_usage(&self) -> crate::network::PoolUsage {
        crate::network::PoolUsage::default()
    }
    /// Time spent blocked waiting for output buffers so far.
    fn backpressured_time(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Flushes, then sends `event` on every channel (a checkpoint barrier).
    fn broadcast_event(&mut self, event: weir_core::Event) -> Result<(), crate::error::TaskError> {
        let _ = event;
        Ok(())
    }
    /// Flushes, then sends `event` on every channel as a priority event (an unaligned
    /// checkpoint's barrier) ahead of the data queued there; returns, per channel, the
    /// bytes it overtook. Without priority events it is sent in band and overtakes
    /// nothing.
    fn broadcast_priority_event(&mut self, event: weir_core::Event) -> Result<Vec<Vec<u8>>, crate::error::TaskError> {
        self.broadcast_event(event)?;
        Ok(Vec::new())
    }
}

/// A registered network output: the job edge it serves and the output.
type NetworkFlushable = (usize, Rc<RefCell<dyn Flushable>>);

/// The subtask an operator chain runs in. Built on the task's own thread.
pub struct TaskContext {
    /// The job's name.
    pub job_name: String,
    /// The vertex (chain) name, e.g. `Source: Generator -> Map`.
    pub task_name: String,
    /// This subtask's index, from 0.
    pub subtask_index: u32,
    /// The vertex parallelism.
    pub parallelism: u32,
    /// The vertex max parallelism (number of key groups).
    pub max_parallelism: u32,
    /// The execution attempt, from 0.
    pub attempt_number: u32,
    /// `execution.buffer-timeout.interval` in ms (0: flush every record, -1: only when full).
    pub buffer_timeout_ms: i64,
    /// The network outputs, with the job edge each serves.
    flushables: RefCell<Vec<NetworkFlushable>>,
    processing_time: ProcessingTimeService,
    state: StateRegistry,
    final_checkpoint: bool,
    /// Whether operators' metrics are counted (`metrics.collection.enabled`).
    collect_metrics: bool,
    /// The metric group of each operator built so far, by stream node; the last is
    /// the one being built.
    operator_metrics: RefCell<Vec<(u32, Rc<OperatorMetricGroup>)>>,
    /// Where operators send events to their coordinators, on a TaskManager.
    operator_events: Option<std::sync::Arc<dyn super::coordination::OperatorEventGateway>>,
    keyed_state_store: Option<std::sync::Arc<dyn KeyedStateStoreFactory>>,
    shared_state: Option<std::sync::Arc<dyn SharedStateTransfer>>,
}

impl TaskContext {
    /// A context for subtask `subtask_index` of `parallelism`.
    pub fn new(
        job_name: impl Into<String>,
        task_name: impl Into<String>,
        subtask_index: u32,
        parallelism: u32,
        max_parallelism: u32,
        attempt_number: u32,
        buffer_timeout_ms: i64,
    ) -> Self {
        Self {
            job_name: job_name.into(),
            task_name: task_name.into(),
            subtask_index,
            parallelism,
            max_parallelism,
            attempt_number,
            buffer_timeout_ms,
            flushables: RefCell::new(Vec::new()),
            processing_time: ProcessingTimeService::system(),
            state: StateRegistry::default(),
            final_checkpoint: false,
            collect_metrics: true,
            operator_metrics: RefCell::new(Vec::new()),
            operator_events: None,
            keyed_state_store: None,
            shared_state: None,
        }
    }

    /// The same context whose keyed operators keep their state in stores of `factory`.
    pub fn with_keyed_state_store(mut self, factory: Option<std::sync::Arc<dyn KeyedStateStoreFactory>>) -> Self {
        self.keyed_state_store = factory;
        self
    }

    /// Where keyed operators keep state beyond their cache; `None`: on the heap.
    pub fn keyed_state_store(&self) -> Option<&std::sync::Arc<dyn KeyedStateStoreFactory>> {
        self.keyed_state_store.as_ref()
    }

    /// The same context whose on-disk stores restore their files (from incremental
    /// checkpoints) through `transfer`, the task's checkpoint storage.
    pub fn with_shared_state(mut self, transfer: Option<std::sync::Arc<dyn SharedStateTransfer>>) -> Self {
        self.shared_state = transfer;
        self
    }

    /// The task's checkpoint storage as the source of restored store files.
    pub fn shared_state(&self) -> Option<&std::sync::Arc<dyn SharedStateTransfer>> {
        self.shared_state.as_ref()
    }

    /// The same context sending operator events through `gateway`.
    pub fn with_operator_event_gateway(
        mut self,
        gateway: Option<std::sync::Arc<dyn super::coordination::OperatorEventGateway>>,
    ) -> Self {
        self.operator_events = gateway;
        self
    }

    /// Where operators send events to their coordinators on the JobMaster; none
    /// outside a TaskManager.
    pub fn operator_event_gateway(&self) -> Option<std::sync::Arc<dyn super::coordination::OperatorEventGateway>> {
        self.operator_events.clone()
    }

    /// The same context counting operators' metrics or not.
    pub fn with_metrics_collection(mut self, enabled: bool) -> Self {
        self.collect_metrics = enabled;
        self
    }

    /// Whether operators' metrics are counted.
    pub fn collects_metrics(&self) -> bool {
        self.collect_metrics
    }

    /// Adds the metric group of stream node `node`, the operator about to be built.
    pub fn add_operator_metric_group(&self, node: u32, group: OperatorMetricGroup) -> Rc<OperatorMetricGroup> {
        let group = Rc::new(group);
        self.operator_metrics.borrow_mut().push((node, group.clone()));
        group
    }

    /// The metric group of stream node `node`, if it has one.
    pub fn operator_metric_group(&self, node: u32) -> Option<Rc<OperatorMetricGroup>> {
        self.operator_metrics
            .borrow()
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, g)| g.clone())
    }

    /// Every operator's metric group with its stream node, in the order they were built.
    pub fn operator_metric_groups(&self) -> Vec<(u32, Rc<OperatorMetricGroup>)> {
        self.operator_metrics.borrow().clone()
    }

    /// Counter `name` (Flink's name, e.g. `numLateRecordsDropped`) of the operator being
    /// built; a counter that nothing publishes when metrics are not collected.
    pub fn operator_counter(&self, name: &'static str) -> Counter {
        match self.operator_metrics.borrow().last() {
            Some((_, group)) if self.collect_metrics => group.counter(name),
            _ => Counter::default(),
        }
    }

    /// The same context for a subtask restored from `restored`.
    pub fn with_restored_state(mut self, restored: Option<RestoredState>) -> Self {
        self.state = StateRegistry::new(restored);
        self
    }

    /// The same context in a job that takes periodic checkpoints: a task whose input
    /// ended waits for a checkpoint when one of its operators asks
    /// ([`CheckpointedOperator::awaits_final_checkpoint`](crate::checkpoint::CheckpointedOperator::awaits_final_checkpoint)).
    pub fn with_final_checkpoint(mut self, expected: bool) -> Self {
        self.final_checkpoint = expected;
        self
    }

    /// Whether a checkpoint will come after this task's end of input (the job takes
    /// periodic checkpoints), so that an operator may leave work to it (a two-phase-commit
    /// sink its last commit) instead of finishing it at the end of input.
    pub fn final_checkpoint_expected(&self) -> bool {
        self.final_checkpoint
    }

    /// The chain's stateful operators and the state they restore from.
    pub fn state(&self) -> &StateRegistry {
        &self.state
    }

    /// The same context on another processing-time service (a manual clock in tests).
    pub fn with_processing_time_service(mut self, service: ProcessingTimeService) -> Self {
        self.processing_time = service;
        self
    }

    /// The task's clock and wake-ups, shared by every operator of the chain.
    pub fn processing_time_service(&self) -> ProcessingTimeService {
        self.processing_time.clone()
    }

    /// The key groups this subtask owns.
    pub fn key_group_range(&self) -> KeyGroupRange {
        KeyGroupRange::for_subtask(self.max_parallelism, self.parallelism, self.subtask_index)
    }

    /// `name (i/n)`, Flink's task name with subtask, counting from 1.
    pub fn task_name_with_subtask(&self) -> String {
        format!("{} ({}/{})", self.task_name, self.subtask_index + 1, self.parallelism)
    }

    /// Registers buffered output of job edge `job_edge` to flush on the buffer timeout
    /// (and to send events on).
    pub fn register_flushable(&self, job_edge: usize, f: Rc<RefCell<dyn Flushable>>) {
        self.flushables.borrow_mut().push((job_edge, f));
    }

    /// Records written to the network by every registered output.
    pub fn records_out(&self) -> u64 {
        self.flushables
            .borrow()
            .iter()
            .map(|(_, f)| f.borrow().records_out())
            .sum()
    }

    /// Bytes of records written to the network by every registered output.
    pub fn bytes_out(&self) -> u64 {
        self.flushables
            .borrow()
            .iter()
            .map(|(_, f)| f.borrow().bytes_out())
            .sum()
    }

    /// The watermark the task sent downstream last: the least over its outputs
    /// (`i64::MIN` without outputs or before the first).
    pub fn output_watermark(&self) -> i64 {
        self.flushables
            .borrow()
            .iter()
            .map(|(_, f)| f.borrow().output_watermark())
            .min()
            .unwrap_or(i64::MIN)
    }

    /// The usage of every registered output's buffer pool, together (Flink's
    /// `outPoolUsage` is their used buffers over their sizes).
    pub fn output_pool_usage(&self) -> crate::network::PoolUsage {
        self.flushables
            .borrow()
            .iter()
            .map(|(_, f)| f.borrow().output_pool_usage())
            .sum()
    }

    /// Time every registered output spent waiting for buffers.
    pub fn backpressured_time(&self) -> std::time::Duration {
        self.flushables
            .borrow()
            .iter()
            .map(|(_, f)| f.borrow().backpressured_time())
            .sum()
    }

    /// Sends `event` on every channel of every registered output (flushing first).
    pub fn broadcast_event(&self, event: weir_core::Event) -> Result<(), crate::error::TaskError> {
        for (_, f) in self.flushables.borrow().iter() {
            f.borrow_mut().broadcast_event(event)?;
        }
        Ok(())
    }

    /// Sends `event` on every channel of every registered output as a priority event
    /// (flushing first), ahead of the data queued there; returns the data it overtook
    /// as output channel state, per job edge and subpartition with any.
    pub fn broadcast_priority_event(
        &self,
        event: weir_core::Event,
    ) -> Result<Vec<ResultSubpartitionState>, crate::error::TaskError> {
        let mut state = Vec::new();
        for (job_edge, f) in self.flushables.borrow().iter() {
            let overtaken = f.borrow_mut().broadcast_priority_event(event)?;
            let subpartitions = u32::try_from(overtaken.len()).unwrap_or(u32::MAX);
            for (subpartition, data) in overtaken.into_iter().enumerate() {
                if !data.is_empty() {
                    state.push(ResultSubpartitionState {
                        job_edge: u32::try_from(*job_edge).unwrap_or(u32::MAX),
                        subpartition: subpartition as u32,
                        subpartitions,
                        data,
                    });
                }
            }
        }
        Ok(state)
    }

    /// Flushes every registered output.
    pub fn flush_all(&self) -> Result<(), crate::error::TaskError> {
        for (_, f) in self.flushables.borrow().iter() {
            f.borrow_mut().flush()?;
        }
        Ok(())
    }
}
