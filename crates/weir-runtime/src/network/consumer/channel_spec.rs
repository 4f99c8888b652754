//! [`ChannelSpec`]: where one input channel of a gate reads from — an in-process
//! subpartition handle, a partition registered in this process, or a partition in
//! another process reached over the transport.

use crate::network::partition::partition_id::PartitionId;
use crate::network::partition::subpartition::SubpartitionHandle;

/// One input channel of a gate to create.
#[derive(Debug, Clone)]
pub enum ChannelSpec {
    /// An in-process handle (what `create_input_gate` takes).
    Handle(SubpartitionHandle),
    /// A partition registered in THIS process's environment (possibly later: wait for
    /// it).
    Local {
        /// The partition.
        partition: PartitionId,
        /// The subpartition to read.
        subpartition: u32,
    },
    /// A partition in another process, reached through its data server at `address`
    /// (`host:port`).
    Remote {
        /// The producer's data server.
        address: String,
        /// The partition.
        partition: PartitionId,
        /// The subpartition to read.
        subpartition: u32,
    },
}
