//! The lateness rules of Flink's `WindowOperator`, as pure functions.
//!
//! - `cleanup_time`: event time: `max_timestamp + allowed_lateness`, or `i64::MAX` on
//!   overflow (then no cleanup timer is set); processing time: `max_timestamp`.
//! - A window is *late* (the element is not added to it) when it is event-time and its
//!   cleanup time is `<= watermark`.
//! - An element that no window took is *late* (side output, or counted as dropped)
//!   when it is event-time and `timestamp + allowed_lateness <= watermark`.

/// When a window's state is cleared.
pub fn cleanup_time(max_timestamp: i64, allowed_lateness: i64, event_time: bool) -> i64 {
    if event_time {
        max_timestamp.checked_add(allowed_lateness).unwrap_or(i64::MAX)
    } else {
        max_timestamp
    }
}

/// True if the window is already cleaned up (or due): elements are not added to it.
pub fn is_window_late(max_timestamp: i64, allowed_lateness: i64, event_time: bool, watermark: i64) -> bool {
    event_time && cleanup_time(max_timestamp, allowed_lateness, event_time) <= watermark
}

/// True if an element skipped by all its windows counts as late data.
pub fn is_element_late(timestamp: i64, allowed_lateness: i64, event_time: bool, watermark: i64) -> bool {
    event_time && timestamp.saturating_add(allowed_lateness) <= watermark
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleanup_is_at_max_timestamp_plus_lateness_and_saturates_at_the_end_of_time() {
        assert_eq!(cleanup_time(19_999, 5_000, true), 24_999);
        assert_eq!(cleanup_time(i64::MAX - 1, 5, true), i64::MAX);
        assert_eq!(cleanup_time(19_999, 5_000, false), 19_999);
    }

    #[test]
    fn a_window_is_late_once_the_watermark_reaches_its_cleanup_time() {
        assert!(!is_window_late(9, 0, true, 8));
        assert!(is_window_late(9, 0, true, 9));
        assert!(!is_window_late(9, 5, true, 13));
        assert!(is_window_late(9, 5, true, 14));
        assert!(!is_window_late(9, 0, false, 1_000));
    }

    #[test]
    fn an_element_is_late_when_its_timestamp_plus_lateness_is_at_or_behind_the_watermark() {
        assert!(is_element_late(5, 0, true, 5));
        assert!(!is_element_late(5, 3, true, 7));
        assert!(is_element_late(5, 3, true, 8));
        assert!(!is_element_late(5, 0, false, 100));
    }
}
