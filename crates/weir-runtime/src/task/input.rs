//! Reading a task's network input into the head of its chain: records go straight to
//! the head; watermarks and watermark statuses go through the task's
//! [`WatermarkValve`], and only what it decides to emit reaches the head; checkpoint
//! barriers and ended channels go to the task's [`BarrierAligner`], whose decisions
//! (block a channel) are carried out on the gate at once. When the aligner has an
//! outcome (snapshot, channel state complete, or decline) the batch stops, so that the
//! task handles it before any further input; the gate's channels are released and the
//! recording channels looked up again on the next call (and after every barrier).
//!
//! Unaligned checkpoints: a record of a channel that records (see
//! [`ChannelStateRecorder`]) is also appended to that channel's state; an unaligned
//! barrier arrives as a priority event with the channel's unprocessed data it
//! overtook, which joins the channel's state when the aligner says so
//! ([`ChannelAction::PersistInFlight`]); the aligned checkpoint timeout is checked at
//! the start of every call, and waits for input end at the switch-over. While a
//! channel records, an aligned barrier of the checkpoint queued in band at this end
//! (its subpartition, or a remote channel's receive queue) is promoted to a priority
//! event ([`InputGate::promote_barrier`](crate::network::InputGate::promote_barrier)). A restored
//! task first feeds the recorded channel state of its checkpoint into each channel's
//! decoder (the complete records go into the head, a frame it ends inside waits for
//! the channel's first buffers, which the restored producer begins with its output
//! channel state), before anything is read from the network.

use crate::checkpoint::{BarrierAligner, BarrierOutcome, ChannelAction, ChannelStateRecorder, EndOfInputTrigger};
use crate::error::TaskError;
use crate::network::{NetworkError, PoolUsage, ReaderEvent, RecordReader};
use crate::operator::Output;
use crate::task::valve::WatermarkValve;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};
use weir_core::{CheckpointBarrier, CheckpointId, Event, StreamRecord};
use weir_state::InputChannelState;

/// What one call of [`InputProcessor::process`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputStatus {
    /// Input was processed; more may be available.
    MoreAvailable,
    /// Nothing arrived within the timeout.
    NothingAvailable,
    /// Every input channel has ended and the chain's input was ended.
    EndOfInput,
}

/// Drives a chain from its input gate.
pub trait InputProcessor {
    /// Processes a batch of available input, waiting up to `timeout` for the first.
    fn process(&mut self, timeout: Option<Duration>) -> Result<InputStatus, TaskError>;
    /// Records read so far.
    fn records_in(&self) -> u64;
    /// Bytes of buffers read so far.
    fn bytes_in(&self) -> u64;
    /// The time spent waiting for input since the last call, taken: each
    /// [`process`](Self::process) call counts its wait for the first element (the task
    /// is idle then, Flink's `idleTimeMsPerSecond`).
    fn take_idle_time(&mut self) -> Duration;
    /// The watermark the input is at (`i64::MIN` before the first).
    fn input_watermark(&self) -> i64;
    /// The usage of the input gates' receive buffers (Flink's `inPoolUsage`).
    fn input_pool_usage(&self) -> PoolUsage;
    /// Each input's watermark, for a processor of two inputs (`i64::MIN` before the
    /// first); `None` for one input.
    fn input_watermarks(&self) -> Option<[i64; 2]> {
        None
    }
    /// A processing-time wake-up of the task is due: pass it to the chain.
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        let _ = now;
        Ok(())
    }
    /// Checkpoint `barrier` was triggered at this task, every upstream task having
    /// finished: it comes out of [`take_barrier_outcome`](Self::take_barrier_outcome)
    /// as aligned once every channel has ended, before the chain's input is ended.
    /// Refused once the input has ended.
    fn trigger_at_end_of_input(&mut self, barrier: CheckpointBarrier) -> EndOfInputTrigger;
    /// The next checkpoint outcome of barrier alignment, oldest first.
    fn take_barrier_outcome(&mut self) -> Option<BarrierOutcome>;
    /// How long the last completed alignment took.
    fn last_alignment_duration(&self) -> Duration;
    /// Hands over the restored in-flight data of checkpoint `checkpoint_id`, replayed
    /// into the chain by the first [`process`](Self::process) before any network input;
    /// state naming a gate or channel the task does not have is refused.
    fn restore_channel_state(
        &mut self,
        checkpoint_id: CheckpointId,
        state: Vec<InputChannelState>,
    ) -> Result<(), TaskError>;
    /// The recorded in-flight data of unaligned checkpoint `checkpoint_id` (after its
    /// [`BarrierOutcome::ChannelStateComplete`]).
    fn take_channel_state(&mut self, checkpoint_id: CheckpointId) -> Vec<InputChannelState>;
    /// Drops the recorded in-flight data of aborted checkpoint `checkpoint_id`.
    fn discard_channel_state(&mut self, checkpoint_id: CheckpointId);
}

/// A processor's share of the task's barrier aligner: its channels are the aligner's
/// `offset..offset + n`, its gate the task's input `gate`.
pub struct AlignmentShare {
    aligner: Rc<RefCell<BarrierAligner>>,
    gate: u32,
    offset: usize,
    seen_releases: u64,
}

impl AlignmentShare {
    /// Channels `offset..` of `aligner`, read from the task's input `gate`.
    pub fn new(aligner: Rc<RefCell<BarrierAligner>>, gate: u32, offset: usize) -> Self {
        Self {
            aligner,
            gate,
            offset,
            seen_releases: 0,
        }
    }
}

/// How many elements one `process` call handles before returning to the task loop.
const BATCH: usize = 512;

/// Reads `I` records and events from a gate into a chain head.
pub struct StreamInputProcessor<I> {
    reader: RecordReader<I>,
    head: Box<dyn Output<I>>,
    valve: WatermarkValve,
    records_in: u64,
    /// Time spent waiting for a first element, not yet taken.
    idle: Duration,
    ended: bool,
    alignment: AlignmentShare,
    recorder: ChannelStateRecorder,
    /// Restored in-flight data still to replay, with its checkpoint.
    replay: Option<(CheckpointId, Vec<InputChannelState>)>,
}

impl<I: Serialize + DeserializeOwned> StreamInputProcessor<I> {
    /// Reads from `reader` into `head`, aligning barriers over its own channels.
    pub fn new(reader: RecordReader<I>, head: Box<dyn Output<I>>) -> Self {
        let aligner = Rc::new(RefCell::new(BarrierAligner::new(reader.num_channels())));
        Self::with_alignment(reader, head, AlignmentShare::new(aligner, 0, 0))
    }

    /// Reads from `reader` into `head`, its channels being `alignment`'s share of an
    /// aligner over several gates.
    pub fn with_alignment(reader: RecordReader<I>, head: Box<dyn Output<I>>, alignment: AlignmentShare) -> Self {
        let valve = WatermarkValve::new(reader.num_channels());
        let recorder = ChannelStateRecorder::new(alignment.gate, reader.num_channels());
        Self {
            reader,
            head,
            valve,
            records_in: 0,
            idle: Duration::ZERO,
            ended: false,
            alignment,
            recorder,
            replay: None,
        }
    }

    /// Releases the gate's blocked channels once the aligner released them.
    fn sync_blocking(&mut self) {
        let releases = self.alignment.aligner.borrow().releases();
        if releases != self.alignment.seen_releases {
            self.alignment.seen_releases = releases;
            self.reader.gate_mut().unblock_all();
        }
    }

    /// Looks up which channels record now. A recording channel whose barrier of the
    /// recording checkpoint is queued in band at this end (an aligned barrier whose
    /// checkpoint switched to unaligned here) gets it promoted to a priority event, so
    /// that it overtakes the data ahead of it instead of waiting for it.
    fn sync_recording(&mut self) {
        let aligner = self.alignment.aligner.borrow();
        self.recorder.sync(&aligner, self.alignment.offset);
        if let Some(checkpoint) = aligner.recording_checkpoint() {
            for channel in 0..self.reader.num_channels() {
                if self.recorder.is_recording(channel) {
                    self.reader.gate().promote_barrier(channel, checkpoint);
                }
            }
        }
    }

    /// Feeds restored in-flight data into the channels' decoders, channel by channel,
    /// and the records it completes into the head.
    fn replay_channel_state(&mut self) -> Result<(), TaskError> {
        let Some((checkpoint_id, states)) = self.replay.take() else {
            return Ok(());
        };
        for state in &states {
            let records = self
                .reader
                .resume_channel(state.channel as usize, &state.data)
                .map_err(|e| TaskError::Restore {
                    checkpoint_id,
                    reason: format!("in-flight data of input gate {}: {e}", state.gate),
                })?;
            for record in records {
                self.records_in += 1;
                self.head.collect(record)?;
            }
        }
        Ok(())
    }

    /// Hands `barrier` of `channel` to the aligner and carries out its decision; an
    /// unaligned barrier's `in_flight` data joins the channel state. True when the
    /// aligner has an outcome for the task (the batch stops).
    fn on_barrier(&mut self, channel: usize, barrier: CheckpointBarrier, in_flight: &[u8]) -> bool {
        let action =
            self.alignment
                .aligner
                .borrow_mut()
                .on_barrier(self.alignment.offset + channel, barrier, Instant::now());
        self.sync_recording();
        match action {
            ChannelAction::Block => self.reader.gate_mut().block_channel(channel),
            ChannelAction::PersistInFlight => self.recorder.add_in_flight(channel, barrier.id, in_flight),
            ChannelAction::None => {}
        }
        self.alignment.aligner.borrow().has_outcome()
    }
}

impl<I: Serialize + DeserializeOwned> InputProcessor for StreamInputProcessor<I> {
    fn process(&mut self, timeout: Option<Duration>) -> Result<InputStatus, TaskError> {
        if self.ended {
            return Ok(InputStatus::EndOfInput);
        }
        self.replay_channel_state()?;
        let deadline = {
            let mut aligner = self.alignment.aligner.borrow_mut();
            aligner.check_timeout(Instant::now());
            aligner.alignment_deadline()
        };
        self.sync_blocking();
        self.sync_recording();
        if self.alignment.aligner.borrow().has_outcome() {
            return Ok(InputStatus::MoreAvailable);
        }
        let mut wait = match (timeout, deadline) {
            (t, None) => t,
            (None, Some(d)) => Some(d.saturating_duration_since(Instant::now())),
            (Some(t), Some(d)) => Some(t.min(d.saturating_duration_since(Instant::now()))),
        };
        let mut processed_any = false;
        // A record already read is collected only once the next element is read (never
        // waited for: `wait` is zero after the first), so that the head can prefetch
        // the state of the next record while it works on this one.
        let mut held: Option<StreamRecord<I>> = None;
        for _ in 0..BATCH {
            let waiting = (!processed_any).then(Instant::now);
            let next = self.reader.next(wait)?;
            if let Some(since) = waiting {
                self.idle += since.elapsed();
            }
            if !matches!(next, ReaderEvent::Record(_)) {
                if let Some(record) = held.take() {
                    self.head.collect(record)?;
                }
            }
            match next {
                ReaderEvent::Record(record) => {
                    self.records_in += 1;
                    if let Some(channel) = self.reader.current_channel() {
                        if self.recorder.is_recording(channel) {
                            self.recorder.record(channel, &record)?;
                        }
                    }
                    self.head.prefetch(&record);
                    if let Some(before) = held.replace(record) {
                        self.head.collect(before)?;
                    }
                }
                ReaderEvent::Event {
                    channel,
                    event: Event::Watermark(wm),
                } => {
                    if let Some(out) = self.valve.input_watermark(channel, wm) {
                        self.head.emit_watermark(out)?;
                    }
                }
                ReaderEvent::Event {
                    channel,
                    event: Event::WatermarkStatus(status),
                } => {
                    let out = self.valve.input_watermark_status(channel, status);
                    if let Some(wm) = out.watermark {
                        self.head.emit_watermark(wm)?;
                    }
                    if let Some(status) = out.status {
                        self.head.emit_watermark_status(status)?;
                    }
                }
                ReaderEvent::Event {
                    channel,
                    event: Event::EndOfPartition,
                } => {
                    self.alignment
                        .aligner
                        .borrow_mut()
                        .on_end_of_partition(self.alignment.offset + channel, Instant::now());
                    self.sync_recording();
                    if self.alignment.aligner.borrow().has_outcome() {
                        return Ok(InputStatus::MoreAvailable);
                    }
                }
                ReaderEvent::Event {
                    channel,
                    event: Event::CheckpointBarrier(barrier),
                } => {
                    if self.on_barrier(channel, barrier, &[]) {
                        return Ok(InputStatus::MoreAvailable);
                    }
                }
                ReaderEvent::PriorityEvent {
                    channel,
                    event: Event::CheckpointBarrier(barrier),
                    in_flight,
                } if barrier.options.is_unaligned() => {
                    if self.on_barrier(channel, barrier, &in_flight) {
                        return Ok(InputStatus::MoreAvailable);
                    }
                }
                ReaderEvent::PriorityEvent { channel, event, .. } => {
                    return Err(TaskError::Network(NetworkError::Corrupt(format!(
                        "channel {channel}: priority event {event:?} is not an unaligned checkpoint barrier"
                    ))));
                }
                ReaderEvent::Timeout => {
                    return Ok(if processed_any {
                        InputStatus::MoreAvailable
                    } else {
                        InputStatus::NothingAvailable
                    });
                }
                ReaderEvent::Finished => {
                    self.ended = true;
                    self.head.end_input()?;
                    return Ok(InputStatus::EndOfInput);
                }
            }
            processed_any = true;
            wait = Some(Duration::ZERO);
        }
        if let Some(record) = held {
            self.head.collect(record)?;
        }
        Ok(InputStatus::MoreAvailable)
    }

    fn records_in(&self) -> u64 {
        self.records_in
    }

    fn bytes_in(&self) -> u64 {
        self.reader.bytes_in()
    }

    fn take_idle_time(&mut self) -> Duration {
        std::mem::take(&mut self.idle)
    }

    fn input_watermark(&self) -> i64 {
        self.valve.current().0
    }

    fn input_pool_usage(&self) -> PoolUsage {
        self.reader.pool_usage()
    }

    fn trigger_at_end_of_input(&mut self, barrier: CheckpointBarrier) -> EndOfInputTrigger {
        if self.ended {
            return EndOfInputTrigger::Refused;
        }
        self.alignment.aligner.borrow_mut().trigger_at_end_of_input(barrier)
    }

    fn take_barrier_outcome(&mut self) -> Option<BarrierOutcome> {
        self.alignment.aligner.borrow_mut().take_outcome()
    }

    fn last_alignment_duration(&self) -> Duration {
        self.alignment.aligner.borrow().last_alignment_duration()
    }

    fn restore_channel_state(
        &mut self,
        checkpoint_id: CheckpointId,
        state: Vec<InputChannelState>,
    ) -> Result<(), TaskError> {
        let channels = self.reader.num_channels();
        if let Some(bad) = state.iter().find(|s| {
            s.gate != self.alignment.gate
                || s.channel as usize >= channels
                || s.channels != 0 && s.channels as usize != channels
        }) {
            return Err(TaskError::Restore {
                checkpoint_id,
                reason: format!(
                    "the unaligned checkpoint holds in-flight data of input gate {} channel {} (of {}), but this \
                     input is gate {} with {channels} channels: channel state is not redistributed when a \
                     producer's parallelism changes",
                    bad.gate, bad.channel, bad.channels, self.alignment.gate
                ),
            });
        }
        if !state.is_empty() {
            self.replay = Some((checkpoint_id, state));
        }
        Ok(())
    }

    fn take_channel_state(&mut self, checkpoint_id: CheckpointId) -> Vec<InputChannelState> {
        self.recorder.take(checkpoint_id)
    }

    fn discard_channel_state(&mut self, checkpoint_id: CheckpointId) {
        self.recorder.discard(checkpoint_id);
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        if self.ended {
            return Ok(());
        }
        self.head.on_processing_time(now)
    }
}

#[cfg(test)]
mod tests;
