//! The interval join operator (Flink's `IntervalJoinOperator`).
//!
//! Both inputs are keyed by the same key type. Each side's elements wait in keyed map
//! state of their key, bucketed by timestamp (`left-buffer`, `right-buffer`: timestamp
//! → elements in arrival order). An arriving element of a key is, unless late (behind
//! the watermark; dropped and counted), added to its side's buffer, joined with every
//! element of the other side's buffer in its interval (buckets in timestamp order,
//! each in arrival order), and gets an event-time cleanup timer of its side; the timer
//! removes its bucket once the watermark shows the other side can no longer join it
//! (the arithmetic is in [`super::bounds`]). Buffers and timers are keyed state, so
//! checkpoints snapshot them per key group and restores rescale them.

use super::bounds::{is_late, IntervalBounds, JoinSide};
use super::error::JoinError;
use super::process_join_function::{ProcessJoinContext, ProcessJoinFunction};
use crate::forwarding::fire_timers_and_forward;
use crate::functions::{Collector, KeyType, TaskInfo};
use std::sync::Arc;
use weir_core::StreamRecord;
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::error::TaskError;
use weir_runtime::operator::metric_group::Counter;
use weir_runtime::operator::{CoElement, Output};
use weir_state::heap::StateValue;
use weir_state::{
    KeyedStateBackend, MapStateDescriptor, OperatorSnapshot, StateError, TimeDomain, Timer, TimerService, VoidNamespace,
};

/// The key selectors of the left and the right input.
pub type KeySelectors<K, A, B> = (Arc<dyn Fn(&A) -> K + Send + Sync>, Arc<dyn Fn(&B) -> K + Send + Sync>);

/// One side's buffer: timestamp → its elements of the current key.
type Buffer<T> = MapStateDescriptor<i64, Vec<T>>;

/// The interval join of one subtask.
pub struct IntervalJoinOperator<K: KeyType, A, B, O, F> {
    name: String,
    f: F,
    bounds: IntervalBounds,
    keys: KeySelectors<K, A, B>,
    backend: KeyedStateBackend<K>,
    timers: TimerService<K, JoinSide>,
    task_info: TaskInfo,
    left: Buffer<A>,
    right: Buffer<B>,
    late_records_dropped: Counter,
    out: Box<dyn Output<O>>,
}

/// The elements of `theirs` of the current key an element of `side` at `timestamp`
/// joins, by timestamp.
fn matches<K: KeyType, T: StateValue>(
    backend: &mut KeyedStateBackend<K>,
    theirs: &Buffer<T>,
    bounds: &IntervalBounds,
    side: JoinSide,
    timestamp: i64,
) -> Result<Vec<(i64, T)>, StateError> {
    let buffer = backend.map(theirs, &VoidNamespace)?;
    let mut buckets: Vec<(i64, &Vec<T>)> = buffer
        .iter()
        .filter(|(t, _)| bounds.joins(side, timestamp, **t))
        .map(|(t, v)| (*t, v))
        .collect();
    buckets.sort_by_key(|(t, _)| *t);
    Ok(buckets
        .into_iter()
        .flat_map(|(t, v)| v.iter().map(move |e| (t, e.clone())))
        .collect())
}

/// Appends `value` to the bucket `timestamp` of `ours` of the current key.
fn buffer<K: KeyType, T: StateValue>(
    backend: &mut KeyedStateBackend<K>,
    ours: &Buffer<T>,
    timestamp: i64,
    value: T,
) -> Result<(), StateError> {
    let mut state = backend.map(ours, &VoidNamespace)?;
    let mut bucket = state.get(&timestamp).cloned().unwrap_or_default();
    bucket.push(value);
    state.put(timestamp, bucket);
    Ok(())
}

impl<K: KeyType, A: StateValue, B: StateValue, O, F: ProcessJoinFunction<A, B, O>> IntervalJoinOperator<K, A, B, O, F> {
    /// The operator of one subtask joining within `bounds`, starting from restored
    /// buffers and timers.
    pub fn restored(
        name: String,
        mut f: F,
        bounds: IntervalBounds,
        keys: KeySelectors<K, A, B>,
        (backend, timers): (KeyedStateBackend<K>, TimerService<K, JoinSide>),
        task_info: TaskInfo,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        f.open().map_err(|e| TaskError::user(&name, e))?;
        Ok(Self {
            name,
            f,
            bounds,
            keys,
            backend,
            timers,
            task_info,
            left: MapStateDescriptor::new("left-buffer"),
            right: MapStateDescriptor::new("right-buffer"),
            late_records_dropped: Counter::default(),
            out,
        })
    }

    /// Elements dropped for being behind the watermark (Flink's
    /// `numLateRecordsDropped`).
    pub fn num_late_records_dropped(&self) -> u64 {
        self.late_records_dropped.get()
    }

    /// The same operator counting its dropped late elements in `counter` (its
    /// metric group's).
    pub fn with_late_records_dropped(mut self, counter: Counter) -> Self {
        self.late_records_dropped = counter;
        self
    }

    /// Registered cleanup timers, for tests of cleanup.
    pub fn num_timers(&self) -> usize {
        self.timers.len()
    }

    fn fail(&self, e: impl std::fmt::Display) -> TaskError {
        TaskError::user(&self.name, e)
    }

    /// Makes the record's key current and checks its timestamp: `None` if it is late.
    fn admit(&mut self, key: K, timestamp: Option<i64>, side: JoinSide) -> Result<Option<i64>, TaskError> {
        let timestamp = match timestamp {
            Some(t) if t != i64::MIN => t,
            _ => return Err(self.fail(JoinError::MissingTimestamp { side: side.name() })),
        };
        if is_late(timestamp, self.timers.current_watermark()) {
            self.late_records_dropped.inc();
            return Ok(None);
        }
        self.backend.set_current_key(key.clone()).map_err(|e| self.fail(e))?;
        let at = self.bounds.cleanup_time(side, timestamp);
        self.timers.register_event_time_timer(key, side, at);
        Ok(Some(timestamp))
    }

    /// Calls the function with one pair.
    fn emit(&mut self, left: A, right: B, left_timestamp: i64, right_timestamp: i64) -> Result<(), TaskError> {
        let ctx = ProcessJoinContext {
            left_timestamp,
            right_timestamp,
            watermark: self.timers.current_watermark(),
            task_info: &self.task_info,
        };
        let mut out = Collector::new(&mut *self.out, Some(ctx.timestamp()));
        let r = self.f.process_element(left, right, &ctx, &mut out);
        out.finish(&self.name, r)
    }

    fn process_left(&mut self, value: A, timestamp: Option<i64>) -> Result<(), TaskError> {
        let key = (self.keys.0)(&value);
        let Some(ts) = self.admit(key, timestamp, JoinSide::Left)? else {
            return Ok(());
        };
        let found = matches(&mut self.backend, &self.right, &self.bounds, JoinSide::Left, ts);
        let found = found.map_err(|e| self.fail(e))?;
        for (right_ts, right) in found {
            self.emit(value.clone(), right, ts, right_ts)?;
        }
        buffer(&mut self.backend, &self.left, ts, value).map_err(|e| self.fail(e))
    }

    fn process_right(&mut self, value: B, timestamp: Option<i64>) -> Result<(), TaskError> {
        let key = (self.keys.1)(&value);
        let Some(ts) = self.admit(key, timestamp, JoinSide::Right)? else {
            return Ok(());
        };
        let found = matches(&mut self.backend, &self.left, &self.bounds, JoinSide::Right, ts);
        let found = found.map_err(|e| self.fail(e))?;
        for (left_ts, left) in found {
            self.emit(left, value.clone(), left_ts, ts)?;
        }
        buffer(&mut self.backend, &self.right, ts, value).map_err(|e| self.fail(e))
    }

    /// A cleanup timer: removes the bucket it was set for.
    fn on_timer(&mut self, timer: Timer<K, JoinSide>, _domain: TimeDomain) -> Result<(), TaskError> {
        let side = timer.namespace;
        let bucket = self.bounds.bucket_of_cleanup(side, timer.timestamp);
        self.backend.set_current_key(timer.key).map_err(|e| self.fail(e))?;
        let removed = match side {
            JoinSide::Left => self
                .backend
                .map(&self.left, &VoidNamespace)
                .map(|mut s| s.remove(&bucket)),
            JoinSide::Right => self
                .backend
                .map(&self.right, &VoidNamespace)
                .map(|mut s| s.remove(&bucket)),
        };
        removed.map_err(|e| self.fail(e))
    }
}

impl<K: KeyType, A: StateValue, B: StateValue, O, F: ProcessJoinFunction<A, B, O>> CheckpointedOperator
    for IntervalJoinOperator<K, A, B, O, F>
{
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<OperatorSnapshot, TaskError> {
        crate::keyed_state::snapshot_keyed(&mut self.backend, &self.timers)
    }

    fn snapshot_state_async(
        &mut self,
        checkpoint_id: u64,
        format: weir_state::SnapshotFormat,
    ) -> Result<weir_state::PendingOperatorSnapshot, TaskError> {
        crate::keyed_state::snapshot_keyed_async(&mut self.backend, &self.timers, checkpoint_id, format)
    }

    fn notify_checkpoint_complete(&mut self, checkpoint_id: u64) -> Result<(), TaskError> {
        self.backend.notify_checkpoint_complete(checkpoint_id);
        Ok(())
    }
}

impl<K: KeyType, A: StateValue, B: StateValue, O, F: ProcessJoinFunction<A, B, O>> Output<CoElement<A, B>>
    for IntervalJoinOperator<K, A, B, O, F>
{
    fn collect(&mut self, record: StreamRecord<CoElement<A, B>>) -> Result<(), TaskError> {
        match record.value {
            CoElement::First(a) => self.process_left(a, record.timestamp),
            CoElement::Second(b) => self.process_right(b, record.timestamp),
        }
    }

    fire_timers_and_forward!(timers, on_timer);
}

#[cfg(test)]
#[path = "interval_tests.rs"]
mod tests;
