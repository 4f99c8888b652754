//! Two-input operators: `connect`, co-map, keyed co-process with state and timers.

use weir::cli::commands::build_job;
use weir::cli::JobArgs;
use weir::prelude::*;

mod common;
use common::enrich::expected_enrich;

fn run_enrich(p: u32, chaining: bool, out: &std::path::Path) -> Vec<String> {
    let job = JobArgs {
        program: "enrich".into(),
        parallelism: Some(p),
        args: vec![
            "users=30".into(),
            "orders=20000".into(),
            "seed=9".into(),
            format!("output={}", out.display()),
        ],
        max_parallelism: None,
        disable_chaining: !chaining,
        buffer_timeout: None,
        auto_watermark_interval: None,
    };
    let (env, _) = build_job(&job).unwrap();
    weir::minicluster::install();
    env.execute("enrich").unwrap();
    common::read_parts(out)
}

#[test]
fn keyed_co_process_joins_both_inputs_by_key_at_every_parallelism() {
    let dir = tempfile::tempdir().unwrap();
    let expected = expected_enrich(30, 20_000, 9);
    for (i, (p, chaining)) in [(1, true), (2, true), (4, true), (3, false)].into_iter().enumerate() {
        assert_eq!(
            run_enrich(p, chaining, &dir.path().join(format!("r{i}"))),
            expected,
            "p={p} chaining={chaining}"
        );
    }
}

#[test]
fn co_map_merges_streams_of_different_types() {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let numbers = env.from_collection((0..50u64).collect());
    let words = env.from_collection(vec!["a".to_string(), "bb".to_string()]);
    let out = numbers
        .connect(&words)
        .map(|n: u64| format!("n{n}"), |w: String| format!("w{w}"))
        .collect();
    env.execute("co-map").unwrap();
    let mut got = out.get();
    got.sort();
    let mut expected: Vec<String> = (0..50)
        .map(|n| format!("n{n}"))
        .chain(["wa".into(), "wbb".into()])
        .collect();
    expected.sort();
    assert_eq!(got, expected);
}

/// Emits a watermark after every record (monotonous timestamps).
struct PerRecord(i64);

impl WatermarkGenerator<(u64, i64)> for PerRecord {
    fn on_event(&mut self, _e: &(u64, i64), ts: i64, out: &mut dyn WatermarkOutput) {
        self.0 = self.0.max(ts);
        out.emit_watermark(Watermark(self.0 - 1));
    }
    fn on_periodic_emit(&mut self, _out: &mut dyn WatermarkOutput) {}
}

#[derive(Clone)]
struct SeenAtTimer;

impl KeyedCoProcessFunction<u64, (u64, i64), u64, String> for SeenAtTimer {
    fn process_element1(
        &mut self,
        v: (u64, i64),
        ctx: &mut KeyedContext<'_, u64>,
        _out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        ctx.register_event_time_timer(v.1)?;
        Ok(())
    }
    fn process_element2(
        &mut self,
        _v: u64,
        ctx: &mut KeyedContext<'_, u64>,
        _out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let mut seen = ctx.value_state(&ValueStateDescriptor::<u64>::new("seen"))?;
        let n = seen.value().unwrap_or(0) + 1;
        seen.update(n);
        Ok(())
    }
    fn on_timer(
        &mut self,
        ts: i64,
        ctx: &mut KeyedContext<'_, u64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let seen = ctx
            .value_state(&ValueStateDescriptor::<u64>::new("seen"))?
            .value()
            .unwrap_or(0);
        out.collect(format!("{ts}:{seen}"));
        Ok(())
    }
}

#[test]
fn a_two_input_operator_fires_event_time_timers_only_when_both_inputs_pass_them() {
    // The first input carries timestamps and per-record watermarks; the second carries
    // none until it ends. The operator's watermark is the minimum of both, so no timer
    // fires before the second input has ended, and every timer sees all of its records.
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let timed = env
        .from_collection((0..20i64).map(|t| (7u64, t * 10)).collect::<Vec<_>>())
        .assign_timestamps_and_watermarks(
            WatermarkStrategy::for_generator(|| PerRecord(i64::MIN)).with_timestamp_assigner(|v: &(u64, i64), _| v.1),
        );
    let plain = env.from_collection(vec![7u64; 5]);
    let out = timed
        .connect(&plain)
        .key_by(|v: &(u64, i64)| v.0, |v: &u64| *v)
        .process(SeenAtTimer)
        .collect();
    env.execute("two-input watermarks").unwrap();
    let mut got = out.get();
    got.sort();
    let mut expected: Vec<String> = (0..20).map(|t| format!("{}:5", t * 10)).collect();
    expected.sort();
    assert_eq!(got, expected);
}
