//! Reading a task's network input into the head of its chain: records go straight to
//! the head; watermarks and watermark statuses go through the task's
//! [`WatermarkValve`], and only what it decides to emit reaches the head; checkpoint
//! barriers and ended channels go to the task's [`BarrierAligner`], whose decisions
//! (block a channel) are carried out on the gate at once. When the aligner has an
//! outcome (snapshot, or decline) the batch stops, so that the task handles it before
//! any further input; the gate's channels are released on the next call.

use crate::checkpoint::{BarrierAligner, BarrierOutcome, ChannelAction};
use crate::error::TaskError;
use crate::network::{ReaderEvent, RecordReader};
use crate::operator::Output;
use crate::task::valve::WatermarkValve;
use serde::de::DeserializeOwned;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use weir_core::Event;

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
    /// A processing-time wake-up of the task is due: pass it to the chain.
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        let _ = now;
        Ok(())
    }
    /// The next checkpoint outcome of barrier alignment, oldest first.
    fn take_barrier_outcome(&mut self) -> Option<BarrierOutcome>;
    /// How long the last completed alignment took.
    fn last_alignment_duration(&self) -> Duration;
}

/// A processor's share of the task's barrier aligner: its channels are the aligner's
/// `offset..offset + n`.
pub struct AlignmentShare {
    aligner: Rc<RefCell<BarrierAligner>>,
    offset: usize,
    seen_releases: u64,
}

impl AlignmentShare {
    /// Channels `offset..` of `aligner`.
    pub fn new(aligner: Rc<RefCell<BarrierAligner>>, offset: usize) -> Self {
        Self {
            aligner,
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
    ended: bool,
    alignment: AlignmentShare,
}

impl<I: DeserializeOwned> StreamInputProcessor<I> {
    /// Reads from `reader` into `head`, aligning barriers over its own channels.
    pub fn new(reader: RecordReader<I>, head: Box<dyn Output<I>>) -> Self {
        let aligner = Rc::new(RefCell::new(BarrierAligner::new(reader.num_channels())));
        Self::with_alignment(reader, head, AlignmentShare::new(aligner, 0))
    }

    /// Reads from `reader` into `head`, its channels being `alignment`'s share of an
    /// aligner over several gates.
    pub fn with_alignment(reader: RecordReader<I>, head: Box<dyn Output<I>>, alignment: AlignmentShare) -> Self {
        let valve = WatermarkValve::new(reader.num_channels());
        Self {
            reader,
            head,
            valve,
            records_in: 0,
            ended: false,
            alignment,
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
}

impl<I: DeserializeOwned> InputProcessor for StreamInputProcessor<I> {
    fn process(&mut self, timeout: Option<Duration>) -> Result<InputStatus, TaskError> {
        if self.ended {
            return Ok(InputStatus::EndOfInput);
        }
        self.sync_blocking();
        if self.alignment.aligner.borrow().has_outcome() {
            return Ok(InputStatus::MoreAvailable);
        }
        let mut wait = timeout;
        let mut processed_any = false;
        for _ in 0..BATCH {
            match self.reader.next(wait)? {
                ReaderEvent::Record(record) => {
                    self.records_in += 1;
                    self.head.collect(record)?;
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
                    let mut aligner = self.alignment.aligner.borrow_mut();
                    aligner.on_end_of_partition(self.alignment.offset + channel);
                    if aligner.has_outcome() {
                        return Ok(InputStatus::MoreAvailable);
                    }
                }
                ReaderEvent::Event {
                    channel,
                    event: Event::CheckpointBarrier(barrier),
                } => {
                    let mut aligner = self.alignment.aligner.borrow_mut();
                    if aligner.on_barrier(self.alignment.offset + channel, barrier) == ChannelAction::Block {
                        self.reader.gate_mut().block_channel(channel);
                    }
                    if aligner.has_outcome() {
                        return Ok(InputStatus::MoreAvailable);
                    }
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
        Ok(InputStatus::MoreAvailable)
    }

    fn records_in(&self) -> u64 {
        self.records_in
    }

    fn take_barrier_outcome(&mut self) -> Option<BarrierOutcome> {
        self.alignment.aligner.borrow_mut().take_outcome()
    }

    fn last_alignment_duration(&self) -> Duration {
        self.alignment.aligner.borrow().last_alignment_duration()
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        if self.ended {
            return Ok(());
        }
        self.head.on_processing_time(now)
    }
}
