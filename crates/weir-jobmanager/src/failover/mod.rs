//! What happens after a failure: Flink's restart backoff strategies as state machines
//! (the region and global failover themselves are steps of the
//! [`JobMaster`](crate::job_master::JobMaster)).

pub mod restart_strategy;
