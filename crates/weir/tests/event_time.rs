//! Event time end to end: `orders-per-minute` against a brute-force computation, late
//! data, idle source splits, and processing-time windows and timers on the wall clock.
//!
//! Runs with per-record watermarks (or without late data) are deterministic, so their
//! results are compared exactly. Tests that depend on the wall clock assert on what was
//! emitted and in which order, never on durations; their sources wait (with a generous
//! safety limit) for the output they expect before going on.

mod common;

use common::weir_cli as weir;

use common::read_parts;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use weir::prelude::*;
use weir::programs::orders_per_minute::{
    generate_line, parse_order, CountAndSum, FormatWindow, GeneratorConfig, Order, PerRecordWatermarks, START_MS,
    STEP_MS, WINDOW_MS,
};
use weir_connectors::source::GeneratorSource;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

const SAFETY: Duration = Duration::from_secs(20);

/// Runs `orders-per-minute` through the binary, returning its sorted output lines.
fn run_program(p: u32, args: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = format!("output={}", dir.path().join("out").display());
    let p = p.to_string();
    let mut all = vec!["local", "orders-per-minute", "-p", &p, "--arg", &out];
    for a in args {
        all.push("--arg");
        all.push(a);
    }
    let (code, _, err) = weir(&all);
    assert_eq!(code, 0, "{err}");
    read_parts(&dir.path().join("out"))
}

fn generated(orders: u64, seed: u64, cfg: &GeneratorConfig) -> Vec<Order> {
    (0..orders)
        .map(|i| parse_order(&generate_line(cfg, i, &mut Rng::for_index(seed, i))).unwrap())
        .collect()
}

fn cents(c: i64) -> String {
    weir::programs::orders_per_minute::format_cents(c)
}

/// Per-(window, user) count and sum of `orders`, as the program's lines, sorted.
fn lines_of<'a>(orders: impl IntoIterator<Item = &'a Order>) -> Vec<String> {
    let mut acc: BTreeMap<(i64, u64), (u64, i64)> = BTreeMap::new();
    for o in orders {
        let start = o.ts_millis.div_euclid(WINDOW_MS) * WINDOW_MS;
        let e = acc.entry((start, o.user_id)).or_default();
        e.0 += 1;
        e.1 += o.amount_cents;
    }
    let mut lines: Vec<String> = acc
        .into_iter()
        .map(|((start, user), (n, sum))| format!("{start},{},{user},{n},{}", start + WINDOW_MS, cents(sum)))
        .collect();
    lines.sort();
    lines
}

/// What Flink computes for one channel with a watermark of `max - bound - 1` after
/// every record: an order whose window's last timestamp the watermark has reached is
/// late (allowed lateness 0). Returns (on-time orders, late orders).
fn single_channel(orders: &[Order], bound_ms: i64) -> (Vec<Order>, Vec<Order>) {
    let mut max = i64::MIN + bound_ms + 1;
    let (mut on_time, mut late) = (Vec::new(), Vec::new());
    for o in orders {
        let watermark = max - bound_ms - 1;
        let window_max = o.ts_millis.div_euclid(WINDOW_MS) * WINDOW_MS + WINDOW_MS - 1;
        if window_max <= watermark {
            late.push(*o);
        } else {
            on_time.push(*o);
        }
        max = max.max(o.ts_millis);
    }
    (on_time, late)
}

#[test]
fn orders_per_minute_at_p1_equals_a_brute_force_with_late_orders_excluded_as_flink_would() {
    let cfg = GeneratorConfig {
        users: 7,
        bound_ms: 5_000,
        late_fraction: 0.05,
    };
    let orders = generated(30_000, 11, &cfg);
    let (on_time, late) = single_channel(&orders, 5_000);
    assert!(late.len() > 1_000, "the run must have late orders: {}", late.len());
    let got = run_program(
        1,
        &[
            "orders=30000",
            "users=7",
            "seed=11",
            "late_fraction=0.05",
            "watermarks=per-record",
        ],
    );
    assert_eq!(got, lines_of(&on_time));
}

#[test]
fn orders_per_minute_at_p1_2_and_4_equals_a_brute_force_over_all_orders_when_none_is_late() {
    let cfg = GeneratorConfig {
        users: 13,
        bound_ms: 2_000,
        late_fraction: 0.0,
    };
    let expected = lines_of(&generated(20_000, 5, &cfg));
    for p in [1, 2, 4] {
        for mode in ["per-record", "periodic"] {
            let got = run_program(
                p,
                &[
                    "orders=20000",
                    "users=13",
                    "seed=5",
                    "bound_ms=2000",
                    &format!("watermarks={mode}"),
                ],
            );
            assert_eq!(got, expected, "p={p} watermarks={mode}");
        }
    }
}

/// The program's pipeline with the late data selected as a side output.
fn run_with_late_output(
    p: u32,
    chaining: bool,
    orders: u64,
    seed: u64,
    cfg: GeneratorConfig,
) -> (Vec<String>, Vec<Order>) {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(p);
    if !chaining {
        env.disable_operator_chaining();
    }
    let bound = Duration::from_millis(cfg.bound_ms);
    let strategy = WatermarkStrategy::for_generator(move || PerRecordWatermarks::new(bound)).with_timestamp_assigner(
        |(_, line): &(u64, String), _| weir::programs::orders_per_minute::line_timestamp(line),
    );
    let f: weir_connectors::source::generator::GeneratorFn<(u64, String)> =
        Arc::new(move |i, rng: &mut Rng| (i + 1, generate_line(&cfg, i, rng)));
    let late = OutputTag::<Order>::new("late-orders");
    let windows = env
        .from_source(
            move |ctx| {
                Ok(Box::new(GeneratorSource::new(
                    orders,
                    seed,
                    f.clone(),
                    ctx.subtask_index,
                    ctx.parallelism,
                )))
            },
            strategy,
            "orders",
        )
        .map(|(_, line): (u64, String)| parse_order(&line).unwrap_or_else(|e| panic!("{e}")))
        .key_by(|o: &Order| o.user_id)
        .window(TumblingEventTimeWindows::of(Duration::from_millis(WINDOW_MS as u64)))
        .side_output_late_data(&late)
        .aggregate_with_process(CountAndSum, FormatWindow::default());
    let main = windows.collect();
    let late_orders = windows.get_side_output(&late).collect();
    env.execute("orders with late output").unwrap();
    let mut lines = main.get();
    lines.sort();
    (lines, late_orders.get())
}

#[test]
fn late_orders_go_to_the_side_output_and_every_other_order_is_counted_at_every_parallelism() {
    let cfg = GeneratorConfig {
        users: 5,
        bound_ms: 3_000,
        late_fraction: 0.1,
    };
    let orders = generated(20_000, 3, &cfg);
    let generated_late = |o: &Order| o.ts_millis < START_MS + (o.order_id as i64 - 1) * STEP_MS - 3_000;
    // One channel: exactly Flink's late orders.
    let (on_time, late) = single_channel(&orders, 3_000);
    let (lines, mut side) = run_with_late_output(1, true, 20_000, 3, cfg);
    side.sort_by_key(|o| o.order_id);
    assert_eq!(side, late);
    assert_eq!(lines, lines_of(&on_time));
    // Several channels interleave: an order is late against the minimum over them, so
    // which generated-late orders are late may vary, but never an on-time one, and
    // every order is either counted or side output.
    for (p, chaining) in [(2, true), (4, true), (3, false)] {
        let (lines, side) = run_with_late_output(p, chaining, 20_000, 3, cfg);
        assert!(side.len() > 1_000, "p={p}: {} late", side.len());
        assert!(side.iter().all(generated_late), "p={p}: an on-time order was late");
        let ids: std::collections::HashSet<u64> = side.iter().map(|o| o.order_id).collect();
        assert_eq!(ids.len(), side.len(), "p={p}: an order was side output twice");
        let counted: Vec<Order> = orders.iter().filter(|o| !ids.contains(&o.order_id)).copied().collect();
        assert_eq!(lines, lines_of(&counted), "p={p} chaining={chaining}");
    }
}

#[test]
fn csv_input_gives_the_generators_results_and_a_header_line_is_skipped() {
    let cfg = GeneratorConfig {
        users: 4,
        bound_ms: 5_000,
        late_fraction: 0.02,
    };
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("orders.csv");
    let mut text = String::from("order_id,user_id,amount,ts_millis\n");
    for i in 0..5_000u64 {
        text.push_str(&generate_line(&cfg, i, &mut Rng::for_index(9, i)));
        text.push('\n');
    }
    std::fs::write(&csv, text).unwrap();
    let from_file = run_program(1, &[&format!("input={}", csv.display()), "watermarks=per-record"]);
    let generated = run_program(
        1,
        &[
            "orders=5000",
            "users=4",
            "seed=9",
            "late_fraction=0.02",
            "watermarks=per-record",
        ],
    );
    assert!(!from_file.is_empty());
    assert_eq!(from_file, generated);
}

#[test]
fn a_malformed_csv_line_fails_the_job_with_its_line_number_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("orders.csv");
    std::fs::write(
        &csv,
        "1,1,2.50,1700000000000\n2,1,1.00,1700000001000\n3,x,1.00,1700000002000\n4,1,1.25,1700000003000\n",
    )
    .unwrap();
    let input = format!("input={}", csv.display());
    let (code, _out, err) = weir(&["local", "orders-per-minute", "--arg", &input]);
    assert_ne!(code, 0);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("malformed order at line 3"), "{err}");
    assert!(err.contains("user_id 'x'"), "{err}");
    let got = run_program(1, &[&input, "skip_malformed=true"]);
    assert_eq!(got, vec!["1699999980000,1700000040000,1,3,4.75".to_string()]);
}

#[test]
fn plan_of_orders_per_minute_at_p2_has_two_vertices_joined_by_one_hash_edge() {
    let (code, out, err) = weir(&["plan", "orders-per-minute", "-p", "2", "--json"]);
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).unwrap();
    let vertices = plan["vertices"].as_array().unwrap();
    assert_eq!(vertices.len(), 2, "{out}");
    assert_eq!(vertices[0]["name"], "Source: orders -> ParseOrder");
    let window = vertices[1]["name"].as_str().unwrap();
    assert!(
        window.starts_with("Window(TumblingEventTimeWindows(60000), EventTimeTrigger"),
        "{window}"
    );
    assert!(window.ends_with(" -> Sink: Print to Std. Out"), "{window}");
    assert_eq!(vertices[0]["parallelism"], 2);
    assert_eq!(vertices[1]["parallelism"], 2);
    let edges = plan["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 1);
    assert_eq!(edges[0]["ship_strategy"], "HASH");
    assert_eq!(edges[0]["source"], vertices[0]["id"]);
    assert_eq!(edges[0]["target"], vertices[1]["id"]);
}

#[test]
fn orders_per_minute_rejects_bad_arguments_with_one_line_errors() {
    for (arg, needle) in [
        (
            "watermarks=sometimes",
            "invalid value 'sometimes' for argument 'watermarks'",
        ),
        ("late_fraction=2", "invalid value '2' for argument 'late_fraction'"),
        ("users=0", "invalid value '0' for argument 'users'"),
        ("windows=3", "unknown argument 'windows'"),
    ] {
        let (code, _out, err) = weir(&["local", "orders-per-minute", "--arg", arg]);
        assert_ne!(code, 0, "{arg}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{arg}: {err}");
    }
}

/// Test source: emits `records` (value, timestamp), then keeps emitting `keep_alive`
/// records (one per poll) until `release`, then ends. With no records at all, it is an
/// idle split.
struct ScriptedSource {
    records: std::vec::IntoIter<(u64, i64)>,
    keep_alive: Option<(u64, i64)>,
    release: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
    started: Instant,
}

impl SourceFunction<(u64, i64)> for ScriptedSource {
    fn poll_next(&mut self, output: &mut dyn Output<(u64, i64)>) -> Result<SourceStatus, TaskError> {
        if let Some(r) = self.records.next() {
            output.collect(StreamRecord::new(r))?;
            return Ok(SourceStatus::More);
        }
        if self.release.load(Ordering::SeqCst) {
            return Ok(SourceStatus::Finished);
        }
        if self.started.elapsed() > SAFETY {
            self.timed_out.store(true, Ordering::SeqCst);
            return Ok(SourceStatus::Finished);
        }
        std::thread::sleep(Duration::from_millis(2));
        if let Some(r) = self.keep_alive {
            output.collect(StreamRecord::new(r))?;
        }
        Ok(SourceStatus::More)
    }
}

/// Values with their timestamps, as a probe sink saw them.
type Seen<T> = Arc<Mutex<Vec<(T, Option<i64>)>>>;

/// Decides from what a probe saw whether the sources may end.
type Release<T> = fn(&[(T, Option<i64>)]) -> bool;

/// Test sink: records values and lets a predicate decide when to release the sources.
struct ProbeSink<T> {
    seen: Seen<T>,
    release: Arc<AtomicBool>,
    when: Release<T>,
}

impl<T: Clone> Output<T> for ProbeSink<T> {
    fn collect(&mut self, r: StreamRecord<T>) -> Result<(), TaskError> {
        let mut seen = self.seen.lock().unwrap();
        seen.push((r.value, r.timestamp));
        if (self.when)(&seen) {
            self.release.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
    fn emit_watermark(&mut self, _w: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}

#[derive(Clone)]
struct Count;

impl AggregateFunction<(u64, i64), u64, u64> for Count {
    fn create_accumulator(&self) -> u64 {
        0
    }
    fn add(&self, _v: (u64, i64), acc: &mut u64) {
        *acc += 1;
    }
    fn get_result(&self, acc: &u64) -> u64 {
        *acc
    }
    fn merge(&self, a: u64, b: u64) -> u64 {
        a + b
    }
}

#[derive(Clone)]
struct KeyWindowCount;

impl ProcessWindowFunction<u64, u64, (u64, i64, u64), TimeWindow> for KeyWindowCount {
    fn process(
        &mut self,
        key: &u64,
        ctx: &mut WindowContext<'_, u64, TimeWindow>,
        counts: Vec<u64>,
        out: &mut Collector<'_, (u64, i64, u64)>,
    ) -> Result<(), UserError> {
        for c in counts {
            out.collect((*key, ctx.window().start(), c));
        }
        Ok(())
    }
}

#[test]
fn an_idle_source_split_does_not_hold_windows_back_once_marked_idle() {
    let release = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let seen: Seen<(u64, i64, u64)> = Arc::default();
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2)
        .set_auto_watermark_interval(Duration::from_millis(10));
    let (r, t) = (release.clone(), timed_out.clone());
    let strategy = WatermarkStrategy::for_bounded_out_of_orderness(Duration::ZERO)
        .with_timestamp_assigner(|v: &(u64, i64), _| v.1)
        .with_idleness(Duration::from_millis(50));
    let counts = env
        .from_source(
            move |ctx| {
                // Split 0 has data and keeps event time moving; split 1 has none.
                let (records, keep_alive) = if ctx.subtask_index == 0 {
                    (vec![(1, 1_000), (1, 2_000), (2, 70_000)], Some((2, 70_000)))
                } else {
                    (vec![], None)
                };
                Ok(Box::new(ScriptedSource {
                    records: records.into_iter(),
                    keep_alive,
                    release: r.clone(),
                    timed_out: t.clone(),
                    started: Instant::now(),
                }))
            },
            strategy,
            "splits",
        )
        .key_by(|v: &(u64, i64)| v.0)
        .window(TumblingEventTimeWindows::of(Duration::from_secs(60)))
        .aggregate_with_process(Count, KeyWindowCount);
    let (s, r) = (seen.clone(), release.clone());
    counts.add_sink("Sink: Probe", move |_ctx| {
        Ok(Box::new(ProbeSink {
            seen: s.clone(),
            release: r.clone(),
            when: |seen| seen.iter().any(|((k, start, _), _)| *k == 1 && *start == 0),
        }))
    });
    env.execute("idle split").unwrap();
    assert!(
        !timed_out.load(Ordering::SeqCst),
        "the window [0, 60000) did not fire while the idle split was running"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0], ((1, 0, 2), Some(59_999)), "{seen:?}");
}

#[test]
fn processing_time_windows_fire_on_the_wall_clock_while_the_source_runs() {
    let total = Arc::new(AtomicU64::new(0));
    let timed_out = Arc::new(AtomicBool::new(false));
    let env = StreamExecutionEnvironment::create_local_environment();
    let (tot, to) = (total.clone(), timed_out.clone());
    let counts = env
        .add_source("Bursts", Some(1), move |_ctx| {
            Ok(Box::new(Bursts {
                bursts: vec![3, 2],
                emitted: 0,
                waiting_since: None,
                total: tot.clone(),
                timed_out: to.clone(),
            }))
        })
        .key_by(|v: &(u64, i64)| v.0)
        .window(TumblingProcessingTimeWindows::of(Duration::from_millis(20)))
        .aggregate(Count);
    let tot = total.clone();
    counts.add_sink("Sink: Sum", move |_ctx| Ok(Box::new(SumSink { total: tot.clone() })));
    env.execute("processing time").unwrap();
    assert!(
        !timed_out.load(Ordering::SeqCst),
        "a processing-time window did not fire on its own"
    );
    assert_eq!(total.load(Ordering::SeqCst), 5);
}

/// Emits bursts of records; before the next burst (and before ending) waits until the
/// sink has counted everything emitted so far: only windows firing on the wall clock
/// get it there, since pending processing-time windows never fire at the end.
struct Bursts {
    bursts: Vec<u64>,
    emitted: u64,
    waiting_since: Option<Instant>,
    total: Arc<AtomicU64>,
    timed_out: Arc<AtomicBool>,
}

impl SourceFunction<(u64, i64)> for Bursts {
    fn poll_next(&mut self, output: &mut dyn Output<(u64, i64)>) -> Result<SourceStatus, TaskError> {
        if let Some(since) = self.waiting_since {
            if self.total.load(Ordering::SeqCst) < self.emitted {
                if since.elapsed() > SAFETY {
                    self.timed_out.store(true, Ordering::SeqCst);
                    return Ok(SourceStatus::Finished);
                }
                // Return to the task loop so that it flushes the burst downstream.
                std::thread::sleep(Duration::from_millis(1));
                return Ok(SourceStatus::More);
            }
            self.waiting_since = None;
        }
        if self.bursts.is_empty() {
            return Ok(SourceStatus::Finished);
        }
        let n = self.bursts.remove(0);
        for i in 0..n {
            output.collect(StreamRecord::new((i % 2, 0)))?;
        }
        self.emitted += n;
        self.waiting_since = Some(Instant::now());
        Ok(SourceStatus::More)
    }
}

struct SumSink {
    total: Arc<AtomicU64>,
}

impl Output<u64> for SumSink {
    fn collect(&mut self, r: StreamRecord<u64>) -> Result<(), TaskError> {
        self.total.fetch_add(r.value, Ordering::SeqCst);
        Ok(())
    }
    fn emit_watermark(&mut self, _w: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}

#[derive(Clone)]
struct TimeoutPerKey;

impl KeyedProcessFunction<u64, (u64, i64), (u64, String)> for TimeoutPerKey {
    fn process_element(
        &mut self,
        value: (u64, i64),
        ctx: &mut KeyedContext<'_, u64>,
        _out: &mut Collector<'_, (u64, String)>,
    ) -> Result<(), UserError> {
        let now = ctx.current_processing_time();
        let mut timers = ctx.timer_service();
        timers.register_processing_time_timer(now + 5)?;
        timers.register_event_time_timer(value.1)?;
        Ok(())
    }

    fn on_timer(
        &mut self,
        timestamp: i64,
        ctx: &mut KeyedContext<'_, u64>,
        out: &mut Collector<'_, (u64, String)>,
    ) -> Result<(), UserError> {
        let key = ctx.current_key().copied().unwrap_or_default();
        match ctx.time_domain() {
            Some(TimeDomain::ProcessingTime) => out.collect((key, "processing".into())),
            _ => out.collect((key, format!("event@{timestamp}"))),
        }
        Ok(())
    }
}

#[test]
fn keyed_process_functions_get_processing_time_timers_on_the_task_thread_and_event_time_timers_on_watermarks() {
    let release = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let seen: Seen<(u64, String)> = Arc::default();
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let (r, t) = (release.clone(), timed_out.clone());
    let out = env
        .from_source(
            move |ctx| {
                let records = if ctx.subtask_index == 0 {
                    vec![(1, 100), (2, 200)]
                } else {
                    vec![(3, 300)]
                };
                Ok(Box::new(ScriptedSource {
                    records: records.into_iter(),
                    keep_alive: None,
                    release: r.clone(),
                    timed_out: t.clone(),
                    started: Instant::now(),
                }))
            },
            WatermarkStrategy::for_monotonous_timestamps().with_timestamp_assigner(|v: &(u64, i64), _| v.1),
            "keys",
        )
        .key_by(|v: &(u64, i64)| v.0)
        .process(TimeoutPerKey);
    let (s, r) = (seen.clone(), release.clone());
    out.add_sink("Sink: Probe", move |_ctx| {
        Ok(Box::new(ProbeSink {
            seen: s.clone(),
            release: r.clone(),
            when: |seen| seen.iter().filter(|((_, what), _)| what == "processing").count() == 3,
        }))
    });
    env.execute("timers").unwrap();
    assert!(!timed_out.load(Ordering::SeqCst), "processing-time timers did not fire");
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ((1, "event@100".to_string()), Some(100)),
            ((1, "processing".to_string()), None),
            ((2, "event@200".to_string()), Some(200)),
            ((2, "processing".to_string()), None),
            ((3, "event@300".to_string()), Some(300)),
            ((3, "processing".to_string()), None),
        ]
    );
}
