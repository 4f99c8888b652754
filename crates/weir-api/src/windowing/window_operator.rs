//! The window operator (Flink's `WindowOperator`): assigns each element of a keyed
//! stream to windows, keeps their contents in keyed state per window, and asks the
//! trigger when to emit and purge.
//!
//! For every element, for every window the assigner gives (merged first, for session
//! windows): a window whose cleanup time the watermark has reached is skipped;
//! otherwise the element is added, the trigger is asked, the window fires and/or is
//! purged as it says, and a cleanup timer is set at `max_timestamp + allowed_lateness`
//! (event time) or `max_timestamp` (processing time). An element every window skipped
//! goes to the late-data side output if it is late (`ts + lateness <= watermark`), else
//! it is counted as dropped.
//!
//! Timers (event time on watermarks, processing time on the task's clock) call the
//! trigger again; at a window's cleanup time its contents, trigger state and timers
//! and its window function's per-window state are cleared. Records a window emits carry
//! `window.max_timestamp()`. The lateness rules are in [`super::lateness`], merging in
//! [`super::merging`]; this module applies the decisions to state and output.

use super::assigners::{AssignerContext, WindowAssigner};
use super::contents::{Firing, WindowContents};
use super::error::WindowError;
use super::lateness::{cleanup_time, is_element_late, is_window_late};
use super::merging::MergingWindowSet;
use super::triggers::{OnMergeContext, Trigger, TriggerContext, TriggerResult};
use super::window::Window;
use crate::forwarding::fire_timers_and_forward;
use crate::functions::{Collector, KeyType};
use std::marker::PhantomData;
use std::sync::Arc;
use weir_core::StreamRecord;
use weir_runtime::error::{TaskError, UserError};
use weir_runtime::operator::metric_group::Counter;
use weir_runtime::operator::{Output, ProcessingTimeService, SideOutput};
use weir_state::{KeyedStateBackend, TimeDomain, Timer, TimerService, ValueStateDescriptor, VoidNamespace};

/// What defines a windowed computation besides its function.
pub struct WindowSpec<K, T, W> {
    /// The operator's name (for errors).
    pub name: String,
    /// Extracts the key.
    pub key_selector: Arc<dyn Fn(&T) -> K + Send + Sync>,
    /// Assigns windows.
    pub assigner: Arc<dyn WindowAssigner<T, W>>,
    /// Decides firing.
    pub trigger: Arc<dyn Trigger<K, T, W>>,
    /// Allowed lateness in ms (event time).
    pub allowed_lateness: i64,
}

impl<K, T, W> Clone for WindowSpec<K, T, W> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            key_selector: self.key_selector.clone(),
            assigner: self.assigner.clone(),
            trigger: self.trigger.clone(),
            allowed_lateness: self.allowed_lateness,
        }
    }
}

/// The window operator of one subtask.
pub struct WindowOperator<K: KeyType, T, O, W: Window, C> {
    spec: WindowSpec<K, T, W>,
    event_time: bool,
    merging: bool,
    contents: C,
    backend: KeyedStateBackend<K>,
    timers: TimerService<K, W>,
    processing_time: ProcessingTimeService,
    out: Box<dyn Output<O>>,
    late: Option<SideOutput<T>>,
    late_records_dropped: Counter,
    windows: Vec<W>,
    prefetch_windows: Vec<W>,
    /// The key of the record or timer prefetched last, with its key group: the next
    /// record or timer usually has that key, whose group then is not hashed again.
    next_key: Option<(K, u32)>,
    merging_desc: ValueStateDescriptor<Vec<(W, W)>>,
    _o: PhantomData<fn() -> O>,
}

impl<K, T, O, W, C> WindowOperator<K, T, O, W, C>
where
    K: KeyType,
    T: Clone + 'static,
    W: Window,
    C: WindowContents<K, T, O, W>,
{
    /// The operator of one subtask, owning the key groups of `backend`; late elements
    /// go to `late` if the job consumes the late-data side output.
    pub fn new(
        spec: WindowSpec<K, T, W>,
        contents: C,
        backend: KeyedStateBackend<K>,
        processing_time: ProcessingTimeService,
        out: Box<dyn Output<O>>,
        late: Option<SideOutput<T>>,
    ) -> Self {
        Self::restored(
            spec,
            contents,
            (backend, TimerService::new()),
            processing_time,
            out,
            late,
        )
    }

    /// The operator of one subtask starting from restored state and timers (window
    /// contents, trigger state and merging sets live in the keyed state).
    pub fn restored(
        spec: WindowSpec<K, T, W>,
        contents: C,
        (backend, timers): (KeyedStateBackend<K>, TimerService<K, W>),
        processing_time: ProcessingTimeService,
        out: Box<dyn Output<O>>,
        late: Option<SideOutput<T>>,
    ) -> Self {
        if let Some(at) = timers.next_processing_time_timer() {
            processing_time.register_wakeup(at);
        }
        Self {
            event_time: spec.assigner.is_event_time(),
            merging: spec.assigner.is_merging(),
            spec,
            contents,
            backend,
            timers,
            processing_time,
            out,
            late,
            late_records_dropped: Counter::default(),
            windows: Vec::new(),
            prefetch_windows: Vec::new(),
            next_key: None,
            merging_desc: ValueStateDescriptor::new("merging-window-set"),
            _o: PhantomData,
        }
    }

    /// Late elements dropped because no late-data side output was set
    /// (Flink's `numLateRecordsDropped`).
    pub fn num_late_records_dropped(&self) -> u64 {
        self.late_records_dropped.get()
    }

    /// The same operator counting its dropped late elements in `counter` (its
    /// metric group's).
    pub fn with_late_records_dropped(mut self, counter: Counter) -> Self {
        self.late_records_dropped = counter;
        self
    }

    /// Registered timers (both domains), for tests of cleanup.
    pub fn num_timers(&self) -> usize {
        self.timers.len()
    }

    /// The keyed state, for tests of cleanup.
    pub fn backend(&mut self) -> &mut KeyedStateBackend<K> {
        &mut self.backend
    }

    fn fail(&self, e: impl std::fmt::Display) -> TaskError {
        TaskError::user(&self.spec.name, e)
    }

    /// The key group of `key`: the one computed when it was prefetched, or computed now.
    #[inline]
    fn key_group(&mut self, key: &K) -> u32 {
        match self.next_key.take() {
            Some((k, kg)) if k == *key => kg,
            _ => self.backend.key_group_of(key),
        }
    }

    fn cleanup_time(&self, window: &W) -> i64 {
        cleanup_time(window.max_timestamp(), self.spec.allowed_lateness, self.event_time)
    }

    fn is_window_late(&self, window: &W) -> bool {
        is_window_late(
            window.max_timestamp(),
            self.spec.allowed_lateness,
            self.event_time,
            self.timers.current_watermark(),
        )
    }

    fn load_merging_set(&mut self) -> Result<MergingWindowSet<W>, TaskError> {
        let mapping = self
            .backend
            .value(&self.merging_desc, &VoidNamespace)
            .map_err(|e| TaskError::user(&self.spec.name, e))?
            .value()
            .unwrap_or_default();
        Ok(MergingWindowSet::new(mapping))
    }

    fn persist_merging_set(&mut self, set: &MergingWindowSet<W>) -> Result<(), TaskError> {
        if !set.changed() {
            return Ok(());
        }
        let mut state = self
            .backend
            .value(&self.merging_desc, &VoidNamespace)
            .map_err(|e| TaskError::user(&self.spec.name, e))?;
        if set.mapping().is_empty() {
            state.clear();
        } else {
            state.update(set.mapping().to_vec());
        }
        Ok(())
    }

    fn trigger_ctx<'a>(
        key: &'a K,
        window: &'a W,
        backend: &'a mut KeyedStateBackend<K>,
        timers: &'a mut TimerService<K, W>,
        processing_time: &'a ProcessingTimeService,
    ) -> TriggerContext<'a, K, W> {
        TriggerContext {
            key,
            window,
            backend,
            timers,
            processing_time,
        }
    }

    fn register_cleanup_timer(&mut self, key: &K, window: &W) {
        let at = self.cleanup_time(window);
        if at == i64::MAX {
            return;
        }
        if self.event_time {
            self.timers.register_event_time_timer(key.clone(), window.clone(), at);
        } else if self
            .timers
            .register_processing_time_timer(key.clone(), window.clone(), at)
        {
            self.processing_time.register_wakeup(at);
        }
    }

    /// What the window function is told of `window` (contents in `state_window`) of
    /// `key`: the watermark now, the processing time when it asks.
    fn firing<'f>(
        key: &'f K,
        window: &'f W,
        state_window: &'f W,
        watermark: i64,
        processing_time: &'f ProcessingTimeService,
        merging: bool,
    ) -> Firing<'f, K, W> {
        Firing {
            key,
            window,
            state_window,
            watermark,
            processing_time,
            merging,
        }
    }

    /// Emits the window's result; with `clear`, also removes its contents.
    fn emit_contents(&mut self, key: &K, window: &W, state_window: &W, clear: bool) -> Result<(), TaskError> {
        let firing = Self::firing(
            key,
            window,
            state_window,
            self.timers.current_watermark(),
            &self.processing_time,
            self.merging,
        );
        let mut out = Collector::new(&mut *self.out, Some(window.max_timestamp()));
        let r = self.contents.emit(&mut self.backend, &firing, &mut out, clear);
        out.finish(&self.spec.name, r)
    }

    /// Adds `value` to `window` (contents in `state_window`) and acts on the trigger.
    fn add_and_trigger(
        &mut self,
        key: &K,
        window: &W,
        state_window: &W,
        value: T,
        timestamp: i64,
    ) -> Result<(), TaskError> {
        // The trigger sees neither the contents nor the element's presence in them,
        // so asking it before adding is the same as after; the decision is applied
        // once the element is in.
        let result = {
            let mut ctx = Self::trigger_ctx(key, window, &mut self.backend, &mut self.timers, &self.processing_time);
            self.spec.trigger.on_element(&value, timestamp, window, &mut ctx)
        }
        .map_err(|e| self.fail(e))?;
        self.contents
            .add(&mut self.backend, state_window, value)
            .map_err(|e| TaskError::user(&self.spec.name, e))?;
        self.apply(result, key, window, state_window, false)?;
        self.register_cleanup_timer(key, window);
        Ok(())
    }

    /// Fires and/or purges as `result` says; `cleanup`: the contents are cleared right
    /// after, so a firing takes them out. True if the contents are gone.
    fn apply(
        &mut self,
        result: TriggerResult,
        key: &K,
        window: &W,
        state_window: &W,
        cleanup: bool,
    ) -> Result<bool, TaskError> {
        let take = cleanup && result.is_fire();
        if result.is_fire() {
            self.emit_contents(key, window, state_window, take)?;
        }
        if result.is_purge() && !take {
            self.contents
                .clear_contents(&mut self.backend, state_window)
                .map_err(|e| TaskError::user(&self.spec.name, e))?;
        }
        Ok(take || result.is_purge())
    }

    fn process_element(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        let key = (self.spec.key_selector)(&record.value);
        let kg = self.key_group(&key);
        self.backend
            .set_current_key_in_group(key.clone(), kg)
            .map_err(|e| self.fail(e))?;
        let timestamp = record.timestamp.unwrap_or(i64::MIN);
        let actx = AssignerContext::new(&self.processing_time);
        let mut windows = std::mem::take(&mut self.windows);
        windows.clear();
        if let Err(e) = self
            .spec
            .assigner
            .assign_windows(&record.value, timestamp, &actx, &mut windows)
        {
            return Err(self.fail(e));
        }
        let mut value = Some(record.value);
        let mut skipped = true;
        let n = windows.len();
        let result = if self.merging {
            self.add_to_merging_windows(&key, &windows, &mut value, &mut skipped, timestamp)
        } else {
            let mut r = Ok(());
            for (i, window) in windows.iter().enumerate() {
                if self.is_window_late(window) {
                    continue;
                }
                skipped = false;
                let v = if i + 1 == n { value.take() } else { value.clone() };
                if let Some(v) = v {
                    r = self.add_and_trigger(&key, window, window, v, timestamp);
                    if r.is_err() {
                        break;
                    }
                }
            }
            r
        };
        self.windows = windows;
        result?;
        if skipped
            && is_element_late(
                timestamp,
                self.spec.allowed_lateness,
                self.event_time,
                self.timers.current_watermark(),
            )
        {
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

    fn add_to_merging_windows(
        &mut self,
        key: &K,
        windows: &[W],
        value: &mut Option<T>,
        skipped: &mut bool,
        timestamp: i64,
    ) -> Result<(), TaskError> {
        let mut set = self.load_merging_set()?;
        let n = windows.len();
        for (i, window) in windows.iter().enumerate() {
            let actual = self.add_window(&mut set, key, window)?;
            if self.is_window_late(&actual) {
                set.retire_window(&actual).map_err(|e| self.fail(e))?;
                continue;
            }
            *skipped = false;
            let state_window = set
                .state_window(&actual)
                .cloned()
                .ok_or_else(|| self.fail(WindowError::NotInFlight(format!("{window:?}"))))?;
            let v = if i + 1 == n { value.take() } else { value.clone() };
            if let Some(v) = v {
                self.add_and_trigger(key, &actual, &state_window, v, timestamp)?;
            }
        }
        self.persist_merging_set(&set)
    }

    /// Adds `window` to the merging set, merging state, trigger state and timers of the
    /// windows it merges with.
    fn add_window(&mut self, set: &mut MergingWindowSet<W>, key: &K, window: &W) -> Result<W, TaskError> {
        let assigner = self.spec.assigner.clone();
        let trigger = self.spec.trigger.clone();
        let event_time = self.event_time;
        let lateness = self.spec.allowed_lateness;
        let backend = &mut self.backend;
        let timers = &mut self.timers;
        let contents = &mut self.contents;
        let pts = &self.processing_time;
        let merge = |result: &W, merged: &[W], state_result: &W, merged_states: &[W]| -> Result<(), UserError> {
            if event_time && cleanup_time(result.max_timestamp(), lateness, true) <= timers.current_watermark() {
                return Err(WindowError::MergeBehindWatermark {
                    watermark: timers.current_watermark(),
                    window: format!("{result:?}"),
                }
                .into());
            }
            if !event_time {
                let now = pts.current_processing_time();
                if result.max_timestamp() <= now {
                    return Err(WindowError::MergeBehindProcessingTime {
                        time: now,
                        window: format!("{result:?}"),
                    }
                    .into());
                }
            }
            let mut mctx = OnMergeContext {
                ctx: Self::trigger_ctx(key, result, &mut *backend, &mut *timers, pts),
                merged,
            };
            trigger.on_merge(result, &mut mctx)?;
            for m in merged {
                let mut ctx = Self::trigger_ctx(key, m, &mut *backend, &mut *timers, pts);
                trigger.clear(m, &mut ctx)?;
                let at = cleanup_time(m.max_timestamp(), lateness, event_time);
                if at != i64::MAX {
                    if event_time {
                        timers.delete_event_time_timer(key, m, at);
                    } else {
                        timers.delete_processing_time_timer(key, m, at);
                    }
                }
            }
            contents.merge(&mut *backend, state_result, merged_states)
        };
        set.add_window(window.clone(), |ws| assigner.merge_windows(ws), merge)
            .map_err(|e| TaskError::user(&self.spec.name, e))
    }

    fn on_timer(&mut self, timer: Timer<K, W>, domain: TimeDomain) -> Result<(), TaskError> {
        let event_time_timer = domain == TimeDomain::EventTime;
        let Timer {
            timestamp,
            key,
            namespace: window,
        } = timer;
        let kg = self.key_group(&key);
        if !self.merging {
            if let Some((next_key, next_window)) = self.timers.peek_firing(domain) {
                let next_kg = self.backend.key_group_of(next_key);
                self.contents.prefetch(&self.backend, next_key, next_kg, next_window);
                self.next_key = Some((next_key.clone(), next_kg));
            }
        }
        self.backend
            .set_current_key_in_group(key.clone(), kg)
            .map_err(|e| self.fail(e))?;
        let mut set = if self.merging {
            Some(self.load_merging_set()?)
        } else {
            None
        };
        let state_window = match &set {
            Some(s) => match s.state_window(&window) {
                Some(sw) => sw.clone(),
                // A timer of a window that is gone: its trigger did not clean up.
                None => return Ok(()),
            },
            None => window.clone(),
        };
        let result = {
            let mut ctx = Self::trigger_ctx(
                &key,
                &window,
                &mut self.backend,
                &mut self.timers,
                &self.processing_time,
            );
            if event_time_timer {
                self.spec.trigger.on_event_time(timestamp, &window, &mut ctx)
            } else {
                self.spec.trigger.on_processing_time(timestamp, &window, &mut ctx)
            }
        }
        .map_err(|e| self.fail(e))?;
        let cleanup = self.event_time == event_time_timer && timestamp == self.cleanup_time(&window);
        let contents_gone = self.apply(result, &key, &window, &state_window, cleanup)?;
        if cleanup {
            self.clear_all_state(&key, &window, &state_window, set.as_mut(), contents_gone)?;
        }
        if let Some(s) = &set {
            self.persist_merging_set(s)?;
        }
        Ok(())
    }

    fn clear_all_state(
        &mut self,
        key: &K,
        window: &W,
        state_window: &W,
        set: Option<&mut MergingWindowSet<W>>,
        contents_gone: bool,
    ) -> Result<(), TaskError> {
        let name = &self.spec.name;
        let fail = |e: UserError| TaskError::user(name, e);
        if !contents_gone {
            self.contents
                .clear_contents(&mut self.backend, state_window)
                .map_err(fail)?;
        }
        {
            let mut ctx = Self::trigger_ctx(key, window, &mut self.backend, &mut self.timers, &self.processing_time);
            self.spec.trigger.clear(window, &mut ctx).map_err(fail)?;
        }
        let firing = Self::firing(
            key,
            window,
            state_window,
            self.timers.current_watermark(),
            &self.processing_time,
            self.merging,
        );
        self.contents.clear_function(&mut self.backend, &firing).map_err(fail)?;
        if let Some(set) = set {
            set.retire_window(window).map_err(|e| TaskError::user(name, e))?;
        }
        Ok(())
    }
}

impl<K, T, O, W, C> weir_runtime::checkpoint::CheckpointedOperator for WindowOperator<K, T, O, W, C>
where
    K: KeyType,
    T: Clone + 'static,
    W: Window,
    C: WindowContents<K, T, O, W>,
{
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<weir_state::OperatorSnapshot, TaskError> {
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

impl<K, T, O, W, C> Output<T> for WindowOperator<K, T, O, W, C>
where
    K: KeyType,
    T: Clone + 'static,
    W: Window,
    C: WindowContents<K, T, O, W>,
{
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.process_element(record)
    }

    /// Prefetches the contents of the windows `record` will go to (event-time,
    /// non-merging assigners: their windows follow from the timestamp alone).
    fn prefetch(&mut self, record: &StreamRecord<T>) {
        if self.merging || !self.event_time {
            return;
        }
        let key = (self.spec.key_selector)(&record.value);
        let kg = self.backend.key_group_of(&key);
        let timestamp = record.timestamp.unwrap_or(i64::MIN);
        let actx = AssignerContext::new(&self.processing_time);
        let mut windows = std::mem::take(&mut self.prefetch_windows);
        windows.clear();
        if self
            .spec
            .assigner
            .assign_windows(&record.value, timestamp, &actx, &mut windows)
            .is_ok()
        {
            for window in &windows {
                self.contents.prefetch(&self.backend, &key, kg, window);
            }
        }
        self.prefetch_windows = windows;
        self.next_key = Some((key, kg));
    }

    fire_timers_and_forward!(timers, on_timer);
}

#[cfg(test)]
mod tests;
