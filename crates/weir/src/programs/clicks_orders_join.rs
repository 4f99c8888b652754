//! `clicks-orders-join`: which clicks led to an order, with an interval join and a
//! window join of two generated event-time streams.
//!
//! ```text
//! clicks --hash(user)--+--> IntervalJoin(orders, clicks) between(-lookback, 0) --+
//! orders --hash(user)--+                                                          +--> sink
//!   clicks, orders --tag--> union --hash(user)--> tumbling window --> join -------+
//! ```
//!
//! Click `i` (from 0) has id `i + 1`, a user below `users` and the event time
//! `START_MS + i * CLICK_STEP_MS` minus a disorder of up to `bound_ms`; order `j` has id
//! `j + 1`, a user, an amount and the event time `START_MS + j * ORDER_STEP_MS` minus a
//! disorder (another seed). Both sources emit watermarks `bound_ms` behind their
//! largest timestamp, so no record is ever late and the output is the same at every
//! parallelism, with or without failovers.
//!
//! - The interval join pairs each order with the clicks of its user in the
//!   `lookback_ms` before it, bounds inclusive:
//!   `interval,order_id,click_id,user,order_ts,click_ts`.
//! - The window join pairs the orders and clicks of each user in each tumbling window
//!   of `window_ms`: `window,window_start,user,order_id,click_id`.
//!
//! `--arg fail-once-after=N` makes every interval-join subtask of the first execution
//! attempt fail after its N-th pair, so tests can watch a failover restore both joins'
//! state from a checkpoint.

use super::keyed_sum::{InjectedFailure, FAIL_ONCE_AFTER};
use super::{sink_lines, OUTPUT_ARG};
use std::sync::Arc;
use std::time::Duration;
use weir_api::prelude::*;
use weir_api::program::ArgSpec;
use weir_connectors::source::generator::GeneratorFn;
use weir_connectors::source::GeneratorSource;

/// Event time of the first click and the first order: 2023-11-14T22:13:20Z.
pub const START_MS: i64 = 1_700_000_000_000;
/// Event time between consecutive clicks.
pub const CLICK_STEP_MS: i64 = 10;
/// Event time between consecutive orders.
pub const ORDER_STEP_MS: i64 = 40;
/// Mixed into the seed for the orders, so that they do not mirror the clicks.
const ORDER_SEED_SALT: u64 = 0x6f72_6465_7273;

/// One click of a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Click {
    /// The click's id, from 1.
    pub click_id: u64,
    /// The user who clicked (the key).
    pub user: u64,
    /// Event time in epoch milliseconds.
    pub ts: i64,
}

/// One order of a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Order {
    /// The order's id, from 1.
    pub order_id: u64,
    /// The user who ordered (the key).
    pub user: u64,
    /// The amount in cents.
    pub amount_cents: u64,
    /// Event time in epoch milliseconds.
    pub ts: i64,
}

/// What the generators need to know.
#[derive(Debug, Clone, Copy)]
pub struct JoinInput {
    /// Distinct users.
    pub users: u64,
    /// The largest disorder of a record, in ms (also the watermark bound).
    pub bound_ms: u64,
    /// The generator seed.
    pub seed: u64,
}

impl JoinInput {
    /// Click `index`.
    pub fn click(&self, index: u64) -> Click {
        let mut rng = Rng::for_index(self.seed, index);
        let user = rng.next_below(self.users.max(1));
        let ts = START_MS + index as i64 * CLICK_STEP_MS - rng.next_below(self.bound_ms + 1) as i64;
        Click {
            click_id: index + 1,
            user,
            ts,
        }
    }

    /// Order `index`.
    pub fn order(&self, index: u64) -> Order {
        let mut rng = Rng::for_index(self.seed ^ ORDER_SEED_SALT, index);
        let user = rng.next_below(self.users.max(1));
        let amount_cents = 1 + rng.next_below(100_000);
        let ts = START_MS + index as i64 * ORDER_STEP_MS - rng.next_below(self.bound_ms + 1) as i64;
        Order {
            order_id: index + 1,
            user,
            amount_cents,
            ts,
        }
    }
}

/// The interval join's output line of `order` with `click`.
pub fn interval_line(order: &Order, click: &Click) -> String {
    format!(
        "interval,{},{},{},{},{}",
        order.order_id, click.click_id, order.user, order.ts, click.ts
    )
}

/// The window join's output line of `order` with `click` in the window starting at
/// `window_start`.
pub fn window_line(window_start: i64, order: &Order, click: &Click) -> String {
    format!(
        "window,{window_start},{},{},{}",
        order.user, order.order_id, click.click_id
    )
}

/// The program.
pub fn program() -> Program {
    Program {
        name: "clicks-orders-join",
        description: "generated clicks and orders per user: an interval join (clicks shortly before an order) and a tumbling window join",
        args: &[
            ArgSpec {
                name: "clicks",
                help: "number of generated clicks, one per 10 ms of event time (default 8000)",
            },
            ArgSpec {
                name: "orders",
                help: "number of generated orders, one per 40 ms of event time (default 2000)",
            },
            ArgSpec {
                name: "users",
                help: "distinct users (default 50)",
            },
            ArgSpec {
                name: "seed",
                help: "generator seed (default 42)",
            },
            ArgSpec {
                name: "bound_ms",
                help: "largest disorder of a record and bound of the watermarks in ms (default 500)",
            },
            ArgSpec {
                name: "lookback_ms",
                help: "the interval join pairs an order with the clicks this many ms before it (default 2000)",
            },
            ArgSpec {
                name: "window_ms",
                help: "size of the window join's tumbling windows in ms (default 5000)",
            },
            ArgSpec {
                name: "rate_per_sec",
                help: "throttle the clicks to this many per second of wall-clock time, the orders alike (default: unthrottled)",
            },
            ArgSpec {
                name: FAIL_ONCE_AFTER,
                help: "fail each interval-join subtask of the first execution attempt after this many pairs (default: never)",
            },
            OUTPUT_ARG,
        ],
        build,
    }
}

fn at_least_one(key: &str, value: u64) -> Result<u64, ProgramError> {
    if value == 0 {
        return Err(ProgramError::InvalidValue {
            key: key.into(),
            value: "0".into(),
            reason: "expected at least 1".into(),
        });
    }
    Ok(value)
}

/// A generated stream of `count` records with event times `bound_ms` out of order.
fn generated<T: weir_runtime::operator::factory::Data>(
    env: &StreamExecutionEnvironment,
    name: &str,
    count: u64,
    rate: f64,
    bound_ms: u64,
    make: impl Fn(u64) -> T + Send + Sync + 'static,
    timestamp: impl Fn(&T) -> i64 + Send + Sync + 'static,
) -> DataStream<T> {
    let f: GeneratorFn<T> = Arc::new(move |i, _rng: &mut Rng| make(i));
    let strategy = WatermarkStrategy::for_bounded_out_of_orderness(Duration::from_millis(bound_ms))
        .with_timestamp_assigner(move |r: &T, _| timestamp(r));
    env.from_source(
        move |ctx| {
            Ok(Box::new(
                GeneratorSource::new(count, 0, f.clone(), ctx.subtask_index, ctx.parallelism).with_rate(rate),
            ))
        },
        strategy,
        name,
    )
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let clicks = args.get_u64("clicks", 8_000)?;
    let orders = args.get_u64("orders", 2_000)?;
    let input = JoinInput {
        users: at_least_one("users", args.get_u64("users", 50)?)?,
        bound_ms: args.get_u64("bound_ms", 500)?,
        seed: args.get_u64("seed", 42)?,
    };
    let lookback = args.get_u64("lookback_ms", 2_000)? as i64;
    let window_ms = at_least_one("window_ms", args.get_u64("window_ms", 5_000)?)?;
    let rate = args.get_f64("rate_per_sec", 0.0)?;
    let fail_once_after = match args.get(FAIL_ONCE_AFTER) {
        Some(_) => Some(args.get_u64(FAIL_ONCE_AFTER, 0)?),
        None => None,
    };
    let order_rate = rate * CLICK_STEP_MS as f64 / ORDER_STEP_MS as f64;
    let click_stream = generated(
        env,
        "clicks",
        clicks,
        rate,
        input.bound_ms,
        move |i| input.click(i),
        |c: &Click| c.ts,
    );
    let order_stream = generated(
        env,
        "orders",
        orders,
        order_rate,
        input.bound_ms,
        move |i| input.order(i),
        |o: &Order| o.ts,
    );

    let interval = order_stream
        .key_by(|o: &Order| o.user)
        .interval_join(&click_stream.key_by(|c: &Click| c.user))
        .between(-lookback, 0)
        .process(PairLines::new(fail_once_after))
        .name("Clicks before orders");
    let windowed = order_stream
        .join(&click_stream)
        .where_(|o: &Order| o.user)
        .equal_to(|c: &Click| c.user)
        .window(TumblingEventTimeWindows::of(Duration::from_millis(window_ms)))
        .apply(move |o: Order, c: Click| window_line(o.ts.div_euclid(window_ms as i64) * window_ms as i64, &o, &c))
        .name("Clicks and orders per window");
    sink_lines(&interval.union(&[windowed]), args);
    Ok(())
}

/// Formats each pair of the interval join; with `fail_once_after = Some(n)`, attempt 0
/// of each subtask fails on its pair number `n + 1`.
#[derive(Clone)]
pub struct PairLines {
    fail_once_after: Option<u64>,
    pairs: u64,
}

impl PairLines {
    /// The function, failing as `fail_once_after` says.
    pub fn new(fail_once_after: Option<u64>) -> Self {
        Self {
            fail_once_after,
            pairs: 0,
        }
    }
}

impl ProcessJoinFunction<Order, Click, String> for PairLines {
    fn process_element(
        &mut self,
        order: Order,
        click: Click,
        ctx: &ProcessJoinContext<'_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let info = ctx.task_info();
        if self.fail_once_after.is_some_and(|n| self.pairs >= n) && info.attempt_number == 0 {
            return Err(Box::new(InjectedFailure {
                task: format!("{} ({}/{})", info.task_name, info.subtask_index + 1, info.parallelism),
                records: self.pairs,
                attempt: info.attempt_number,
            }));
        }
        self.pairs += 1;
        out.collect(interval_line(&order, &click));
        Ok(())
    }
}
