//! `enrich`: a two-input job. Generated orders `(user, amount)` are connected with
//! generated user profiles `(user, tier)`; both are keyed by user, and a
//! `KeyedCoProcessFunction` keeps the user's tier and order total in keyed state. When
//! both inputs end (the MAX watermark of the slower input), it emits one
//! `user,tier,orders,total` line per user.

use super::{sink_lines, OUTPUT_ARG};
use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The program.
pub fn program() -> Program {
    Program {
        name: "enrich",
        description: "connects orders with user profiles by user; prints user,tier,orders,total per user at the end",
        args: &[
            ArgSpec {
                name: "users",
                help: "number of users (default 50)",
            },
            ArgSpec {
                name: "orders",
                help: "number of orders (default 100000)",
            },
            ArgSpec {
                name: "seed",
                help: "generator seed (default 42)",
            },
            OUTPUT_ARG,
        ],
        build,
    }
}

/// Order `i`: a user below `users` and an amount below 100.
pub fn order(users: u64) -> impl Fn(u64, &mut Rng) -> (u64, u64) + Send + Sync + Clone + 'static {
    move |_i, rng| (rng.next_below(users), rng.next_below(100))
}

/// Profile of user `i`: its tier, 0–2.
pub fn profile(i: u64, rng: &mut Rng) -> (u64, u64) {
    (i, rng.next_below(3))
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let users = args.get_u64("users", 50)?;
    let orders = args.get_u64("orders", 100_000)?;
    let seed = args.get_u64("seed", 42)?;
    if users == 0 {
        return Err(ProgramError::InvalidValue {
            key: "users".into(),
            value: "0".into(),
            reason: "expected at least 1".into(),
        });
    }
    let order_stream = env.from_generator(orders, seed, order(users));
    let profiles = env.from_generator(users, seed ^ 0x5eed, profile);
    let lines = order_stream
        .connect(&profiles)
        .key_by(|o: &(u64, u64)| o.0, |p: &(u64, u64)| p.0)
        .process(Enrich)
        .name("Enrich")
        .map(|(u, tier, n, total): (u64, u64, u64, u64)| format!("{u},{tier},{n},{total}"));
    sink_lines(&lines, args);
    Ok(())
}

/// Keeps per user: tier (from profiles), order count and total (from orders).
#[derive(Clone)]
pub struct Enrich;

fn register_end_timer(ctx: &mut KeyedContext<'_, u64>) -> Result<(), UserError> {
    ctx.register_event_time_timer(i64::MAX)?;
    Ok(())
}

impl KeyedCoProcessFunction<u64, (u64, u64), (u64, u64), (u64, u64, u64, u64)> for Enrich {
    fn process_element1(
        &mut self,
        (_, amount): (u64, u64),
        ctx: &mut KeyedContext<'_, u64>,
        _out: &mut Collector<'_, (u64, u64, u64, u64)>,
    ) -> Result<(), UserError> {
        let mut totals = ctx.value_state(&ValueStateDescriptor::<(u64, u64)>::new("totals"))?;
        let (n, sum) = totals.value().unwrap_or((0, 0));
        totals.update((n + 1, sum + amount));
        register_end_timer(ctx)
    }

    fn process_element2(
        &mut self,
        (_, tier): (u64, u64),
        ctx: &mut KeyedContext<'_, u64>,
        _out: &mut Collector<'_, (u64, u64, u64, u64)>,
    ) -> Result<(), UserError> {
        ctx.value_state(&ValueStateDescriptor::<u64>::new("tier"))?.update(tier);
        register_end_timer(ctx)
    }

    fn on_timer(
        &mut self,
        _ts: i64,
        ctx: &mut KeyedContext<'_, u64>,
        out: &mut Collector<'_, (u64, u64, u64, u64)>,
    ) -> Result<(), UserError> {
        let user = ctx.current_key().copied().unwrap_or_default();
        let tier = ctx
            .value_state(&ValueStateDescriptor::<u64>::new("tier"))?
            .value()
            .unwrap_or(u64::MAX);
        let (n, total) = ctx
            .value_state(&ValueStateDescriptor::<(u64, u64)>::new("totals"))?
            .value()
            .unwrap_or((0, 0));
        out.collect((user, tier, n, total));
        Ok(())
    }
}
