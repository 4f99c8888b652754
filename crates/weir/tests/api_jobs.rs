//! Jobs of the DataStream API that once ran in `weir-api`'s unit tests on a runtime of
//! their own: they now run through `StreamExecutionEnvironment::execute` on the
//! MiniCluster (JobMaster and TaskExecutor), as every job does. Also: a task that
//! panics fails the job, and the error names the task and the panic's message.

use weir::prelude::*;
use weir_api::test_fixtures::CountBoth;

#[test]
fn a_job_connecting_two_streams_processes_every_record_of_both_once() {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let words = env.from_collection(vec!["x".to_string(), "y".to_string()]);
    let numbers = env.from_collection((0..5u64).collect());
    let out = words.connect(&numbers).process(CountBoth::default()).collect();
    env.execute("co-process").unwrap();
    let mut got: Vec<String> = out
        .get()
        .into_iter()
        .map(|line| line.split(' ').next().unwrap_or_default().to_string())
        .collect();
    got.sort();
    assert_eq!(got, vec!["1:x", "1:y", "2:0", "2:1", "2:2", "2:3", "2:4"]);
}

/// Appends ` @<timestamp>` to every record.
#[derive(Clone)]
struct StampWithTimestamp;

impl ProcessFunction<String, String> for StampWithTimestamp {
    fn process_element(
        &mut self,
        value: String,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        out.collect(format!("{value} @{}", ctx.timestamp().unwrap_or(i64::MIN)));
        Ok(())
    }
}

/// A name of key `.0` (first input) and an amount of key `.0` (second input).
type Name = (u32, String);
type Amount = (u32, u64);

/// A record with the timestamp its source assigns.
type Timed<T> = (T, i64);

fn pair(n: Name, a: Amount) -> String {
    format!("{}+{}", n.1, a.1)
}

/// Names at even ms and amounts at odd ms, keys 0..3: the job's join output and its
/// brute-force computation.
fn job_input() -> (Vec<Timed<Name>>, Vec<Timed<Amount>>) {
    let names = (0..30).map(|i| ((i % 3, format!("n{i}")), 2 * i as i64)).collect();
    let amounts = (0..30).map(|i| ((i % 3, i as u64), 2 * i as i64 + 1)).collect();
    (names, amounts)
}

#[test]
fn a_job_built_with_join_emits_exactly_the_per_window_cross_product_at_parallelism_two() {
    let (names, amounts) = job_input();
    let mut expected = Vec::new();
    for ((nk, n), nts) in &names {
        for ((ak, a), ats) in &amounts {
            if nk == ak && nts / 10 == ats / 10 {
                expected.push(format!("{n}+{a} @{}", nts / 10 * 10 + 9));
            }
        }
    }
    expected.sort();

    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let left = env
        .from_collection(names)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy::for_monotonous_timestamps().with_timestamp_assigner(|r: &(Name, i64), _| r.1),
        )
        .map(|r: (Name, i64)| r.0);
    let right = env
        .from_collection(amounts)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy::for_monotonous_timestamps().with_timestamp_assigner(|r: &(Amount, i64), _| r.1),
        )
        .map(|r: (Amount, i64)| r.0);
    let joined = left
        .join(&right)
        .where_(|n: &Name| n.0)
        .equal_to(|a: &Amount| a.0)
        .window(TumblingEventTimeWindows::of(Duration::from_millis(10)))
        .apply(pair);
    let with_time = joined.process(StampWithTimestamp).collect();
    let sizes = left
        .co_group(&right)
        .where_(|n: &Name| n.0)
        .equal_to(|a: &Amount| a.0)
        .window(TumblingEventTimeWindows::of(Duration::from_millis(10)))
        .apply(|n: Vec<Name>, a: Vec<Amount>, out: &mut Collector<'_, (usize, usize)>| out.collect((n.len(), a.len())))
        .collect();
    env.execute("window join").unwrap();
    let mut got = with_time.get();
    got.sort();
    assert_eq!(got, expected);
    let mut sizes = sizes.get();
    sizes.sort();
    // 3 keys × 6 windows of 10 ms over 60 ms; each key has 1 or 2 records of either
    // input per window (records of key k every 6 ms, alternating even and odd ms).
    assert_eq!(sizes.len(), 18, "{sizes:?}");
    assert_eq!(sizes.iter().map(|s| s.0).sum::<usize>(), 30);
    assert_eq!(sizes.iter().map(|s| s.1).sum::<usize>(), 30);
}

/// `(key, name)` on both sides.
type Rec = (u32, String);

/// Describes a pair with the timestamps its context reports.
#[derive(Clone)]
struct Describe;

impl ProcessJoinFunction<Rec, Rec, String> for Describe {
    fn process_element(
        &mut self,
        left: Rec,
        right: Rec,
        ctx: &ProcessJoinContext<'_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        out.collect(format!(
            "{}+{} l={} r={}",
            left.1,
            right.1,
            ctx.left_timestamp(),
            ctx.right_timestamp()
        ));
        Ok(())
    }
}

/// Timestamped `(key, name)` records of a collection source.
fn timed(records: Vec<(Rec, i64)>, env: &StreamExecutionEnvironment) -> KeyedStream<u32, Rec> {
    env.from_collection(records)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy::for_monotonous_timestamps().with_timestamp_assigner(|r: &(Rec, i64), _| r.1),
        )
        .map(|r: (Rec, i64)| r.0)
        .key_by(|r: &Rec| r.0)
}

#[test]
fn a_job_built_with_interval_join_emits_every_pair_within_the_bounds_at_parallelism_two() {
    let lefts: Vec<(Rec, i64)> = (0..40).map(|i| ((i % 4, format!("l{i}")), 3 * i as i64)).collect();
    let rights: Vec<(Rec, i64)> = (0..40).map(|i| ((i % 4, format!("r{i}")), 2 * i as i64)).collect();
    let mut expected = Vec::new();
    for ((lk, l), lts) in &lefts {
        for ((rk, r), rts) in &rights {
            if lk == rk && *rts >= lts - 4 && *rts < lts + 6 {
                expected.push(format!("{l}+{r} l={lts} r={rts} @{}", lts.max(rts)));
            }
        }
    }
    expected.sort();
    assert!(expected.len() > 20, "the data joins: {}", expected.len());

    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let joined = timed(lefts, &env)
        .interval_join(&timed(rights, &env))
        .between(-4, 6)
        .upper_bound_exclusive()
        .process(Describe)
        .process(StampWithTimestamp)
        .collect();
    env.execute("interval join").unwrap();
    let mut got = joined.get();
    got.sort();
    assert_eq!(got, expected);
}

#[test]
fn a_task_that_panics_fails_the_job_with_the_task_and_the_panic_message() {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(1);
    env.from_collection((0..100u64).collect())
        .map(|v: u64| {
            if v == 42 {
                panic!("record 42 is cursed");
            }
            v
        })
        .name("Cursed")
        .discard();
    let err = env.execute("panicking").unwrap_err().to_string();
    assert!(err.starts_with("Job execution failed: job 'panicking' ("), "{err}");
    assert!(
        err.contains(") FAILED: task Source: Collection Source -> Cursed -> Sink: Discard (1/1) failed: "),
        "{err}"
    );
    assert!(
        err.contains("Caused by: weir.runtime.TaskPanicException: record 42 is cursed"),
        "{err}"
    );
}
