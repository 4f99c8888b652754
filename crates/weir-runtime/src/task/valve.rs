//! The watermark valve: combines the watermarks and watermark statuses of a task's
//! input channels into one (Flink's `StatusWatermarkValve`).
//!
//! A plain state machine: feed it a channel's watermark or status, it returns what the
//! task must emit downstream. Rules (reference §6):
//!
//! - Every channel starts at the minimum watermark, active and *aligned*; the valve's
//!   last output starts at the minimum watermark, active.
//! - A watermark is ignored if its channel or the whole valve is idle, or if it is not
//!   above the channel's last watermark. An unaligned channel becomes aligned again
//!   once its watermark catches up with the last output.
//! - The output is the minimum over aligned channels, emitted only when strictly
//!   greater than the last output.
//! - A channel going idle leaves the minimum (if it held it, a new minimum may be
//!   emitted). When **all** channels are idle, the maximum watermark over all channels
//!   is emitted (if the channel that just went idle held the last output, and if it is
//!   greater), then the valve emits IDLE.
//! - A channel going active again rejoins the minimum only once its watermark is at
//!   least the last output; if the valve was idle it emits ACTIVE.
//!
//! Invariants: output watermarks strictly increase; a watermark is never emitted while
//! the valve is idle; statuses alternate (IDLE, ACTIVE, IDLE, …).

use weir_core::element::WatermarkStatus;
use weir_core::Watermark;

/// What the valve decided to emit for one input, in this order: the watermark first,
/// then the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValveOutput {
    /// A new combined watermark.
    pub watermark: Option<Watermark>,
    /// A new combined status.
    pub status: Option<WatermarkStatus>,
}

impl ValveOutput {
    const NOTHING: ValveOutput = ValveOutput {
        watermark: None,
        status: None,
    };
}

#[derive(Debug, Clone, Copy)]
struct ChannelStatus {
    watermark: i64,
    status: WatermarkStatus,
    aligned: bool,
}

/// Per-channel watermarks and statuses, and the last combined output.
#[derive(Debug, Clone)]
pub struct WatermarkValve {
    channels: Vec<ChannelStatus>,
    last_output: i64,
    last_status: WatermarkStatus,
}

impl WatermarkValve {
    /// A valve over `num_channels` channels, all active and at the minimum watermark.
    pub fn new(num_channels: usize) -> Self {
        Self {
            channels: vec![
                ChannelStatus {
                    watermark: i64::MIN,
                    status: WatermarkStatus::Active,
                    aligned: true,
                };
                num_channels
            ],
            last_output: i64::MIN,
            last_status: WatermarkStatus::Active,
        }
    }

    /// A watermark arrived on `channel`; returns the new combined watermark, if any.
    pub fn input_watermark(&mut self, channel: usize, watermark: Watermark) -> Option<Watermark> {
        if self.last_status.is_idle() {
            return None;
        }
        let last_output = self.last_output;
        let ch = self.channels.get_mut(channel)?;
        if ch.status.is_idle() || watermark.0 <= ch.watermark {
            return None;
        }
        ch.watermark = watermark.0;
        if !ch.aligned && watermark.0 >= last_output {
            ch.aligned = true;
        }
        self.new_min_across_aligned()
    }

    /// A watermark status arrived on `channel`; returns what to emit.
    pub fn input_watermark_status(&mut self, channel: usize, status: WatermarkStatus) -> ValveOutput {
        let last_output = self.last_output;
        let Some(ch) = self.channels.get_mut(channel) else {
            return ValveOutput::NOTHING;
        };
        match (status, ch.status) {
            (WatermarkStatus::Idle, WatermarkStatus::Active) => {
                ch.status = WatermarkStatus::Idle;
                ch.aligned = false;
                let held_the_min = ch.watermark == last_output;
                if self.channels.iter().all(|c| c.status.is_idle()) {
                    let watermark = if held_the_min { self.max_across_all() } else { None };
                    self.last_status = WatermarkStatus::Idle;
                    ValveOutput {
                        watermark,
                        status: Some(WatermarkStatus::Idle),
                    }
                } else if held_the_min {
                    ValveOutput {
                        watermark: self.new_min_across_aligned(),
                        status: None,
                    }
                } else {
                    ValveOutput::NOTHING
                }
            }
            (WatermarkStatus::Active, WatermarkStatus::Idle) => {
                ch.status = WatermarkStatus::Active;
                if ch.watermark >= last_output {
                    ch.aligned = true;
                }
                if self.last_status.is_idle() {
                    self.last_status = WatermarkStatus::Active;
                    ValveOutput {
                        watermark: None,
                        status: Some(WatermarkStatus::Active),
                    }
                } else {
                    ValveOutput::NOTHING
                }
            }
            _ => ValveOutput::NOTHING,
        }
    }

    fn new_min_across_aligned(&mut self) -> Option<Watermark> {
        let min = self.channels.iter().filter(|c| c.aligned).map(|c| c.watermark).min()?;
        if min > self.last_output {
            self.last_output = min;
            Some(Watermark(min))
        } else {
            None
        }
    }

    fn max_across_all(&mut self) -> Option<Watermark> {
        let max = self.channels.iter().map(|c| c.watermark).max()?;
        if max > self.last_output {
            self.last_output = max;
            Some(Watermark(max))
        } else {
            None
        }
    }

    /// The last combined watermark emitted.
    pub fn current(&self) -> Watermark {
        Watermark(self.last_output)
    }

    /// The last combined status emitted (initially active).
    pub fn status(&self) -> WatermarkStatus {
        self.last_status
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use WatermarkStatus::{Active, Idle};

    fn wm(t: i64) -> Option<Watermark> {
        Some(Watermark(t))
    }

    fn out(watermark: Option<i64>, status: Option<WatermarkStatus>) -> ValveOutput {
        ValveOutput {
            watermark: watermark.map(Watermark),
            status,
        }
    }

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
        assert_eq!(v.input_watermark_status(3, Idle), ValveOutput::NOTHING);
    }

    #[test]
    fn a_single_channel_passes_its_rising_watermarks_through() {
        let mut v = WatermarkValve::new(1);
        assert_eq!(v.input_watermark(0, Watermark(i64::MIN)), None);
        assert_eq!(v.input_watermark(0, Watermark(3)), wm(3));
        assert_eq!(v.input_watermark(0, Watermark(3)), None);
        assert_eq!(v.input_watermark(0, Watermark(i64::MAX)), wm(i64::MAX));
    }

    #[test]
    fn an_idle_channel_that_held_the_minimum_releases_the_next_minimum() {
        let mut v = WatermarkValve::new(3);
        v.input_watermark(0, Watermark(10));
        v.input_watermark(1, Watermark(20));
        assert_eq!(v.input_watermark(2, Watermark(5)), wm(5));
        assert_eq!(v.input_watermark_status(2, Idle), out(Some(10), None));
        assert_eq!(v.status(), Active);
    }

    #[test]
    fn an_idle_channel_above_the_minimum_changes_nothing() {
        let mut v = WatermarkValve::new(2);
        v.input_watermark(0, Watermark(10));
        assert_eq!(v.input_watermark(1, Watermark(5)), wm(5));
        assert_eq!(v.input_watermark_status(0, Idle), ValveOutput::NOTHING);
        assert_eq!(v.input_watermark(1, Watermark(15)), wm(15));
    }

    #[test]
    fn an_idle_channel_that_never_sent_a_watermark_stops_holding_the_others_back() {
        let mut v = WatermarkValve::new(2);
        assert_eq!(v.input_watermark(0, Watermark(100)), None);
        assert_eq!(v.input_watermark_status(1, Idle), out(Some(100), None));
        assert_eq!(v.input_watermark(0, Watermark(200)), wm(200));
    }

    #[test]
    fn watermarks_of_an_idle_channel_are_ignored() {
        let mut v = WatermarkValve::new(2);
        v.input_watermark(0, Watermark(10));
        v.input_watermark_status(1, Idle);
        assert_eq!(v.input_watermark(1, Watermark(50)), None);
        assert_eq!(v.input_watermark(0, Watermark(20)), wm(20));
    }

    #[test]
    fn when_all_channels_go_idle_the_maximum_is_flushed_then_idle_is_emitted() {
        let mut v = WatermarkValve::new(2);
        v.input_watermark(0, Watermark(30));
        assert_eq!(v.input_watermark(1, Watermark(10)), wm(10));
        assert_eq!(v.input_watermark_status(0, Idle), ValveOutput::NOTHING);
        assert_eq!(v.input_watermark_status(1, Idle), out(Some(30), Some(Idle)));
        assert_eq!(v.status(), Idle);
        assert_eq!(v.current(), Watermark(30));
    }

    #[test]
    fn when_the_last_channel_to_go_idle_did_not_hold_the_minimum_no_watermark_is_flushed() {
        let mut v = WatermarkValve::new(2);
        v.input_watermark(0, Watermark(30));
        assert_eq!(v.input_watermark(1, Watermark(10)), wm(10));
        // Channel 1 held the minimum: going idle releases channel 0's 30.
        assert_eq!(v.input_watermark_status(1, Idle), out(Some(30), None));
        assert_eq!(v.input_watermark_status(0, Idle), out(None, Some(Idle)));
    }

    #[test]
    fn all_idle_without_any_watermark_emits_only_the_idle_status() {
        let mut v = WatermarkValve::new(2);
        assert_eq!(v.input_watermark_status(0, Idle), ValveOutput::NOTHING);
        assert_eq!(v.input_watermark_status(1, Idle), out(None, Some(Idle)));
    }

    #[test]
    fn an_idle_valve_ignores_watermarks_and_emits_active_when_a_channel_returns() {
        let mut v = WatermarkValve::new(2);
        v.input_watermark_status(0, Idle);
        v.input_watermark_status(1, Idle);
        assert_eq!(v.input_watermark(0, Watermark(5)), None);
        assert_eq!(v.input_watermark_status(0, Active), out(None, Some(Active)));
        assert_eq!(v.input_watermark(0, Watermark(5)), wm(5));
        assert_eq!(v.input_watermark_status(1, Active), ValveOutput::NOTHING);
    }

    #[test]
    fn a_returning_channel_behind_the_output_rejoins_the_minimum_only_once_caught_up() {
        let mut v = WatermarkValve::new(2);
        v.input_watermark(0, Watermark(5));
        assert_eq!(v.input_watermark(1, Watermark(4)), wm(4));
        assert_eq!(v.input_watermark_status(1, Idle), out(Some(5), None));
        assert_eq!(v.input_watermark(0, Watermark(50)), wm(50));
        assert_eq!(v.input_watermark_status(1, Active), ValveOutput::NOTHING);
        // Channel 1 is at 4, behind the output 50: it does not pull the minimum back.
        assert_eq!(v.input_watermark(1, Watermark(20)), None);
        assert_eq!(v.input_watermark(0, Watermark(60)), wm(60));
        // Caught up (>= 60): aligned again, and now it holds the minimum.
        assert_eq!(v.input_watermark(1, Watermark(70)), None);
        assert_eq!(v.input_watermark(0, Watermark(80)), wm(70));
    }

    #[test]
    fn a_returning_channel_at_or_above_the_output_is_aligned_at_once() {
        let mut v = WatermarkValve::new(2);
        v.input_watermark(0, Watermark(10));
        assert_eq!(v.input_watermark(1, Watermark(8)), wm(8));
        assert_eq!(v.input_watermark_status(0, Idle), ValveOutput::NOTHING);
        assert_eq!(v.input_watermark_status(0, Active), ValveOutput::NOTHING);
        // Channel 0 (10) is aligned again: it holds the minimum once channel 1 passes it.
        assert_eq!(v.input_watermark(1, Watermark(30)), wm(10));
    }

    #[test]
    fn repeated_statuses_change_nothing() {
        let mut v = WatermarkValve::new(2);
        assert_eq!(v.input_watermark_status(0, Active), ValveOutput::NOTHING);
        v.input_watermark_status(0, Idle);
        assert_eq!(v.input_watermark_status(0, Idle), ValveOutput::NOTHING);
    }

    #[derive(Debug, Clone)]
    enum Input {
        Mark(usize, i64),
        Status(usize, bool),
    }

    fn input() -> impl Strategy<Value = Input> {
        prop_oneof![
            4 => (0usize..4, -5i64..40).prop_map(|(c, t)| Input::Mark(c, t)),
            1 => (0usize..4, any::<bool>()).prop_map(|(c, idle)| Input::Status(c, idle)),
        ]
    }

    proptest! {
        #[test]
        fn outputs_rise_strictly_statuses_alternate_and_active_aligned_channels_bound_the_output(
            inputs in proptest::collection::vec(input(), 0..80)
        ) {
            let mut v = WatermarkValve::new(4);
            let mut last = i64::MIN;
            let mut last_status = Active;
            let mut seen = [i64::MIN; 4];
            for i in inputs {
                let o = match i {
                    Input::Mark(c, t) => {
                        seen[c] = seen[c].max(t);
                        ValveOutput { watermark: v.input_watermark(c, Watermark(t)), status: None }
                    }
                    Input::Status(c, idle) => v.input_watermark_status(c, if idle { Idle } else { Active }),
                };
                if let Some(w) = o.watermark {
                    prop_assert!(w.0 > last);
                    prop_assert!(last_status.is_active());
                    prop_assert!(seen.iter().any(|s| *s >= w.0));
                    last = w.0;
                }
                if let Some(s) = o.status {
                    prop_assert_ne!(s, last_status);
                    last_status = s;
                }
                prop_assert_eq!(v.current().0, last);
                prop_assert_eq!(v.status(), last_status);
                // Never beyond an active, aligned channel.
                for ch in &v.channels {
                    if ch.aligned {
                        prop_assert!(ch.status.is_active());
                        prop_assert!(last <= ch.watermark || last == i64::MIN);
                    }
                }
            }
        }
    }
}
