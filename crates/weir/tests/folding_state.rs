//! ReducingState and AggregatingState in a `KeyedProcessFunction` on the MiniCluster
//! (the JobMaster and TaskExecutors of a cluster): exact per-key sums, counts and
//! averages at parallelism 2, also when every subtask fails once mid-stream and the
//! job restarts from its last checkpoint.

use std::collections::BTreeMap;
use weir::prelude::*;

/// Records per run: `(key, value)` = `(i % KEYS, i)`.
const RECORDS: u64 = 4_000;
const KEYS: u64 = 10;

/// The mean of the added values.
#[derive(Clone)]
struct Mean;

impl AggregateFunction<u64, (u64, u64), f64> for Mean {
    fn create_accumulator(&self) -> (u64, u64) {
        (0, 0)
    }
    fn add(&self, value: u64, acc: &mut (u64, u64)) {
        *acc = (acc.0 + value, acc.1 + 1);
    }
    fn get_result(&self, acc: &(u64, u64)) -> f64 {
        acc.0 as f64 / acc.1 as f64
    }
    fn merge(&self, a: (u64, u64), b: (u64, u64)) -> (u64, u64) {
        (a.0 + b.0, a.1 + b.1)
    }
}

/// Per record: the key, the running sum (reducing state), the running count and mean
/// (aggregating state). Fails its first attempt after `fail_after` records, if set.
#[derive(Clone)]
struct RunningTotals {
    fail_after: Option<u64>,
    seen: u64,
    sum: ReducingStateDescriptor<u64>,
    mean: AggregatingStateDescriptor<u64, (u64, u64), f64>,
    count: ReducingStateDescriptor<u64>,
}

impl RunningTotals {
    fn new(fail_after: Option<u64>) -> Self {
        RunningTotals {
            fail_after,
            seen: 0,
            sum: ReducingStateDescriptor::new("sum", |a: &u64, b: &u64| a + b),
            mean: AggregatingStateDescriptor::new("mean", StateAggregateFunction(Mean)),
            count: ReducingStateDescriptor::new("count", |a: &u64, b: &u64| a + b),
        }
    }
}

impl KeyedProcessFunction<u64, (u64, u64), (u64, u64, u64, f64)> for RunningTotals {
    fn process_element(
        &mut self,
        (key, value): (u64, u64),
        ctx: &mut KeyedContext<'_, u64>,
        out: &mut Collector<'_, (u64, u64, u64, f64)>,
    ) -> Result<(), UserError> {
        self.seen += 1;
        if self.fail_after == Some(self.seen) && ctx.task_info().attempt_number == 0 {
            return Err(format!("injected failure after {} records", self.seen).into());
        }
        let sum = {
            let mut s = ctx.reducing_state(&self.sum)?;
            s.add(value);
            s.get().ok_or("a reducing state without a value after add")?
        };
        let count = {
            let mut c = ctx.reducing_state(&self.count)?;
            c.add(1);
            c.get().ok_or("a reducing state without a value after add")?
        };
        let mean = {
            let mut m = ctx.aggregating_state(&self.mean)?;
            m.add(value);
            m.get().ok_or("an aggregating state without a result after add")?
        };
        out.collect((key, sum, count, mean));
        Ok(())
    }
}

/// Per key: the emitted totals of the most records (the last emitted).
fn final_totals(emitted: Vec<(u64, u64, u64, f64)>) -> BTreeMap<u64, (u64, u64, f64)> {
    let mut out: BTreeMap<u64, (u64, u64, f64)> = BTreeMap::new();
    for (k, sum, count, mean) in emitted {
        let e = out.entry(k).or_insert((sum, count, mean));
        if count > e.1 {
            *e = (sum, count, mean);
        }
    }
    out
}

fn expected() -> BTreeMap<u64, (u64, u64, f64)> {
    let mut per_key: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for i in 0..RECORDS {
        let e = per_key.entry(i % KEYS).or_default();
        *e = (e.0 + i, e.1 + 1);
    }
    per_key
        .into_iter()
        .map(|(k, (s, n))| (k, (s, n, s as f64 / n as f64)))
        .collect()
}

fn run(fail_after: Option<u64>, records_per_sec: f64, checkpoints: &std::path::Path) -> Vec<(u64, u64, u64, f64)> {
    weir::minicluster::install();
    let mut env = StreamExecutionEnvironment::new();
    env.set_parallelism(2)
        .set_config_option("execution.checkpointing.interval", "20 ms")
        .set_config_option("execution.checkpointing.dir", checkpoints.display().to_string())
        .set_config_option("restart-strategy.type", "fixed-delay")
        .set_config_option("restart-strategy.fixed-delay.attempts", "3")
        .set_config_option("restart-strategy.fixed-delay.delay", "0 ms");
    let results = env
        .from_generator_with_rate(RECORDS, 1, records_per_sec, |i, _| (i % KEYS, i))
        .key_by(|r: &(u64, u64)| r.0)
        .process(RunningTotals::new(fail_after))
        .collect();
    env.execute("folding-state").unwrap();
    results.take()
}

#[test]
fn reducing_and_aggregating_state_give_exact_running_totals_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let emitted = run(None, 0.0, dir.path());
    assert_eq!(emitted.len() as u64, RECORDS, "one output per record");
    assert_eq!(final_totals(emitted), expected());
}

#[test]
fn reducing_and_aggregating_state_are_restored_from_a_checkpoint_after_every_subtask_failed() {
    let dir = tempfile::tempdir().unwrap();
    // 2,000 records a second: each subtask fails after about 1.5 s, tens of
    // checkpoints in; the totals go on from the restored state.
    let emitted = run(Some(1_500), 2_000.0, dir.path());
    // The collect sink hands over a subtask's records at the end of its input, so only
    // the last attempt's are here: fewer than all when it resumed from a checkpoint.
    assert!(
        (emitted.len() as u64) < RECORDS,
        "{} records: the restart did not resume from a checkpoint",
        emitted.len()
    );
    assert_eq!(final_totals(emitted), expected());
}
