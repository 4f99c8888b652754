//! Restart strategies: whether a failed job restarts, and after which delay.
//!
//! This module owns Flink's restart backoff strategies (`RestartBackoffTimeStrategy` and
//! its four implementations) as pure state machines: no threads, no clock — the caller
//! passes the failure time `now_ms` (milliseconds since the epoch, or any monotonic
//! millisecond clock) into every call. The JobMaster calls
//! [`RestartBackoffTimeStrategy::on_failure`] once per recoverable failure and either
//! schedules the restart after `delay_ms` or fails the job with the suppression reason.
//! Failures marked non-recoverable must not be passed in: they fail the job with
//! [`NOT_RECOVERABLE_MESSAGE`] and do not count as attempts, as in Flink.
//!
//! Which strategy a job gets ([`RestartStrategyConfig::from_config`]), in Flink's order:
//! `restart-strategy.type` if set (case-insensitive; `none`/`off`/`disable`,
//! `fixed-delay`/`fixeddelay`, `failure-rate`/`failurerate`,
//! `exponential-delay`/`exponentialdelay`), else `exponential-delay` **with its default
//! settings** (the `restart-strategy.exponential-delay.*` keys are ignored, as in Flink)
//! when checkpointing is enabled, else no restart.
//!
//! Semantics, each Flink's:
//! - **no restart**: every failure is suppressed.
//! - **fixed-delay**: each failure counts one attempt; restart while
//!   `attempts <= max`, so `max = 1` restarts once and the second failure fails the job.
//!   The delay is constant.
//! - **failure-rate**: the last `max + 1` failure times are kept; a failure may restart
//!   unless `max + 1` failures are kept and the earliest is at most the interval old,
//!   i.e. at most `max` failures within the sliding interval. The delay is constant.
//! - **exponential-delay**: a failure at or before the scheduled restart time merges into
//!   the current attempt (no new attempt; the delay is what remains until the scheduled
//!   restart). Otherwise, if at least the reset threshold passed since the scheduled
//!   restart, the attempt count starts over; the backoff is
//!   `initial · multiplier^attempt` (truncated), plus a jitter uniformly drawn from
//!   `[-j, j]` with `j = backoff · jitter-factor`, capped at the max backoff and never
//!   below the initial backoff; the attempt count then grows by one and restart is
//!   allowed while it is at most `attempts-before-reset-backoff`.
//!
//! The jitter comes from a SplitMix64 generator seeded by the caller
//! ([`RestartStrategyConfig::create`]), so a test (or a replay) sees the same delays.
//!
//! `Display` of every strategy is Flink's `toString`, byte for byte, because it appears
//! in the job's failure: `Recovery is suppressed by <strategy>`. The failure-rate form
//! really has the duplicated prefix and a single closing parenthesis.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use weir_config::options::{
    RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF,
    RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER, RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF,
    RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR, RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF,
    RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD, RESTART_STRATEGY_FAILURE_RATE_DELAY,
    RESTART_STRATEGY_FAILURE_RATE_INTERVAL, RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL,
    RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, RESTART_STRATEGY_FIXED_DELAY_DELAY, RESTART_STRATEGY_TYPE,
};
use weir_config::{ConfigError, ConfigOption, Configuration, RestartStrategyType};
use weir_core::ids::splitmix64;

/// The message of a job failed by a non-recoverable error (Flink's `JobException`).
pub const NOT_RECOVERABLE_MESSAGE: &str = "The failure is not recoverable";

/// The prefix of a suppressed restart's reason; the strategy's `Display` follows.
pub const SUPPRESSED_PREFIX: &str = "Recovery is suppressed by ";

/// `nextRestartTimestamp` of an exponential-delay strategy that has seen no failure
/// (Flink's `Integer.MIN_VALUE`, shown in its `toString`).
pub const NO_RESTART_SCHEDULED: i64 = i32::MIN as i64;

/// Settings of the exponential-delay strategy, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExponentialDelayConfig {
    /// Delay of the first restart (`initial-backoff`).
    pub initial_backoff_ms: i64,
    /// Upper bound of the delay (`max-backoff`).
    pub max_backoff_ms: i64,
    /// Growth factor per attempt (`backoff-multiplier`), greater than 1.
    pub backoff_multiplier: f64,
    /// Failure-free time after which attempts start over (`reset-backoff-threshold`).
    pub reset_backoff_threshold_ms: i64,
    /// Share of the backoff drawn as random jitter (`jitter-factor`), in `[0, 1]`.
    pub jitter_factor: f64,
    /// Attempts allowed between resets (`attempts-before-reset-backoff`).
    pub attempts_before_reset_backoff: i32,
}

impl Default for ExponentialDelayConfig {
    /// Flink's defaults: 1 s, 1 min, 1.5, 1 h, 0.1, `Integer.MAX_VALUE`.
    fn default() -> Self {
        ExponentialDelayConfig {
            initial_backoff_ms: 1_000,
            max_backoff_ms: 60_000,
            backoff_multiplier: 1.5,
            reset_backoff_threshold_ms: 3_600_000,
            jitter_factor: 0.1,
            attempts_before_reset_backoff: i32::MAX,
        }
    }
}

/// Which restart strategy a job uses, with its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum RestartStrategyConfig {
    /// Never restart.
    NoRestart,
    /// Restart up to `max_attempts` times, each after `delay_ms`.
    FixedDelay {
        /// `restart-strategy.fixed-delay.attempts`, at least 0.
        max_attempts: i32,
        /// `restart-strategy.fixed-delay.delay`.
        delay_ms: i64,
    },
    /// Restart after `delay_ms` while at most `max_failures_per_interval` failures fall
    /// within `failure_interval_ms`.
    FailureRate {
        /// `restart-strategy.failure-rate.max-failures-per-interval`, at least 1.
        max_failures_per_interval: i32,
        /// `restart-strategy.failure-rate.failure-rate-interval`, at least 1 ms.
        failure_interval_ms: i64,
        /// `restart-strategy.failure-rate.delay`.
        delay_ms: i64,
    },
    /// Restart with exponentially growing delays.
    ExponentialDelay(ExponentialDelayConfig),
}

impl RestartStrategyConfig {
    /// The strategy for a job with configuration `conf` (see the module doc for the
    /// order), validated.
    pub fn from_config(conf: &Configuration, checkpointing_enabled: bool) -> Result<Self, ConfigError> {
        let config = match conf.get(&RESTART_STRATEGY_TYPE)? {
            Some(RestartStrategyType::NoRestart) => RestartStrategyConfig::NoRestart,
            Some(RestartStrategyType::FixedDelay) => RestartStrategyConfig::FixedDelay {
                max_attempts: conf.get(&RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS)?,
                delay_ms: millis(conf, &RESTART_STRATEGY_FIXED_DELAY_DELAY)?,
            },
            Some(RestartStrategyType::FailureRate) => RestartStrategyConfig::FailureRate {
                max_failures_per_interval: conf.get(&RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL)?,
                failure_interval_ms: millis(conf, &RESTART_STRATEGY_FAILURE_RATE_INTERVAL)?,
                delay_ms: millis(conf, &RESTART_STRATEGY_FAILURE_RATE_DELAY)?,
            },
            Some(RestartStrategyType::ExponentialDelay) => {
                RestartStrategyConfig::ExponentialDelay(ExponentialDelayConfig {
                    initial_backoff_ms: millis(conf, &RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF)?,
                    max_backoff_ms: millis(conf, &RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF)?,
                    backoff_multiplier: conf.get(&RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER)?,
                    reset_backoff_threshold_ms: millis(
                        conf,
                        &RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD,
                    )?,
                    jitter_factor: conf.get(&RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR)?,
                    attempts_before_reset_backoff: conf
                        .get(&RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF)?,
                })
            }
            None if checkpointing_enabled => RestartStrategyConfig::ExponentialDelay(ExponentialDelayConfig::default()),
            None => RestartStrategyConfig::NoRestart,
        };
        config.validate()?;
        Ok(config)
    }

    /// The strategy's type.
    pub fn strategy_type(&self) -> RestartStrategyType {
        match self {
            RestartStrategyConfig::NoRestart => RestartStrategyType::NoRestart,
            RestartStrategyConfig::FixedDelay { .. } => RestartStrategyType::FixedDelay,
            RestartStrategyConfig::FailureRate { .. } => RestartStrategyType::FailureRate,
            RestartStrategyConfig::ExponentialDelay(_) => RestartStrategyType::ExponentialDelay,
        }
    }

    /// Checks the settings with Flink's constraints and messages; the error names the
    /// key to fix.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            RestartStrategyConfig::NoRestart => Ok(()),
            RestartStrategyConfig::FixedDelay { max_attempts, delay_ms } => {
                require(
                    *max_attempts >= 0,
                    &RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS,
                    max_attempts,
                    "Maximum number of restart attempts must be at least 0.",
                )?;
                require(
                    *delay_ms >= 0,
                    &RESTART_STRATEGY_FIXED_DELAY_DELAY,
                    format!("{delay_ms} ms"),
                    "Backoff time between restart attempts must be at least 0 ms.",
                )
            }
            RestartStrategyConfig::FailureRate {
                max_failures_per_interval,
                failure_interval_ms,
                delay_ms,
            } => {
                require(
                    *max_failures_per_interval > 0,
                    &RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL,
                    max_failures_per_interval,
                    "Maximum number of restart attempts per time unit must be greater than 0.",
                )?;
                require(
                    *failure_interval_ms > 0,
                    &RESTART_STRATEGY_FAILURE_RATE_INTERVAL,
                    format!("{failure_interval_ms} ms"),
                    "Failures interval must be greater than 0 ms.",
                )?;
                require(
                    *delay_ms >= 0,
                    &RESTART_STRATEGY_FAILURE_RATE_DELAY,
                    format!("{delay_ms} ms"),
                    "Backoff time must be at least 0 ms.",
                )
            }
            RestartStrategyConfig::ExponentialDelay(c) => {
                require(
                    c.initial_backoff_ms >= 1,
                    &RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF,
                    format!("{} ms", c.initial_backoff_ms),
                    "Initial backoff must be at least 1.",
                )?;
                require(
                    c.max_backoff_ms >= 1,
                    &RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF,
                    format!("{} ms", c.max_backoff_ms),
                    "Maximum backoff must be at least 1.",
                )?;
                require(
                    c.initial_backoff_ms <= c.max_backoff_ms,
                    &RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF,
                    format!("{} ms", c.initial_backoff_ms),
                    "Initial backoff cannot be higher than maximum backoff.",
                )?;
                require(
                    c.backoff_multiplier > 1.0,
                    &RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER,
                    java_double(c.backoff_multiplier),
                    "Backoff multiplier must be greater than 1.",
                )?;
                require(
                    c.reset_backoff_threshold_ms >= 1,
                    &RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD,
                    format!("{} ms", c.reset_backoff_threshold_ms),
                    "Threshold duration for exponential backoff reset must be at least 1.",
                )?;
                require(
                    (0.0..=1.0).contains(&c.jitter_factor),
                    &RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR,
                    java_double(c.jitter_factor),
                    "Jitter factor must be >= 0 and <= 1.",
                )?;
                require(
                    c.attempts_before_reset_backoff >= 1,
                    &RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF,
                    c.attempts_before_reset_backoff,
                    "The attemptsBeforeResetBackoff must be at least 1.",
                )
            }
        }
    }

    /// A fresh strategy (no failure seen) with these settings; `jitter_seed` seeds the
    /// exponential-delay jitter and is ignored by the other strategies.
    pub fn create(&self, jitter_seed: u64) -> Result<RestartBackoffTimeStrategy, ConfigError> {
        self.validate()?;
        Ok(match self {
            RestartStrategyConfig::NoRestart => RestartBackoffTimeStrategy::NoRestart,
            RestartStrategyConfig::FixedDelay { max_attempts, delay_ms } => {
                RestartBackoffTimeStrategy::FixedDelay(FixedDelayRestartBackoffTimeStrategy {
                    max_attempts: *max_attempts,
                    backoff_time_ms: *delay_ms,
                    current_restart_attempt: 0,
                })
            }
            RestartStrategyConfig::FailureRate {
                max_failures_per_interval,
                failure_interval_ms,
                delay_ms,
            } => {
                let max = usize::try_from(*max_failures_per_interval).unwrap_or(1);
                RestartBackoffTimeStrategy::FailureRate(FailureRateRestartBackoffTimeStrategy {
                    failures_interval_ms: *failure_interval_ms,
                    backoff_time_ms: *delay_ms,
                    max_failures_per_interval: max,
                    failure_timestamps: VecDeque::with_capacity(max.saturating_add(1).min(1024)),
                })
            }
            RestartStrategyConfig::ExponentialDelay(config) => {
                RestartBackoffTimeStrategy::ExponentialDelay(ExponentialDelayRestartBackoffTimeStrategy {
                    config: *config,
                    current_restart_attempt: 0,
                    next_restart_timestamp: NO_RESTART_SCHEDULED,
                    rng_state: jitter_seed,
                })
            }
        })
    }
}

/// `Ok` when `ok`, else [`ConfigError::OutOfRange`] for `option`.
fn require<T>(ok: bool, option: &ConfigOption<T>, value: impl fmt::Display, message: &str) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            key: option.key().to_string(),
            value: value.to_string(),
            message: message.to_string(),
        })
    }
}

/// A duration option in whole milliseconds (Java's `Duration.toMillis`).
fn millis(conf: &Configuration, option: &ConfigOption<Duration>) -> Result<i64, ConfigError> {
    let duration = conf.get(option)?;
    i64::try_from(duration.as_millis()).map_err(|_| ConfigError::OutOfRange {
        key: option.key().to_string(),
        value: weir_config::format_duration(duration),
        message: "does not fit in a 64-bit number of milliseconds".to_string(),
    })
}

/// What to do about one failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestartDecision {
    /// Restart the failed tasks after `delay_ms`.
    Restart {
        /// Milliseconds to wait before restarting.
        delay_ms: i64,
    },
    /// Fail the job.
    Suppressed {
        /// `"Recovery is suppressed by <strategy>"`, the strategy in its state after this
        /// failure.
        reason: String,
    },
}

/// A [`RestartDecision`] together with whether the failure started a new attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureHandling {
    /// Restart or fail the job.
    pub decision: RestartDecision,
    /// `false` when the failure was merged into an already scheduled restart
    /// (exponential-delay only): it belongs in the exception history as a concurrent
    /// failure of the current attempt and is not counted as a restart (Flink's
    /// `isNewAttempt`).
    pub new_attempt: bool,
}

impl RestartDecision {
    /// Whether the job restarts.
    pub fn is_restart(&self) -> bool {
        matches!(self, RestartDecision::Restart { .. })
    }
}

/// A restart strategy with its state: Flink's `RestartBackoffTimeStrategy`.
#[derive(Debug, Clone, PartialEq)]
pub enum RestartBackoffTimeStrategy {
    /// Never restarts.
    NoRestart,
    /// A fixed number of restarts with a fixed delay.
    FixedDelay(FixedDelayRestartBackoffTimeStrategy),
    /// Restarts while the failure rate stays within bounds.
    FailureRate(FailureRateRestartBackoffTimeStrategy),
    /// Restarts with exponentially growing delays.
    ExponentialDelay(ExponentialDelayRestartBackoffTimeStrategy),
}

impl RestartBackoffTimeStrategy {
    /// The strategy a job with configuration `conf` starts with; see
    /// [`RestartStrategyConfig::from_config`] and [`RestartStrategyConfig::create`].
    pub fn from_config(
        conf: &Configuration,
        checkpointing_enabled: bool,
        jitter_seed: u64,
    ) -> Result<RestartBackoffTimeStrategy, ConfigError> {
        RestartStrategyConfig::from_config(conf, checkpointing_enabled)?.create(jitter_seed)
    }

    /// The single entry point per recoverable failure at `now_ms`: records it, then
    /// decides (Flink's `ExecutionFailureHandler`: `notifyFailure`, `canRestart`,
    /// `getBackoffTime`).
    pub fn on_failure(&mut self, now_ms: i64) -> RestartDecision {
        self.handle_failure(now_ms).decision
    }

    /// [`RestartBackoffTimeStrategy::on_failure`], also telling whether the failure
    /// started a new attempt (for the exception history and the restart count).
    pub fn handle_failure(&mut self, now_ms: i64) -> FailureHandling {
        let new_attempt = self.notify_failure(now_ms);
        let decision = if self.can_restart(now_ms) {
            RestartDecision::Restart {
                delay_ms: self.backoff_time_ms(now_ms),
            }
        } else {
            RestartDecision::Suppressed {
                reason: format!("{SUPPRESSED_PREFIX}{self}"),
            }
        };
        FailureHandling { decision, new_attempt }
    }

    /// Records a failure at `now_ms`; `false` when it was merged into the current
    /// attempt (exponential-delay only).
    pub fn notify_failure(&mut self, now_ms: i64) -> bool {
        match self {
            RestartBackoffTimeStrategy::NoRestart => true,
            RestartBackoffTimeStrategy::FixedDelay(s) => s.notify_failure(),
            RestartBackoffTimeStrategy::FailureRate(s) => s.notify_failure(now_ms),
            RestartBackoffTimeStrategy::ExponentialDelay(s) => s.notify_failure(now_ms),
        }
    }

    /// Whether the job may restart after the failures recorded so far, at `now_ms`.
    pub fn can_restart(&self, now_ms: i64) -> bool {
        match self {
            RestartBackoffTimeStrategy::NoRestart => false,
            RestartBackoffTimeStrategy::FixedDelay(s) => s.can_restart(),
            RestartBackoffTimeStrategy::FailureRate(s) => s.can_restart(now_ms),
            RestartBackoffTimeStrategy::ExponentialDelay(s) => s.can_restart(),
        }
    }

    /// Milliseconds to wait before restarting, at `now_ms`.
    pub fn backoff_time_ms(&self, now_ms: i64) -> i64 {
        match self {
            RestartBackoffTimeStrategy::NoRestart => 0,
            RestartBackoffTimeStrategy::FixedDelay(s) => s.backoff_time_ms,
            RestartBackoffTimeStrategy::FailureRate(s) => s.backoff_time_ms,
            RestartBackoffTimeStrategy::ExponentialDelay(s) => s.backoff_time_ms(now_ms),
        }
    }
}

impl fmt::Display for RestartBackoffTimeStrategy {
    /// Flink's `toString` of the strategy.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RestartBackoffTimeStrategy::NoRestart => f.write_str("NoRestartBackoffTimeStrategy"),
            RestartBackoffTimeStrategy::FixedDelay(s) => fmt::Display::fmt(s, f),
            RestartBackoffTimeStrategy::FailureRate(s) => fmt::Display::fmt(s, f),
            RestartBackoffTimeStrategy::ExponentialDelay(s) => fmt::Display::fmt(s, f),
        }
    }
}

/// Fixed-delay state: the number of failures seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedDelayRestartBackoffTimeStrategy {
    max_attempts: i32,
    backoff_time_ms: i64,
    current_restart_attempt: i64,
}

impl FixedDelayRestartBackoffTimeStrategy {
    fn notify_failure(&mut self) -> bool {
        self.current_restart_attempt = self.current_restart_attempt.saturating_add(1);
        true
    }

    fn can_restart(&self) -> bool {
        self.current_restart_attempt <= i64::from(self.max_attempts)
    }

    /// Failures seen so far (each one an attempt).
    pub fn current_restart_attempt(&self) -> i64 {
        self.current_restart_attempt
    }
}

impl fmt::Display for FixedDelayRestartBackoffTimeStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts={}, backoffTimeMS={})",
            self.max_attempts, self.backoff_time_ms
        )
    }
}

/// Failure-rate state: the times of the last `max + 1` failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureRateRestartBackoffTimeStrategy {
    failures_interval_ms: i64,
    backoff_time_ms: i64,
    max_failures_per_interval: usize,
    failure_timestamps: VecDeque<i64>,
}

impl FailureRateRestartBackoffTimeStrategy {
    fn is_queue_full(&self) -> bool {
        self.failure_timestamps.len() > self.max_failures_per_interval
    }

    fn notify_failure(&mut self, now_ms: i64) -> bool {
        if self.is_queue_full() {
            self.failure_timestamps.pop_front();
        }
        self.failure_timestamps.push_back(now_ms);
        true
    }

    fn can_restart(&self, now_ms: i64) -> bool {
        match self.failure_timestamps.front() {
            Some(earliest) if self.is_queue_full() => now_ms.saturating_sub(*earliest) > self.failures_interval_ms,
            _ => true,
        }
    }

    /// The failure times kept (at most `max + 1`), oldest first.
    pub fn failure_timestamps(&self) -> impl Iterator<Item = i64> + '_ {
        self.failure_timestamps.iter().copied()
    }
}

impl fmt::Display for FailureRateRestartBackoffTimeStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Flink's exact text: the prefix twice, one closing parenthesis.
        write!(
            f,
            "FailureRateRestartBackoffTimeStrategy(FailureRateRestartBackoffTimeStrategy(failuresIntervalMS={},backoffTimeMS={},maxFailuresPerInterval={})",
            self.failures_interval_ms, self.backoff_time_ms, self.max_failures_per_interval
        )
    }
}

/// Exponential-delay state: the attempt count since the last reset, the scheduled
/// restart time, and the jitter generator.
#[derive(Debug, Clone, PartialEq)]
pub struct ExponentialDelayRestartBackoffTimeStrategy {
    config: ExponentialDelayConfig,
    current_restart_attempt: i64,
    next_restart_timestamp: i64,
    rng_state: u64,
}

impl ExponentialDelayRestartBackoffTimeStrategy {
    fn notify_failure(&mut self, now_ms: i64) -> bool {
        // A failure before (or at) the scheduled restart joins the current attempt.
        if now_ms <= self.next_restart_timestamp {
            return false;
        }
        if now_ms.saturating_sub(self.next_restart_timestamp) >= self.config.reset_backoff_threshold_ms {
            self.current_restart_attempt = 0;
        }
        let backoff = self.actual_backoff_ms();
        self.next_restart_timestamp = now_ms.saturating_add(backoff);
        self.current_restart_attempt = self.current_restart_attempt.saturating_add(1);
        true
    }

    fn can_restart(&self) -> bool {
        self.current_restart_attempt <= i64::from(self.config.attempts_before_reset_backoff)
    }

    fn backoff_time_ms(&self, now_ms: i64) -> i64 {
        self.next_restart_timestamp.saturating_sub(now_ms).max(0)
    }

    /// `initial · multiplier^attempt` truncated, plus jitter, within
    /// `[initial, max]`. Unlike Java's wrapping `long` addition, the jitter is added
    /// with saturation, so huge attempt counts stay at the max backoff.
    fn actual_backoff_ms(&mut self) -> i64 {
        let c = self.config;
        let exponent = self.current_restart_attempt as f64;
        // `as` saturates, like Java's (long) cast of a double.
        let current = (c.initial_backoff_ms as f64 * c.backoff_multiplier.powf(exponent)) as i64;
        let jitter = self.jitter_ms(current);
        current
            .saturating_add(jitter)
            .min(c.max_backoff_ms)
            .max(c.initial_backoff_ms)
    }

    /// A jitter uniformly drawn from `[-j, j]`, `j = (long) (backoff · factor)`.
    fn jitter_ms(&mut self, current_backoff_ms: i64) -> i64 {
        if self.config.jitter_factor == 0.0 {
            return 0;
        }
        let offset = (current_backoff_ms as f64 * self.config.jitter_factor) as i64;
        if offset <= 0 {
            return 0;
        }
        let span = (offset as u64).saturating_mul(2).saturating_add(1);
        let random = splitmix64(self.rng_state);
        self.rng_state = self.rng_state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        // Lemire's multiply-shift maps the 64 random bits onto [0, span).
        let drawn = ((u128::from(random) * u128::from(span)) >> 64) as u64;
        (drawn as i64).saturating_sub(offset)
    }

    /// Attempts since the last reset.
    pub fn current_restart_attempt(&self) -> i64 {
        self.current_restart_attempt
    }

    /// When the scheduled restart happens; [`NO_RESTART_SCHEDULED`] before any failure.
    pub fn next_restart_timestamp(&self) -> i64 {
        self.next_restart_timestamp
    }
}

impl fmt::Display for ExponentialDelayRestartBackoffTimeStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(
            f,
            "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS={}, maxBackoffMS={}, backoffMultiplier={}, \
             resetBackoffThresholdMS={}, jitterFactor={}, attemptsBeforeResetBackoff={}, currentRestartAttempt={}, \
             nextRestartTimestamp={})",
            c.initial_backoff_ms,
            c.max_backoff_ms,
            java_double(c.backoff_multiplier),
            c.reset_backoff_threshold_ms,
            java_double(c.jitter_factor),
            c.attempts_before_reset_backoff,
            self.current_restart_attempt,
            self.next_restart_timestamp
        )
    }
}

/// Java's `Double.toString`: `1.5`, `2.0`, `0.1`; scientific (`1.0E-4`, `1.0E7`) outside
/// `[1e-3, 1e7)`.
fn java_double(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let magnitude = value.abs();
    if value == 0.0 || (1e-3..1e7).contains(&magnitude) {
        // Debug prints the shortest round-trip decimal with at least one fraction digit.
        return format!("{value:?}");
    }
    let scientific = format!("{value:e}"); // e.g. "1e-4", "1.2345e7"
    match scientific.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => format!("{mantissa}E{exponent}"),
        Some((mantissa, exponent)) => format!("{mantissa}.0E{exponent}"),
        None => scientific,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(entries: &[(&str, &str)]) -> Configuration {
        let mut conf = Configuration::new();
        for (k, v) in entries {
            conf.set_string(*k, *v);
        }
        conf
    }

    fn strategy(entries: &[(&str, &str)]) -> RestartBackoffTimeStrategy {
        RestartBackoffTimeStrategy::from_config(&conf(entries), false, 42).unwrap()
    }

    fn exponential(config: ExponentialDelayConfig) -> RestartBackoffTimeStrategy {
        RestartStrategyConfig::ExponentialDelay(config).create(7).unwrap()
    }

    fn no_jitter() -> ExponentialDelayConfig {
        ExponentialDelayConfig {
            jitter_factor: 0.0,
            ..ExponentialDelayConfig::default()
        }
    }

    fn restart(delay_ms: i64) -> RestartDecision {
        RestartDecision::Restart { delay_ms }
    }

    fn new_attempt(delay_ms: i64) -> FailureHandling {
        FailureHandling {
            decision: restart(delay_ms),
            new_attempt: true,
        }
    }

    fn merged(delay_ms: i64) -> FailureHandling {
        FailureHandling {
            decision: restart(delay_ms),
            new_attempt: false,
        }
    }

    // --- choosing the strategy ------------------------------------------------------------

    #[test]
    fn without_type_and_without_checkpointing_the_strategy_is_no_restart() {
        let config = RestartStrategyConfig::from_config(&Configuration::new(), false).unwrap();
        assert_eq!(config, RestartStrategyConfig::NoRestart);
    }

    #[test]
    fn without_type_but_with_checkpointing_the_strategy_is_exponential_delay_with_default_settings() {
        // Flink ignores configured exponential-delay keys when the type itself is unset.
        let c = conf(&[("restart-strategy.exponential-delay.initial-backoff", "5 s")]);
        let config = RestartStrategyConfig::from_config(&c, true).unwrap();
        assert_eq!(
            config,
            RestartStrategyConfig::ExponentialDelay(ExponentialDelayConfig::default())
        );
        assert_eq!(
            config.create(0).unwrap().to_string(),
            "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, \
             backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, \
             attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=0, nextRestartTimestamp=-2147483648)"
        );
    }

    #[test]
    fn an_explicit_type_wins_over_the_checkpointing_default() {
        let config = RestartStrategyConfig::from_config(&conf(&[("restart-strategy.type", "none")]), true).unwrap();
        assert_eq!(config, RestartStrategyConfig::NoRestart);
    }

    #[test]
    fn every_flink_spelling_of_the_type_selects_its_strategy() {
        for (spelling, expected) in [
            ("none", RestartStrategyType::NoRestart),
            ("off", RestartStrategyType::NoRestart),
            ("disable", RestartStrategyType::NoRestart),
            ("fixed-delay", RestartStrategyType::FixedDelay),
            ("fixeddelay", RestartStrategyType::FixedDelay),
            ("Fixed-Delay", RestartStrategyType::FixedDelay),
            ("failure-rate", RestartStrategyType::FailureRate),
            ("failurerate", RestartStrategyType::FailureRate),
            ("exponential-delay", RestartStrategyType::ExponentialDelay),
            ("exponentialdelay", RestartStrategyType::ExponentialDelay),
        ] {
            let config =
                RestartStrategyConfig::from_config(&conf(&[("restart-strategy.type", spelling)]), false).unwrap();
            assert_eq!(config.strategy_type(), expected, "{spelling}");
        }
    }

    #[test]
    fn an_unknown_type_is_an_error_listing_the_accepted_values() {
        let err = RestartStrategyConfig::from_config(&conf(&[("restart-strategy.type", "retry-forever")]), false)
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("'restart-strategy.type'"), "{text}");
        assert!(
            text.contains("retry-forever is an unknown value of RestartStrategyType."),
            "{text}"
        );
        assert!(
            text.contains(
                "none, off, disable, fixed-delay, fixeddelay, failure-rate, failurerate, exponential-delay, exponentialdelay"
            ),
            "{text}"
        );
    }

    #[test]
    fn each_strategy_reads_its_own_keys() {
        let fixed = RestartStrategyConfig::from_config(
            &conf(&[
                ("restart-strategy.type", "fixed-delay"),
                ("restart-strategy.fixed-delay.attempts", "3"),
                ("restart-strategy.fixed-delay.delay", "10 s"),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(
            fixed,
            RestartStrategyConfig::FixedDelay {
                max_attempts: 3,
                delay_ms: 10_000
            }
        );
        let rate = RestartStrategyConfig::from_config(
            &conf(&[
                ("restart-strategy.type", "failure-rate"),
                ("restart-strategy.failure-rate.max-failures-per-interval", "2"),
                ("restart-strategy.failure-rate.failure-rate-interval", "5 min"),
                ("restart-strategy.failure-rate.delay", "250"),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(
            rate,
            RestartStrategyConfig::FailureRate {
                max_failures_per_interval: 2,
                failure_interval_ms: 300_000,
                delay_ms: 250
            }
        );
        let exp = RestartStrategyConfig::from_config(
            &conf(&[
                ("restart-strategy.type", "exponential-delay"),
                ("restart-strategy.exponential-delay.initial-backoff", "2 s"),
                ("restart-strategy.exponential-delay.max-backoff", "30 s"),
                ("restart-strategy.exponential-delay.backoff-multiplier", "2"),
                ("restart-strategy.exponential-delay.reset-backoff-threshold", "10 min"),
                ("restart-strategy.exponential-delay.jitter-factor", "0"),
                ("restart-strategy.exponential-delay.attempts-before-reset-backoff", "5"),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(
            exp,
            RestartStrategyConfig::ExponentialDelay(ExponentialDelayConfig {
                initial_backoff_ms: 2_000,
                max_backoff_ms: 30_000,
                backoff_multiplier: 2.0,
                reset_backoff_threshold_ms: 600_000,
                jitter_factor: 0.0,
                attempts_before_reset_backoff: 5,
            })
        );
        // Unset keys take Flink's defaults.
        let defaults =
            RestartStrategyConfig::from_config(&conf(&[("restart-strategy.type", "fixed-delay")]), false).unwrap();
        assert_eq!(
            defaults,
            RestartStrategyConfig::FixedDelay {
                max_attempts: 1,
                delay_ms: 1_000
            }
        );
    }

    #[test]
    fn invalid_settings_are_rejected_with_flinks_messages_and_the_key() {
        /// (config entries, key named by the error, Flink's message)
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case] = &[
            (
                &[
                    ("restart-strategy.type", "fixed-delay"),
                    ("restart-strategy.fixed-delay.attempts", "-1"),
                ],
                "restart-strategy.fixed-delay.attempts",
                "Maximum number of restart attempts must be at least 0.",
            ),
            (
                &[
                    ("restart-strategy.type", "failure-rate"),
                    ("restart-strategy.failure-rate.max-failures-per-interval", "0"),
                ],
                "restart-strategy.failure-rate.max-failures-per-interval",
                "Maximum number of restart attempts per time unit must be greater than 0.",
            ),
            (
                &[
                    ("restart-strategy.type", "failure-rate"),
                    ("restart-strategy.failure-rate.failure-rate-interval", "0 ms"),
                ],
                "restart-strategy.failure-rate.failure-rate-interval",
                "Failures interval must be greater than 0 ms.",
            ),
            (
                &[
                    ("restart-strategy.type", "exponential-delay"),
                    ("restart-strategy.exponential-delay.initial-backoff", "0 ms"),
                ],
                "restart-strategy.exponential-delay.initial-backoff",
                "Initial backoff must be at least 1.",
            ),
            (
                &[
                    ("restart-strategy.type", "exponential-delay"),
                    ("restart-strategy.exponential-delay.initial-backoff", "2 min"),
                ],
                "restart-strategy.exponential-delay.initial-backoff",
                "Initial backoff cannot be higher than maximum backoff.",
            ),
            (
                &[
                    ("restart-strategy.type", "exponential-delay"),
                    ("restart-strategy.exponential-delay.backoff-multiplier", "1"),
                ],
                "restart-strategy.exponential-delay.backoff-multiplier",
                "Backoff multiplier must be greater than 1.",
            ),
            (
                &[
                    ("restart-strategy.type", "exponential-delay"),
                    ("restart-strategy.exponential-delay.jitter-factor", "1.5"),
                ],
                "restart-strategy.exponential-delay.jitter-factor",
                "Jitter factor must be >= 0 and <= 1.",
            ),
            (
                &[
                    ("restart-strategy.type", "exponential-delay"),
                    ("restart-strategy.exponential-delay.attempts-before-reset-backoff", "0"),
                ],
                "restart-strategy.exponential-delay.attempts-before-reset-backoff",
                "The attemptsBeforeResetBackoff must be at least 1.",
            ),
        ];
        for (entries, key, message) in cases {
            match RestartStrategyConfig::from_config(&conf(entries), false) {
                Err(ConfigError::OutOfRange { key: k, message: m, .. }) => {
                    assert_eq!((k.as_str(), m.as_str()), (*key, *message));
                }
                other => panic!("{entries:?}: unexpected {other:?}"),
            }
        }
        let err = RestartStrategyConfig::from_config(
            &conf(&[
                ("restart-strategy.type", "fixed-delay"),
                ("restart-strategy.fixed-delay.delay", "soon"),
            ]),
            false,
        )
        .unwrap_err();
        assert!(matches!(err, ConfigError::InvalidValue { .. }), "{err:?}");
    }

    #[test]
    fn create_validates_hand_built_settings_too() {
        let bad = RestartStrategyConfig::FixedDelay {
            max_attempts: 1,
            delay_ms: -5,
        };
        assert!(matches!(bad.create(0), Err(ConfigError::OutOfRange { .. })));
    }

    // --- no restart --------------------------------------------------------------------------

    #[test]
    fn no_restart_suppresses_the_first_failure() {
        let mut s = strategy(&[]);
        assert_eq!(
            s.on_failure(1_000),
            RestartDecision::Suppressed {
                reason: "Recovery is suppressed by NoRestartBackoffTimeStrategy".to_string()
            }
        );
    }

    // --- fixed delay ---------------------------------------------------------------------------

    #[test]
    fn fixed_delay_with_one_attempt_restarts_once_then_suppresses() {
        let mut s = strategy(&[("restart-strategy.type", "fixed-delay")]);
        assert_eq!(s.on_failure(0), restart(1_000));
        assert_eq!(
            s.on_failure(5_000),
            RestartDecision::Suppressed {
                reason: "Recovery is suppressed by FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, \
                         backoffTimeMS=1000)"
                    .to_string()
            }
        );
    }

    #[test]
    fn fixed_delay_with_three_attempts_restarts_three_times_with_the_configured_delay() {
        let mut s = strategy(&[
            ("restart-strategy.type", "fixeddelay"),
            ("restart-strategy.fixed-delay.attempts", "3"),
            ("restart-strategy.fixed-delay.delay", "250 ms"),
        ]);
        for t in 0..3 {
            assert_eq!(s.on_failure(t * 10), restart(250), "failure {t}");
        }
        assert!(!s.on_failure(100).is_restart());
        assert!(
            !s.on_failure(100_000_000).is_restart(),
            "fixed-delay never forgets failures"
        );
    }

    #[test]
    fn fixed_delay_with_zero_attempts_never_restarts() {
        let mut s = strategy(&[
            ("restart-strategy.type", "fixed-delay"),
            ("restart-strategy.fixed-delay.attempts", "0"),
        ]);
        assert!(!s.on_failure(0).is_restart());
    }

    #[test]
    fn fixed_delay_to_string_is_flinks() {
        let s = strategy(&[("restart-strategy.type", "fixed-delay")]);
        assert_eq!(
            s.to_string(),
            "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)"
        );
    }

    // --- failure rate --------------------------------------------------------------------------

    #[test]
    fn failure_rate_with_one_failure_per_minute_restarts_once_then_suppresses_a_second_failure_within_the_minute() {
        let mut s = strategy(&[("restart-strategy.type", "failure-rate")]);
        assert_eq!(s.on_failure(0), restart(1_000));
        assert_eq!(
            s.on_failure(30_000),
            RestartDecision::Suppressed {
                reason: "Recovery is suppressed by FailureRateRestartBackoffTimeStrategy(\
                         FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000,backoffTimeMS=1000,\
                         maxFailuresPerInterval=1)"
                    .to_string()
            }
        );
    }

    #[test]
    fn failure_rate_restarts_again_once_the_earliest_failure_left_the_interval() {
        let mut s = strategy(&[("restart-strategy.type", "failure-rate")]);
        assert!(s.on_failure(0).is_restart());
        // Exactly one interval later the earliest failure still counts (strictly greater).
        let mut at_boundary = s.clone();
        assert!(!at_boundary.on_failure(60_000).is_restart());
        assert!(s.on_failure(60_001).is_restart());
        // The window now holds 60001; a failure 10 s later is the second within a minute.
        assert!(!s.on_failure(70_001).is_restart());
    }

    #[test]
    fn failure_rate_many_failures_within_the_rate_all_restart() {
        // Flink's FailureRateRestartBackoffTimeStrategyTest#testManyFailuresWithinRate.
        let mut s = RestartStrategyConfig::FailureRate {
            max_failures_per_interval: 1,
            failure_interval_ms: 1,
            delay_ms: 0,
        }
        .create(0)
        .unwrap();
        let mut now = 0;
        for _ in 0..3 {
            assert_eq!(s.on_failure(now), restart(0));
            now += 2;
        }
        assert!(s.can_restart(now));
    }

    #[test]
    fn failure_rate_failures_exceeding_the_rate_suppress() {
        // Flink's FailureRateRestartBackoffTimeStrategyTest#testFailuresExceedingRate.
        let mut s = RestartStrategyConfig::FailureRate {
            max_failures_per_interval: 3,
            failure_interval_ms: 10_000,
            delay_ms: 0,
        }
        .create(0)
        .unwrap();
        for _ in 0..3 {
            assert!(s.on_failure(0).is_restart());
        }
        assert!(!s.on_failure(0).is_restart());
        if let RestartBackoffTimeStrategy::FailureRate(state) = &s {
            assert_eq!(state.failure_timestamps().count(), 4, "keeps max + 1 failures");
        }
    }

    // --- exponential delay ---------------------------------------------------------------------

    #[test]
    fn exponential_delay_without_jitter_grows_by_the_multiplier_up_to_the_max() {
        // Flink's ExponentialDelayRestartBackoffTimeStrategyTest#testMultipleSettings shape:
        // initial 3, multiplier 2.3, max 40 → 3, 6, 15, 36, 40, 40 (truncated products).
        let mut s = exponential(ExponentialDelayConfig {
            initial_backoff_ms: 3,
            max_backoff_ms: 40,
            backoff_multiplier: 2.3,
            reset_backoff_threshold_ms: 1_000_000,
            jitter_factor: 0.0,
            attempts_before_reset_backoff: i32::MAX,
        });
        let mut now = 0;
        for expected in [3, 6, 15, 36, 40, 40] {
            assert_eq!(s.on_failure(now), restart(expected));
            now += expected + 1; // fail again just after the restart
        }
    }

    #[test]
    fn exponential_delay_defaults_double_and_a_half_up_to_one_minute() {
        let mut s = exponential(no_jitter());
        let mut now = 1_000_000;
        let mut delays = Vec::new();
        for _ in 0..12 {
            match s.handle_failure(now) {
                FailureHandling {
                    decision: RestartDecision::Restart { delay_ms },
                    new_attempt: true,
                } => {
                    delays.push(delay_ms);
                    now += delay_ms + 1;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(
            delays,
            vec![1_000, 1_500, 2_250, 3_375, 5_062, 7_593, 11_390, 17_085, 25_628, 38_443, 57_665, 60_000]
        );
    }

    #[test]
    fn exponential_delay_merges_failures_before_the_scheduled_restart_into_one_attempt() {
        let mut s = exponential(no_jitter());
        assert_eq!(s.handle_failure(10_000), new_attempt(1_000));
        // Two more failures before the restart at 11000: same attempt, remaining delay.
        assert_eq!(s.handle_failure(10_400), merged(600));
        assert_eq!(s.handle_failure(11_000), merged(0));
        if let RestartBackoffTimeStrategy::ExponentialDelay(state) = &s {
            assert_eq!(state.current_restart_attempt(), 1);
            assert_eq!(state.next_restart_timestamp(), 11_000);
        }
        // After the restart, the next failure is attempt 2 with 1.5 s.
        assert_eq!(s.handle_failure(11_001), new_attempt(1_500));
    }

    #[test]
    fn exponential_delay_resets_after_a_failure_free_stretch_of_the_threshold() {
        let mut s = exponential(ExponentialDelayConfig {
            reset_backoff_threshold_ms: 10_000,
            ..no_jitter()
        });
        // Restarts scheduled at 1000, then at 3500.
        assert_eq!(s.on_failure(0), restart(1_000));
        assert_eq!(s.on_failure(2_000), restart(1_500));
        // 9999 ms after the scheduled restart: no reset yet.
        let mut just_below = s.clone();
        assert_eq!(just_below.on_failure(3_500 + 9_999), restart(2_250));
        // 10000 ms after it: the attempt count starts over.
        assert_eq!(s.on_failure(3_500 + 10_000), restart(1_000));
        if let RestartBackoffTimeStrategy::ExponentialDelay(state) = &s {
            assert_eq!(state.current_restart_attempt(), 1);
        }
    }

    #[test]
    fn exponential_delay_suppresses_after_attempts_before_reset_backoff() {
        let mut s = exponential(ExponentialDelayConfig {
            attempts_before_reset_backoff: 2,
            ..no_jitter()
        });
        assert_eq!(s.on_failure(0), restart(1_000));
        assert_eq!(s.on_failure(1_001), restart(1_500));
        match s.on_failure(2_502) {
            RestartDecision::Suppressed { reason } => assert_eq!(
                reason,
                "Recovery is suppressed by ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, \
                 maxBackoffMS=60000, backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.0, \
                 attemptsBeforeResetBackoff=2, currentRestartAttempt=3, nextRestartTimestamp=4752)"
            ),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn exponential_delay_attempt_limit_starts_over_after_a_reset() {
        let config = ExponentialDelayConfig {
            attempts_before_reset_backoff: 1,
            reset_backoff_threshold_ms: 5_000,
            ..no_jitter()
        };
        let mut s = exponential(config);
        assert!(s.on_failure(0).is_restart());
        let mut too_soon = s.clone();
        assert!(!too_soon.on_failure(2_000).is_restart());
        assert_eq!(s.on_failure(1_000 + 5_000), restart(1_000));
    }

    #[test]
    fn exponential_delay_jitter_stays_within_the_factor_never_below_initial_and_is_deterministic() {
        let config = ExponentialDelayConfig {
            initial_backoff_ms: 1_000,
            max_backoff_ms: 60_000,
            backoff_multiplier: 2.0,
            jitter_factor: 0.25,
            ..ExponentialDelayConfig::default()
        };
        let run = |seed: u64| {
            let mut s = RestartStrategyConfig::ExponentialDelay(config).create(seed).unwrap();
            let mut now = 0;
            let mut delays = Vec::new();
            for _ in 0..8 {
                if let RestartDecision::Restart { delay_ms, .. } = s.on_failure(now) {
                    delays.push(delay_ms);
                    now += delay_ms + 1;
                }
            }
            delays
        };
        let delays = run(1);
        assert_eq!(delays.len(), 8);
        for (attempt, delay) in delays.iter().enumerate() {
            let base = 1_000i64 << attempt;
            let lo = (base - base / 4).clamp(1_000, 60_000);
            let hi = (base + base / 4).min(60_000);
            assert!(
                (lo..=hi).contains(delay),
                "attempt {attempt}: {delay} not in [{lo}, {hi}]"
            );
        }
        assert_eq!(run(1), delays, "same seed, same delays");
        let other_seeds: Vec<_> = (2..6).map(run).collect();
        assert!(other_seeds.iter().any(|d| *d != delays), "the seed drives the jitter");
        // Over many seeds the first delay (1000 ± 250, floored at 1000) takes several values.
        let firsts: std::collections::BTreeSet<i64> = (0..64).map(|seed| run(seed)[0]).collect();
        assert!(
            firsts.len() > 10 && firsts.iter().all(|d| (1_000..=1_250).contains(d)),
            "{firsts:?}"
        );
    }

    #[test]
    fn exponential_delay_stays_at_the_max_for_huge_attempt_counts() {
        let mut s = exponential(ExponentialDelayConfig::default());
        let mut now = 0;
        let mut last = 0;
        for _ in 0..300 {
            match s.on_failure(now) {
                RestartDecision::Restart { delay_ms, .. } => {
                    assert!((1_000..=60_000).contains(&delay_ms));
                    last = delay_ms;
                    now += delay_ms + 1;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(last >= 54_000, "{last}");
    }

    #[test]
    fn exponential_delay_backoff_before_any_failure_is_zero() {
        let s = exponential(ExponentialDelayConfig::default());
        assert_eq!(s.backoff_time_ms(0), 0);
        assert!(s.can_restart(0));
    }

    #[test]
    fn exponential_delay_to_string_shows_the_state_after_a_failure() {
        let mut s = exponential(no_jitter());
        s.on_failure(5_000);
        assert_eq!(
            s.to_string(),
            "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, \
             backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.0, \
             attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=1, nextRestartTimestamp=6000)"
        );
    }

    #[test]
    fn doubles_print_as_java_prints_them() {
        assert_eq!(java_double(1.5), "1.5");
        assert_eq!(java_double(2.0), "2.0");
        assert_eq!(java_double(0.1), "0.1");
        assert_eq!(java_double(0.0), "0.0");
        assert_eq!(java_double(1e-4), "1.0E-4");
        assert_eq!(java_double(1.25e7), "1.25E7");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(9_999_999.0), "9999999.0");
    }
}
