//! Weir's streaming SQL (Flink SQL's dialect on the DataStream API).
//!
//! - [`parser`]: `sqlparser` plus Flink's DDL and window TVF syntax;
//! - [`catalog`]: tables and views of a session, with their DDL;
//! - [`expr`]: types, binding and evaluation of expressions over [`value::Row`]s;
//! - [`key`]: group keys as keyed state and timers hold them;
//! - [`plan`]: queries to a tree of streaming operators (Calc, GroupAggregate,
//!   WindowAggregate, Union);
//! - [`exec`] and [`connectors`]: the plan compiled to operators, sources and sinks;
//! - [`program`]: the built-in program `sql` that rebuilds a SQL job from its text.

#![warn(missing_docs)]

pub mod catalog;
pub mod connectors;
#[cfg(test)]
mod edge_values;
pub mod error;
pub mod exec;
pub mod expr;
pub mod key;
pub mod parser;
pub mod plan;
pub mod plan_limits;
pub mod program;
pub mod row_codec;
mod stack_bytes;
pub mod types;
pub mod value;

pub use error::SqlError;
