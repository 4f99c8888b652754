//! Joins of two streams (Flink's `JoinedStreams`, `CoGroupedStreams` and
//! `KeyedStream.IntervalJoin`).
//!
//! - [`window_join`], `a.join(&b).where_(ka).equal_to(kb).window(assigner).apply(f)`
//!   and `a.co_group(&b)…apply(f)`. As in Flink, both inputs are tagged into one
//!   [`TaggedUnion`] stream, keyed by the key of either side and windowed by the
//!   ordinary window operator (so triggers, allowed lateness, state and checkpoints
//!   are the window operator's); a firing window hands both sides' elements to a
//!   [`CoGroupFunction`], and a join is the co-group that calls its function once per
//!   pair of the two sides' cross product.
//! - [`interval`] and [`interval_operator`], `a.key_by(ka).interval_join(&b.key_by(kb))
//!   .between(lower, upper).process(f)`: each element meets the other side's elements
//!   of the same key whose timestamps lie in its interval; both sides wait in keyed map
//!   state by timestamp until event-time timers clean them up. [`bounds`] holds the
//!   interval arithmetic (which timestamps join, when a buffered element goes),
//!   [`error`] the errors.

pub mod bounds;
pub mod error;
pub mod interval;
pub mod interval_operator;
pub mod process_join_function;
pub mod window_join;

pub use bounds::{IntervalBounds, JoinSide};
pub use error::JoinError;
pub use interval::{IntervalJoin, IntervalJoined};
pub use interval_operator::{IntervalJoinOperator, KeySelectors};
pub use process_join_function::{ProcessJoinContext, ProcessJoinFunction};
pub use window_join::{
    CoGroupFunction, CoGroupKind, CoGroupedStreams, EqualTo, FlatJoinFunction, JoinFunction, JoinKind, JoinedStreams,
    TaggedUnion, TwoStreams, Where, WithWindow,
};

#[cfg(test)]
mod test_log;
