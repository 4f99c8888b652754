//! The I/O shell: the gRPC services TaskManagers call, and the executor that carries
//! out the JobMasters' actions over RPC.

pub mod actions;
pub mod service;
