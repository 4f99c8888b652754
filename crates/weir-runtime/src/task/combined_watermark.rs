//! The watermark of an operator with several logical inputs (Flink's
//! `CombinedWatermarkStatus`, used by two-input operators): each input has already
//! been combined over its channels by a [`super::valve::WatermarkValve`]; the operator's
//! event time is the minimum over its non-idle inputs.
//!
//! A plain state machine. Rules: every input starts at the minimum watermark, active;
//! the combined watermark is the minimum over active inputs and only rises; when every
//! input is idle the combined stream is idle and its watermark does not move; a status
//! is emitted only when the combined idleness changes.
//!
//! Weir has no two-input operators in its API yet (`connect`/joins need input-indexed
//! edges in the StreamGraph); this is the rule they will use.

use weir_core::element::WatermarkStatus;
use weir_core::Watermark;

#[derive(Debug, Clone, Copy)]
struct Partial {
    watermark: i64,
    idle: bool,
}

/// Watermarks and idleness of each input, and the combined watermark.
#[derive(Debug, Clone)]
pub struct CombinedWatermark {
    inputs: Vec<Partial>,
    combined: i64,
    idle: bool,
}

/// What to emit after one input changed: the watermark first, then the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CombinedOutput {
    /// A new combined watermark.
    pub watermark: Option<Watermark>,
    /// A new combined status.
    pub status: Option<WatermarkStatus>,
}

impl CombinedWatermark {
    /// The combination of `num_inputs` inputs (two for a two-input operator).
    pub fn new(num_inputs: usize) -> Self {
        Self {
            inputs: vec![
                Partial {
                    watermark: i64::MIN,
                    idle: false,
                };
                num_inputs
            ],
            combined: i64::MIN,
            idle: false,
        }
    }

    fn update(&mut self) -> Option<Watermark> {
        if self.inputs.is_empty() {
            return None;
        }
        let min = self.inputs.iter().filter(|p| !p.idle).map(|p| p.watermark).min();
        self.idle = min.is_none();
        match min {
            Some(m) if m > self.combined => {
                self.combined = m;
                Some(Watermark(m))
            }
            _ => None,
        }
    }

    /// Input `input`'s watermark advanced to `watermark`.
    pub fn input_watermark(&mut self, input: usize, watermark: Watermark) -> Option<Watermark> {
        let p = self.inputs.get_mut(input)?;
        p.watermark = p.watermark.max(watermark.0);
        self.update()
    }

    /// Input `input` became idle or active.
    pub fn input_status(&mut self, input: usize, status: WatermarkStatus) -> CombinedOutput {
        let was_idle = self.idle;
        let Some(p) = self.inputs.get_mut(input) else {
            return CombinedOutput::default();
        };
        p.idle = status.is_idle();
        let watermark = self.update();
        CombinedOutput {
            watermark,
            status: (was_idle != self.idle).then_some(status),
        }
    }

    /// The combined watermark.
    pub fn current(&self) -> Watermark {
        Watermark(self.combined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use WatermarkStatus::{Active, Idle};

    #[test]
    fn two_inputs_combine_to_their_minimum() {
        let mut c = CombinedWatermark::new(2);
        assert_eq!(c.input_watermark(0, Watermark(10)), None);
        assert_eq!(c.input_watermark(1, Watermark(7)), Some(Watermark(7)));
        assert_eq!(c.input_watermark(1, Watermark(12)), Some(Watermark(10)));
        assert_eq!(c.current(), Watermark(10));
    }

    #[test]
    fn an_idle_input_is_left_out_and_both_idle_makes_the_operator_idle() {
        let mut c = CombinedWatermark::new(2);
        c.input_watermark(0, Watermark(10));
        assert_eq!(
            c.input_status(1, Idle),
            CombinedOutput {
                watermark: Some(Watermark(10)),
                status: None
            }
        );
        assert_eq!(
            c.input_status(0, Idle),
            CombinedOutput {
                watermark: None,
                status: Some(Idle)
            }
        );
        assert_eq!(
            c.input_status(1, Active),
            CombinedOutput {
                watermark: None,
                status: Some(Active)
            }
        );
    }
}
