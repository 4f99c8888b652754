//! The Nexmark queries as built-in programs `nexmark-q0` … `nexmark-q22`, each following
//! its definition in the suite (`nexmark-flink/src/main/resources/queries/qN.sql`):
//! same windows, filters and output columns, one CSV line per output row (timestamps
//! as epoch milliseconds, `0.908 * price` with three fractional digits).
//!
//! Every program takes `events` (default 100000), `seed` (default 42), `rate` (events
//! per second of event time, default 10000) and `output` (`discard`, a directory for
//! part files, or by default stdout); q13 also takes `side-input` (a `key,value` file;
//! by default the suite's 10,000 rows `i,i`, made in memory).
//!
//! Queries whose Flink SQL result is an updating table are written append-only so that
//! a run's output is a fixed set of lines:
//! - q3, q20 (regular inner joins of insert-only inputs): Flink's result is insert-only
//!   too; a row goes out as soon as both sides are there. Same as Flink.
//! - q4 (stage one), q9: the winning bid of an auction is final once the watermark
//!   passes the auction's `expires` (later bids cannot join); it goes out then, which
//!   is Flink's last row per auction.
//! - q6 (a moving average over each seller's winners in winning-bid time): a winner's
//!   window is final only when the input ends, and its rows go out then (see
//!   [`seller_prices`]; Flink SQL does not support the query).
//! - q4 (the average per category), q15, q16, q17 (unbounded group aggregations),
//!   q18 (deduplication), q19 (top 10): Flink emits a changelog of updates per key; here
//!   the final row per key goes out when the input ends (an event-time timer at the
//!   end of time, fired by the final watermark). On an unbounded input these would
//!   never emit: the departure from Flink SQL.
//! - q12 (processing-time windows): a window's count goes out at its end in
//!   processing time, and windows still open when the input ends are emitted then
//!   (Flink drops pending processing-time timers at the end of input).
//!
//! Ties in orderings Flink leaves arbitrary (q9's and q19's price order, q18's time
//! order) are broken by the remaining bid fields, so results are deterministic.

pub mod aggregates;
pub mod at_end;
pub mod joins;
pub mod lookup_join;
pub mod ranking;
pub mod seller_prices;
pub mod simple;
pub mod windows;
pub mod winning_bids;

use crate::config::NexmarkConfig;
use crate::model::{Auction, Bid, Event, Person};
use crate::side_input::{SideInput, SUITE_ROWS};
use crate::source;
use std::path::Path;
use std::sync::Arc;
use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The queries this crate implements, in suite order.
pub const QUERIES: &[&str] = &[
    "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q14", "q15", "q16", "q17",
    "q18", "q19", "q20", "q21", "q22",
];

/// The program arguments of every query.
pub const ARGS: &[ArgSpec] = &[
    ArgSpec {
        name: "events",
        help: "number of generated events (default 100000)",
    },
    ArgSpec {
        name: "seed",
        help: "generator seed (default 42)",
    },
    ArgSpec {
        name: "rate",
        help: "events per second of event time (Nexmark's first-event.rate, default 10000)",
    },
    ArgSpec {
        name: "output",
        help: "directory for CSV part files; `discard` drops the results (default: print)",
    },
];

/// The program arguments of q13: those of every query and the side input.
pub const Q13_ARGS: &[ArgSpec] = &[
    ARGS[0],
    ARGS[1],
    ARGS[2],
    ARGS[3],
    ArgSpec {
        name: "side-input",
        help: "q13's side input, a file of `key,value` lines (default: the suite's 10000 rows `i,i`)",
    },
];

/// The arguments query `name` accepts.
fn args_of(name: &str) -> &'static [ArgSpec] {
    if name == "q13" {
        Q13_ARGS
    } else {
        ARGS
    }
}

/// q13's side input, per the program's arguments.
pub fn side_input(args: &ProgramArgs) -> Result<Arc<SideInput>, ProgramError> {
    let table = match args.get("side-input") {
        None => SideInput::generated(SUITE_ROWS),
        Some(path) => SideInput::load(Path::new(path)).map_err(|e| ProgramError::InvalidValue {
            key: "side-input".into(),
            value: path.to_string(),
            reason: e.to_string(),
        })?,
    };
    Ok(Arc::new(table))
}

/// The events a query reads, per the program's arguments.
pub fn input(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<DataStream<Event>, ProgramError> {
    let count = args.get_u64("events", 100_000)?;
    let seed = args.get_u64("seed", 42)?;
    let rate = args.get_u64("rate", 10_000)?;
    if rate == 0 {
        return Err(ProgramError::InvalidValue {
            key: "rate".into(),
            value: "0".into(),
            reason: "expected at least 1 event per second".into(),
        });
    }
    let cfg = NexmarkConfig {
        first_event_rate: rate,
        ..NexmarkConfig::default()
    };
    Ok(source::events(env, &cfg, count, seed))
}

/// The bids of `events`.
pub fn bids(events: &DataStream<Event>) -> DataStream<Bid> {
    events.flat_map(Event::into_bid)
}

/// The auctions of `events`.
pub fn auctions(events: &DataStream<Event>) -> DataStream<Auction> {
    events.flat_map(Event::into_auction)
}

/// The people of `events`.
pub fn persons(events: &DataStream<Event>) -> DataStream<Person> {
    events.flat_map(Event::into_person)
}

/// Sends result lines to stdout, part files under `output=DIR`, or nowhere (`discard`).
pub fn sink(lines: &DataStream<String>, args: &ProgramArgs) {
    match args.get("output") {
        Some("discard") => {
            lines.discard();
        }
        Some(dir) => {
            lines.write_as_text(dir);
        }
        None => {
            lines.print();
        }
    }
}

/// The result lines of query `name` over `events`.
fn query(name: &str, events: &DataStream<Event>) -> DataStream<String> {
    match name {
        "q0" => simple::q0(events),
        "q1" => simple::q1(events),
        "q2" => simple::q2(events),
        "q3" => joins::q3(events),
        "q4" => winning_bids::q4(events),
        "q5" => windows::q5(events),
        "q6" => seller_prices::q6(events),
        "q7" => windows::q7(events),
        "q8" => joins::q8(events),
        "q9" => winning_bids::q9(events),
        "q10" => simple::q10(events),
        "q11" => windows::q11(events),
        "q12" => windows::q12(events),
        "q14" => simple::q14(events),
        "q15" => aggregates::q15(events),
        "q16" => aggregates::q16(events),
        "q17" => aggregates::q17(events),
        "q18" => ranking::q18(events),
        "q19" => ranking::q19(events),
        "q20" => joins::q20(events),
        "q21" => simple::q21(events),
        _ => simple::q22(events),
    }
}

fn build(name: &str, env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let events = input(env, args)?;
    let lines = if name == "q13" {
        lookup_join::q13(&events, side_input(args)?)
    } else {
        query(name, &events)
    };
    sink(&lines, args);
    Ok(())
}

macro_rules! programs {
    ($($q:ident: $desc:literal),* $(,)?) => {
        /// The query programs.
        pub fn programs() -> Vec<Program> {
            vec![$({
                fn build_query(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
                    build(stringify!($q), env, args)
                }
                Program {
                    name: concat!("nexmark-", stringify!($q)),
                    description: $desc,
                    args: args_of(stringify!($q)),
                    build: build_query,
                }
            }),*]
        }
    };
}

programs! {
    q0: "Nexmark q0: pass-through of bids",
    q1: "Nexmark q1: bid prices in euros",
    q2: "Nexmark q2: bids on every 123rd auction",
    q3: "Nexmark q3: sellers in OR/ID/CA of category-10 auctions (person-auction join)",
    q4: "Nexmark q4: average winning price per category",
    q5: "Nexmark q5: hot items, most bids in 10 s sliding windows every 2 s",
    q6: "Nexmark q6: average selling price per seller over their last 10 closed auctions",
    q7: "Nexmark q7: highest bids per 10 s tumbling window",
    q8: "Nexmark q8: new people who opened auctions in the same 10 s window",
    q9: "Nexmark q9: winning bid of each auction",
    q10: "Nexmark q10: bids with yyyy-MM-dd and HH:mm partition columns",
    q11: "Nexmark q11: bids per bidder session (10 s gap)",
    q12: "Nexmark q12: bids per bidder per 10 s processing-time window",
    q13: "Nexmark q13: bids joined with a bounded side input on MOD(auction, 10000)",
    q14: "Nexmark q14: bids priced 1M-50M euros with time-of-day class and 'c' count",
    q15: "Nexmark q15: daily bidding statistics with distinct counts",
    q16: "Nexmark q16: daily bidding statistics per channel",
    q17: "Nexmark q17: daily statistics per auction",
    q18: "Nexmark q18: last bid per bidder and auction",
    q19: "Nexmark q19: top 10 bids per auction",
    q20: "Nexmark q20: bids joined with their category-10 auctions",
    q21: "Nexmark q21: bids with their channel id (hot channel or URL parameter)",
    q22: "Nexmark q22: URL directories of bids",
}

/// Registers every query program in `registry`.
pub fn register(registry: &mut ProgramRegistry) {
    for p in programs() {
        registry.register(p);
    }
}
