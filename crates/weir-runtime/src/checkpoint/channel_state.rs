//! Input channel state of unaligned checkpoints (Flink's `ChannelStateWriter` for
//! input channels): recording a channel's in-flight data between the task's snapshot
//! and the channel's barrier. A restored task feeds it back into the channel's decoder
//! ([`RecordReader::resume_channel`](crate::network::RecordReader::resume_channel))
//! before the channel's first buffer.
//!
//! A [`ChannelStateRecorder`] belongs to one input processor (one gate). It follows the
//! task's [`BarrierAligner`]: while an unaligned checkpoint is in progress, each record
//! a recording channel delivers is processed as usual *and* appended to that channel's
//! state as a record frame (`weir_core::codec`'s format). Records are captured when
//! they are handed to the chain, not when their buffer arrives, so records decoded but
//! not yet processed at the snapshot, and frames spanning buffers, land in the channel
//! state exactly once. When the channel's barrier comes as a priority event it has
//! overtaken the channel's unprocessed data — the raw prefix of a frame its decoder
//! holds in part and the buffers queued in its receive queue — and that data is
//! appended as it is ([`ChannelStateRecorder::add_in_flight`]): it is processed after
//! the barrier, without being recorded again. So a channel's state is a byte stream in
//! the record frame format that may end inside a frame; the producer's output channel
//! state of the same channel continues it.
//!
//! Invariants: the data held belongs to one checkpoint ([`ChannelStateRecorder::checkpoint`]);
//! when a newer checkpoint starts recording it is dropped first; it leaves the
//! recorder only through [`take`](ChannelStateRecorder::take) of that checkpoint or
//! [`discard`](ChannelStateRecorder::discard). Watermarks and other events are not
//! recorded: a restored task receives newer ones from its restored sources (a lost
//! watermark only delays event time, it never makes data late).

use crate::checkpoint::BarrierAligner;
use crate::error::TaskError;
use serde::Serialize;
use weir_core::codec::encode_frame;
use weir_core::{CheckpointId, StreamRecord};
use weir_state::InputChannelState;

/// Records the channel state of one gate's channels.
#[derive(Debug, Clone)]
pub struct ChannelStateRecorder {
    gate: u32,
    checkpoint: Option<CheckpointId>,
    recording: Vec<bool>,
    data: Vec<Vec<u8>>,
}

impl ChannelStateRecorder {
    /// A recorder for gate `gate` with `channels` channels, recording nothing.
    pub fn new(gate: u32, channels: usize) -> Self {
        Self {
            gate,
            checkpoint: None,
            recording: vec![false; channels],
            data: vec![Vec::new(); channels],
        }
    }

    /// Follows `aligner`, whose channels `offset..offset + n` are this gate's: which
    /// channels record now, and for which checkpoint (data of an older one is dropped
    /// when a newer one starts recording).
    pub fn sync(&mut self, aligner: &BarrierAligner, offset: usize) {
        if let Some(recording) = aligner.recording_checkpoint() {
            self.start(recording);
        }
        for (c, r) in self.recording.iter_mut().enumerate() {
            *r = aligner.is_recording(offset + c);
        }
    }

    /// Holds the data of `checkpoint` from now on, dropping that of an older one.
    fn start(&mut self, checkpoint: CheckpointId) {
        if self.checkpoint != Some(checkpoint) {
            self.data.iter_mut().for_each(Vec::clear);
            self.checkpoint = Some(checkpoint);
        }
    }

    /// The checkpoint whose data is held, if any.
    pub fn checkpoint(&self) -> Option<CheckpointId> {
        self.checkpoint
    }

    /// True while `channel`'s records are recorded.
    #[inline]
    pub fn is_recording(&self, channel: usize) -> bool {
        self.recording.get(channel).copied().unwrap_or(false)
    }

    /// Appends `record`, delivered by `channel`, when that channel records.
    pub fn record<T: Serialize>(&mut self, channel: usize, record: &StreamRecord<T>) -> Result<(), TaskError> {
        if !self.is_recording(channel) {
            return Ok(());
        }
        match self.data.get_mut(channel) {
            Some(data) => Ok(encode_frame(data, record)?),
            None => Ok(()),
        }
    }

    /// Appends `in_flight`, the data of `channel` that its priority barrier of
    /// `checkpoint` overtook, to the channel's state of that checkpoint (starting it if
    /// it is newer than the one held; data for an older one is ignored).
    pub fn add_in_flight(&mut self, channel: usize, checkpoint: CheckpointId, in_flight: &[u8]) {
        if self.checkpoint.is_some_and(|held| held > checkpoint) {
            return;
        }
        self.start(checkpoint);
        if let Some(data) = self.data.get_mut(channel) {
            data.extend_from_slice(in_flight);
        }
    }

    /// The channel state of `checkpoint`, per channel with any data; empty when the
    /// data held belongs to another checkpoint.
    pub fn take(&mut self, checkpoint: CheckpointId) -> Vec<InputChannelState> {
        if self.checkpoint != Some(checkpoint) {
            return Vec::new();
        }
        self.checkpoint = None;
        let gate = self.gate;
        let channels = u32::try_from(self.data.len()).unwrap_or(u32::MAX);
        self.data
            .iter_mut()
            .enumerate()
            .filter(|(_, d)| !d.is_empty())
            .map(|(channel, d)| InputChannelState {
                gate,
                channel: channel as u32,
                channels,
                data: std::mem::take(d),
            })
            .collect()
    }

    /// Drops the data of `checkpoint` (it was aborted).
    pub fn discard(&mut self, checkpoint: CheckpointId) {
        if self.checkpoint == Some(checkpoint) {
            self.checkpoint = None;
            self.data.iter_mut().for_each(Vec::clear);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
    use weir_core::codec::FrameDecoder;
    use weir_core::{CheckpointBarrier, CheckpointOptions, CheckpointingMode};

    fn unaligned(id: u64) -> CheckpointBarrier {
        CheckpointBarrier {
            id,
            timestamp: 0,
            options: CheckpointOptions::for_config(CheckpointingMode::ExactlyOnce, true, std::time::Duration::ZERO),
        }
    }

    fn rec(v: u32) -> StreamRecord<u32> {
        StreamRecord {
            value: v,
            timestamp: v.is_multiple_of(2).then_some(v as i64),
        }
    }

    fn frame(v: u32) -> Vec<u8> {
        let mut out = Vec::new();
        encode_frame(&mut out, &rec(v)).unwrap();
        out
    }

    /// The records of a channel state's complete frames, and the bytes of a frame it
    /// ends inside.
    fn decode(state: &InputChannelState) -> (Vec<StreamRecord<u32>>, Vec<u8>) {
        let mut decoder = FrameDecoder::new();
        let mut records = Vec::new();
        decoder
            .decode_buffer(&state.data, |r| {
                records.push(r);
                Ok(())
            })
            .unwrap();
        (records, decoder.pending_bytes().to_vec())
    }

    /// A gate of 3 channels as the second gate (offset 2) of a 5-channel task.
    fn recording_of_checkpoint(id: u64, first_barrier_on: usize) -> (BarrierAligner, ChannelStateRecorder) {
        let mut a = BarrierAligner::new(5);
        a.on_barrier(first_barrier_on, unaligned(id), Instant::now());
        let mut r = ChannelStateRecorder::new(1, 3);
        r.sync(&a, 2);
        (a, r)
    }

    #[test]
    fn records_of_channels_before_their_barrier_and_the_data_it_overtook_become_their_state_in_order() {
        let (mut a, mut r) = recording_of_checkpoint(4, 2);
        assert!(!r.is_recording(0) && r.is_recording(1) && r.is_recording(2));
        for v in 0..3 {
            r.record(0, &rec(v)).unwrap();
            r.record(1, &rec(10 + v)).unwrap();
        }
        a.on_barrier(3, unaligned(4), Instant::now());
        r.sync(&a, 2);
        // Channel 1's barrier overtook one whole frame and the start of another.
        let mut overtaken = frame(13);
        overtaken.extend_from_slice(&frame(14)[..3]);
        r.add_in_flight(1, 4, &overtaken);
        r.record(1, &rec(99)).unwrap();
        r.record(2, &rec(20)).unwrap();
        let state = r.take(4);
        assert_eq!(state.len(), 2, "{state:?}");
        assert_eq!((state[0].gate, state[0].channel, state[0].channels), (1, 1, 3));
        assert_eq!(
            decode(&state[0]),
            (vec![rec(10), rec(11), rec(12), rec(13)], frame(14)[..3].to_vec())
        );
        assert_eq!(decode(&state[1]), (vec![rec(20)], Vec::new()));
        assert!(r.take(4).is_empty(), "taken once");
    }

    #[test]
    fn a_newer_recording_checkpoint_drops_the_data_of_the_older_one() {
        let (mut a, mut r) = recording_of_checkpoint(1, 0);
        r.record(0, &rec(1)).unwrap();
        a.on_barrier(0, unaligned(2), Instant::now());
        r.sync(&a, 2);
        assert_eq!(r.checkpoint(), Some(2));
        assert!(r.take(1).is_empty());
        r.record(0, &rec(2)).unwrap();
        r.add_in_flight(0, 1, &frame(3));
        r.discard(2);
        assert!(r.take(2).is_empty());
    }

    #[test]
    fn in_flight_data_of_a_checkpoint_that_completed_at_its_barrier_is_kept_until_taken() {
        // One channel: the barrier starts and completes the checkpoint at once, so the
        // aligner never reports it as recording; its in-flight data still counts.
        let mut a = BarrierAligner::new(1);
        a.on_barrier(0, unaligned(6), Instant::now());
        let mut r = ChannelStateRecorder::new(0, 1);
        r.sync(&a, 0);
        assert_eq!(r.checkpoint(), None);
        r.add_in_flight(0, 6, &frame(1));
        let state = r.take(6);
        assert_eq!(state.len(), 1);
        assert_eq!(decode(&state[0]), (vec![rec(1)], Vec::new()));
    }

    #[test]
    fn the_data_outlives_the_completion_until_the_task_takes_it() {
        let mut a = BarrierAligner::new(2);
        a.on_barrier(0, unaligned(3), Instant::now());
        let mut r = ChannelStateRecorder::new(0, 2);
        r.sync(&a, 0);
        r.record(1, &rec(5)).unwrap();
        a.on_barrier(1, unaligned(3), Instant::now());
        r.sync(&a, 0);
        assert!(!r.is_recording(1));
        assert_eq!(r.take(3).len(), 1);
    }
}
