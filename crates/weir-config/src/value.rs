//! Typed option values and their text form, parsed exactly as Flink parses them.
//!
//! Every configuration value is kept as a string (as it came from `config.yaml`, a `-D`
//! flag or a programmatic `set`) and is parsed on every read by the [`ConfigValue`]
//! implementation of the option's type. Parsing follows Flink:
//!
//! - **Durations** (`TimeUtils.parseDuration`): leading ASCII digits, optional
//!   whitespace, optional unit label (case-insensitive); no unit means milliseconds.
//!   Labels: `d`/`day`/`days`, `h`/`hour`/`hours`, `min`/`m`/`minute`/`minutes`,
//!   `s`/`sec`/`secs`/`second`/`seconds`, `ms`/`milli`/`millis`/`millisecond`/
//!   `milliseconds`, `µs`/`micro`/`micros`/`microsecond`/`microseconds`,
//!   `ns`/`nano`/`nanos`/`nanosecond`/`nanoseconds`. Weir also accepts the ASCII `us` for
//!   microseconds (Flink does not). Fractions (`1.5 s`) and signs are rejected.
//! - **Memory sizes** (`MemorySize.parseBytes`): leading digits, optional unit, all units
//!   binary: `b`/`bytes`, `k`/`kb`/`kibibytes`, `m`/`mb`/`mebibytes`,
//!   `g`/`gb`/`gibibytes`, `t`/`tb`/`tebibytes`; no unit means bytes.
//! - **Booleans**: `true`/`false`, case-insensitive.
//! - **Integers**: Java's `Integer.parseInt` (optional sign, decimal digits).
//! - **Floats**: decimal or scientific notation. `Float` options (the memory fractions)
//!   are `f32`, as in Flink, and are widened to `f64` where Flink widens them: this is
//!   why Flink's managed memory for 1280 MiB is 536870920 bytes and not 512 MiB.
//! - **Enums**: case-insensitive names.
//!
//! Invariant: for every type, `parse(to_config_string(v)) == v`.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A type that an option can have: how to parse it from and print it to the
/// configuration's text form.
pub trait ConfigValue: Sized {
    /// The type's name as shown in errors and in the option table (Flink's names).
    const TYPE_NAME: &'static str;

    /// Parses the text form; the error is the reason, without key or value (the caller
    /// adds those).
    fn parse_config_value(text: &str) -> Result<Self, String>;

    /// The text form that [`ConfigValue::parse_config_value`] reads back; `None` means
    /// "no value" (only for `Option<T>`), i.e. the key is removed.
    fn to_config_string(&self) -> Option<String>;

    /// The value of an option that is neither set nor defaulted: `Some(None)` for
    /// `Option<T>`, `None` (an error) for every other type.
    fn when_unset() -> Option<Self> {
        None
    }
}

impl<T: ConfigValue> ConfigValue for Option<T> {
    const TYPE_NAME: &'static str = T::TYPE_NAME;

    fn parse_config_value(text: &str) -> Result<Self, String> {
        T::parse_config_value(text).map(Some)
    }

    fn to_config_string(&self) -> Option<String> {
        self.as_ref().and_then(T::to_config_string)
    }

    fn when_unset() -> Option<Self> {
        Some(None)
    }
}

impl ConfigValue for bool {
    const TYPE_NAME: &'static str = "Boolean";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!(
                "Unrecognized option for boolean: {}. Expected either true or false(case insensitive)",
                text.trim()
            )),
        }
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.to_string())
    }
}

macro_rules! integer_value {
    ($ty:ty, $name:literal) => {
        impl ConfigValue for $ty {
            const TYPE_NAME: &'static str = $name;

            fn parse_config_value(text: &str) -> Result<Self, String> {
                let trimmed = text.trim();
                trimmed.parse::<$ty>().map_err(|_| {
                    format!(
                        "not an integer in the range {}..={}: '{}'",
                        <$ty>::MIN,
                        <$ty>::MAX,
                        trimmed
                    )
                })
            }

            fn to_config_string(&self) -> Option<String> {
                Some(self.to_string())
            }
        }
    };
}

integer_value!(i32, "Integer");
integer_value!(u32, "Integer");
integer_value!(u16, "Integer");
integer_value!(i64, "Long");

macro_rules! float_value {
    ($ty:ty, $name:literal) => {
        impl ConfigValue for $ty {
            const TYPE_NAME: &'static str = $name;

            fn parse_config_value(text: &str) -> Result<Self, String> {
                let trimmed = text.trim();
                trimmed
                    .parse::<$ty>()
                    .map_err(|_| format!("not a floating point number: '{trimmed}'"))
            }

            fn to_config_string(&self) -> Option<String> {
                Some(self.to_string())
            }
        }
    };
}

float_value!(f32, "Float");
float_value!(f64, "Double");

impl ConfigValue for String {
    const TYPE_NAME: &'static str = "String";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        Ok(text.to_string())
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.clone())
    }
}

// ---------------------------------------------------------------------------------------
// Durations
// ---------------------------------------------------------------------------------------

const NANOS_PER_MICRO: u128 = 1_000;
const NANOS_PER_MILLI: u128 = 1_000_000;
const NANOS_PER_SECOND: u128 = 1_000_000_000;
const NANOS_PER_MINUTE: u128 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: u128 = 60 * NANOS_PER_MINUTE;
const NANOS_PER_DAY: u128 = 24 * NANOS_PER_HOUR;

/// Flink's time units, smallest first, with their labels (the first is the one printed).
const TIME_UNITS: &[(u128, &[&str])] = &[
    (1, &["ns", "nano", "nanos", "nanosecond", "nanoseconds"]),
    (
        NANOS_PER_MICRO,
        &["µs", "micro", "micros", "microsecond", "microseconds", "us"],
    ),
    (
        NANOS_PER_MILLI,
        &["ms", "milli", "millis", "millisecond", "milliseconds"],
    ),
    (NANOS_PER_SECOND, &["s", "sec", "secs", "second", "seconds"]),
    (NANOS_PER_MINUTE, &["min", "m", "minute", "minutes"]),
    (NANOS_PER_HOUR, &["h", "hour", "hours"]),
    (NANOS_PER_DAY, &["d", "day", "days"]),
];

/// Splits `text` (trimmed) into its leading ASCII digits and the lower-cased, trimmed
/// rest, as Flink's duration and memory-size parsers do.
fn split_number_and_unit(text: &str) -> Result<(&str, String), String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("argument is an empty- or whitespace-only string".to_string());
    }
    let digits_end = trimmed
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit())
        .map(|(i, _)| i)
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits_end);
    if number.is_empty() {
        return Err("text does not start with a number".to_string());
    }
    Ok((number, unit.trim().to_lowercase()))
}

/// All accepted time unit labels, for error messages.
fn all_time_units() -> String {
    TIME_UNITS
        .iter()
        .rev()
        .map(|(_, labels)| format!("({})", labels.join(" | ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses a duration as Flink's `TimeUtils.parseDuration` does (see the module doc).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = split_number_and_unit(text)?;
    let value: u128 = number
        .parse()
        .map_err(|_| format!("The value '{number}' cannot be represented as java.time.Duration (numeric overflow)."))?;
    let nanos_per_unit = if unit.is_empty() {
        NANOS_PER_MILLI
    } else {
        TIME_UNITS
            .iter()
            .find(|(_, labels)| labels.contains(&unit.as_str()))
            .map(|(nanos, _)| *nanos)
            .ok_or_else(|| {
                format!(
                    "Time interval unit label '{unit}' does not match any of the recognized units: {}",
                    all_time_units()
                )
            })?
    };
    let overflow = || format!("The value '{number}' cannot be represented as java.time.Duration (numeric overflow).");
    let nanos = value.checked_mul(nanos_per_unit).ok_or_else(overflow)?;
    let secs = u64::try_from(nanos / NANOS_PER_SECOND).map_err(|_| overflow())?;
    // The remainder is below one second, so it fits a u32.
    let sub_nanos = (nanos % NANOS_PER_SECOND) as u32;
    Ok(Duration::new(secs, sub_nanos))
}

/// Formats a duration with the largest unit that divides it, as Flink's
/// `TimeUtils.formatWithHighestUnit` does (`"10 s"`, `"500 ms"`, `"5 min"`; zero and
/// whole days are printed in milliseconds, as in Flink).
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    let first_not_dividing = TIME_UNITS.iter().position(|(unit, _)| !nanos.is_multiple_of(*unit));
    let (unit, labels) = match first_not_dividing {
        Some(0) => TIME_UNITS[0],
        Some(i) => TIME_UNITS[i - 1],
        None => TIME_UNITS[2],
    };
    format!("{} {}", nanos / unit, labels[0])
}

impl ConfigValue for Duration {
    const TYPE_NAME: &'static str = "Duration";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        parse_duration(text)
    }

    fn to_config_string(&self) -> Option<String> {
        Some(format_duration(*self))
    }
}

// ---------------------------------------------------------------------------------------
// Memory sizes
// ---------------------------------------------------------------------------------------

/// Flink's memory units, smallest first: (multiplier, labels). `labels[1]` is printed.
const MEMORY_UNITS: &[(u64, &[&str])] = &[
    (1, &["b", "bytes"]),
    (1 << 10, &["k", "kb", "kibibytes"]),
    (1 << 20, &["m", "mb", "mebibytes"]),
    (1 << 30, &["g", "gb", "gibibytes"]),
    (1 << 40, &["t", "tb", "tebibytes"]),
];

/// A number of bytes, as Flink's `MemorySize`: parsed from `"1728m"`, `"32kb"`,
/// `"64 mb"` or plain bytes, all units binary.
///
/// `Display` is Flink's `toString` (`"1728 mb"`); [`MemorySize::to_human_readable`] is
/// Flink's `toHumanReadableString` (`"128.000mb (134217728 bytes)"`), used in the memory
/// derivation's error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MemorySize(pub u64);

impl MemorySize {
    /// Zero bytes.
    pub const ZERO: MemorySize = MemorySize(0);

    /// A size of `bytes` bytes.
    pub const fn from_bytes(bytes: u64) -> Self {
        MemorySize(bytes)
    }

    /// A size of `mebibytes` MiB.
    pub const fn from_mebibytes(mebibytes: u64) -> Self {
        MemorySize(mebibytes << 20)
    }

    /// The size in bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// Parses a memory size as Flink's `MemorySize.parseBytes` does.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (number, unit) = split_number_and_unit(text)?;
        let value: u64 = number.parse().ok().filter(|v| *v <= i64::MAX as u64).ok_or_else(|| {
            format!("The value '{number}' cannot be re represented as 64bit number (numeric overflow).")
        })?;
        let multiplier = if unit.is_empty() {
            1
        } else {
            MEMORY_UNITS
                .iter()
                .find(|(_, labels)| labels.contains(&unit.as_str()))
                .map(|(multiplier, _)| *multiplier)
                .ok_or_else(|| {
                    let all = MEMORY_UNITS
                        .iter()
                        .map(|(_, labels)| format!("({})", labels.join(" | ")))
                        .collect::<Vec<_>>()
                        .join(" / ");
                    format!("Memory size unit '{unit}' does not match any of the recognized units: {all}")
                })?
        };
        value
            .checked_mul(multiplier)
            .filter(|bytes| *bytes <= i64::MAX as u64)
            .map(MemorySize)
            .ok_or_else(|| {
                format!(
                    "The value '{}' cannot be re represented as 64bit number of bytes (numeric overflow).",
                    text.trim()
                )
            })
    }

    /// Flink's `toHumanReadableString`: the largest unit the size exceeds, three decimals
    /// (rounded half up), then the exact bytes; plain bytes below 1 KiB.
    pub fn to_human_readable(self) -> String {
        let bytes = self.0;
        let unit = MEMORY_UNITS.iter().rev().find(|(multiplier, _)| bytes > *multiplier);
        match unit {
            Some((multiplier, labels)) if *multiplier > 1 => {
                // bytes / multiplier with three decimals, rounded half up, exactly.
                let multiplier = u128::from(*multiplier);
                let thousandths = (u128::from(bytes) * 2000 + multiplier) / (2 * multiplier);
                format!(
                    "{}.{:03}{} ({} bytes)",
                    thousandths / 1000,
                    thousandths % 1000,
                    labels[1],
                    bytes
                )
            }
            _ => format!("{bytes} bytes"),
        }
    }

    /// `self + other`, `None` on overflow.
    pub fn checked_add(self, other: MemorySize) -> Option<MemorySize> {
        self.0.checked_add(other.0).map(MemorySize)
    }

    /// `self - other`, `None` when `other` is larger.
    pub fn checked_sub(self, other: MemorySize) -> Option<MemorySize> {
        self.0.checked_sub(other.0).map(MemorySize)
    }

    /// Flink's `MemorySize.multiply(double)`: the exact product of the byte count and the
    /// multiplier's shortest decimal form (Java's `BigDecimal.valueOf(double)`), truncated
    /// towards zero. `None` for a negative or non-finite multiplier or an overflow.
    pub fn multiply(self, multiplier: f64) -> Option<MemorySize> {
        if !multiplier.is_finite() || multiplier < 0.0 {
            return None;
        }
        // Rust's `Display` for f64 prints the shortest round-trip decimal, never in
        // scientific notation: "0.4000000059604645", "1.5", "3".
        let text = format!("{multiplier}");
        let (int_part, frac_part) = text.split_once('.').unwrap_or((text.as_str(), ""));
        let digits: String = format!("{int_part}{frac_part}");
        let mantissa: u128 = digits.parse().ok()?;
        let scale = u32::try_from(frac_part.len()).ok()?;
        let divisor = 10u128.checked_pow(scale)?;
        let product = u128::from(self.0).checked_mul(mantissa)? / divisor;
        u64::try_from(product)
            .ok()
            .filter(|bytes| *bytes <= i64::MAX as u64)
            .map(MemorySize)
    }
}

impl fmt::Display for MemorySize {
    /// Flink's `MemorySize.toString`: the largest unit that divides the size exactly,
    /// e.g. `"1728 mb"`, `"32 kb"`, `"0 bytes"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0;
        let first_not_dividing = MEMORY_UNITS.iter().position(|(unit, _)| !bytes.is_multiple_of(*unit));
        let (unit, labels) = match first_not_dividing {
            Some(0) | None => MEMORY_UNITS[0],
            Some(i) => MEMORY_UNITS[i - 1],
        };
        write!(f, "{} {}", bytes / unit, labels[1])
    }
}

impl ConfigValue for MemorySize {
    const TYPE_NAME: &'static str = "MemorySize";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        MemorySize::parse(text)
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.to_string())
    }
}

// ---------------------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------------------

/// The value of `restart-strategy.type`. Flink reads it as a string and accepts these
/// spellings, case-insensitively: `none`/`off`/`disable`, `fixed-delay`/`fixeddelay`,
/// `failure-rate`/`failurerate`, `exponential-delay`/`exponentialdelay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RestartStrategyType {
    /// No restart: the first failure fails the job.
    NoRestart,
    /// A fixed number of restarts with a fixed delay.
    FixedDelay,
    /// Restarts as long as the failure rate stays below a bound.
    FailureRate,
    /// Restarts with exponentially growing delays.
    ExponentialDelay,
}

impl RestartStrategyType {
    /// Every accepted spelling, in Flink's order, main value first within each type.
    pub const ACCEPTED_VALUES: &'static [&'static str] = &[
        "none",
        "off",
        "disable",
        "fixed-delay",
        "fixeddelay",
        "failure-rate",
        "failurerate",
        "exponential-delay",
        "exponentialdelay",
    ];

    /// Flink's main spelling (`disable`, `fixed-delay`, `failure-rate`,
    /// `exponential-delay`).
    pub const fn main_value(self) -> &'static str {
        match self {
            RestartStrategyType::NoRestart => "disable",
            RestartStrategyType::FixedDelay => "fixed-delay",
            RestartStrategyType::FailureRate => "failure-rate",
            RestartStrategyType::ExponentialDelay => "exponential-delay",
        }
    }
}

impl fmt::Display for RestartStrategyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.main_value())
    }
}

impl ConfigValue for RestartStrategyType {
    const TYPE_NAME: &'static str = "Enum";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        match trimmed.to_lowercase().as_str() {
            "none" | "off" | "disable" => Ok(RestartStrategyType::NoRestart),
            "fixed-delay" | "fixeddelay" => Ok(RestartStrategyType::FixedDelay),
            "failure-rate" | "failurerate" => Ok(RestartStrategyType::FailureRate),
            "exponential-delay" | "exponentialdelay" => Ok(RestartStrategyType::ExponentialDelay),
            _ => Err(format!(
                "{trimmed} is an unknown value of RestartStrategyType. Accepted values: {}",
                Self::ACCEPTED_VALUES.join(", ")
            )),
        }
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.main_value().to_string())
    }
}

/// Flink's `state.backend.type`: where keyed state lives. Read case-insensitively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StateBackendType {
    /// On the heap (`hashmap`, Flink's `HashMapStateBackend`), the default.
    HashMap,
    /// In an embedded RocksDB on local disk (`rocksdb`, Flink's
    /// `EmbeddedRocksDBStateBackend`), a bounded cache of it on the heap.
    RocksDb,
}

impl StateBackendType {
    /// Every accepted name.
    pub const ACCEPTED_VALUES: &'static [&'static str] = &["hashmap", "rocksdb"];

    /// Flink's name of the value (`hashmap`, `rocksdb`).
    pub const fn name(self) -> &'static str {
        match self {
            StateBackendType::HashMap => "hashmap",
            StateBackendType::RocksDb => "rocksdb",
        }
    }

    /// Flink's class name of the backend, as REST shows it.
    pub const fn class_name(self) -> &'static str {
        match self {
            StateBackendType::HashMap => "HashMapStateBackend",
            StateBackendType::RocksDb => "EmbeddedRocksDBStateBackend",
        }
    }
}

impl fmt::Display for StateBackendType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ConfigValue for StateBackendType {
    const TYPE_NAME: &'static str = "String";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        match trimmed.to_lowercase().as_str() {
            "hashmap" => Ok(StateBackendType::HashMap),
            "rocksdb" => Ok(StateBackendType::RocksDb),
            "forst" => Err(
                "forst (Flink's disaggregated ForSt state backend) is not supported by Weir yet: use hashmap \
                 or rocksdb"
                    .to_string(),
            ),
            _ => Err(format!(
                "{trimmed} is not a state backend. Accepted values: {}",
                Self::ACCEPTED_VALUES.join(", ")
            )),
        }
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.name().to_string())
    }
}

/// Flink's `ExternalizedCheckpointRetention`
/// (`execution.checkpointing.externalized-checkpoint-retention`): what happens to the
/// retained checkpoints when the job ends. Names are read case-insensitively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExternalizedCheckpointRetention {
    /// Checkpoints are deleted when the job reaches any terminal state (the default).
    NoExternalizedCheckpoints,
    /// Checkpoints are kept when the job is cancelled or fails.
    RetainOnCancellation,
    /// Checkpoints are deleted when the job is cancelled, kept when it fails.
    DeleteOnCancellation,
}

impl ExternalizedCheckpointRetention {
    /// Every accepted name, in Flink's order.
    pub const ACCEPTED_VALUES: &'static [&'static str] = &[
        "DELETE_ON_CANCELLATION",
        "RETAIN_ON_CANCELLATION",
        "NO_EXTERNALIZED_CHECKPOINTS",
    ];

    /// Flink's name.
    pub const fn flink_name(self) -> &'static str {
        match self {
            ExternalizedCheckpointRetention::NoExternalizedCheckpoints => "NO_EXTERNALIZED_CHECKPOINTS",
            ExternalizedCheckpointRetention::RetainOnCancellation => "RETAIN_ON_CANCELLATION",
            ExternalizedCheckpointRetention::DeleteOnCancellation => "DELETE_ON_CANCELLATION",
        }
    }
}

impl fmt::Display for ExternalizedCheckpointRetention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flink_name())
    }
}

impl ConfigValue for ExternalizedCheckpointRetention {
    const TYPE_NAME: &'static str = "Enum";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        match trimmed.to_ascii_uppercase().replace('-', "_").as_str() {
            "NO_EXTERNALIZED_CHECKPOINTS" => Ok(ExternalizedCheckpointRetention::NoExternalizedCheckpoints),
            "RETAIN_ON_CANCELLATION" => Ok(ExternalizedCheckpointRetention::RetainOnCancellation),
            "DELETE_ON_CANCELLATION" => Ok(ExternalizedCheckpointRetention::DeleteOnCancellation),
            _ => Err(format!(
                "{trimmed} is an unknown value of ExternalizedCheckpointRetention. Accepted values: {}",
                Self::ACCEPTED_VALUES.join(", ")
            )),
        }
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.flink_name().to_string())
    }
}

/// `execution.checkpointing.mode`: `EXACTLY_ONCE` or `AT_LEAST_ONCE`, case-insensitive.
impl ConfigValue for weir_core::CheckpointingMode {
    const TYPE_NAME: &'static str = "Enum";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        weir_core::CheckpointingMode::parse(text).ok_or_else(|| {
            format!(
                "{} is an unknown value of CheckpointingMode. Accepted values: EXACTLY_ONCE, AT_LEAST_ONCE",
                text.trim()
            )
        })
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.flink_name().to_string())
    }
}

/// `execution.runtime-mode`: `STREAMING`, `BATCH` or `AUTOMATIC`, case-insensitive.
impl ConfigValue for weir_core::RuntimeExecutionMode {
    const TYPE_NAME: &'static str = "Enum";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        weir_core::RuntimeExecutionMode::parse(text).ok_or_else(|| {
            format!(
                "{} is an unknown value of RuntimeExecutionMode. Accepted values: STREAMING, BATCH, AUTOMATIC",
                text.trim()
            )
        })
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.flink_name().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn durations_parse_like_flink() {
        assert_eq!(parse_duration("10 s"), Ok(ms(10_000)));
        assert_eq!(parse_duration("10s"), Ok(ms(10_000)));
        assert_eq!(parse_duration("500 ms"), Ok(ms(500)));
        assert_eq!(parse_duration("5 min"), Ok(ms(300_000)));
        assert_eq!(parse_duration("5 m"), Ok(ms(300_000)));
        assert_eq!(parse_duration("1 h"), Ok(ms(3_600_000)));
        assert_eq!(parse_duration("2 d"), Ok(ms(2 * 86_400_000)));
        assert_eq!(parse_duration("100"), Ok(ms(100)));
        assert_eq!(parse_duration("  7  SECONDS "), Ok(ms(7_000)));
        assert_eq!(parse_duration("3 hours"), Ok(ms(3 * 3_600_000)));
        assert_eq!(parse_duration("1 minute"), Ok(ms(60_000)));
        assert_eq!(parse_duration("4 millis"), Ok(ms(4)));
        assert_eq!(parse_duration("12 ns"), Ok(Duration::from_nanos(12)));
        assert_eq!(parse_duration("12 nanos"), Ok(Duration::from_nanos(12)));
        assert_eq!(parse_duration("3 µs"), Ok(Duration::from_micros(3)));
        assert_eq!(parse_duration("3 us"), Ok(Duration::from_micros(3)));
        assert_eq!(parse_duration("3 micros"), Ok(Duration::from_micros(3)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn bad_durations_are_rejected_with_flinks_reasons() {
        assert_eq!(
            parse_duration("  "),
            Err("argument is an empty- or whitespace-only string".to_string())
        );
        assert_eq!(
            parse_duration("s"),
            Err("text does not start with a number".to_string())
        );
        assert_eq!(
            parse_duration("-1 s"),
            Err("text does not start with a number".to_string())
        );
        let fraction = parse_duration("1.5 s").unwrap_err();
        assert!(
            fraction.starts_with("Time interval unit label '.5 s' does not match"),
            "{fraction}"
        );
        let unknown = parse_duration("5 mins").unwrap_err();
        assert!(
            unknown.contains("'mins'") && unknown.contains("(min | m | minute | minutes)"),
            "{unknown}"
        );
        assert!(parse_duration("99999999999999999999999999999999999999999 d")
            .unwrap_err()
            .contains("numeric overflow"));
    }

    #[test]
    fn durations_format_with_the_highest_unit_and_round_trip() {
        assert_eq!(format_duration(ms(10_000)), "10 s");
        assert_eq!(format_duration(ms(500)), "500 ms");
        assert_eq!(format_duration(ms(300_000)), "5 min");
        assert_eq!(format_duration(ms(3_600_000)), "1 h");
        assert_eq!(format_duration(ms(90_000)), "90 s");
        assert_eq!(format_duration(Duration::from_nanos(1_500)), "1500 ns");
        assert_eq!(format_duration(Duration::from_micros(3)), "3 µs");
        // Flink's quirk: zero and whole days fall back to milliseconds.
        assert_eq!(format_duration(Duration::ZERO), "0 ms");
        assert_eq!(format_duration(ms(86_400_000)), "86400000 ms");
        for d in [ms(0), ms(1), ms(1_001), ms(86_400_000), Duration::from_nanos(7)] {
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
    }

    #[test]
    fn memory_sizes_parse_like_flink() {
        let mib = 1u64 << 20;
        assert_eq!(MemorySize::parse("1728m"), Ok(MemorySize(1728 * mib)));
        assert_eq!(MemorySize::parse("1g"), Ok(MemorySize(1 << 30)));
        assert_eq!(MemorySize::parse("32kb"), Ok(MemorySize(32 * 1024)));
        assert_eq!(MemorySize::parse("64 mb"), Ok(MemorySize(64 * mib)));
        assert_eq!(MemorySize::parse("64 MB"), Ok(MemorySize(64 * mib)));
        assert_eq!(MemorySize::parse("12345"), Ok(MemorySize(12345)));
        assert_eq!(MemorySize::parse("7 bytes"), Ok(MemorySize(7)));
        assert_eq!(MemorySize::parse("7b"), Ok(MemorySize(7)));
        assert_eq!(MemorySize::parse("2 kibibytes"), Ok(MemorySize(2048)));
        assert_eq!(MemorySize::parse("2 mebibytes"), Ok(MemorySize(2 * mib)));
        assert_eq!(MemorySize::parse("2 gibibytes"), Ok(MemorySize(2 << 30)));
        assert_eq!(MemorySize::parse("1t"), Ok(MemorySize(1 << 40)));
        assert_eq!(MemorySize::parse("1 tb"), Ok(MemorySize(1 << 40)));
        assert_eq!(MemorySize::parse("0"), Ok(MemorySize(0)));
    }

    #[test]
    fn bad_memory_sizes_are_rejected() {
        assert_eq!(
            MemorySize::parse("m"),
            Err("text does not start with a number".to_string())
        );
        assert!(MemorySize::parse("1.5g")
            .unwrap_err()
            .contains("Memory size unit '.5g'"));
        assert!(MemorySize::parse("10 xb").unwrap_err().contains("(k | kb | kibibytes)"));
        assert!(MemorySize::parse("99999999999 t")
            .unwrap_err()
            .contains("numeric overflow"));
        assert!(MemorySize::parse("99999999999999999999")
            .unwrap_err()
            .contains("numeric overflow"));
    }

    #[test]
    fn memory_sizes_print_like_flink() {
        assert_eq!(MemorySize::from_mebibytes(1728).to_string(), "1728 mb");
        assert_eq!(MemorySize(32 * 1024).to_string(), "32 kb");
        assert_eq!(MemorySize(1 << 30).to_string(), "1 gb");
        assert_eq!(MemorySize(1000).to_string(), "1000 bytes");
        assert_eq!(MemorySize(0).to_string(), "0 bytes");
        assert_eq!(
            MemorySize::from_mebibytes(128).to_human_readable(),
            "128.000mb (134217728 bytes)"
        );
        assert_eq!(MemorySize(26843546).to_human_readable(), "25.600mb (26843546 bytes)");
        assert_eq!(MemorySize(1024).to_human_readable(), "1024 bytes");
        assert_eq!(MemorySize(0).to_human_readable(), "0 bytes");
        // Java's %.3f rounds half up: 1.0625 MiB is 1.063mb.
        assert_eq!(MemorySize(1_114_112).to_human_readable(), "1.063mb (1114112 bytes)");
        for size in [MemorySize(0), MemorySize(1), MemorySize(1 << 40), MemorySize(3 << 20)] {
            assert_eq!(MemorySize::parse(&size.to_string()), Ok(size));
        }
    }

    #[test]
    fn memory_multiply_uses_the_shortest_decimal_of_the_multiplier() {
        let total_flink = MemorySize(1_342_177_280);
        // 0.4f widened to double is 0.4000000059604645, as in Flink.
        assert_eq!(total_flink.multiply(f64::from(0.4f32)), Some(MemorySize(536_870_920)));
        assert_eq!(total_flink.multiply(0.4), Some(MemorySize(536_870_912)));
        assert_eq!(MemorySize(603_979_776).multiply(0.4), Some(MemorySize(241_591_910)));
        assert_eq!(MemorySize(10).multiply(3.0), Some(MemorySize(30)));
        assert_eq!(MemorySize(10).multiply(-1.0), None);
        assert_eq!(MemorySize(u64::MAX / 2).multiply(4.0), None);
    }

    #[test]
    fn scalars_parse_and_print() {
        assert_eq!(bool::parse_config_value("TRUE"), Ok(true));
        assert_eq!(bool::parse_config_value("false"), Ok(false));
        assert!(bool::parse_config_value("yes")
            .unwrap_err()
            .contains("Expected either true or false"));
        assert_eq!(i32::parse_config_value("-1"), Ok(-1));
        assert_eq!(i32::parse_config_value("+7"), Ok(7));
        assert!(i32::parse_config_value("2147483648").is_err());
        assert!(u32::parse_config_value("-1").is_err());
        assert!(u16::parse_config_value("65536").is_err());
        assert_eq!(f64::parse_config_value("1.5"), Ok(1.5));
        assert_eq!(f64::parse_config_value("1e3"), Ok(1000.0));
        assert_eq!(f32::parse_config_value("0.4"), Ok(0.4f32));
        assert!(f64::parse_config_value("abc").is_err());
        assert_eq!(Option::<u32>::parse_config_value("3"), Ok(Some(3)));
        assert_eq!(Option::<u32>::when_unset(), Some(None));
        assert_eq!(u32::when_unset(), None);
        assert_eq!(Some(MemorySize(1024)).to_config_string(), Some("1 kb".to_string()));
        assert_eq!(None::<MemorySize>.to_config_string(), None);
    }

    #[test]
    fn restart_strategy_types_accept_every_flink_spelling() {
        use RestartStrategyType::*;
        for (text, expected) in [
            ("none", NoRestart),
            ("off", NoRestart),
            ("disable", NoRestart),
            ("DISABLE", NoRestart),
            ("fixed-delay", FixedDelay),
            ("fixeddelay", FixedDelay),
            ("failure-rate", FailureRate),
            ("FailureRate", FailureRate),
            ("exponential-delay", ExponentialDelay),
            ("exponentialdelay", ExponentialDelay),
        ] {
            assert_eq!(RestartStrategyType::parse_config_value(text), Ok(expected), "{text}");
        }
        let err = RestartStrategyType::parse_config_value("sometimes").unwrap_err();
        assert!(
            err.starts_with("sometimes is an unknown value of RestartStrategyType."),
            "{err}"
        );
        assert!(err.contains("none, off, disable, fixed-delay, fixeddelay"), "{err}");
        for t in [NoRestart, FixedDelay, FailureRate, ExponentialDelay] {
            let text = t.to_config_string().unwrap_or_default();
            assert_eq!(RestartStrategyType::parse_config_value(&text), Ok(t));
        }
    }
}
