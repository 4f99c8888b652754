//! Sources and sinks.
//!
//! Sources implement [`weir_runtime::operator::SourceFunction`] and emit in batches;
//! every parallel source splits its input deterministically by subtask index, so the
//! multiset of records a job reads never depends on the parallelism. Sinks are
//! operators ([`weir_runtime::operator::Output`] of their input type) that write on
//! `collect` and flush on `end_input`; the file sink writes in transactions committed
//! when the checkpoint covering them completes ([`sink::two_phase_commit`]).

#![warn(missing_docs)]

pub mod file_policy;
pub mod rng;
pub mod sink;
pub mod source;

pub use rng::Rng;
