//! User functions and the contexts they are called with.
//!
//! A [`KeyedProcessFunction`] runs with its record's key current: keyed state, and
//! timers of that key in event time (fired by watermarks) and processing time (fired
//! by the task's clock, on the task thread). Output records carry the input record's
//! timestamp; in `on_timer`, an event-time timer's timestamp, and none for a
//! processing-time timer (as Flink's `KeyedProcessOperator`).

use weir_core::StreamRecord;
use weir_runtime::error::{TaskError, UserError};
use weir_runtime::operator::{Output, ProcessingTimeService, TaskContext};
use weir_state::heap::{AggregatingState, ListState, MapState, ReducingState, StateValue, ValueState};
use weir_state::{
    AggregatingStateDescriptor, KeyedStateBackend, ListStateDescriptor, MapStateDescriptor, ReducingStateDescriptor,
    StateError, TimeDomain, TimerService, ValueStateDescriptor, VoidNamespace,
};

/// What a key must be: hashable, ordered (for timers), serialisable (for the stable
/// key hash and snapshots).
pub trait KeyType: weir_state::Key + Ord + Send {}
impl<T: weir_state::Key + Ord + Send> KeyType for T {}

/// Emits a function's output downstream, stamped with the input's timestamp.
pub struct Collector<'a, O> {
    output: &'a mut dyn Output<O>,
    timestamp: Option<i64>,
    error: Option<TaskError>,
}

impl<'a, O> Collector<'a, O> {
    /// A collector emitting to `output` with `timestamp`.
    pub fn new(output: &'a mut dyn Output<O>, timestamp: Option<i64>) -> Self {
        Self {
            output,
            timestamp,
            error: None,
        }
    }

    /// Emits one value.
    #[inline]
    pub fn collect(&mut self, value: O) {
        if self.error.is_none() {
            if let Err(e) = self.output.collect(StreamRecord {
                value,
                timestamp: self.timestamp,
            }) {
                self.error = Some(e);
            }
        }
    }

    /// Emits one value with an explicit timestamp.
    pub fn collect_with_timestamp(&mut self, value: O, timestamp: i64) {
        if self.error.is_none() {
            if let Err(e) = self.output.collect(StreamRecord::with_timestamp(value, timestamp)) {
                self.error = Some(e);
            }
        }
    }

    /// The first downstream error, if any (the operator reports it after the call).
    pub fn into_error(self) -> Option<TaskError> {
        self.error
    }

    /// Ends the call of a user function that emitted here and returned `result`: the
    /// first downstream error comes first, else the function's error, reported as one
    /// of operator `name`.
    pub(crate) fn finish(self, name: &str, result: Result<(), UserError>) -> Result<(), TaskError> {
        match self.error {
            Some(e) => Err(e),
            None => result.map_err(|e| TaskError::user(name, e)),
        }
    }
}

/// The subtask a function runs in (Flink's `TaskInfo`): which parallel instance, and
/// which execution attempt of it (0 for the first, one more after each restart).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskInfo {
    /// The task (chain) name, e.g. `Sum -> Map -> Sink: Print to Std. Out`.
    pub task_name: String,
    /// This subtask's index, from 0.
    pub subtask_index: u32,
    /// The task's parallelism.
    pub parallelism: u32,
    /// The execution attempt, from 0.
    pub attempt_number: u32,
}

impl TaskInfo {
    /// The task info of the subtask `ctx` describes.
    pub fn of(ctx: &TaskContext) -> Self {
        Self {
            task_name: ctx.task_name.clone(),
            subtask_index: ctx.subtask_index,
            parallelism: ctx.parallelism,
            attempt_number: ctx.attempt_number,
        }
    }
}

/// Where a function runs: its subtask, and the task's clock.
#[derive(Clone)]
pub(crate) struct SubtaskInfo {
    pub task: TaskInfo,
    pub processing_time: ProcessingTimeService,
}

impl SubtaskInfo {
    /// The subtask `ctx` describes, on its task's clock.
    pub(crate) fn of(ctx: &TaskContext) -> Self {
        Self {
            task: TaskInfo::of(ctx),
            processing_time: ctx.processing_time_service(),
        }
    }
}

/// The context of a keyed function call: current key, keyed state, timers.
pub struct KeyedContext<'a, K: KeyType> {
    pub(crate) backend: &'a mut KeyedStateBackend<K>,
    pub(crate) timers: &'a mut TimerService<K, VoidNamespace>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) processing_time: &'a ProcessingTimeService,
    pub(crate) time_domain: Option<TimeDomain>,
    pub(crate) task_info: &'a TaskInfo,
}

/// The timers of the current key (Flink's `TimerService`), from
/// [`KeyedContext::timer_service`].
pub struct KeyedTimerService<'a, K: KeyType> {
    key: Option<K>,
    timers: &'a mut TimerService<K, VoidNamespace>,
    processing_time: &'a ProcessingTimeService,
}

impl<K: KeyType> KeyedTimerService<'_, K> {
    fn key(&self) -> Result<K, StateError> {
        self.key.clone().ok_or(StateError::NoCurrentKey)
    }

    /// The task's current processing time (epoch ms).
    pub fn current_processing_time(&self) -> i64 {
        self.processing_time.current_processing_time()
    }

    /// The operator's current event-time watermark.
    pub fn current_watermark(&self) -> i64 {
        self.timers.current_watermark()
    }

    /// Calls `on_timer` once the watermark reaches `timestamp` (deduplicated per key and time).
    pub fn register_event_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        let key = self.key()?;
        self.timers.register_event_time_timer(key, VoidNamespace, timestamp);
        Ok(())
    }

    /// Deletes an event-time timer of the current key.
    pub fn delete_event_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        let key = self.key()?;
        self.timers.delete_event_time_timer(&key, &VoidNamespace, timestamp);
        Ok(())
    }

    /// Calls `on_timer` once the task's clock reaches `timestamp` (deduplicated per key
    /// and time).
    pub fn register_processing_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        let key = self.key()?;
        if self
            .timers
            .register_processing_time_timer(key, VoidNamespace, timestamp)
        {
            self.processing_time.register_wakeup(timestamp);
        }
        Ok(())
    }

    /// Deletes a processing-time timer of the current key.
    pub fn delete_processing_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        let key = self.key()?;
        self.timers
            .delete_processing_time_timer(&key, &VoidNamespace, timestamp);
        Ok(())
    }
}

impl<'a, K: KeyType> KeyedContext<'a, K> {
    /// The key of the record or timer being processed.
    pub fn current_key(&self) -> Option<&K> {
        self.backend.current_key()
    }

    /// The subtask this call runs in, with its execution attempt number.
    pub fn task_info(&self) -> &TaskInfo {
        self.task_info
    }

    /// The timestamp of the record being processed (or of the firing timer).
    pub fn timestamp(&self) -> Option<i64> {
        self.timestamp
    }

    /// The value state `desc` of the current key.
    pub fn value_state<V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
    ) -> Result<ValueState<'_, K, VoidNamespace, V>, StateError> {
        self.backend.value(desc, &VoidNamespace)
    }

    /// The list state `desc` of the current key.
    pub fn list_state<V: StateValue>(
        &mut self,
        desc: &ListStateDescriptor<V>,
    ) -> Result<ListState<'_, K, VoidNamespace, V>, StateError> {
        self.backend.list(desc, &VoidNamespace)
    }

    /// The map state `desc` of the current key.
    pub fn map_state<UK: StateValue + std::hash::Hash + Eq, UV: StateValue>(
        &mut self,
        desc: &MapStateDescriptor<UK, UV>,
    ) -> Result<MapState<'_, K, VoidNamespace, UK, UV>, StateError> {
        self.backend.map(desc, &VoidNamespace)
    }

    /// The reducing state `desc` of the current key (Flink's `getReducingState`).
    pub fn reducing_state<'s, V: StateValue>(
        &'s mut self,
        desc: &'s ReducingStateDescriptor<V>,
    ) -> Result<ReducingState<'s, K, VoidNamespace, V>, StateError> {
        self.backend.reducing(desc, &VoidNamespace)
    }

    /// The aggregating state `desc` of the current key (Flink's `getAggregatingState`).
    pub fn aggregating_state<'s, IN, ACC: StateValue, OUT>(
        &'s mut self,
        desc: &'s AggregatingStateDescriptor<IN, ACC, OUT>,
    ) -> Result<AggregatingState<'s, K, VoidNamespace, IN, ACC, OUT>, StateError> {
        self.backend.aggregating(desc, &VoidNamespace)
    }

    /// The timers of the current key, with the current watermark and processing time.
    pub fn timer_service(&mut self) -> KeyedTimerService<'_, K> {
        KeyedTimerService {
            key: self.backend.current_key().cloned(),
            timers: self.timers,
            processing_time: self.processing_time,
        }
    }

    /// Registers an event-time timer for the current key; it fires once the watermark
    /// reaches `timestamp` (the end of bounded input fires every timer).
    pub fn register_event_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        self.timer_service().register_event_time_timer(timestamp)
    }

    /// Deletes an event-time timer of the current key.
    pub fn delete_event_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        self.timer_service().delete_event_time_timer(timestamp)
    }

    /// Registers a processing-time timer for the current key; it fires on the task
    /// thread once the task's clock reaches `timestamp`. Timers still pending when the
    /// input ends do not fire.
    pub fn register_processing_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        self.timer_service().register_processing_time_timer(timestamp)
    }

    /// Deletes a processing-time timer of the current key.
    pub fn delete_processing_time_timer(&mut self, timestamp: i64) -> Result<(), StateError> {
        self.timer_service().delete_processing_time_timer(timestamp)
    }

    /// The current event-time watermark of this operator.
    pub fn current_watermark(&self) -> i64 {
        self.timers.current_watermark()
    }

    /// The task's current processing time (epoch ms).
    pub fn current_processing_time(&self) -> i64 {
        self.processing_time.current_processing_time()
    }

    /// In `on_timer`: whether the firing timer is an event-time or processing-time one.
    pub fn time_domain(&self) -> Option<TimeDomain> {
        self.time_domain
    }
}

/// Processes each record of a keyed stream with access to keyed state and timers
/// (Flink's `KeyedProcessFunction`). One instance is cloned per subtask.
pub trait KeyedProcessFunction<K: KeyType, I, O>: Clone + Send + Sync + 'static {
    /// Called once per subtask before the first record.
    fn open(&mut self) -> Result<(), UserError> {
        Ok(())
    }

    /// Called for every record, with the record's key current.
    fn process_element(
        &mut self,
        value: I,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;

    /// Called when a timer of the current key fires (see [`KeyedContext::time_domain`]).
    fn on_timer(
        &mut self,
        _timestamp: i64,
        _ctx: &mut KeyedContext<'_, K>,
        _out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        Ok(())
    }
}
