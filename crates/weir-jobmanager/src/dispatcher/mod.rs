//! The Dispatcher's side of a submission: the wire form of a program invocation and how
//! a submission becomes one.

pub mod invocation;
pub mod submission_limits;
