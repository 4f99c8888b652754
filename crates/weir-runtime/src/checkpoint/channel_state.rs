//! Input channel state of unaligned checkpoints (Flink's `ChannelStateWriter` and
//! the recovered input channels): recording the records a channel delivers between
//! the task's snapshot and the channel's barrier, and replaying them on restore.
//!
//! A [`ChannelStateRecorder`] belongs to one input processor (one gate). It follows the
//! task's [`BarrierAligner`]: while an unaligned checkpoint is in progress, each record
//! a recording channel delivers is processed as usual *and* appended to that channel's
//! frames in `weir_core::codec`'s record frame format. Records are captured when they
//! are handed to the chain, not when their buffer arrives, so records decoded but not
//! yet processed at the snapshot, and frames spanning buffers, land in the channel
//! state exactly once.
//!
//! Invariants: the frames held belong to one checkpoint ([`ChannelStateRecorder::checkpoint`]);
//! when the aligner starts recording another checkpoint they are dropped first; they
//! leave the recorder only through [`take`](ChannelStateRecorder::take) of that
//! checkpoint or [`discard`](ChannelStateRecorder::discard). Watermarks and other
//! events are not recorded: a restored task receives newer ones from its restored
//! sources (a lost watermark only delays event time, it never makes data late).

use crate::checkpoint::BarrierAligner;
use crate::error::TaskError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use weir_core::codec::{encode_frame, FrameDecoder};
use weir_core::{CheckpointId, StreamRecord};
use weir_state::InputChannelState;

/// Records the channel state of one gate's channels.
#[derive(Debug, Clone)]
pub struct ChannelStateRecorder {
    gate: u32,
    checkpoint: Option<CheckpointId>,
    recording: Vec<bool>,
    frames: Vec<Vec<u8>>,
}

impl ChannelStateRecorder {
    /// A recorder for gate `gate` with `channels` channels, recording nothing.
    pub fn new(gate: u32, channels: usize) -> Self {
        Self {
            gate,
            checkpoint: None,
            recording: vec![false; channels],
            frames: vec![Vec::new(); channels],
        }
    }

    /// Follows `aligner`, whose channels `offset..offset + n` are this gate's: which
    /// channels record now, and for which checkpoint (frames of an older one are
    /// dropped when a newer one starts recording).
    pub fn sync(&mut self, aligner: &BarrierAligner, offset: usize) {
        let recording = aligner.recording_checkpoint();
        if recording.is_some() && recording != self.checkpoint {
            self.frames.iter_mut().for_each(Vec::clear);
            self.checkpoint = recording;
        }
        for (c, r) in self.recording.iter_mut().enumerate() {
            *r = aligner.is_recording(offset + c);
        }
    }

    /// The checkpoint whose frames are held, if any.
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
        match self.frames.get_mut(channel) {
            Some(frames) => Ok(encode_frame(frames, record)?),
            None => Ok(()),
        }
    }

    /// The channel state of `checkpoint`, per channel that recorded anything; empty
    /// when the frames held belong to another checkpoint.
    pub fn take(&mut self, checkpoint: CheckpointId) -> Vec<InputChannelState> {
        if self.checkpoint != Some(checkpoint) {
            return Vec::new();
        }
        self.checkpoint = None;
        let gate = self.gate;
        self.frames
            .iter_mut()
            .enumerate()
            .filter(|(_, f)| !f.is_empty())
            .map(|(channel, f)| InputChannelState {
                gate,
                channel: channel as u32,
                frames: std::mem::take(f),
            })
            .collect()
    }

    /// Drops the frames of `checkpoint` (it was aborted).
    pub fn discard(&mut self, checkpoint: CheckpointId) {
        if self.checkpoint == Some(checkpoint) {
            self.checkpoint = None;
            self.frames.iter_mut().for_each(Vec::clear);
        }
    }
}

/// Decodes the records of restored channel state, in the order they were recorded;
/// a truncated or corrupt state is a [`TaskError::Restore`] naming the channel.
pub fn decode_channel_state<T: DeserializeOwned>(
    checkpoint_id: CheckpointId,
    state: &InputChannelState,
) -> Result<Vec<StreamRecord<T>>, TaskError> {
    let fail = |reason: String| TaskError::Restore {
        checkpoint_id,
        reason: format!(
            "in-flight data of input gate {} channel {}: {reason}",
            state.gate, state.channel
        ),
    };
    let mut decoder = FrameDecoder::new();
    let mut records = Vec::new();
    decoder
        .decode_buffer(&state.frames, |r| {
            records.push(r);
            Ok(())
        })
        .map_err(|e| fail(e.to_string()))?;
    if decoder.has_pending() {
        return Err(fail("it ends inside a record frame".into()));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
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

    /// A gate of 3 channels as the second gate (offset 2) of a 5-channel task.
    fn recording_of_checkpoint(id: u64, first_barrier_on: usize) -> (BarrierAligner, ChannelStateRecorder) {
        let mut a = BarrierAligner::new(5);
        a.on_barrier(first_barrier_on, unaligned(id), Instant::now());
        let mut r = ChannelStateRecorder::new(1, 3);
        r.sync(&a, 2);
        (a, r)
    }

    #[test]
    fn records_of_channels_before_their_barrier_are_recorded_and_replay_in_order() {
        let (mut a, mut r) = recording_of_checkpoint(4, 2);
        assert!(!r.is_recording(0) && r.is_recording(1) && r.is_recording(2));
        for v in 0..3 {
            r.record(0, &rec(v)).unwrap();
            r.record(1, &rec(10 + v)).unwrap();
        }
        a.on_barrier(3, unaligned(4), Instant::now());
        r.sync(&a, 2);
        r.record(1, &rec(99)).unwrap();
        r.record(2, &rec(20)).unwrap();
        let state = r.take(4);
        assert_eq!(state.len(), 2, "{state:?}");
        assert_eq!((state[0].gate, state[0].channel), (1, 1));
        let replayed: Vec<StreamRecord<u32>> = decode_channel_state(4, &state[0]).unwrap();
        assert_eq!(replayed, vec![rec(10), rec(11), rec(12)]);
        let replayed: Vec<StreamRecord<u32>> = decode_channel_state(4, &state[1]).unwrap();
        assert_eq!(replayed, vec![rec(20)]);
        assert!(r.take(4).is_empty(), "taken once");
    }

    #[test]
    fn a_newer_recording_checkpoint_drops_the_frames_of_the_older_one() {
        let (mut a, mut r) = recording_of_checkpoint(1, 0);
        r.record(0, &rec(1)).unwrap();
        a.on_barrier(0, unaligned(2), Instant::now());
        r.sync(&a, 2);
        assert_eq!(r.checkpoint(), Some(2));
        assert!(r.take(1).is_empty());
        r.record(0, &rec(2)).unwrap();
        r.discard(2);
        assert!(r.take(2).is_empty());
    }

    #[test]
    fn the_frames_outlive_the_completion_until_the_task_takes_them() {
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

    #[test]
    fn truncated_channel_state_is_a_restore_error_naming_the_channel() {
        let (_, mut r) = recording_of_checkpoint(7, 2);
        r.record(1, &rec(123_456)).unwrap();
        let mut state = r.take(7).remove(0);
        state.frames.pop();
        let err = decode_channel_state::<u32>(7, &state).unwrap_err().to_string();
        assert!(
            err.contains("checkpoint 7") && err.contains("gate 1 channel 1"),
            "{err}"
        );
        state.frames = vec![9, 9, 9];
        assert!(decode_channel_state::<u32>(7, &state).is_err());
    }
}
