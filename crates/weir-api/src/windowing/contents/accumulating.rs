//! Contents that are one accumulator per window (reduce, aggregate), taken out of keyed
//! state: what the [`crate::windowing::window_table_operator`] needs to keep them in a
//! table of its own and still fire them, and snapshot them, as the keyed-state window
//! operator does.

use super::{call_process_one, AggregateContents, Firing, ReduceContents, WindowContents};
use crate::functions::{Collector, KeyType};
use crate::windowing::functions::{AggregateFunction, ProcessWindowFunction};
use crate::windowing::window::Window;
use weir_runtime::error::UserError;
use weir_state::heap::StateValue;
use weir_state::{KeyedStateBackend, ValueStateDescriptor};

/// Window contents held as one accumulator per (key, window).
pub trait AccumulatingContents<K: KeyType, T, O, W: Window>: WindowContents<K, T, O, W> {
    /// The accumulator.
    type Acc: StateValue + Send;

    /// The value state the keyed-state window operator keeps the accumulators in
    /// (snapshots of both operators have the same layout).
    fn descriptor(&self) -> &ValueStateDescriptor<Self::Acc>;

    /// Adds `value` to `acc` (`None` before the first element).
    fn accumulate(&self, acc: &mut Option<Self::Acc>, value: T);

    /// Emits the window's result from `acc`, as [`WindowContents::emit`] does with the
    /// contents taken out of state.
    fn fire(
        &mut self,
        acc: Self::Acc,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;
}

impl<K, T, O, W, F, P> AccumulatingContents<K, T, O, W> for ReduceContents<T, F, P>
where
    K: KeyType,
    T: StateValue + Send,
    W: Window,
    F: Fn(T, T) -> T + Send + 'static,
    P: ProcessWindowFunction<K, T, O, W>,
{
    type Acc = T;

    fn descriptor(&self) -> &ValueStateDescriptor<T> {
        &self.slot.desc
    }

    #[inline]
    fn accumulate(&self, acc: &mut Option<T>, value: T) {
        *acc = Some(match acc.take() {
            Some(a) => (self.f)(a, value),
            None => value,
        });
    }

    fn fire(
        &mut self,
        acc: T,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        call_process_one(&mut self.process, backend, firing, acc, out)
    }
}

impl<K, T, ACC, V, O, W, A, P> AccumulatingContents<K, T, O, W> for AggregateContents<ACC, V, A, P>
where
    K: KeyType,
    ACC: StateValue + Send,
    V: 'static,
    W: Window,
    A: AggregateFunction<T, ACC, V>,
    P: ProcessWindowFunction<K, V, O, W>,
{
    type Acc = ACC;

    fn descriptor(&self) -> &ValueStateDescriptor<ACC> {
        &self.slot.desc
    }

    #[inline]
    fn accumulate(&self, acc: &mut Option<ACC>, value: T) {
        let acc = acc.get_or_insert_with(|| self.agg.create_accumulator());
        self.agg.add(value, acc);
    }

    fn fire(
        &mut self,
        acc: ACC,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        let result = self.agg.get_result(&acc);
        call_process_one(&mut self.process, backend, firing, result, out)
    }
}
