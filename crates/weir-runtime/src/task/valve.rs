//! The watermark valve: combines the watermarks of a task's input channels.
//!
//! A plain state machine (Flink's `StatusWatermarkValve` without idleness, which the
//! event-time work adds): each channel's watermark only rises; the output is the
//! minimum over all channels and is emitted only when it is strictly greater than the
//! last output.

use weir_core::Watermark;

/// Per-channel watermarks and the last combined output.
#[derive(Debug, Clone)]
pub struct WatermarkValve {
    channels: Vec<i64>,
    last_output: i64,
}

impl WatermarkValve {
    /// A valve over `num_channels` channels, all at the minimum watermark.
    pub fn new(num_channels: usize) -> Self {
        Self {
            channels: vec![i64::MIN; num_channels],
            last_output: i64::MIN,
        }
    }

    /// A watermark arrived on `channel`; returns the new combined watermark, if any.
    pub fn input_watermark(&mut self, channel: usize, watermark: Watermark) -> Option<Watermark> {
        let slot = self.channels.get_mut(channel)?;
        if watermark.0 <= *slot {
            return None;
        }
        *slot = watermark.0;
        let min = self.channels.iter().copied().min().unwrap_or(i64::MIN);
        if min > self.last_output {
            self.last_output = min;
            Some(Watermark(min))
        } else {
            None
        }
    }

    /// The last combined watermark emitted.
    pub fn current(&self) -> Watermark {
        Watermark(self.last_output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_the_minimum_over_channels_and_only_rises() {
        let mut v = WatermarkValve::new(2);
        assert_eq!(v.input_watermark(0, Watermark(10)), None);
        assert_eq!(v.input_watermark(1, Watermark(5)), Some(Watermark(5)));
        assert_eq!(v.input_watermark(1, Watermark(4)), None);
        assert_eq!(v.input_watermark(1, Watermark(20)), Some(Watermark(10)));
        assert_eq!(v.input_watermark(0, Watermark(30)), Some(Watermark(20)));
        assert_eq!(v.current(), Watermark(20));
    }

    #[test]
    fn watermark_for_unknown_channel_is_ignored() {
        let mut v = WatermarkValve::new(1);
        assert_eq!(v.input_watermark(3, Watermark(1)), None);
    }
}
