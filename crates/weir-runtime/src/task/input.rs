//! Reading a task's network input into the head of its chain: records go straight to
//! the head; watermarks and watermark statuses go through the task's
//! [`WatermarkValve`], and only what it decides to emit reaches the head.

use crate::error::TaskError;
use crate::network::{ReaderEvent, RecordReader};
use crate::operator::Output;
use crate::task::valve::WatermarkValve;
use serde::de::DeserializeOwned;
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
}

impl<I: DeserializeOwned> StreamInputProcessor<I> {
    /// Reads from `reader` into `head`.
    pub fn new(reader: RecordReader<I>, head: Box<dyn Output<I>>) -> Self {
        let valve = WatermarkValve::new(reader.num_channels());
        Self {
            reader,
            head,
            valve,
            records_in: 0,
            ended: false,
        }
    }
}

impl<I: DeserializeOwned> InputProcessor for StreamInputProcessor<I> {
    fn process(&mut self, timeout: Option<Duration>) -> Result<InputStatus, TaskError> {
        if self.ended {
            return Ok(InputStatus::EndOfInput);
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
                    event: Event::EndOfPartition,
                    ..
                } => {}
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

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        if self.ended {
            return Ok(());
        }
        self.head.on_processing_time(now)
    }
}
