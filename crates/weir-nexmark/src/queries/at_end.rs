//! Aggregations whose final rows per key go out when the input ends: how q4's average,
//! q15–q17's statistics, q18's last bid and q19's top bids turn Flink's updating
//! results into append-only ones.
//!
//! Per key an accumulator lives in keyed value state; the key's first record registers
//! an event-time timer at the end of time, which the final watermark of a bounded
//! input fires; the timer emits the key's rows and clears its state.

use weir_api::prelude::*;
use weir_state::heap::StateValue;

/// An aggregation per key, emitted once when the input ends.
pub trait FinalAggregate<K, I>: Clone + Send + Sync + 'static {
    /// What is kept per key.
    type Acc: StateValue + Default;

    /// Adds one record.
    fn add(&self, acc: &mut Self::Acc, input: I);

    /// The final rows of `key`.
    fn emit(&self, key: &K, acc: Self::Acc, out: &mut Collector<'_, String>);
}

/// Runs a [`FinalAggregate`] as a keyed process function.
#[derive(Clone)]
struct EmitAtEnd<A, Acc> {
    agg: A,
    acc: ValueStateDescriptor<Acc>,
}

impl<K: KeyType, I, A: FinalAggregate<K, I, Acc = Acc>, Acc: StateValue + Default> KeyedProcessFunction<K, I, String>
    for EmitAtEnd<A, Acc>
{
    fn process_element(
        &mut self,
        input: I,
        ctx: &mut KeyedContext<'_, K>,
        _out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let mut state = ctx.value_state(&self.acc)?;
        let first = state.value_ref().is_none();
        self.agg.add(state.get_or_insert_with(Acc::default), input);
        if first {
            ctx.register_event_time_timer(i64::MAX)?;
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _timestamp: i64,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let Some(key) = ctx.current_key().cloned() else {
            return Ok(());
        };
        if let Some(acc) = ctx.value_state(&self.acc)?.take() {
            self.agg.emit(&key, acc, out);
        }
        Ok(())
    }
}

/// The final rows of `agg` per key of `stream`, its accumulators in state `name`.
pub fn at_end<K: KeyType, I: weir_runtime::operator::factory::Data, A: FinalAggregate<K, I>>(
    stream: &KeyedStream<K, I>,
    agg: A,
    name: &str,
) -> DataStream<String> {
    stream.process(EmitAtEnd {
        agg,
        acc: ValueStateDescriptor::new(name),
    })
}
