//! `orders-per-minute` (seed 000): orders per user and minute of event time.
//!
//! ```text
//! orders --fwd--> ParseOrder --hash(user_id)--> window+aggregate --fwd--> sink
//! ```
//!
//! Orders come as CSV lines `order_id,user_id,amount,ts_millis` from a seeded generator
//! or a file (`--arg input=path`, read in file order; a first line starting with
//! `order_id` is a header and skipped). The source assigns each line its `ts_millis`
//! and generates watermarks with bounded out-of-orderness (`bound_ms`, default 5000),
//! periodically (every `pipeline.auto-watermark-interval`) or after every record
//! (`watermarks=per-record`, which makes a run deterministic). `ParseOrder` parses the
//! lines: a malformed line fails the job with its line number, or with
//! `skip_malformed=true` is counted and skipped. Then per user, one-minute tumbling
//! event-time windows count the orders and sum their amounts, and the sink gets one
//! line per window and user: `window_start_ms,window_end_ms,user_id,count,sum_amount`.
//! Records behind the watermark by more than their window are dropped, as Flink does.
//!
//! Amounts are decimals with at most two fractional digits, summed exactly in cents.
//!
//! The generator: order `i` (from 0) has id `i + 1`, a user below `users`, an amount
//! of 0.01 to 1000.00, and an event time `START_MS + i * STEP_MS` minus a disorder of
//! up to `bound_ms` — never late, whatever the parallelism — except a `late_fraction`
//! of orders placed two to four minutes further back, far behind the watermark.

use std::time::Duration;
use weir_api::prelude::*;
use weir_api::program::ArgSpec;
use weir_api::watermark::BoundedOutOfOrderness;
use weir_api::windowing::WindowContext;
use weir_connectors::source::{GeneratorSource, NumberedLinesSource, DEFAULT_MAX_LINE_LENGTH};
use weir_core::excerpt::excerpt;
use weir_graph::NodeKind;
use weir_runtime::operator::{OperatorFactory, Output};
use weir_runtime::TaskError;

mod plain;

/// Event time of the first generated order: 2023-11-14T22:13:00Z, on a minute.
pub const START_MS: i64 = 1_699_999_980_000;
/// Event time between consecutive generated orders (100 orders per second).
pub const STEP_MS: i64 = 10;
/// How far behind its slot a late order is placed, at least (beyond the bound).
pub const LATE_MIN_MS: i64 = 120_000;
/// The spread of late orders beyond [`LATE_MIN_MS`].
pub const LATE_SPREAD_MS: u64 = 120_000;
/// The window size.
pub const WINDOW_MS: i64 = 60_000;

/// The program.
pub fn program() -> Program {
    Program {
        name: "orders-per-minute",
        description: "orders -> ParseOrder -> key_by(user) -> one-minute event-time windows: count and sum per user",
        args: &[
            ArgSpec {
                name: "orders",
                help: "number of generated orders (default 100000)",
            },
            ArgSpec {
                name: "users",
                help: "distinct users of generated orders (default 100)",
            },
            ArgSpec {
                name: "seed",
                help: "generator seed (default 42)",
            },
            ArgSpec {
                name: "late_fraction",
                help: "fraction of generated orders far behind the watermark, dropped as late (default 0)",
            },
            ArgSpec {
                name: "input",
                help: "CSV file of order_id,user_id,amount,ts_millis lines instead of the generator",
            },
            ArgSpec {
                name: "output",
                help:
                    "directory for CSV part files (exactly-once with checkpointing); `discard` drops the results (default: print)",
            },
            ArgSpec {
                name: "bound_ms",
                help: "bounded out-of-orderness of the watermarks in ms (default 5000)",
            },
            ArgSpec {
                name: "watermarks",
                help: "periodic (every pipeline.auto-watermark-interval, default) or per-record (deterministic)",
            },
            ArgSpec {
                name: "rate_per_sec",
                help: "throttle the generator to this many orders per second of wall-clock time (default: unthrottled)",
            },
            ArgSpec {
                name: "skip_malformed",
                help: "count and skip malformed CSV lines (and lines over max_line_length) instead of failing the job (default false)",
            },
            ArgSpec {
                name: "max_line_length",
                help: "the most bytes an input line may have; a longer one fails the job or is skipped (default 16777216 = 16 MiB)",
            },
        ],
        build,
    }
}

/// One parsed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Order {
    /// The order's id.
    pub order_id: u64,
    /// The user who placed it (the key).
    pub user_id: u64,
    /// The amount in cents.
    pub amount_cents: i64,
    /// Event time in epoch milliseconds.
    pub ts_millis: i64,
}

/// How the generator makes orders.
#[derive(Debug, Clone, Copy)]
pub struct GeneratorConfig {
    /// Distinct users.
    pub users: u64,
    /// The watermark bound in ms: the disorder of on-time orders.
    pub bound_ms: u64,
    /// Fraction of late orders.
    pub late_fraction: f64,
}

/// The CSV line of generated order `index`.
pub fn generate_line(cfg: &GeneratorConfig, index: u64, rng: &mut Rng) -> String {
    let user = rng.next_below(cfg.users.max(1));
    let cents = 1 + rng.next_below(100_000) as i64;
    let slot = START_MS + index as i64 * STEP_MS;
    let late = cfg.late_fraction > 0.0 && rng.next_f64() < cfg.late_fraction;
    let ts = if late {
        slot - cfg.bound_ms as i64 - LATE_MIN_MS - rng.next_below(LATE_SPREAD_MS) as i64
    } else {
        slot - rng.next_below(cfg.bound_ms + 1) as i64
    };
    let mut digits = itoa::Buffer::new();
    let mut line = String::with_capacity(48);
    line.push_str(digits.format(index + 1));
    line.push(',');
    line.push_str(digits.format(user));
    line.push(',');
    push_cents(&mut line, cents);
    line.push(',');
    line.push_str(digits.format(ts));
    line
}

/// `cents` as a decimal with two fractional digits.
pub fn format_cents(cents: i64) -> String {
    let mut s = String::with_capacity(24);
    push_cents(&mut s, cents);
    s
}

/// Appends `cents` as a decimal with two fractional digits (`-0.05`, `12.30`).
pub fn push_cents(out: &mut String, cents: i64) {
    if cents < 0 {
        out.push('-');
    }
    let abs = cents.unsigned_abs();
    out.push_str(itoa::Buffer::new().format(abs / 100));
    let frac = (abs % 100) as u8;
    out.push('.');
    out.push(char::from(b'0' + frac / 10));
    out.push(char::from(b'0' + frac % 10));
}

fn parse_cents(s: &str) -> Result<i64, String> {
    let bad = || {
        format!(
            "amount '{}' is not a decimal with at most two fractional digits",
            excerpt(s)
        )
    };
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(frac) || frac.len() > 2 {
        return Err(bad());
    }
    let whole: i64 = whole.parse().map_err(|_| bad())?;
    let frac: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().map_err(|_| bad())? * if frac.len() == 1 { 10 } else { 1 }
    };
    let cents = whole
        .checked_mul(100)
        .and_then(|c| c.checked_add(frac))
        .ok_or_else(bad)?;
    Ok(if negative { -cents } else { cents })
}

/// Parses `order_id,user_id,amount,ts_millis`.
pub fn parse_order(line: &str) -> Result<Order, String> {
    match plain::parse_order(line.as_bytes()) {
        Some(order) => Ok(order),
        None => parse_order_general(line),
    }
}

/// [`parse_order`] of any line: fields split on commas and trimmed, each parsed with
/// its own error message.
fn parse_order_general(line: &str) -> Result<Order, String> {
    let mut fields = line.split(',').map(str::trim);
    let (Some(order_id), Some(user_id), Some(amount), Some(ts), None) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) else {
        return Err(format!(
            "expected 4 fields order_id,user_id,amount,ts_millis, got {}",
            line.split(',').count()
        ));
    };
    Ok(Order {
        order_id: order_id
            .parse()
            .map_err(|_| format!("order_id '{}' is not a non-negative integer", excerpt(order_id)))?,
        user_id: user_id
            .parse()
            .map_err(|_| format!("user_id '{}' is not a non-negative integer", excerpt(user_id)))?,
        amount_cents: parse_cents(amount)?,
        ts_millis: ts
            .parse()
            .map_err(|_| format!("ts_millis '{}' is not an integer", excerpt(ts)))?,
    })
}

/// The event timestamp of a line (its last field), `i64::MIN` if it has none; the
/// line is rejected later by `ParseOrder`.
pub fn line_timestamp(line: &str) -> i64 {
    if let Some(ts) = plain::last_field_timestamp(line.as_bytes()) {
        return ts;
    }
    line.rsplit(',')
        .next()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(i64::MIN)
}

fn is_header(line_no: u64, line: &str) -> bool {
    line_no == 1 && line.trim_start().starts_with("order_id")
}

/// Parses numbered CSV lines into orders; fails on a malformed line, or counts and
/// skips it. Its input is stamped by [`line_timestamp`] (the program's timestamp
/// assigner), so a plain line's timestamp is taken from the stamp, not parsed again.
pub struct ParseOrder {
    skip_malformed: bool,
    skipped: u64,
    out: Box<dyn Output<Order>>,
}

impl ParseOrder {
    /// The operator of one subtask.
    pub fn new(skip_malformed: bool, out: Box<dyn Output<Order>>) -> Self {
        Self {
            skip_malformed,
            skipped: 0,
            out,
        }
    }
}

impl Output<(u64, String)> for ParseOrder {
    fn collect(&mut self, record: StreamRecord<(u64, String)>) -> Result<(), TaskError> {
        let (line_no, line) = &record.value;
        if is_header(*line_no, line) {
            return Ok(());
        }
        let stamped = match record.timestamp {
            Some(ts) if ts != i64::MIN => plain::parse_stamped_order(line.as_bytes(), ts),
            _ => None,
        };
        match stamped.map_or_else(|| parse_order(line), Ok) {
            Ok(order) => self.out.collect(StreamRecord {
                value: order,
                timestamp: record.timestamp,
            }),
            Err(_) if self.skip_malformed => {
                self.skipped += 1;
                Ok(())
            }
            Err(reason) => Err(TaskError::user(
                "ParseOrder",
                format!("malformed order at line {line_no}: {reason}: '{}'", excerpt(line)),
            )),
        }
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.out.emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        if self.skipped > 0 {
            tracing::warn!(skipped = self.skipped, "ParseOrder skipped malformed lines");
        }
        self.out.end_input()
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.out.emit_watermark_status(status)
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.out.on_processing_time(now)
    }
}

/// Bounded out-of-orderness that also emits after every record.
pub struct PerRecordWatermarks(BoundedOutOfOrderness);

impl PerRecordWatermarks {
    /// Records up to `bound` behind the maximum are on time.
    pub fn new(bound: Duration) -> Self {
        Self(BoundedOutOfOrderness::new(bound))
    }
}

impl<T> WatermarkGenerator<T> for PerRecordWatermarks {
    fn on_event(&mut self, event: &T, timestamp: i64, output: &mut dyn WatermarkOutput) {
        self.0.on_event(event, timestamp, output);
        WatermarkGenerator::<T>::on_periodic_emit(&mut self.0, output);
    }
    fn on_periodic_emit(&mut self, output: &mut dyn WatermarkOutput) {
        WatermarkGenerator::<T>::on_periodic_emit(&mut self.0, output);
    }
}

/// Counts orders and sums their amounts.
#[derive(Clone)]
pub struct CountAndSum;

impl AggregateFunction<Order, (u64, i64), (u64, i64)> for CountAndSum {
    fn create_accumulator(&self) -> (u64, i64) {
        (0, 0)
    }
    fn add(&self, order: Order, acc: &mut (u64, i64)) {
        acc.0 += 1;
        acc.1 += order.amount_cents;
    }
    fn get_result(&self, acc: &(u64, i64)) -> (u64, i64) {
        *acc
    }
    fn merge(&self, a: (u64, i64), b: (u64, i64)) -> (u64, i64) {
        (a.0 + b.0, a.1 + b.1)
    }
}

/// Formats a window's result as `window_start_ms,window_end_ms,user_id,count,sum_amount`.
///
/// Every user of a window fires with the same window, so its `start,end,` prefix is
/// formatted once per window, not once per line.
#[derive(Clone, Default)]
pub struct FormatWindow {
    /// The window whose prefix `prefix` holds.
    window: Option<TimeWindow>,
    prefix: String,
}

impl FormatWindow {
    /// The line of `user`'s `(count, cents)` in window `w`.
    fn line(&mut self, w: &TimeWindow, user: u64, (count, cents): (u64, i64)) -> String {
        let mut digits = itoa::Buffer::new();
        if self.window.as_ref() != Some(w) {
            self.prefix.clear();
            for n in [w.start(), w.end()] {
                self.prefix.push_str(digits.format(n));
                self.prefix.push(',');
            }
            self.window = Some(*w);
        }
        let mut line = String::with_capacity(self.prefix.len() + 48);
        line.push_str(&self.prefix);
        line.push_str(digits.format(user));
        line.push(',');
        line.push_str(digits.format(count));
        line.push(',');
        push_cents(&mut line, cents);
        line
    }
}

impl ProcessWindowFunction<u64, (u64, i64), String, TimeWindow> for FormatWindow {
    fn process(
        &mut self,
        user: &u64,
        ctx: &mut WindowContext<'_, u64, TimeWindow>,
        results: Vec<(u64, i64)>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        for result in results {
            out.collect(self.line(ctx.window(), *user, result));
        }
        Ok(())
    }

    fn process_one(
        &mut self,
        user: &u64,
        ctx: &mut WindowContext<'_, u64, TimeWindow>,
        result: (u64, i64),
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        out.collect(self.line(ctx.window(), *user, result));
        Ok(())
    }
}

fn invalid(key: &str, value: impl ToString, reason: &str) -> ProgramError {
    ProgramError::InvalidValue {
        key: key.into(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let orders = args.get_u64("orders", 100_000)?;
    let users = args.get_u64("users", 100)?;
    let seed = args.get_u64("seed", 42)?;
    let late_fraction = args.get_f64("late_fraction", 0.0)?;
    let bound_ms = args.get_u64("bound_ms", 5_000)?;
    let rate = args.get_f64("rate_per_sec", 0.0)?;
    let skip_malformed = args.get_bool("skip_malformed", false)?;
    let max_line_length = usize::try_from(args.get_u64("max_line_length", DEFAULT_MAX_LINE_LENGTH as u64)?)
        .map_err(|_| ProgramError::Invalid("max_line_length is too large for this machine".into()))?;
    let per_record = match args.get("watermarks").map(str::trim) {
        None | Some("periodic") => false,
        Some("per-record") => true,
        Some(other) => return Err(invalid("watermarks", other, "expected periodic or per-record")),
    };
    if users == 0 {
        return Err(invalid("users", 0, "expected at least 1"));
    }
    if !(0.0..=1.0).contains(&late_fraction) {
        return Err(invalid("late_fraction", late_fraction, "expected a number from 0 to 1"));
    }
    if rate < 0.0 {
        return Err(invalid("rate_per_sec", rate, "expected a non-negative number"));
    }
    let bound = Duration::from_millis(bound_ms);
    let strategy = if per_record {
        WatermarkStrategy::for_generator(move || PerRecordWatermarks::new(bound))
    } else {
        WatermarkStrategy::for_bounded_out_of_orderness(bound)
    }
    .with_timestamp_assigner(|(_, line): &(u64, String), _| line_timestamp(line));

    let lines = match args.get("input") {
        Some(path) => {
            weir_connectors::file_policy::open(path)
                .map_err(|e| ProgramError::Invalid(format!("cannot read input file {path}: {e}")))?;
            let path = path.to_string();
            env.from_source(
                move |ctx| {
                    Ok(Box::new(
                        NumberedLinesSource::new(path.clone(), ctx.subtask_index, ctx.parallelism)
                            .skip_malformed_lines(skip_malformed)
                            .max_line_length(max_line_length),
                    ))
                },
                strategy,
                "orders",
            )
        }
        None => {
            let cfg = GeneratorConfig {
                users,
                bound_ms,
                late_fraction,
            };
            let f: weir_connectors::source::generator::GeneratorFn<(u64, String)> =
                std::sync::Arc::new(move |i, rng: &mut Rng| (i + 1, generate_line(&cfg, i, rng)));
            env.from_source(
                move |ctx| {
                    Ok(Box::new(
                        GeneratorSource::new(orders, seed, f.clone(), ctx.subtask_index, ctx.parallelism)
                            .with_rate(rate),
                    ))
                },
                strategy,
                "orders",
            )
        }
    };
    let parsed: DataStream<Order> = lines.transform(
        "ParseOrder",
        NodeKind::Operator,
        false,
        OperatorFactory::one_input::<(u64, String), Order>(move |_ctx, out| {
            Ok(Box::new(ParseOrder::new(skip_malformed, out)))
        }),
    );
    let per_minute = parsed
        .key_by(|o: &Order| o.user_id)
        .window(TumblingEventTimeWindows::of(Duration::from_millis(WINDOW_MS as u64)))
        .aggregate_with_process(CountAndSum, FormatWindow::default());
    match args.get("output") {
        Some("discard") => {
            per_minute.discard();
        }
        Some(dir) => {
            per_minute.write_as_text(dir);
        }
        None => {
            per_minute.print();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_to_cents_and_format_back() {
        assert_eq!(parse_cents("12.34"), Ok(1234));
        assert_eq!(parse_cents("12.3"), Ok(1230));
        assert_eq!(parse_cents("12"), Ok(1200));
        assert_eq!(parse_cents("-0.05"), Ok(-5));
        assert!(parse_cents("1.234").is_err());
        assert!(parse_cents("1e3").is_err());
        assert!(parse_cents("").is_err());
        assert!(parse_cents(".5").is_err());
        assert_eq!(format_cents(1234), "12.34");
        assert_eq!(format_cents(-5), "-0.05");
        assert_eq!(format_cents(0), "0.00");
    }

    #[test]
    fn generated_lines_are_the_comma_separated_fields_drawn_for_the_order() {
        let cfg = GeneratorConfig {
            users: 10_000,
            bound_ms: 5_000,
            late_fraction: 0.0,
        };
        for i in [0u64, 1, 99, 123_456, 4_999_999] {
            let mut rng = Rng::for_index(42, i);
            let user = rng.next_below(10_000);
            let cents = 1 + rng.next_below(100_000);
            let ts = START_MS + i as i64 * STEP_MS - rng.next_below(5_001) as i64;
            let expected = format!("{},{user},{}.{:02},{ts}", i + 1, cents / 100, cents % 100);
            assert_eq!(generate_line(&cfg, i, &mut Rng::for_index(42, i)), expected);
        }
        let mut s = String::from("x=");
        push_cents(&mut s, -100_007);
        assert_eq!(s, "x=-1000.07");
        assert_eq!(format_cents(i64::MIN), "-92233720368547758.08");
    }

    #[test]
    fn a_line_parses_into_an_order_and_its_last_field_is_the_timestamp() {
        let line = "7, 3, 9.99, 1700000000123";
        assert_eq!(
            parse_order(line),
            Ok(Order {
                order_id: 7,
                user_id: 3,
                amount_cents: 999,
                ts_millis: 1_700_000_000_123
            })
        );
        assert_eq!(line_timestamp(line), 1_700_000_000_123);
        assert_eq!(line_timestamp("garbage"), i64::MIN);
        assert!(parse_order("1,2,3").unwrap_err().contains("expected 4 fields"));
        assert!(parse_order("1,x,3,4").unwrap_err().contains("user_id 'x'"));
    }

    #[test]
    fn a_huge_malformed_field_is_quoted_in_part_with_its_length() {
        let huge = "9".repeat(5_000_000);
        let err = parse_order(&format!("1,2,3.00,{huge}x")).unwrap_err();
        assert!(err.len() < 300, "{} bytes of error", err.len());
        assert!(
            err.contains("ts_millis '999") && err.contains("(5000001 bytes; first 120 characters shown)"),
            "{err}"
        );
    }

    #[test]
    fn generated_on_time_orders_stay_within_the_bound_of_their_slot_and_late_ones_fall_far_behind() {
        let cfg = GeneratorConfig {
            users: 10,
            bound_ms: 5_000,
            late_fraction: 0.2,
        };
        let (mut late, mut on_time) = (0, 0);
        for i in 0..2_000u64 {
            let o = parse_order(&generate_line(&cfg, i, &mut Rng::for_index(1, i))).unwrap();
            let slot = START_MS + i as i64 * STEP_MS;
            assert_eq!(o.order_id, i + 1);
            assert!(o.user_id < 10);
            if o.ts_millis >= slot - 5_000 {
                assert!(o.ts_millis <= slot);
                on_time += 1;
            } else {
                assert!(o.ts_millis <= slot - 5_000 - LATE_MIN_MS);
                late += 1;
            }
        }
        assert!(late > 300 && on_time > 1_400, "{late} late, {on_time} on time");
    }
}
