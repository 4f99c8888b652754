//! Flink's source `watermarkLag` (FLIP-33): how far a source subtask's watermark is
//! behind the current time, in milliseconds.
//!
//! Only a real watermark has a lag: before the first one (`i64::MIN`, Flink's "no
//! watermark") and after the end of input (`i64::MAX`) there is none, and no value is
//! reported. A watermark ahead of the clock gives a negative lag, as Flink's gauge does.

/// `now_ms − watermark` for a real watermark; `None` before the first or after the end.
pub fn watermark_lag(now_ms: i64, watermark: i64) -> Option<i64> {
    if watermark == i64::MIN || watermark == i64::MAX {
        return None;
    }
    Some(now_ms.saturating_sub(watermark))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_watermark_lags_by_the_time_since_it_and_the_sentinels_have_no_lag() {
        assert_eq!(watermark_lag(10_000, 4_000), Some(6_000));
        assert_eq!(watermark_lag(10_000, 12_000), Some(-2_000));
        assert_eq!(watermark_lag(10_000, i64::MIN), None);
        assert_eq!(watermark_lag(10_000, i64::MAX), None);
        assert_eq!(watermark_lag(i64::MAX, -5), Some(i64::MAX));
    }
}
