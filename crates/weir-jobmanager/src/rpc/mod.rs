//! The I/O shell: the gRPC services TaskManagers call, and the executor that carries
//! out the JobMasters' actions over RPC, and the metric fetcher REST reads through.

pub mod actions;
pub mod metric_fetcher;
pub mod service;
