//! What travels through a stream: records with an optional event timestamp, and the
//! in-band events that move in order with them.

use serde::{Deserialize, Serialize};

/// A record together with its event-time timestamp (Flink's `StreamRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamRecord<T> {
    /// The user value.
    pub value: T,
    /// Event-time timestamp in epoch milliseconds, when the record has one.
    pub timestamp: Option<i64>,
}

impl<T> StreamRecord<T> {
    /// A record without a timestamp.
    pub fn new(value: T) -> Self {
        Self { value, timestamp: None }
    }

    /// A record with an event-time timestamp.
    pub fn with_timestamp(value: T, timestamp: i64) -> Self {
        Self {
            value,
            timestamp: Some(timestamp),
        }
    }

    /// The same timestamp with another value.
    #[inline]
    pub fn replace<U>(&self, value: U) -> StreamRecord<U> {
        StreamRecord {
            value,
            timestamp: self.timestamp,
        }
    }
}

/// An event-time watermark: no record with a timestamp `<= ts` should follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Watermark(pub i64);

impl Watermark {
    /// The watermark bounded inputs emit when they end; fires every event-time timer.
    pub const MAX: Watermark = Watermark(i64::MAX);
    /// The initial watermark.
    pub const MIN: Watermark = Watermark(i64::MIN);
}

/// Whether a stream currently advances event time (Flink's `WatermarkStatus`).
///
/// An idle stream (a source split without data, marked by `with_idleness`) emits no
/// watermarks and must not hold back the minimum over its consumers' input channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WatermarkStatus {
    /// The stream emits watermarks and takes part in the minimum.
    Active,
    /// The stream emits no watermarks and is left out of the minimum.
    Idle,
}

impl WatermarkStatus {
    /// True for [`WatermarkStatus::Idle`].
    pub fn is_idle(self) -> bool {
        self == WatermarkStatus::Idle
    }

    /// True for [`WatermarkStatus::Active`].
    pub fn is_active(self) -> bool {
        self == WatermarkStatus::Active
    }
}

/// In-band events: they travel between chains in order with the records, outside of
/// data buffers, and never need flow-control credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// An event-time watermark.
    Watermark(Watermark),
    /// The producing subtask has finished: no element follows on this channel.
    EndOfPartition,
    /// The producing subtask became idle or active again.
    WatermarkStatus(WatermarkStatus),
    /// Everything before it on this channel belongs to checkpoint `id`, everything
    /// after it to the next one.
    CheckpointBarrier(crate::checkpoint::CheckpointBarrier),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_round_trips_through_the_codec() {
        for event in [
            Event::Watermark(Watermark(-7)),
            Event::EndOfPartition,
            Event::WatermarkStatus(WatermarkStatus::Idle),
            Event::WatermarkStatus(WatermarkStatus::Active),
            Event::CheckpointBarrier(crate::checkpoint::CheckpointBarrier {
                id: 3,
                timestamp: 1_700_000_000_000,
                options: crate::checkpoint::CheckpointOptions::checkpoint(
                    crate::checkpoint::CheckpointingMode::AtLeastOnce,
                ),
            }),
        ] {
            let bytes = crate::codec::encode(&event).unwrap();
            assert_eq!(crate::codec::decode::<Event>(&bytes).unwrap(), event);
        }
    }
}
