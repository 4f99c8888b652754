//! Operator coordinators on the JobMaster: the collect sinks' coordinators, which hold
//! a SELECT's results between the sink subtasks and the client.

pub mod collect_coordinator;
pub mod collect_results;
