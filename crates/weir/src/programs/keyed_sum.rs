//! `keyed-sum`: a sum per key in keyed ValueState, printed once per key at the end.
//!
//! A seeded generator of `records` (key, value) pairs over `keys` keys → key_by(key)
//! → per-key sum in `ValueState`; on the first record of a key an event-time timer at
//! the MAX watermark is registered, so when the bounded input ends (and the MAX
//! watermark arrives) one `key,sum` line per key is emitted.
//!
//! `--arg fail-once-after=N` makes every Sum subtask of the first execution attempt
//! fail after its N-th record (decided by the attempt number of its `TaskInfo`), so that
//! tests can watch a restart strategy restart the job; later attempts run undisturbed.
//!
//! `--arg work_us=N` makes Sum spend N µs of CPU per record: a slow operator that
//! backpressures the generator (for tests and measurements of checkpoints under
//! backpressure).

use super::{sink_lines, OUTPUT_ARG};
use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The program.
pub fn program() -> Program {
    Program {
        name: "keyed-sum",
        description: "sums generated (key, value) records per key; prints key,sum per key at the end",
        args: &[
            ArgSpec {
                name: "keys",
                help: "number of distinct keys (default 100)",
            },
            ArgSpec {
                name: "records",
                help: "number of records (default 100000)",
            },
            ArgSpec {
                name: "seed",
                help: "generator seed (default 42)",
            },
            ArgSpec {
                name: "rate_per_sec",
                help: "throttle the generator to this many records/s (default: unthrottled)",
            },
            ArgSpec {
                name: WORK_US,
                help: "spend this many microseconds of CPU per record in Sum, a slow operator (default 0)",
            },
            ArgSpec {
                name: SUM_PARALLELISM,
                help: "set Sum's parallelism explicitly (default: the job's, decided by the adaptive batch scheduler in BATCH)",
            },
            ArgSpec {
                name: FAIL_ONCE_AFTER,
                help: "fail each Sum subtask of the first execution attempt after this many records (default: never)",
            },
            OUTPUT_ARG,
        ],
        build,
    }
}

/// Record `index` of the generator: a key below `keys` and a value below 1000.
pub fn generate(keys: u64) -> impl Fn(u64, &mut Rng) -> (u64, u64) + Send + Sync + Clone + 'static {
    move |_i, rng| (rng.next_below(keys), rng.next_below(1000))
}

/// The `keys` argument (default `default`), at least 1.
pub fn keys_arg(args: &ProgramArgs, default: u64) -> Result<u64, ProgramError> {
    match args.get_u64("keys", default)? {
        0 => Err(ProgramError::InvalidValue {
            key: "keys".into(),
            value: "0".into(),
            reason: "expected at least 1".into(),
        }),
        keys => Ok(keys),
    }
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let keys = keys_arg(args, 100)?;
    let records = args.get_u64("records", 100_000)?;
    let seed = args.get_u64("seed", 42)?;
    let rate = args.get_f64("rate_per_sec", 0.0)?;
    let work = std::time::Duration::from_micros(args.get_u64(WORK_US, 0)?);
    let fail_once_after = match args.get(FAIL_ONCE_AFTER) {
        Some(_) => Some(args.get_u64(FAIL_ONCE_AFTER, 0)?),
        None => None,
    };
    let mut summed = env
        .from_generator_with_rate(records, seed, rate, generate(keys))
        .key_by(|r: &(u64, u64)| r.0)
        .process(SumAtEnd::new(fail_once_after).with_work(work))
        .name("Sum");
    if args.get(SUM_PARALLELISM).is_some() {
        let p = args.get_u64(SUM_PARALLELISM, 1)?;
        let p = u32::try_from(p).map_err(|_| ProgramError::InvalidValue {
            key: SUM_PARALLELISM.into(),
            value: p.to_string(),
            reason: "expected a parallelism up to 32768".into(),
        })?;
        summed = summed.set_parallelism(p);
    }
    let sums = summed.map(|(k, s): (u64, u64)| format!("{k},{s}"));
    sink_lines(&sums, args);
    Ok(())
}

/// The argument that makes the first execution attempt fail.
pub const FAIL_ONCE_AFTER: &str = "fail-once-after";

/// The argument that sets Sum's parallelism explicitly.
pub const SUM_PARALLELISM: &str = "sum-parallelism";

/// The argument that makes Sum slow: microseconds of CPU per record.
pub const WORK_US: &str = "work_us";

/// Sums values per key; emits `(key, sum)` when the watermark passes the end of input.
#[derive(Clone, Default)]
pub struct SumAtEnd {
    fail_once_after: Option<u64>,
    seen: u64,
    work: std::time::Duration,
}

impl SumAtEnd {
    /// A summing function; with `fail_once_after = Some(n)`, attempt 0 of each subtask
    /// fails on its record number `n + 1`.
    pub fn new(fail_once_after: Option<u64>) -> Self {
        Self {
            fail_once_after,
            seen: 0,
            work: std::time::Duration::ZERO,
        }
    }

    /// The same function spending `work` of CPU per record (busy-waiting).
    pub fn with_work(self, work: std::time::Duration) -> Self {
        Self { work, ..self }
    }
}

/// The failure `fail-once-after` injects.
#[derive(Debug, thiserror::Error)]
#[error("injected failure of {task} after {records} records (fail-once-after, attempt {attempt})")]
pub struct InjectedFailure {
    /// `name (i/n)` of the failing subtask.
    pub task: String,
    /// Records it had processed.
    pub records: u64,
    /// Its execution attempt.
    pub attempt: u32,
}

const SUM: &str = "sum";

impl KeyedProcessFunction<u64, (u64, u64), (u64, u64)> for SumAtEnd {
    fn process_element(
        &mut self,
        (_, value): (u64, u64),
        ctx: &mut KeyedContext<'_, u64>,
        _out: &mut Collector<'_, (u64, u64)>,
    ) -> Result<(), UserError> {
        if let Some(limit) = self.fail_once_after {
            let info = ctx.task_info();
            if info.attempt_number == 0 && self.seen >= limit {
                return Err(Box::new(InjectedFailure {
                    task: format!("{} ({}/{})", info.task_name, info.subtask_index + 1, info.parallelism),
                    records: self.seen,
                    attempt: info.attempt_number,
                }));
            }
        }
        self.seen += 1;
        if !self.work.is_zero() {
            let until = std::time::Instant::now() + self.work;
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        let mut sum = ctx.value_state(&ValueStateDescriptor::<u64>::new(SUM))?;
        let first = sum.value_ref().is_none();
        let s = sum.value().unwrap_or(0) + value;
        sum.update(s);
        if first {
            ctx.register_event_time_timer(i64::MAX)?;
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _ts: i64,
        ctx: &mut KeyedContext<'_, u64>,
        out: &mut Collector<'_, (u64, u64)>,
    ) -> Result<(), UserError> {
        let key = ctx.current_key().copied().unwrap_or_default();
        let sum = ctx
            .value_state(&ValueStateDescriptor::<u64>::new(SUM))?
            .value()
            .unwrap_or(0);
        out.collect((key, sum));
        Ok(())
    }
}
