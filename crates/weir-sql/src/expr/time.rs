//! Dates and times: parsing SQL literals and strings, Java-style format patterns
//! (`yyyy-MM-dd HH:mm:ss`) and EXTRACT. Times are UTC (the session time zone).

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

/// Days between 0001-01-01 and 1970-01-01.
const EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// `yyyy-MM-dd[ HH:mm:ss[.fff]]` (or with `T`) as epoch milliseconds.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(ms) = parse_canonical_timestamp(s) {
        return Some(ms);
    }
    for f in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t.and_utc().timestamp_millis());
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
}

/// The digits of `s` as a number, if `s` is one or more ASCII digits (at most nine).
fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
}

/// Exactly `yyyy-MM-dd HH:mm:ss[.f…]` (1 to 9 fraction digits) as epoch milliseconds,
/// as chrono's `%Y-%m-%d %H:%M:%S%.f` reads it, without its general format machinery
/// (CSV files hold millions of such timestamps). `None` for any other shape or an
/// invalid date or time, which the general parser then judges.
fn parse_canonical_timestamp(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', frac @ ..] => digits(frac)? * 10u32.pow(9 - frac.len() as u32),
        _ => return None,
    };
    let days = epoch_days(digits(&b[..4])? as i64, digits(&b[5..7])?, digits(&b[8..10])?)?;
    let (hour, minute, second) = (digits(&b[11..13])?, digits(&b[14..16])?, digits(&b[17..19])?);
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let seconds = i64::from(hour * 3600 + minute * 60 + second);
    Some((days * 86_400 + seconds) * 1000 + i64::from(nanos / 1_000_000))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (year 0 to 9999); `None` for a
/// month or day that does not exist. Howard Hinnant's `days_from_civil`.
fn epoch_days(year: i64, month: u32, day: u32) -> Option<i64> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if !(0..=9999).contains(&year) || day == 0 || day > month_days {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * i64::from((month + 9) % 12) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * 146_097 + day_of_era - 719_468)
}

/// `yyyy-MM-dd` as days since the epoch.
pub fn parse_date(s: &str) -> Option<i32> {
    NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d")
        .ok()
        .map(|d| d.num_days_from_ce() - EPOCH_DAYS_FROM_CE)
}

/// `HH:mm[:ss[.fff]]` as milliseconds of the day.
pub fn parse_time(s: &str) -> Option<i32> {
    let s = s.trim();
    ["%H:%M:%S%.f", "%H:%M"]
        .iter()
        .find_map(|f| NaiveTime::parse_from_str(s, f).ok())
        .map(|t| (t.num_seconds_from_midnight() * 1000 + t.nanosecond() / 1_000_000) as i32)
}

/// A Java `SimpleDateFormat` pattern as a chrono format string.
pub fn java_pattern(pattern: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let mut n = 1;
        while i + n < chars.len() && chars[i + n] == c {
            n += 1;
        }
        let spec = match (c, n) {
            ('y', 2) => "%y".to_string(),
            ('y', _) => "%Y".to_string(),
            ('M', 1..=2) => "%m".to_string(),
            ('M', 3) => "%b".to_string(),
            ('M', _) => "%B".to_string(),
            ('d', _) => "%d".to_string(),
            ('H', _) => "%H".to_string(),
            ('h', _) => "%I".to_string(),
            ('m', _) => "%M".to_string(),
            ('s', _) => "%S".to_string(),
            ('S', n) => format!("%{}f", n.min(9)),
            ('a', _) => "%p".to_string(),
            ('E', _) => "%a".to_string(),
            ('%', _) => "%%".repeat(n),
            (other, n) => other.to_string().repeat(n),
        };
        out.push_str(&spec);
        i += n;
    }
    out
}

/// Epoch milliseconds formatted with a Java pattern.
pub fn format_millis(ms: i64, pattern: &str) -> Option<String> {
    DateTime::from_timestamp_millis(ms).map(|t| t.naive_utc().format(&java_pattern(pattern)).to_string())
}

/// A string parsed with a Java pattern into epoch milliseconds.
pub fn parse_with_pattern(s: &str, pattern: &str) -> Option<i64> {
    let f = java_pattern(pattern);
    NaiveDateTime::parse_from_str(s.trim(), &f)
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(s.trim(), &f)
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
        .map(|t| t.and_utc().timestamp_millis())
}

/// A field of a timestamp (`EXTRACT(field FROM ts)`).
pub fn extract(field: &str, ms: i64) -> Option<i64> {
    let t = DateTime::from_timestamp_millis(ms)?.naive_utc();
    Some(match field {
        "YEAR" => t.year() as i64,
        "QUARTER" => (t.month0() / 3 + 1) as i64,
        "MONTH" => t.month() as i64,
        "WEEK" => t.iso_week().week() as i64,
        "DAY" | "DAYOFMONTH" => t.day() as i64,
        "DOW" | "DAYOFWEEK" => t.weekday().number_from_sunday() as i64,
        "DOY" | "DAYOFYEAR" => t.ordinal() as i64,
        "HOUR" => t.hour() as i64,
        "MINUTE" => t.minute() as i64,
        "SECOND" => t.second() as i64,
        "MILLISECOND" => (t.nanosecond() / 1_000_000) as i64,
        "EPOCH" => ms.div_euclid(1000),
        _ => return None,
    })
}

/// Milliseconds of one unit of an interval (`SECOND`, `MINUTE`, …).
pub fn unit_millis(unit: &str) -> Option<i64> {
    Some(match unit.trim_end_matches('S') {
        "MILLISECOND" => 1,
        "SECOND" => 1_000,
        "MINUTE" => 60_000,
        "HOUR" => 3_600_000,
        "DAY" => 86_400_000,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What chrono's `%Y-%m-%d %H:%M:%S%.f` reads, as epoch milliseconds.
    fn by_chrono(s: &str) -> Option<i64> {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
            .ok()
            .map(|t| t.and_utc().timestamp_millis())
    }

    /// The fields of a canonical timestamp through chrono's date and time
    /// constructors (which, unlike its parser, refuse a leap second `:60`).
    fn by_chrono_fields(s: &str) -> Option<i64> {
        let b = s.as_bytes();
        let nanos = match &b[19..] {
            [] => 0,
            [b'.', frac @ ..] => digits(frac)? * 10u32.pow(9 - frac.len() as u32),
            _ => return None,
        };
        let date = NaiveDate::from_ymd_opt(digits(&b[..4])? as i32, digits(&b[5..7])?, digits(&b[8..10])?)?;
        let t = date.and_hms_nano_opt(digits(&b[11..13])?, digits(&b[14..16])?, digits(&b[17..19])?, nanos)?;
        Some(t.and_utc().timestamp_millis())
    }

    #[test]
    fn canonical_timestamps_read_as_chrono_reads_them() {
        let mut cases = vec![
            "2023-11-14 22:13:20.010".to_string(),
            "1970-01-01 00:00:00".into(),
            "1969-12-31 23:59:59.999".into(),
            "0000-01-01 00:00:00.5".into(),
            "0000-02-29 12:00:00".into(),
            "9999-12-31 23:59:59.123456789".into(),
            "1900-02-29 00:00:00".into(),
            "2000-02-29 00:00:00".into(),
            "2023-02-29 00:00:00".into(),
            "2023-04-31 00:00:00".into(),
            "2023-13-01 00:00:00".into(),
            "2023-00-10 00:00:00".into(),
            "2023-01-00 00:00:00".into(),
            "2023-01-01 24:00:00".into(),
            "2023-01-01 23:60:00".into(),
            "2023-01-01 23:59:60".into(),
        ];
        for year in [1, 4, 100, 400, 1583, 1969, 1970, 1972, 2024, 2100, 2400] {
            for (month, day) in [(1, 1), (2, 28), (2, 29), (3, 1), (6, 30), (12, 31)] {
                cases.push(format!("{year:04}-{month:02}-{day:02} 07:08:09.1"));
            }
        }
        for s in &cases {
            assert_eq!(parse_canonical_timestamp(s), by_chrono_fields(s), "{s}");
            // What the canonical path refuses (a leap second) the general parser reads.
            assert_eq!(parse_timestamp(s), by_chrono(s), "{s}");
        }
    }
}
