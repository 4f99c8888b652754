//! [`BufferAvailabilityListener`]: how a subpartition tells a reader in another process
//! that it has something to send, without knowing the transport (Flink's interface of
//! the same name). The data server's connections implement it; a subpartition holds
//! one weakly, so a closed connection is simply never told again.

/// The reader of a subpartition on behalf of a remote consumer.
pub(crate) trait BufferAvailabilityListener: Send + Sync {
    /// `channel` has a buffer or an event to send; the subpartition marked itself
    /// queued, so this is called once until the reader takes from it again.
    fn notify_data_available(&self, channel: u64);

    /// `channel` got a priority event and is to be served before the others;
    /// `queued`: the channel was marked queued already (move it to the front).
    fn notify_priority_event(&self, channel: u64, queued: bool);
}
