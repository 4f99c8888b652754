//! How query results are written: the SQL functions the queries use on times and
//! prices (`DATE_FORMAT`, `HOUR`, `0.908 * price` as `DECIMAL(23, 3)`), in UTC.
//! Timestamps in output rows are epoch milliseconds.

use serde::{Deserialize, Serialize};

const MS_PER_DAY: i64 = 86_400_000;

/// `0.908 * price` with exactly three fractional digits, written without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Euros(pub i64);

impl std::fmt::Display for Euros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let thousandths = self.0 * 908;
        write!(f, "{}.{:03}", thousandths / 1000, thousandths % 1000)
    }
}

/// Whether `0.908 * price` lies strictly between 1,000,000 and 50,000,000 (q14).
pub fn euros_between_1m_and_50m(price: i64) -> bool {
    let thousandths = price * 908;
    thousandths > 1_000_000_000 && thousandths < 50_000_000_000
}

/// The UTC hour of the day of `ms` (`HOUR(dateTime)`).
pub fn hour(ms: i64) -> i64 {
    ms.rem_euclid(MS_PER_DAY) / 3_600_000
}

/// `DATE_FORMAT(dateTime, 'HH:mm')`.
pub fn hour_minute(ms: i64) -> String {
    MinuteOfDay::of(ms).to_string()
}

/// A UTC minute of the day, written `HH:mm`; its order is the order of the written form.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MinuteOfDay(pub i64);

impl MinuteOfDay {
    /// The minute of the day of `ms`.
    pub fn of(ms: i64) -> Self {
        Self(ms.rem_euclid(MS_PER_DAY) / 60_000)
    }
}

impl std::fmt::Display for MinuteOfDay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

/// `DATE_FORMAT(dateTime, 'yyyy-MM-dd')` (proleptic Gregorian civil date of UTC).
pub fn day(ms: i64) -> String {
    Day::of(ms).to_string()
}

/// A UTC calendar day as days since 1970-01-01, written `yyyy-MM-dd`: a key that costs
/// no allocation, ordered as its written form (for years 0 to 9999).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Day(pub i64);

impl Day {
    /// The day of `ms`.
    pub fn of(ms: i64) -> Self {
        Self(ms.div_euclid(MS_PER_DAY))
    }
}

impl std::fmt::Display for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let z = self.0 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

/// The time of day class of q14: `dayTime` 8–18 h, `nightTime` up to 6 h or from 20 h,
/// else `otherTime`.
pub fn bid_time_type(ms: i64) -> &'static str {
    match hour(ms) {
        8..=18 => "dayTime",
        h if h <= 6 || h >= 20 => "nightTime",
        _ => "otherTime",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_are_utc_calendar_fields() {
        assert_eq!(day(0), "1970-01-01");
        assert_eq!(day(1_700_000_000_000), "2023-11-14");
        assert_eq!(hour_minute(1_700_000_000_000), "22:13");
        assert_eq!(day(951_782_400_000), "2000-02-29");
        assert_eq!(Day::of(-1).to_string(), "1969-12-31");
        assert_eq!(hour_minute(-1), "23:59");
        assert!(Day::of(951_782_400_000) < Day::of(951_868_800_000));
        assert_eq!(bid_time_type(1_700_000_000_000), "nightTime");
        assert_eq!(bid_time_type(1_700_000_000_000 - 3 * 3_600_000), "otherTime");
        assert_eq!(bid_time_type(1_700_000_000_000 - 10 * 3_600_000), "dayTime");
    }

    #[test]
    fn euro_prices_are_exact_to_three_digits() {
        assert_eq!(Euros(100).to_string(), "90.800");
        assert_eq!(Euros(12_345).to_string(), "11209.260");
        assert!(euros_between_1m_and_50m(1_101_322));
        assert!(!euros_between_1m_and_50m(1_101_321));
    }
}
