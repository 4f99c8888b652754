//! The lifecycle of one execution attempt: [`ExecutionState`], defined in `weir-core`
//! so that the JobMaster and the REST API share one type.

pub use weir_core::execution_state::ExecutionState;
