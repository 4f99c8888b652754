//! The interval join API (Flink's `KeyedStream.intervalJoin`, `IntervalJoin`,
//! `IntervalJoined` and `ProcessJoinFunction`).
//!
//! `left.interval_join(&right).between(lower, upper)` joins each left element at `t`
//! with the right elements of the same key at `t + lower ..= t + upper` (ms, either
//! may be negative; inclusive unless `lower_bound_exclusive`/`upper_bound_exclusive`),
//! in event time only. `process(f)` calls `f` once per joined pair with both
//! timestamps; the result carries the larger one. An empty interval (`lower > upper`
//! once exclusive bounds are moved inwards) is an error when the job is built.

use super::bounds::IntervalBounds;
use super::interval_operator::IntervalJoinOperator;
use super::process_join_function::ProcessJoinFunction;
use crate::datastream::DataStream;
use crate::functions::{KeyType, TaskInfo};
use crate::keyed::KeyedStream;
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::metric_group::NUM_LATE_RECORDS_DROPPED;
use weir_runtime::operator::{register_checkpointed, OperatorFactory};

impl<K: KeyType, A: Data> KeyedStream<K, A> {
    /// Joins this keyed stream (left) with `other` (right, keyed by the same key type)
    /// by time intervals; continue with `between`.
    pub fn interval_join<B: Data>(&self, other: &KeyedStream<K, B>) -> IntervalJoin<K, A, B> {
        IntervalJoin {
            left: KeyedStream::new(self.stream(), self.key_selector()),
            right: KeyedStream::new(other.stream(), other.key_selector()),
        }
    }
}

/// Two keyed streams to be joined by time intervals (Flink's `IntervalJoin`).
pub struct IntervalJoin<K, A, B> {
    left: KeyedStream<K, A>,
    right: KeyedStream<K, B>,
}

impl<K: KeyType, A: Data, B: Data> IntervalJoin<K, A, B> {
    /// Joins a left element at `t` with the right elements at `t + lower ..= t + upper`
    /// (milliseconds, either may be negative).
    pub fn between(self, lower: i64, upper: i64) -> IntervalJoined<K, A, B> {
        IntervalJoined {
            join: self,
            lower,
            upper,
            lower_exclusive: false,
            upper_exclusive: false,
        }
    }
}

/// An interval join with its bounds, waiting for its function (Flink's
/// `IntervalJoined`).
pub struct IntervalJoined<K, A, B> {
    join: IntervalJoin<K, A, B>,
    lower: i64,
    upper: i64,
    lower_exclusive: bool,
    upper_exclusive: bool,
}

impl<K: KeyType, A: Data, B: Data> IntervalJoined<K, A, B> {
    /// Excludes the lower bound: right elements at exactly `t + lower` do not join.
    pub fn lower_bound_exclusive(mut self) -> Self {
        self.lower_exclusive = true;
        self
    }

    /// Excludes the upper bound: right elements at exactly `t + upper` do not join.
    pub fn upper_bound_exclusive(mut self) -> Self {
        self.upper_exclusive = true;
        self
    }

    /// Calls `f` once per joined pair; the results carry the larger timestamp of the
    /// two. Both inputs must carry event timestamps.
    pub fn process<O: Data, F: ProcessJoinFunction<A, B, O>>(&self, f: F) -> DataStream<O> {
        let left = &self.join.left;
        let bounds = IntervalBounds::new(self.lower, self.upper, self.lower_exclusive, self.upper_exclusive);
        let bounds = bounds.unwrap_or_else(|e| {
            left.stream().builder.borrow_mut().errors.push(e.to_string());
            IntervalBounds::REJECTED
        });
        let (key_left, key_right) = (left.key_selector(), self.join.right.key_selector());
        let factory = OperatorFactory::two_input::<A, B, O>(move |ctx, out| {
            let op = IntervalJoinOperator::restored(
                "Interval Join".to_string(),
                f.clone(),
                bounds,
                (key_left.clone(), key_right.clone()),
                crate::keyed_state::restore_keyed(ctx)?,
                TaskInfo::of(ctx),
                out,
            )?
            .with_late_records_dropped(ctx.operator_counter(NUM_LATE_RECORDS_DROPPED));
            register_checkpointed(ctx, op)
        });
        left.stream()
            .transform_two_input(&self.join.right.stream(), "Interval Join", true, factory)
    }
}
