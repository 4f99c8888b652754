//! The window operator for the most common windows — event-time tumbling or sliding
//! windows with the default trigger, no allowed lateness, reduced or aggregated — with
//! its contents in a [`WindowTable`] instead of keyed state and timers.
//!
//! Such a window fires exactly once, when the watermark passes its end, and is cleared
//! right after; nothing else happens to it. So the general
//! [`WindowOperator`](super::window_operator::WindowOperator)'s per-element work —
//! setting the current key, looking the contents up in keyed state by (key, window),
//! asking the trigger, registering the trigger's timer and the cleanup timer (one
//! (key, window) pair each) — comes down to one probe of the window's pane, and its
//! per-firing work — popping a timer, asking the trigger, taking the contents out of
//! state, deleting the timer — to walking the pane. The output is the same, in the same
//! order (see [`super::window_table`]), late elements are dropped or sent to the side
//! output by the same rule, and the window function sees the same context.
//!
//! Snapshots have the keyed-state operator's layout: the accumulators as its
//! `window-contents` value state per (key, window) and one event-time timer per (key,
//! window) at the window's max timestamp. Either operator restores the other's.
//! Neither registers a processing-time timer for these windows (their trigger fires on
//! event time only), so a restore has none to carry over: processing-time timers in a
//! snapshot, which no window operator with this spec writes, are not restored.

use super::assigners::AssignerContext;
use super::contents::{AccumulatingContents, Firing};
use super::lateness::{is_element_late, is_window_late};
use super::window::Window;
use super::window_operator::WindowSpec;
use super::window_table::{PaneEntry, WindowTable};
use crate::forwarding::forward_end_and_status;
use crate::functions::{Collector, KeyType};
use std::marker::PhantomData;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::error::TaskError;
use weir_runtime::operator::metric_group::Counter;
use weir_runtime::operator::{Output, ProcessingTimeService, SideOutput};
use weir_state::{KeyedStateBackend, StateError, TimerService};

/// True if the window operator of `spec` may keep its contents in a [`WindowTable`]:
/// event-time windows, never merged, all of one size, fired only at their end by the
/// trigger, without allowed lateness.
pub fn fits_window_table<K: KeyType, T: 'static, W: Window>(spec: &WindowSpec<K, T, W>) -> bool {
    spec.assigner.is_event_time()
        && !spec.assigner.is_merging()
        && spec.assigner.one_window_per_end()
        && spec.trigger.fires_only_at_window_end()
        && spec.allowed_lateness == 0
}

/// The window operator of one subtask over a [`WindowTable`].
pub struct WindowTableOperator<K: KeyType, T, O, W: Window, C: AccumulatingContents<K, T, O, W>> {
    spec: WindowSpec<K, T, W>,
    contents: C,
    table: WindowTable<K, W, C::Acc>,
    /// The window function's state (per window and global).
    backend: KeyedStateBackend<K>,
    watermark: i64,
    processing_time: ProcessingTimeService,
    out: Box<dyn Output<O>>,
    late: Option<SideOutput<T>>,
    late_records_dropped: Counter,
    windows: Vec<W>,
    _o: PhantomData<fn() -> O>,
}

impl<K, T, O, W, C> WindowTableOperator<K, T, O, W, C>
where
    K: KeyType,
    T: Clone + 'static,
    W: Window,
    C: AccumulatingContents<K, T, O, W>,
{
    /// The operator of one subtask starting from restored keyed state and timers (as
    /// either window operator snapshots them): the accumulators and their timers move
    /// into the table, the timers' order giving the order of the keys in each window.
    pub fn restored(
        spec: WindowSpec<K, T, W>,
        contents: C,
        (mut backend, mut timers): (KeyedStateBackend<K>, TimerService<K, W>),
        processing_time: ProcessingTimeService,
        out: Box<dyn Output<O>>,
        late: Option<SideOutput<T>>,
    ) -> Result<Self, TaskError> {
        let fail = |e: StateError| TaskError::user(&spec.name, e);
        let handle = backend.value_handle::<W, C::Acc>(contents.descriptor()).map_err(fail)?;
        let mut accs: rustc_hash::FxHashMap<(K, W), C::Acc> = backend
            .take_value_entries::<W, C::Acc>(handle)
            .map_err(fail)?
            .into_iter()
            .map(|(k, w, acc)| ((k, w), acc))
            .collect();
        let mut table = WindowTable::new();
        for timer in timers.drain_event_time_timers() {
            let pair = (timer.key, timer.namespace);
            if let Some(acc) = accs.remove(&pair) {
                *table.pane(&pair.1).slot(&pair.0) = Some(acc);
            }
        }
        // Contents without a timer cannot come from either operator; they are kept
        // (in window, then key order) rather than lost.
        let mut untimed: Vec<((K, W), C::Acc)> = accs.into_iter().collect();
        untimed.sort_by(|((ka, wa), _), ((kb, wb), _)| (wa, ka).cmp(&(wb, kb)));
        for ((key, window), acc) in untimed {
            *table.pane(&window).slot(&key) = Some(acc);
        }
        Ok(Self {
            spec,
            contents,
            table,
            backend,
            watermark: i64::MIN,
            processing_time,
            out,
            late,
            late_records_dropped: Counter::default(),
            windows: Vec::new(),
            _o: PhantomData,
        })
    }

    /// The same operator counting its dropped late elements in `counter` (its
    /// metric group's).
    pub fn with_late_records_dropped(mut self, counter: Counter) -> Self {
        self.late_records_dropped = counter;
        self
    }

    /// Late elements dropped because no late-data side output was set
    /// (Flink's `numLateRecordsDropped`).
    pub fn num_late_records_dropped(&self) -> u64 {
        self.late_records_dropped.get()
    }

    /// The (key, window) pairs with contents, for tests of cleanup.
    pub fn num_entries(&self) -> usize {
        self.table.len()
    }

    fn process_element(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        let key = (self.spec.key_selector)(&record.value);
        let timestamp = record.timestamp.unwrap_or(i64::MIN);
        let mut windows = std::mem::take(&mut self.windows);
        windows.clear();
        let assigned = self.spec.assigner.assign_windows(
            &record.value,
            timestamp,
            &AssignerContext::new(&self.processing_time),
            &mut windows,
        );
        if let Err(e) = assigned {
            self.windows = windows;
            return Err(TaskError::user(&self.spec.name, e));
        }
        let mut value = Some(record.value);
        let mut skipped = true;
        let n = windows.len();
        for (i, window) in windows.iter().enumerate() {
            if is_window_late(window.max_timestamp(), 0, true, self.watermark) {
                continue;
            }
            skipped = false;
            let v = if i + 1 == n { value.take() } else { value.clone() };
            if let Some(v) = v {
                let slot = self.table.pane(window).slot(&key);
                self.contents.accumulate(slot, v);
            }
        }
        self.windows = windows;
        if skipped && is_element_late(timestamp, 0, true, self.watermark) {
            match (&mut self.late, value) {
                (Some(late), Some(v)) => late.collect(StreamRecord {
                    value: v,
                    timestamp: record.timestamp,
                })?,
                _ => self.late_records_dropped.inc(),
            }
        }
        Ok(())
    }

    /// Fires every window the watermark has passed, earliest first, each key in the
    /// order of its first element; the window function may then clear its state.
    fn fire_due_windows(&mut self) -> Result<(), TaskError> {
        while let Some(mut pane) = self.table.pop_due(self.watermark) {
            let window = &pane.window;
            for PaneEntry { key, acc } in pane.entries.drain(..) {
                let Some(acc) = acc else { continue };
                let kg = self.backend.key_group_of(&key);
                self.backend
                    .set_current_key_in_group(key.clone(), kg)
                    .map_err(|e| TaskError::user(&self.spec.name, e))?;
                let firing = Firing {
                    key: &key,
                    window,
                    state_window: window,
                    watermark: self.watermark,
                    processing_time: &self.processing_time,
                    merging: false,
                };
                let mut out = Collector::new(&mut *self.out, Some(window.max_timestamp()));
                let fired = self.contents.fire(acc, &mut self.backend, &firing, &mut out);
                out.finish(&self.spec.name, fired)?;
                self.contents
                    .clear_function(&mut self.backend, &firing)
                    .map_err(|e| TaskError::user(&self.spec.name, e))?;
            }
            self.table.recycle(pane);
        }
        Ok(())
    }
}

impl<K, T, O, W, C> weir_runtime::checkpoint::CheckpointedOperator for WindowTableOperator<K, T, O, W, C>
where
    K: KeyType,
    T: Clone + 'static,
    W: Window,
    C: AccumulatingContents<K, T, O, W>,
{
    /// The keyed-state operator's layout: the accumulators go into the backend and the
    /// timers into a timer service just for the snapshot, and out again.
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<weir_state::OperatorSnapshot, TaskError> {
        let name = &self.spec.name;
        let fail = |e: StateError| TaskError::user(name, e);
        let handle = self
            .backend
            .value_handle::<W, C::Acc>(self.contents.descriptor())
            .map_err(fail)?;
        let mut timers: TimerService<K, W> = TimerService::new();
        for pane in self.table.panes() {
            for entry in &pane.entries {
                let Some(acc) = &entry.acc else { continue };
                self.backend.set_current_key(entry.key.clone()).map_err(fail)?;
                self.backend
                    .value_of(handle, &pane.window)
                    .map_err(fail)?
                    .update(acc.clone());
                timers.register_event_time_timer(entry.key.clone(), pane.window.clone(), pane.window.max_timestamp());
            }
        }
        let snapshot = crate::keyed_state::snapshot_keyed(&mut self.backend, &timers);
        self.backend.take_value_entries::<W, C::Acc>(handle).map_err(fail)?;
        snapshot
    }
}

impl<K, T, O, W, C> Output<T> for WindowTableOperator<K, T, O, W, C>
where
    K: KeyType,
    T: Clone + 'static,
    W: Window,
    C: AccumulatingContents<K, T, O, W>,
{
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.process_element(record)
    }

    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.watermark = self.watermark.max(watermark.0);
        self.fire_due_windows()?;
        self.out.emit_watermark(watermark)
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.out.on_processing_time(now)
    }

    forward_end_and_status!();
}

#[cfg(test)]
#[path = "window_table_operator_tests.rs"]
mod tests;
