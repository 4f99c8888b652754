//! The JobManager's side of checkpoint storage that outlives a JobMaster: discards still
//! to be carried out when a job ends (Flink's `CheckpointsCleaner`). The checkpoint
//! coordinator itself is `weir-checkpoint`; the JobMaster's glue is
//! [`job_master`](crate::job_master)'s `checkpointing` and `savepoints`.

pub mod discards;
