//! Non-keyed two-input process functions (Flink's `CoProcessFunction` on
//! `ConnectedStreams`, with `CheckpointedFunction`).
//!
//! `connected.process(f)` calls `process_element1` for records of the first input and
//! `process_element2` for those of the second, each with a [`ProcessContext`]: the
//! record's timestamp, the operator's watermark (the minimum of both inputs'), the
//! task's processing time, the subtask and its operator state. There are no timers:
//! Flink offers them only on keyed streams (and fails a non-keyed function that asks),
//! so here the context simply has none. The operator is a [`ProcessOperator`] over
//! [`CoElement`]s, so operator state is restored, redistributed and snapshotted exactly
//! as for a one-input [`ProcessFunction`].

use crate::connected::ConnectedStreams;
use crate::datastream::DataStream;
use crate::functions::Collector;
use crate::process::{
    delegate_operator_state_hooks, operator_state_hooks, ProcessContext, ProcessFunction, ProcessOperator,
};
use std::marker::PhantomData;
use weir_runtime::error::UserError;
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::{register_checkpointed, CoElement, OperatorFactory};

/// Processes the records of two connected (non-keyed) streams, with operator state
/// (Flink's `CoProcessFunction` + `CheckpointedFunction`). One instance is cloned per
/// subtask.
pub trait CoProcessFunction<A, B, O>: Clone + Send + Sync + 'static {
    operator_state_hooks!();

    /// A record of the first input.
    fn process_element1(
        &mut self,
        value: A,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;

    /// A record of the second input.
    fn process_element2(
        &mut self,
        value: B,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;
}

/// Runs a [`CoProcessFunction`] as a [`ProcessFunction`] over [`CoElement`]s.
pub struct CoProcessFunctionAdapter<F, A, B> {
    f: F,
    _t: PhantomData<fn(A, B)>,
}

impl<F, A, B> CoProcessFunctionAdapter<F, A, B> {
    /// Adapts `f`.
    pub fn new(f: F) -> Self {
        Self { f, _t: PhantomData }
    }
}

impl<F: Clone, A, B> Clone for CoProcessFunctionAdapter<F, A, B> {
    fn clone(&self) -> Self {
        Self::new(self.f.clone())
    }
}

impl<A: 'static, B: 'static, O, F: CoProcessFunction<A, B, O>> ProcessFunction<CoElement<A, B>, O>
    for CoProcessFunctionAdapter<F, A, B>
{
    delegate_operator_state_hooks!();

    fn process_element(
        &mut self,
        value: CoElement<A, B>,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        match value {
            CoElement::First(a) => self.f.process_element1(a, ctx, out),
            CoElement::Second(b) => self.f.process_element2(b, ctx, out),
        }
    }
}

/// Runs a [`CoProcessFunction`]: a [`ProcessOperator`] over [`CoElement`]s.
pub type CoProcessOperator<A, B, O, F> = ProcessOperator<CoElement<A, B>, O, CoProcessFunctionAdapter<F, A, B>>;

impl<A: Data, B: Data> ConnectedStreams<A, B> {
    /// Processes both inputs with `f` (no key, no timers), which may keep operator
    /// state that checkpoints snapshot and restores redistribute.
    pub fn process<O: Data, F: CoProcessFunction<A, B, O>>(&self, f: F) -> DataStream<O> {
        let adapter = CoProcessFunctionAdapter::new(f);
        let factory = OperatorFactory::two_input::<A, B, O>(move |ctx, out| {
            let op = CoProcessOperator::restored("CoProcess".to_string(), adapter.clone(), ctx, out)?;
            register_checkpointed(ctx, op)
        });
        self.first
            .transform_two_input(&self.second, "CoProcess", false, factory)
    }
}

#[cfg(test)]
#[path = "co_process_tests.rs"]
mod tests;
