//! Triggers: when a window's contents are emitted and when they are purged (Flink's
//! `Trigger` and its built-in implementations).
//!
//! A trigger is stateless; what it remembers per window lives in keyed state scoped to
//! (key, window), reached through its [`TriggerContext`], as do its timers. Each call
//! returns a [`TriggerResult`] that the window operator acts on — the trigger never
//! emits itself.
//!
//! - [`EventTimeTrigger`]: fires when the watermark passes `window.max_timestamp()`;
//!   an element for a window the watermark has already passed fires it at once (late
//!   firing). Never purges.
//! - [`ProcessingTimeTrigger`]: fires when the task's clock passes the window's end.
//! - [`CountTrigger`]: fires every `n` elements of a window.
//! - [`PurgingTrigger`]: turns another trigger's FIRE into FIRE_AND_PURGE.
//! - [`NeverTrigger`]: never fires (the default of `GlobalWindows`).

use super::error::WindowError;
use super::window::Window;
use crate::functions::KeyType;
use std::sync::Arc;
use weir_runtime::error::UserError;
use weir_runtime::operator::ProcessingTimeService;
use weir_state::heap::{StateValue, ValueState};
use weir_state::{KeyedStateBackend, StateError, TimerService, ValueStateDescriptor};

/// What the window operator does after a trigger call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerResult {
    /// Nothing.
    Continue,
    /// Emit the window's contents.
    Fire,
    /// Clear the window's contents.
    Purge,
    /// Emit, then clear.
    FireAndPurge,
}

impl TriggerResult {
    /// True for `Fire` and `FireAndPurge`.
    pub fn is_fire(self) -> bool {
        matches!(self, TriggerResult::Fire | TriggerResult::FireAndPurge)
    }

    /// True for `Purge` and `FireAndPurge`.
    pub fn is_purge(self) -> bool {
        matches!(self, TriggerResult::Purge | TriggerResult::FireAndPurge)
    }
}

/// What a trigger may do for the current key and window: timers, time, state.
pub struct TriggerContext<'a, K: KeyType, W: Window> {
    pub(crate) key: &'a K,
    pub(crate) window: &'a W,
    pub(crate) backend: &'a mut KeyedStateBackend<K>,
    pub(crate) timers: &'a mut TimerService<K, W>,
    pub(crate) processing_time: &'a ProcessingTimeService,
}

impl<K: KeyType, W: Window> TriggerContext<'_, K, W> {
    /// The operator's current event-time watermark.
    pub fn current_watermark(&self) -> i64 {
        self.timers.current_watermark()
    }

    /// The task's current processing time.
    pub fn current_processing_time(&self) -> i64 {
        self.processing_time.current_processing_time()
    }

    /// Calls `on_event_time` for this key and window once the watermark reaches `time`.
    pub fn register_event_time_timer(&mut self, time: i64) {
        self.timers
            .register_event_time_timer(self.key.clone(), self.window.clone(), time);
    }

    /// Deletes an event-time timer of this key and window.
    pub fn delete_event_time_timer(&mut self, time: i64) {
        self.timers.delete_event_time_timer(self.key, self.window, time);
    }

    /// Calls `on_processing_time` for this key and window once the clock reaches `time`.
    pub fn register_processing_time_timer(&mut self, time: i64) {
        if self
            .timers
            .register_processing_time_timer(self.key.clone(), self.window.clone(), time)
        {
            self.processing_time.register_wakeup(time);
        }
    }

    /// Deletes a processing-time timer of this key and window.
    pub fn delete_processing_time_timer(&mut self, time: i64) {
        self.timers.delete_processing_time_timer(self.key, self.window, time);
    }

    /// Value state of this key and window (Flink's `getPartitionedState`).
    pub fn value_state<V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
    ) -> Result<ValueState<'_, K, W, V>, StateError> {
        self.backend.value(desc, self.window)
    }
}

/// The context of [`Trigger::on_merge`]: the merged window's context plus the windows
/// merged into it.
pub struct OnMergeContext<'a, K: KeyType, W: Window> {
    /// The context of the resulting window.
    pub ctx: TriggerContext<'a, K, W>,
    pub(crate) merged: &'a [W],
}

impl<K: KeyType, W: Window> OnMergeContext<'_, K, W> {
    /// The windows merged into the current one.
    pub fn merged_windows(&self) -> &[W] {
        self.merged
    }

    /// Moves the value state `desc` of the merged windows into the current window,
    /// combining values with `merge` (Flink's `mergePartitionedState`).
    pub fn merge_value_state<V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
        merge: impl Fn(V, V) -> V,
    ) -> Result<(), StateError> {
        let mut acc: Option<V> = None;
        for w in self.merged {
            if let Some(v) = self.ctx.backend.value(desc, w)?.take() {
                acc = Some(match acc {
                    Some(a) => merge(a, v),
                    None => v,
                });
            }
        }
        if let Some(v) = acc {
            let mut target = self.ctx.backend.value(desc, self.ctx.window)?;
            let merged = match target.take() {
                Some(t) => merge(t, v),
                None => v,
            };
            target.update(merged);
        }
        Ok(())
    }
}

/// Decides when a window fires and purges (Flink's `Trigger`). Implemented for a key
/// type `K`, element type `T` and window type `W`; built-in triggers work for all.
pub trait Trigger<K: KeyType, T, W: Window>: Send + Sync + 'static {
    /// An element was added to `window`.
    fn on_element(
        &self,
        element: &T,
        timestamp: i64,
        window: &W,
        ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError>;

    /// An event-time timer of `window` fired. A trigger that registers no event-time
    /// timers keeps the default, which does nothing.
    fn on_event_time(
        &self,
        _time: i64,
        _window: &W,
        _ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(TriggerResult::Continue)
    }

    /// A processing-time timer of `window` fired. A trigger that registers no
    /// processing-time timers keeps the default, which does nothing.
    fn on_processing_time(
        &self,
        _time: i64,
        _window: &W,
        _ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(TriggerResult::Continue)
    }

    /// True if the trigger fires a window exactly once, when the watermark passes its
    /// max timestamp (at once for an element arriving after that), and keeps no state
    /// and no other timers: [`EventTimeTrigger`]. The window operator may then keep the
    /// contents window by window and not ask the trigger.
    fn fires_only_at_window_end(&self) -> bool {
        false
    }

    /// True if the trigger supports merging windows (sessions).
    fn can_merge(&self) -> bool {
        false
    }

    /// Windows were merged into `window`: re-register timers, merge state.
    fn on_merge(&self, _window: &W, _ctx: &mut OnMergeContext<'_, K, W>) -> Result<(), UserError> {
        Err(WindowError::TriggerCannotMerge.into())
    }

    /// The window is purged for good: delete its timers and state. A trigger that
    /// keeps neither keeps the default, which does nothing.
    fn clear(&self, _window: &W, _ctx: &mut TriggerContext<'_, K, W>) -> Result<(), UserError> {
        Ok(())
    }

    /// The trigger's name in operator names, e.g. `EventTimeTrigger`.
    fn describe(&self) -> String;
}

/// Fires when the watermark passes the window's end (Flink's `EventTimeTrigger`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EventTimeTrigger;

impl<K: KeyType, T, W: Window> Trigger<K, T, W> for EventTimeTrigger {
    fn on_element(
        &self,
        _element: &T,
        _timestamp: i64,
        window: &W,
        ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        if window.max_timestamp() <= ctx.current_watermark() {
            // The watermark is past the window: a late element fires it at once.
            Ok(TriggerResult::Fire)
        } else {
            ctx.register_event_time_timer(window.max_timestamp());
            Ok(TriggerResult::Continue)
        }
    }

    fn on_event_time(
        &self,
        time: i64,
        window: &W,
        _ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(if time == window.max_timestamp() {
            TriggerResult::Fire
        } else {
            TriggerResult::Continue
        })
    }

    fn fires_only_at_window_end(&self) -> bool {
        true
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge(&self, window: &W, ctx: &mut OnMergeContext<'_, K, W>) -> Result<(), UserError> {
        // Only if the watermark is not yet past the merged window's end: otherwise
        // on_element fires it, and a timer would fire it twice.
        let max = window.max_timestamp();
        if max > ctx.ctx.current_watermark() {
            ctx.ctx.register_event_time_timer(max);
        }
        Ok(())
    }

    fn clear(&self, window: &W, ctx: &mut TriggerContext<'_, K, W>) -> Result<(), UserError> {
        ctx.delete_event_time_timer(window.max_timestamp());
        Ok(())
    }

    fn describe(&self) -> String {
        "EventTimeTrigger".into()
    }
}

/// Fires when the task's clock passes the window's end (Flink's `ProcessingTimeTrigger`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessingTimeTrigger;

impl<K: KeyType, T, W: Window> Trigger<K, T, W> for ProcessingTimeTrigger {
    fn on_element(
        &self,
        _element: &T,
        _timestamp: i64,
        window: &W,
        ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        ctx.register_processing_time_timer(window.max_timestamp());
        Ok(TriggerResult::Continue)
    }

    fn on_processing_time(
        &self,
        _time: i64,
        _window: &W,
        _ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(TriggerResult::Fire)
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge(&self, window: &W, ctx: &mut OnMergeContext<'_, K, W>) -> Result<(), UserError> {
        let max = window.max_timestamp();
        if max > ctx.ctx.current_processing_time() {
            ctx.ctx.register_processing_time_timer(max);
        }
        Ok(())
    }

    fn clear(&self, window: &W, ctx: &mut TriggerContext<'_, K, W>) -> Result<(), UserError> {
        ctx.delete_processing_time_timer(window.max_timestamp());
        Ok(())
    }

    fn describe(&self) -> String {
        "ProcessingTimeTrigger".into()
    }
}

/// Fires once a window holds `max_count` elements, then counts again (Flink's
/// `CountTrigger`).
#[derive(Debug, Clone)]
pub struct CountTrigger {
    max_count: u64,
    desc: ValueStateDescriptor<u64>,
}

impl CountTrigger {
    /// Fires every `max_count` elements.
    pub fn of(max_count: u64) -> Self {
        Self {
            max_count,
            desc: ValueStateDescriptor::new("count-trigger"),
        }
    }
}

impl<K: KeyType, T, W: Window> Trigger<K, T, W> for CountTrigger {
    fn on_element(
        &self,
        _element: &T,
        _timestamp: i64,
        _window: &W,
        ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        let mut count = ctx.value_state(&self.desc)?;
        let n = count.value().unwrap_or(0) + 1;
        if n >= self.max_count {
            count.clear();
            Ok(TriggerResult::Fire)
        } else {
            count.update(n);
            Ok(TriggerResult::Continue)
        }
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge(&self, _window: &W, ctx: &mut OnMergeContext<'_, K, W>) -> Result<(), UserError> {
        Ok(ctx.merge_value_state(&self.desc, |a, b| a + b)?)
    }

    fn clear(&self, _window: &W, ctx: &mut TriggerContext<'_, K, W>) -> Result<(), UserError> {
        ctx.value_state(&self.desc)?.clear();
        Ok(())
    }

    fn describe(&self) -> String {
        format!("CountTrigger({})", self.max_count)
    }
}

/// Purges whenever the nested trigger fires (Flink's `PurgingTrigger`).
pub struct PurgingTrigger<K, T, W> {
    nested: Arc<dyn Trigger<K, T, W>>,
}

impl<K, T, W> Clone for PurgingTrigger<K, T, W> {
    fn clone(&self) -> Self {
        Self {
            nested: self.nested.clone(),
        }
    }
}

impl<K: KeyType, T: 'static, W: Window> PurgingTrigger<K, T, W> {
    /// Wraps `nested`.
    pub fn of(nested: impl Trigger<K, T, W>) -> Self {
        Self {
            nested: Arc::new(nested),
        }
    }

    fn purging(r: TriggerResult) -> TriggerResult {
        if r.is_fire() {
            TriggerResult::FireAndPurge
        } else {
            r
        }
    }
}

impl<K: KeyType, T: 'static, W: Window> Trigger<K, T, W> for PurgingTrigger<K, T, W> {
    fn on_element(
        &self,
        element: &T,
        timestamp: i64,
        window: &W,
        ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(Self::purging(self.nested.on_element(element, timestamp, window, ctx)?))
    }

    fn on_event_time(
        &self,
        time: i64,
        window: &W,
        ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(Self::purging(self.nested.on_event_time(time, window, ctx)?))
    }

    fn on_processing_time(
        &self,
        time: i64,
        window: &W,
        ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(Self::purging(self.nested.on_processing_time(time, window, ctx)?))
    }

    fn can_merge(&self) -> bool {
        self.nested.can_merge()
    }

    fn on_merge(&self, window: &W, ctx: &mut OnMergeContext<'_, K, W>) -> Result<(), UserError> {
        self.nested.on_merge(window, ctx)
    }

    fn clear(&self, window: &W, ctx: &mut TriggerContext<'_, K, W>) -> Result<(), UserError> {
        self.nested.clear(window, ctx)
    }

    fn describe(&self) -> String {
        format!("PurgingTrigger({})", self.nested.describe())
    }
}

/// Never fires (the default trigger of `GlobalWindows`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NeverTrigger;

impl<K: KeyType, T, W: Window> Trigger<K, T, W> for NeverTrigger {
    fn on_element(
        &self,
        _element: &T,
        _timestamp: i64,
        _window: &W,
        _ctx: &mut TriggerContext<'_, K, W>,
    ) -> Result<TriggerResult, UserError> {
        Ok(TriggerResult::Continue)
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge(&self, _window: &W, _ctx: &mut OnMergeContext<'_, K, W>) -> Result<(), UserError> {
        Ok(())
    }

    fn describe(&self) -> String {
        "NeverTrigger".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windowing::window::TimeWindow;
    use weir_core::KeyGroupRange;

    struct Fixture {
        backend: KeyedStateBackend<u64>,
        timers: TimerService<u64, TimeWindow>,
        pts: ProcessingTimeService,
    }

    impl Fixture {
        fn new() -> Self {
            let mut backend = KeyedStateBackend::new(KeyGroupRange::new(0, 127), 128);
            backend.set_current_key(1).unwrap();
            Self {
                backend,
                timers: TimerService::new(),
                pts: ProcessingTimeService::manual(0).0,
            }
        }

        fn call<R>(&mut self, window: &TimeWindow, f: impl FnOnce(&mut TriggerContext<'_, u64, TimeWindow>) -> R) -> R {
            let mut ctx = TriggerContext {
                key: &1,
                window,
                backend: &mut self.backend,
                timers: &mut self.timers,
                processing_time: &self.pts,
            };
            f(&mut ctx)
        }
    }

    #[test]
    fn event_time_trigger_registers_a_timer_at_the_window_end_and_fires_on_it() {
        let mut fx = Fixture::new();
        let w = TimeWindow::new(0, 10);
        let t = EventTimeTrigger;
        let r = fx.call(&w, |c| Trigger::<u64, u8, _>::on_element(&t, &0, 3, &w, c).unwrap());
        assert_eq!(r, TriggerResult::Continue);
        assert_eq!(fx.timers.next_event_time_timer(), Some(9));
        let r = fx.call(&w, |c| Trigger::<u64, u8, _>::on_event_time(&t, 9, &w, c).unwrap());
        assert_eq!(r, TriggerResult::Fire);
        let r = fx.call(&w, |c| Trigger::<u64, u8, _>::on_event_time(&t, 12, &w, c).unwrap());
        assert_eq!(r, TriggerResult::Continue);
        fx.call(&w, |c| Trigger::<u64, u8, _>::clear(&t, &w, c).unwrap());
        assert!(fx.timers.is_empty());
    }

    #[test]
    fn event_time_trigger_fires_at_once_for_a_window_the_watermark_has_passed() {
        let mut fx = Fixture::new();
        while fx.timers.advance_and_pop(9).is_some() {}
        let w = TimeWindow::new(0, 10);
        let r = fx.call(&w, |c| {
            Trigger::<u64, u8, _>::on_element(&EventTimeTrigger, &0, 3, &w, c).unwrap()
        });
        assert_eq!(r, TriggerResult::Fire);
        assert!(fx.timers.is_empty());
    }

    #[test]
    fn count_trigger_fires_every_n_elements_and_purging_turns_fire_into_fire_and_purge() {
        let mut fx = Fixture::new();
        let w = TimeWindow::new(0, 10);
        let t = PurgingTrigger::<u64, u8, TimeWindow>::of(CountTrigger::of(2));
        let results: Vec<_> = (0..5)
            .map(|_| fx.call(&w, |c| t.on_element(&0, 0, &w, c).unwrap()))
            .collect();
        use TriggerResult::*;
        assert_eq!(results, vec![Continue, FireAndPurge, Continue, FireAndPurge, Continue]);
        assert_eq!(t.describe(), "PurgingTrigger(CountTrigger(2))");
    }

    #[test]
    fn processing_time_trigger_asks_the_task_for_a_wakeup_at_the_window_end() {
        let mut fx = Fixture::new();
        let w = TimeWindow::new(100, 200);
        let r = fx.call(&w, |c| {
            Trigger::<u64, u8, _>::on_element(&ProcessingTimeTrigger, &0, 0, &w, c).unwrap()
        });
        assert_eq!(r, TriggerResult::Continue);
        assert_eq!(fx.timers.next_processing_time_timer(), Some(199));
        assert_eq!(fx.pts.next_wakeup(), Some(199));
    }

    #[test]
    fn count_state_of_merged_windows_is_summed_into_the_merge_result() {
        let mut fx = Fixture::new();
        let (a, b, merged) = (TimeWindow::new(0, 5), TimeWindow::new(5, 10), TimeWindow::new(0, 10));
        let t = CountTrigger::of(10);
        for _ in 0..2 {
            fx.call(&a, |c| Trigger::<u64, u8, _>::on_element(&t, &0, 0, &a, c).unwrap());
        }
        fx.call(&b, |c| Trigger::<u64, u8, _>::on_element(&t, &0, 0, &b, c).unwrap());
        let ws = [a, b];
        fx.call(&merged, |c| {
            let mut m = OnMergeContext {
                ctx: TriggerContext {
                    key: c.key,
                    window: c.window,
                    backend: &mut *c.backend,
                    timers: &mut *c.timers,
                    processing_time: c.processing_time,
                },
                merged: &ws,
            };
            Trigger::<u64, u8, _>::on_merge(&t, &merged, &mut m).unwrap();
        });
        let n = fx.call(&merged, |c| c.value_state(&t.desc).unwrap().value());
        assert_eq!(n, Some(3));
        let left = fx.call(&a, |c| c.value_state(&t.desc).unwrap().value());
        assert_eq!(left, None);
    }
}
