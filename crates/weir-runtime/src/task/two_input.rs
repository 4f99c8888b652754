//! Reading the two inputs of a two-input operator (connect, co-process).
//!
//! Each input has its own gate, reader and watermark valve; their outputs are combined
//! into one stream of [`CoElement`]s for the operator. The operator's watermark is the
//! minimum of its two inputs' (Flink's rule for two-input operators, kept by
//! [`CombinedWatermark`]); its input ends when both inputs have ended.

use crate::checkpoint::{BarrierAligner, BarrierOutcome, EndOfInputTrigger};
use crate::error::TaskError;
use crate::network::{PoolUsage, RecordReader};
use crate::operator::{CoElement, Output};
use crate::task::combined_watermark::CombinedWatermark;
use crate::task::input::{AlignmentShare, InputProcessor, InputStatus, StreamInputProcessor};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};
use weir_core::element::WatermarkStatus;
use weir_core::{CheckpointBarrier, CheckpointId, StreamRecord, Watermark};
use weir_state::InputChannelState;

/// How long one wait on an idle input lasts before the other input is looked at.
const SLICE: Duration = Duration::from_millis(1);

struct Shared<A, B> {
    head: Box<dyn Output<CoElement<A, B>>>,
    combined: CombinedWatermark,
    ended: [bool; 2],
}

impl<A, B> Shared<A, B> {
    fn watermark(&mut self, input: usize, wm: Watermark) -> Result<(), TaskError> {
        match self.combined.input_watermark(input, wm) {
            Some(out) => self.head.emit_watermark(out),
            None => Ok(()),
        }
    }

    fn status(&mut self, input: usize, status: WatermarkStatus) -> Result<(), TaskError> {
        let out = self.combined.input_status(input, status);
        if let Some(wm) = out.watermark {
            self.head.emit_watermark(wm)?;
        }
        if let Some(s) = out.status {
            self.head.emit_watermark_status(s)?;
        }
        Ok(())
    }

    fn end(&mut self, input: usize) -> Result<(), TaskError> {
        self.ended[input] = true;
        if self.ended.iter().all(|e| *e) {
            self.head.end_input()?;
        }
        Ok(())
    }
}

/// The first input's side: wraps its records as [`CoElement::First`].
struct FirstInput<A, B>(Rc<RefCell<Shared<A, B>>>);
/// The second input's side: wraps its records as [`CoElement::Second`].
struct SecondInput<A, B>(Rc<RefCell<Shared<A, B>>>);

impl<A, B> Output<A> for FirstInput<A, B> {
    fn collect(&mut self, record: StreamRecord<A>) -> Result<(), TaskError> {
        let r = StreamRecord {
            value: CoElement::First(record.value),
            timestamp: record.timestamp,
        };
        self.0.borrow_mut().head.collect(r)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.0.borrow_mut().watermark(0, watermark)
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.0.borrow_mut().status(0, status)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.0.borrow_mut().end(0)
    }
}

impl<A, B> Output<B> for SecondInput<A, B> {
    fn collect(&mut self, record: StreamRecord<B>) -> Result<(), TaskError> {
        let r = StreamRecord {
            value: CoElement::Second(record.value),
            timestamp: record.timestamp,
        };
        self.0.borrow_mut().head.collect(r)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.0.borrow_mut().watermark(1, watermark)
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.0.borrow_mut().status(1, status)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.0.borrow_mut().end(1)
    }
}

/// Drives a two-input chain head from two gates.
pub struct TwoInputProcessor<A, B> {
    first: StreamInputProcessor<A>,
    second: StreamInputProcessor<B>,
    shared: Rc<RefCell<Shared<A, B>>>,
    aligner: Rc<RefCell<BarrierAligner>>,
    turn: bool,
}

impl<A: Serialize + DeserializeOwned + 'static, B: Serialize + DeserializeOwned + 'static> TwoInputProcessor<A, B> {
    /// Reads `first` and `second` into `head`.
    pub fn new(first: RecordReader<A>, second: RecordReader<B>, head: Box<dyn Output<CoElement<A, B>>>) -> Self {
        let shared = Rc::new(RefCell::new(Shared {
            head,
            combined: CombinedWatermark::new(2),
            ended: [false; 2],
        }));
        let n = first.num_channels();
        let aligner = Rc::new(RefCell::new(BarrierAligner::new(n + second.num_channels())));
        Self {
            first: StreamInputProcessor::with_alignment(
                first,
                Box::new(FirstInput(shared.clone())),
                AlignmentShare::new(aligner.clone(), 0, 0),
            ),
            second: StreamInputProcessor::with_alignment(
                second,
                Box::new(SecondInput(shared.clone())),
                AlignmentShare::new(aligner.clone(), 1, n),
            ),
            shared,
            aligner,
            turn: false,
        }
    }
}

impl<A: Serialize + DeserializeOwned, B: Serialize + DeserializeOwned> InputProcessor for TwoInputProcessor<A, B> {
    fn process(&mut self, timeout: Option<Duration>) -> Result<InputStatus, TaskError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let a = self.first.process(Some(Duration::ZERO))?;
            if self.aligner.borrow().has_outcome() {
                return Ok(InputStatus::MoreAvailable);
            }
            let b = self.second.process(Some(Duration::ZERO))?;
            if self.aligner.borrow().has_outcome() {
                return Ok(InputStatus::MoreAvailable);
            }
            if a == InputStatus::EndOfInput && b == InputStatus::EndOfInput {
                return Ok(InputStatus::EndOfInput);
            }
            if a == InputStatus::MoreAvailable || b == InputStatus::MoreAvailable {
                return Ok(InputStatus::MoreAvailable);
            }
            let remaining = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => SLICE,
            };
            if remaining.is_zero() {
                return Ok(InputStatus::NothingAvailable);
            }
            let wait = Some(remaining.min(SLICE));
            self.turn = !self.turn;
            let r = if (self.turn && a != InputStatus::EndOfInput) || b == InputStatus::EndOfInput {
                self.first.process(wait)?
            } else {
                self.second.process(wait)?
            };
            if r == InputStatus::MoreAvailable {
                return Ok(InputStatus::MoreAvailable);
            }
        }
    }

    fn records_in(&self) -> u64 {
        self.first.records_in() + self.second.records_in()
    }

    fn bytes_in(&self) -> u64 {
        self.first.bytes_in() + self.second.bytes_in()
    }

    fn take_idle_time(&mut self) -> Duration {
        self.first.take_idle_time() + self.second.take_idle_time()
    }

    fn input_watermark(&self) -> i64 {
        self.first.input_watermark().min(self.second.input_watermark())
    }

    fn input_pool_usage(&self) -> PoolUsage {
        self.first.input_pool_usage() + self.second.input_pool_usage()
    }

    fn input_watermarks(&self) -> Option<[i64; 2]> {
        Some([self.first.input_watermark(), self.second.input_watermark()])
    }

    fn trigger_at_end_of_input(&mut self, barrier: CheckpointBarrier) -> EndOfInputTrigger {
        if self.shared.borrow().ended.iter().all(|e| *e) {
            return EndOfInputTrigger::Refused;
        }
        self.aligner.borrow_mut().trigger_at_end_of_input(barrier)
    }

    fn take_barrier_outcome(&mut self) -> Option<BarrierOutcome> {
        self.aligner.borrow_mut().take_outcome()
    }

    fn last_alignment_duration(&self) -> Duration {
        self.aligner.borrow().last_alignment_duration()
    }

    fn restore_channel_state(
        &mut self,
        checkpoint_id: CheckpointId,
        state: Vec<InputChannelState>,
    ) -> Result<(), TaskError> {
        let (first, second): (Vec<_>, Vec<_>) = state.into_iter().partition(|s| s.gate == 0);
        self.first.restore_channel_state(checkpoint_id, first)?;
        self.second.restore_channel_state(checkpoint_id, second)
    }

    fn take_channel_state(&mut self, checkpoint_id: CheckpointId) -> Vec<InputChannelState> {
        let mut state = self.first.take_channel_state(checkpoint_id);
        state.extend(self.second.take_channel_state(checkpoint_id));
        state
    }

    fn discard_channel_state(&mut self, checkpoint_id: CheckpointId) {
        self.first.discard_channel_state(checkpoint_id);
        self.second.discard_channel_state(checkpoint_id);
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        let mut s = self.shared.borrow_mut();
        if s.ended.iter().all(|e| *e) {
            return Ok(());
        }
        s.head.on_processing_time(now)
    }
}
