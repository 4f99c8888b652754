//! `broadcast-rules`: operator state and the broadcast state pattern.
//!
//! Generated events `(key, value)` are numbered per subtask by a non-keyed
//! `ProcessFunction` whose running count lives in operator list state. A second
//! generator (parallelism 1) sends each of `rules` rules `(rule, factor)` once, then
//! keep-alive records that change nothing (at 1/50 of the event rate, so that it runs
//! as long as the events: checkpoints stop once a source finishes). It is broadcast
//! with a map state of the rules, and a `BroadcastProcessFunction` multiplies each
//! event's value by the factor of rule `key % rules`; rules lost by a restore would
//! never come again. An event whose rule has not
//! arrived yet waits in operator list state until it does, so the result does not
//! depend on how the two inputs interleave. Per event it emits the product (under the
//! key) and the event's sequence number (under its subtask); a keyed function totals
//! both and, when the input ends, prints `key,<key>,count,sum,max` and
//! `subtask,<index>,count,sum,max` lines. A subtask's line reads `n,n(n+1)/2,n` exactly
//! when its numbering lost and repeated nothing.

use super::keyed_sum::generate;
use super::{sink_lines, OUTPUT_ARG};
use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The program.
pub fn program() -> Program {
    Program {
        name: "broadcast-rules",
        description:
            "numbers events per subtask in operator state, scales them by broadcast rules; prints totals at the end",
        args: &[
            ArgSpec {
                name: "keys",
                help: "number of distinct keys (default 100)",
            },
            ArgSpec {
                name: "records",
                help: "number of events (default 100000)",
            },
            ArgSpec {
                name: "rules",
                help: "number of rules; event key k uses rule k % rules (default 7)",
            },
            ArgSpec {
                name: "seed",
                help: "generator seed (default 42)",
            },
            ArgSpec {
                name: "rate_per_sec",
                help:
                    "throttle the events to this many records/s, the rule updates to 1/50 of it (default: unthrottled)",
            },
            OUTPUT_ARG,
        ],
        build,
    }
}

/// The factor of rule `rule`.
pub fn factor(rule: u64) -> u64 {
    rule + 2
}

/// A record of the rules source that is not a rule.
pub const KEEP_ALIVE: (u64, u64) = (u64::MAX, 0);

/// The broadcast state of the rules: rule → factor.
pub fn rules_state() -> MapStateDescriptor<u64, u64> {
    MapStateDescriptor::new("rules")
}

fn positive(args: &ProgramArgs, key: &str, default: u64) -> Result<u64, ProgramError> {
    match args.get_u64(key, default)? {
        0 => Err(ProgramError::InvalidValue {
            key: key.into(),
            value: "0".into(),
            reason: "expected at least 1".into(),
        }),
        n => Ok(n),
    }
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let keys = positive(args, "keys", 100)?;
    let records = args.get_u64("records", 100_000)?;
    let rules = positive(args, "rules", 7)?;
    let seed = args.get_u64("seed", 42)?;
    let rate = args.get_f64("rate_per_sec", 0.0)?;
    let updates = rules.max(records / 50);
    let rule_stream = env
        .from_generator_with_rate(updates, seed, rate / 50.0, move |i, _| {
            if i < rules {
                (i, factor(i))
            } else {
                KEEP_ALIVE
            }
        })
        .set_parallelism(1)
        .name("Rules")
        .broadcast_state(&rules_state());
    let lines = env
        .from_generator_with_rate(records, seed, rate, generate(keys))
        .name("Events")
        .process(NumberPerSubtask::default())
        .name("Number")
        .uid("number")
        .connect_broadcast(&rule_stream)
        .process(ApplyRules { rules })
        .name("Apply rules")
        .uid("apply-rules")
        .key_by(|t: &(u8, u64, u64)| (t.0, t.1))
        .process(TotalAtEnd)
        .name("Totals")
        .uid("totals")
        .map(|(kind, id, count, sum, max): (u8, u64, u64, u64, u64)| {
            let kind = if kind == KEY { "key" } else { "subtask" };
            format!("{kind},{id},{count},{sum},{max}")
        });
    sink_lines(&lines, args);
    Ok(())
}

/// An event `(key, value)` numbered `(…, subtask, sequence number from 1)`.
pub type Numbered = (u64, u64, u64, u64);

/// Numbers the events of its subtask from 1: the count is kept in a field and written
/// into list state at every checkpoint (Flink's `CheckpointedFunction` pattern).
#[derive(Clone, Default)]
pub struct NumberPerSubtask {
    count: u64,
}

fn count_state() -> ListStateDescriptor<u64> {
    ListStateDescriptor::new("count")
}

impl ProcessFunction<(u64, u64), Numbered> for NumberPerSubtask {
    fn initialize_state(&mut self, store: &mut OperatorStateStore) -> Result<(), UserError> {
        self.count = store.list_state(&count_state())?.iter().sum();
        Ok(())
    }

    fn process_element(
        &mut self,
        (key, value): (u64, u64),
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, Numbered>,
    ) -> Result<(), UserError> {
        self.count += 1;
        out.collect((key, value, u64::from(ctx.subtask_index()), self.count));
        Ok(())
    }

    fn snapshot_state(&mut self, _checkpoint_id: u64, store: &mut OperatorStateStore) -> Result<(), UserError> {
        store.list_state(&count_state())?.update(vec![self.count]);
        Ok(())
    }
}

/// Output kind: a product under its key.
const KEY: u8 = 0;
/// Output kind: a sequence number under its subtask.
const SUBTASK: u8 = 1;

/// Scales each event by its rule's factor; events wait in list state for their rule.
#[derive(Clone)]
pub struct ApplyRules {
    rules: u64,
}

fn waiting_state() -> ListStateDescriptor<Numbered> {
    ListStateDescriptor::new("waiting")
}

fn emit((key, value, subtask, seq): Numbered, factor: u64, out: &mut Collector<'_, (u8, u64, u64)>) {
    out.collect((KEY, key, value * factor));
    out.collect((SUBTASK, subtask, seq));
}

impl BroadcastProcessFunction<Numbered, (u64, u64), (u8, u64, u64)> for ApplyRules {
    fn process_element(
        &mut self,
        event: Numbered,
        ctx: &mut ReadOnlyContext<'_, '_>,
        out: &mut Collector<'_, (u8, u64, u64)>,
    ) -> Result<(), UserError> {
        let rule = event.0 % self.rules;
        match ctx.broadcast_state(&rules_state())?.get(&rule).copied() {
            Some(f) => emit(event, f, out),
            None => ctx.list_state(&waiting_state())?.add(event),
        }
        Ok(())
    }

    fn process_broadcast_element(
        &mut self,
        (rule, factor): (u64, u64),
        ctx: &mut BroadcastContext<'_>,
        out: &mut Collector<'_, (u8, u64, u64)>,
    ) -> Result<(), UserError> {
        if (rule, factor) == KEEP_ALIVE {
            return Ok(());
        }
        ctx.broadcast_state(&rules_state())?.put(rule, factor);
        let mut waiting = ctx.list_state(&waiting_state())?;
        if waiting.is_empty() {
            return Ok(());
        }
        let rules = self.rules;
        let (ready, still): (Vec<Numbered>, Vec<Numbered>) =
            waiting.take().into_iter().partition(|e| e.0 % rules == rule);
        waiting.update(still);
        for event in ready {
            emit(event, factor, out);
        }
        Ok(())
    }
}

/// Count, sum and maximum per `(kind, id)`, emitted when the input ends.
#[derive(Clone)]
pub struct TotalAtEnd;

type Totals = (u8, u64, u64, u64, u64);

fn totals_state() -> ValueStateDescriptor<(u64, u64, u64)> {
    ValueStateDescriptor::new("totals")
}

impl KeyedProcessFunction<(u8, u64), (u8, u64, u64), Totals> for TotalAtEnd {
    fn process_element(
        &mut self,
        (_, _, v): (u8, u64, u64),
        ctx: &mut KeyedContext<'_, (u8, u64)>,
        _out: &mut Collector<'_, Totals>,
    ) -> Result<(), UserError> {
        let mut totals = ctx.value_state(&totals_state())?;
        let first = totals.value_ref().is_none();
        let (n, sum, max) = totals.value().unwrap_or((0, 0, 0));
        totals.update((n + 1, sum + v, max.max(v)));
        if first {
            ctx.register_event_time_timer(i64::MAX)?;
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _ts: i64,
        ctx: &mut KeyedContext<'_, (u8, u64)>,
        out: &mut Collector<'_, Totals>,
    ) -> Result<(), UserError> {
        let (kind, id) = ctx.current_key().copied().ok_or("timer without a key")?;
        let (n, sum, max) = ctx.value_state(&totals_state())?.value().unwrap_or((0, 0, 0));
        out.collect((kind, id, n, sum, max));
        Ok(())
    }
}
