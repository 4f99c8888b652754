//! Scheduling decisions outside one job's state machine: which slot each subtask runs
//! in under slot sharing.

pub mod slot_assignment;
