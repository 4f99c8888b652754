//! The emitter between a watermark generator and the stream (the `WatermarkEmitter`
//! of Flink's `TimestampsAndWatermarksOperator`).
//!
//! A plain state machine: generators call it as their [`WatermarkOutput`]; it keeps
//! the decisions as pending actions that the operator then applies to its output, in
//! order. Rules: a watermark not above the current one is dropped; a watermark that
//! goes out first re-activates an idle output (ACTIVE before the watermark); marking
//! idle or active only emits a status when it changes.

use super::generator::WatermarkOutput;
use weir_core::element::WatermarkStatus;
use weir_core::Watermark;
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

/// One decision of the emitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmitterAction {
    /// Emit this watermark.
    Watermark(Watermark),
    /// Emit this status.
    Status(WatermarkStatus),
}

/// Tracks the emitted watermark and idleness; collects the actions to apply.
#[derive(Debug, Clone)]
pub struct WatermarkEmitter {
    current: i64,
    idle: bool,
    pending: Vec<EmitterAction>,
}

impl Default for WatermarkEmitter {
    fn default() -> Self {
        Self {
            current: i64::MIN,
            idle: false,
            pending: Vec::new(),
        }
    }
}

impl WatermarkEmitter {
    /// An active emitter at the minimum watermark.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last watermark emitted.
    pub fn current_watermark(&self) -> Watermark {
        Watermark(self.current)
    }

    /// True while the output is idle.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// Takes the pending actions, in order.
    pub fn take_actions(&mut self) -> Vec<EmitterAction> {
        std::mem::take(&mut self.pending)
    }

    /// Applies the pending actions to `output`, in order.
    pub fn drain_into<T>(&mut self, output: &mut dyn Output<T>) -> Result<(), TaskError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        for a in self.pending.drain(..) {
            match a {
                EmitterAction::Watermark(w) => output.emit_watermark(w)?,
                EmitterAction::Status(s) => output.emit_watermark_status(s)?,
            }
        }
        Ok(())
    }
}

impl WatermarkOutput for WatermarkEmitter {
    fn emit_watermark(&mut self, watermark: Watermark) {
        if watermark.0 <= self.current {
            return;
        }
        self.current = watermark.0;
        self.mark_active();
        self.pending.push(EmitterAction::Watermark(watermark));
    }

    fn mark_idle(&mut self) {
        if !self.idle {
            self.idle = true;
            self.pending.push(EmitterAction::Status(WatermarkStatus::Idle));
        }
    }

    fn mark_active(&mut self) {
        if self.idle {
            self.idle = false;
            self.pending.push(EmitterAction::Status(WatermarkStatus::Active));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EmitterAction::{Status, Watermark as W};

    #[test]
    fn only_increasing_watermarks_are_emitted() {
        let mut e = WatermarkEmitter::new();
        e.emit_watermark(Watermark(5));
        e.emit_watermark(Watermark(5));
        e.emit_watermark(Watermark(3));
        e.emit_watermark(Watermark(9));
        assert_eq!(e.take_actions(), vec![W(Watermark(5)), W(Watermark(9))]);
        assert_eq!(e.current_watermark(), Watermark(9));
    }

    #[test]
    fn a_watermark_after_idleness_first_reactivates_the_output() {
        let mut e = WatermarkEmitter::new();
        e.mark_idle();
        e.mark_idle();
        e.emit_watermark(Watermark(1));
        assert_eq!(
            e.take_actions(),
            vec![
                Status(WatermarkStatus::Idle),
                Status(WatermarkStatus::Active),
                W(Watermark(1))
            ]
        );
    }

    #[test]
    fn a_watermark_that_does_not_advance_leaves_an_idle_output_idle() {
        let mut e = WatermarkEmitter::new();
        e.emit_watermark(Watermark(10));
        e.mark_idle();
        e.emit_watermark(Watermark(10));
        assert!(e.is_idle());
        assert_eq!(e.take_actions(), vec![W(Watermark(10)), Status(WatermarkStatus::Idle)]);
    }
}
