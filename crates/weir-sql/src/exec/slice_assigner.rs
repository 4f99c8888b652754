//! Slice assigners (Flink's `SliceAssigners`): how TUMBLE, HOP and CUMULATE windows
//! are cut into slices that do not overlap, so a row is added to one slice only and a
//! window's result is the merge of the slices it covers.
//!
//! All windows are aligned to the epoch (no offset). A slice is named by its end `e`
//! and covers `[e - unit, e)`, where the unit is the TUMBLE size, the HOP slide or the
//! CUMULATE step. A window is named by its end too; it covers the slices from
//! [`SliceAssigner::window_start`]` + unit` up to its end, and it is late (has fired)
//! once the watermark reached `end - 1`. The windows a slice belongs to end at
//! `e, e + unit, ..` up to [`SliceAssigner::last_window_end`]. Arithmetic saturates at
//! the ends of `i64`, so no timestamp can overflow.

use crate::plan::WindowKind;

/// The slicing of one window TVF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceAssigner {
    /// Windows of `size`, one slice each.
    Tumble {
        /// Window size in ms.
        size: i64,
    },
    /// Windows of `size` every `slide` (size a multiple of slide); slices of `slide`.
    Hop {
        /// Window size in ms.
        size: i64,
        /// Slide in ms.
        slide: i64,
    },
    /// Windows `[start, start + step·k)` for k = 1..max_size/step, `start` aligned to
    /// `max_size`; slices of `step`.
    Cumulate {
        /// Max window size in ms.
        max_size: i64,
        /// Step in ms.
        step: i64,
    },
}

impl SliceAssigner {
    /// The slicing of `kind`; `None` for SESSION windows, which cannot be sliced.
    pub fn of(kind: WindowKind) -> Option<Self> {
        match kind {
            WindowKind::Tumble { size } => Some(SliceAssigner::Tumble { size }),
            WindowKind::Hop { slide, size } => Some(SliceAssigner::Hop { size, slide }),
            WindowKind::Cumulate { step, size } => Some(SliceAssigner::Cumulate { max_size: size, step }),
            WindowKind::Session { .. } => None,
        }
    }

    /// The size of a slice, in ms (at least 1).
    pub fn unit(&self) -> i64 {
        match *self {
            SliceAssigner::Tumble { size } => size,
            SliceAssigner::Hop { slide, .. } => slide,
            SliceAssigner::Cumulate { step, .. } => step,
        }
        .max(1)
    }

    /// The end of the slice holding `timestamp`.
    pub fn slice_end(&self, timestamp: i64) -> i64 {
        let unit = self.unit();
        let end = timestamp as i128 - timestamp.rem_euclid(unit) as i128 + unit as i128;
        end.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// The start of the slice holding `timestamp` (saturated at `i64::MIN`): every
    /// timestamp from it up to, not including, its [`SliceAssigner::slice_end`] is in
    /// the same slice.
    pub fn slice_start(&self, timestamp: i64) -> i64 {
        timestamp.saturating_sub(timestamp.rem_euclid(self.unit()))
    }

    /// The end of the last window that holds the slice ending at `slice_end`.
    pub fn last_window_end(&self, slice_end: i64) -> i64 {
        match *self {
            SliceAssigner::Tumble { .. } => slice_end,
            SliceAssigner::Hop { size, slide } => slice_end.saturating_add(size.saturating_sub(slide).max(0)),
            SliceAssigner::Cumulate { max_size, .. } => {
                let first = slice_end.saturating_sub(1);
                let max_size = max_size.max(1);
                first
                    .saturating_sub(first.rem_euclid(max_size))
                    .saturating_add(max_size)
            }
        }
    }

    /// The start of the window ending at `window_end`.
    pub fn window_start(&self, window_end: i64) -> i64 {
        match *self {
            SliceAssigner::Tumble { size } | SliceAssigner::Hop { size, .. } => window_end.saturating_sub(size),
            SliceAssigner::Cumulate { max_size, .. } => {
                let last = window_end.saturating_sub(1);
                last.saturating_sub(last.rem_euclid(max_size.max(1)))
            }
        }
    }

    /// The ends of the windows holding the slice ending at `slice_end`, ascending.
    pub fn window_ends(&self, slice_end: i64) -> impl Iterator<Item = i64> {
        let unit = self.unit();
        let last = self.last_window_end(slice_end);
        std::iter::successors(Some(slice_end), move |e: &i64| {
            e.checked_add(unit).filter(|next| *next <= last)
        })
    }

    /// True once the window ending at `window_end` has fired under `watermark`.
    pub fn is_fired(window_end: i64, watermark: i64) -> bool {
        window_end.saturating_sub(1) <= watermark
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(a: SliceAssigner, slice_end: i64) -> Vec<i64> {
        a.window_ends(slice_end).collect()
    }

    #[test]
    fn a_tumble_slice_is_its_window() {
        let a = SliceAssigner::Tumble { size: 10 };
        assert_eq!(a.slice_end(13), 20);
        assert_eq!(a.slice_end(20), 30);
        assert_eq!(a.slice_end(-3), 0);
        assert_eq!(ends(a, 20), vec![20]);
        assert_eq!(a.window_start(20), 10);
    }

    #[test]
    fn a_hop_slice_belongs_to_size_over_slide_windows() {
        // Size 10, slide 5: ts 12 is in [5, 15) and [10, 20), as Flink's sliding windows.
        let a = SliceAssigner::Hop { size: 10, slide: 5 };
        assert_eq!(a.slice_end(12), 15);
        assert_eq!(ends(a, 15), vec![15, 20]);
        assert_eq!(a.window_start(15), 5);
        assert_eq!(a.window_start(20), 10);
    }

    #[test]
    fn a_cumulate_slice_belongs_to_the_windows_ending_after_it_up_to_the_max_size() {
        // Step 10, max size 30: ts 45 is in [30, 50) and [30, 60).
        let a = SliceAssigner::Cumulate { max_size: 30, step: 10 };
        assert_eq!(a.slice_end(45), 50);
        assert_eq!(ends(a, 50), vec![50, 60]);
        assert_eq!(ends(a, 40), vec![40, 50, 60]);
        assert_eq!(ends(a, 60), vec![60]);
        assert_eq!(a.window_start(50), 30);
        assert_eq!(a.window_start(60), 30);
        assert_eq!(a.window_start(70), 60);
    }

    #[test]
    fn a_window_has_fired_once_the_watermark_reaches_its_last_millisecond() {
        assert!(!SliceAssigner::is_fired(20, 18));
        assert!(SliceAssigner::is_fired(20, 19));
        assert!(SliceAssigner::is_fired(i64::MIN, i64::MIN));
    }

    #[test]
    fn timestamps_at_the_ends_of_the_range_do_not_overflow() {
        let a = SliceAssigner::Hop { size: 10, slide: 5 };
        let e = a.slice_end(i64::MAX);
        assert_eq!(e, i64::MAX);
        assert_eq!(ends(a, e), vec![i64::MAX]);
        assert!(a.slice_end(i64::MIN) > i64::MIN);
        // The slices at the ends, cut short, still hold every timestamp between their
        // start and end in one slice.
        for t in [i64::MIN, i64::MIN + 1, i64::MAX - 9, i64::MAX - 1] {
            let (start, end) = (a.slice_start(t), a.slice_end(t));
            assert!(start <= t && t < end, "{t}: [{start}, {end})");
            assert_eq!(a.slice_end(start), end);
            assert_eq!(a.slice_end(end - 1), end);
        }
    }
}
