//! Windows through the whole runtime (sources, network, valves, window operators,
//! side outputs) at several parallelisms, against sequential computations.
//!
//! The sources are non-parallel collections, and timestamps and watermarks are
//! assigned by one subtask with a watermark after every record, so every run sees the
//! same watermarks and the results are exact.

use std::collections::BTreeMap;
use weir::prelude::*;

/// (key, timestamp, value)
type Ev = (u64, i64, i64);

/// (key, window start, window end, elements, sum of values)
type Summary = (u64, i64, i64, u64, i64);

/// Emits a watermark `max - bound - 1` after every record.
struct PerRecord {
    max: i64,
    bound: i64,
}

impl WatermarkGenerator<Ev> for PerRecord {
    fn on_event(&mut self, _e: &Ev, ts: i64, out: &mut dyn WatermarkOutput) {
        self.max = self.max.max(ts);
        out.emit_watermark(Watermark(self.max - self.bound - 1));
    }
    fn on_periodic_emit(&mut self, _out: &mut dyn WatermarkOutput) {}
}

fn per_record(bound: i64) -> WatermarkStrategy<Ev> {
    WatermarkStrategy::for_generator(move || PerRecord {
        max: i64::MIN + bound + 1,
        bound,
    })
    .with_timestamp_assigner(|e: &Ev, _| e.1)
}

#[derive(Clone)]
struct Summarize;

impl<K: Copy + Into<u64> + weir_api::functions::KeyType> ProcessWindowFunction<K, Ev, Summary, TimeWindow>
    for Summarize
{
    fn process(
        &mut self,
        key: &K,
        ctx: &mut WindowContext<'_, K, TimeWindow>,
        elements: Vec<Ev>,
        out: &mut Collector<'_, Summary>,
    ) -> Result<(), UserError> {
        let w = ctx.window();
        let sum = elements.iter().map(|e| e.2).sum();
        out.collect(((*key).into(), w.start(), w.end(), elements.len() as u64, sum));
        Ok(())
    }
}

fn env(p: u32, chaining: bool) -> StreamExecutionEnvironment {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(p);
    if !chaining {
        env.disable_operator_chaining();
    }
    env
}

const SETTINGS: [(u32, bool); 4] = [(1, true), (2, true), (4, true), (3, false)];

/// Events of `keys` keys with timestamps rising by 7 ms, each up to `bound` early.
fn events(n: i64, keys: u64, bound: i64) -> Vec<Ev> {
    let mut rng = Rng::new(17);
    (0..n)
        .map(|i| {
            let ts = i * 7 - rng.next_below(bound as u64 + 1) as i64;
            (rng.next_below(keys), ts, rng.next_below(100) as i64)
        })
        .collect()
}

fn sorted(mut v: Vec<Summary>) -> Vec<Summary> {
    v.sort();
    v
}

fn add(acc: &mut BTreeMap<(u64, i64, i64), (u64, i64)>, key: u64, start: i64, end: i64, value: i64) {
    let e = acc.entry((key, start, end)).or_default();
    e.0 += 1;
    e.1 += value;
}

fn flatten(acc: BTreeMap<(u64, i64, i64), (u64, i64)>) -> Vec<Summary> {
    acc.into_iter().map(|((k, s, e), (n, sum))| (k, s, e, n, sum)).collect()
}

#[test]
fn sliding_windows_at_every_parallelism_equal_a_sequential_computation() {
    let data = events(3_000, 5, 20);
    let mut acc = BTreeMap::new();
    for &(k, ts, v) in &data {
        let mut start = ts.div_euclid(50) * 50;
        while start > ts - 200 {
            add(&mut acc, k, start, start + 200, v);
            start -= 50;
        }
    }
    let expected = flatten(acc);
    for (p, chaining) in SETTINGS {
        let env = env(p, chaining);
        let out = env
            .from_collection(data.clone())
            .assign_timestamps_and_watermarks(per_record(20))
            .set_parallelism(1)
            .key_by(|e: &Ev| e.0)
            .window(SlidingEventTimeWindows::of(
                Duration::from_millis(200),
                Duration::from_millis(50),
            ))
            .process(Summarize)
            .collect();
        env.execute("sliding").unwrap();
        assert_eq!(sorted(out.get()), expected, "p={p} chaining={chaining}");
    }
}

#[test]
fn session_windows_at_every_parallelism_equal_a_sequential_computation() {
    // Sessions of a key: bursts 1 ms apart, bursts 1000 ms apart; gap 100, bound 10.
    let mut rng = Rng::new(3);
    let mut data = Vec::new();
    for burst in 0..40i64 {
        for i in 0..20i64 {
            let k = rng.next_below(4);
            data.push((k, burst * 1_000 + i * 3 - rng.next_below(10) as i64, i));
        }
    }
    let mut acc = BTreeMap::new();
    for k in 0..4u64 {
        let mut ts: Vec<(i64, i64)> = data.iter().filter(|e| e.0 == k).map(|e| (e.1, e.2)).collect();
        ts.sort();
        let mut session: Option<(i64, i64, u64, i64)> = None;
        for (t, v) in ts {
            session = match session {
                Some((s, e, n, sum)) if t <= e => Some((s, e.max(t + 100), n + 1, sum + v)),
                other => {
                    if let Some((s, e, n, sum)) = other {
                        acc.insert((k, s, e), (n, sum));
                    }
                    Some((t, t + 100, 1, v))
                }
            };
        }
        if let Some((s, e, n, sum)) = session {
            acc.insert((k, s, e), (n, sum));
        }
    }
    let expected = flatten(acc);
    for (p, chaining) in SETTINGS {
        let env = env(p, chaining);
        let out = env
            .from_collection(data.clone())
            .assign_timestamps_and_watermarks(per_record(10))
            .set_parallelism(1)
            .key_by(|e: &Ev| e.0)
            .window(EventTimeSessionWindows::with_gap(Duration::from_millis(100)))
            .process(Summarize)
            .collect();
        env.execute("sessions").unwrap();
        assert_eq!(sorted(out.get()), expected, "p={p} chaining={chaining}");
    }
}

#[test]
fn window_all_sums_the_whole_stream_in_one_subtask() {
    let data = events(2_000, 9, 0);
    let mut acc: BTreeMap<i64, i64> = BTreeMap::new();
    for &(_, ts, v) in &data {
        *acc.entry(ts.div_euclid(1_000) * 1_000).or_default() += v;
    }
    let expected: Vec<(i64, i64)> = acc.into_iter().collect();
    let env = env(4, true);
    let out = env
        .from_collection(data)
        .assign_timestamps_and_watermarks(per_record(0))
        .set_parallelism(1)
        .window_all(TumblingEventTimeWindows::of(Duration::from_secs(1)))
        .reduce(|a: Ev, b: Ev| (0, a.1.min(b.1), a.2 + b.2))
        .map(|e: Ev| (e.1.div_euclid(1_000) * 1_000, e.2))
        .collect();
    let graph = env.build_graph("all").unwrap();
    let window = graph
        .stream_graph
        .nodes
        .iter()
        .find(|n| n.name.starts_with("Window("))
        .unwrap();
    assert_eq!(window.parallelism, 1);
    env.execute("all").unwrap();
    let mut got = out.get();
    got.sort();
    assert_eq!(got, expected);
}

#[test]
fn count_windows_fire_every_n_elements_of_a_key_in_arrival_order() {
    let data: Vec<Ev> = (0..50).map(|i| (i as u64 % 3, i, i)).collect();
    let mut expected = Vec::new();
    for k in 0..3u64 {
        let values: Vec<i64> = data.iter().filter(|e| e.0 == k).map(|e| e.2).collect();
        for chunk in values.chunks(4).filter(|c| c.len() == 4) {
            expected.push((k, chunk.iter().sum::<i64>()));
        }
    }
    expected.sort();
    let env = env(2, true);
    let out = env
        .from_collection(data)
        .key_by(|e: &Ev| e.0)
        .count_window(4)
        .reduce(|a: Ev, b: Ev| (a.0, a.1, a.2 + b.2))
        .map(|e: Ev| (e.0, e.2))
        .collect();
    env.execute("count").unwrap();
    let mut got = out.get();
    got.sort();
    assert_eq!(got, expected);
}

#[test]
fn late_firings_and_late_side_output_cross_the_network_with_chaining_off() {
    let data: Vec<Ev> = vec![
        (1, 1, 10),
        (1, 5, 20),
        (1, 15, 30), // watermark 14: fires [0,10) with 2 elements
        (1, 3, 40),  // behind the watermark, within the lateness (cleanup at 19): late firing
        (1, 25, 50), // watermark 24: fires [10,20), cleans [0,10)
        (1, 4, 60),  // window [0,10) is gone and 4 + 10 <= 24: late data
    ];
    for (p, chaining) in [(2, false), (1, true)] {
        let env = env(p, chaining);
        let late = OutputTag::<Ev>::new("late");
        let windows = env
            .from_collection(data.clone())
            .assign_timestamps_and_watermarks(per_record(0))
            .set_parallelism(1)
            .key_by(|e: &Ev| e.0)
            .window(TumblingEventTimeWindows::of(Duration::from_millis(10)))
            .allowed_lateness(Duration::from_millis(10))
            .side_output_late_data(&late)
            .process(Summarize);
        let main = windows.collect();
        let side = windows.get_side_output(&late).map(|e: Ev| e.2).collect();
        env.execute("late").unwrap();
        let mut got = main.get();
        got.sort();
        assert_eq!(
            got,
            vec![
                (1, 0, 10, 2, 30),
                (1, 0, 10, 3, 70),
                (1, 10, 20, 1, 30),
                (1, 20, 30, 1, 50)
            ],
            "p={p} chaining={chaining}"
        );
        assert_eq!(side.get(), vec![60], "p={p} chaining={chaining}");
    }
}

#[test]
fn an_invalid_window_assigner_fails_the_pipeline_with_flinks_message() {
    let env = env(1, true);
    env.from_collection(vec![(1u64, 1i64, 1i64)])
        .key_by(|e: &Ev| e.0)
        .window(TumblingEventTimeWindows::of_with_offset(Duration::from_millis(10), 20))
        .process(Summarize)
        .discard();
    let err = env.execute("bad").unwrap_err().to_string();
    assert!(
        err.contains("TumblingEventTimeWindows parameters must satisfy abs(offset) < size"),
        "{err}"
    );
}

#[test]
fn an_event_time_window_over_records_without_timestamps_fails_the_job() {
    let env = env(1, true);
    env.from_collection(vec![(1u64, 1i64, 1i64)])
        .key_by(|e: &Ev| e.0)
        .window(TumblingEventTimeWindows::of(Duration::from_millis(10)))
        .process(Summarize)
        .discard();
    let err = env.execute("no timestamps").unwrap_err().to_string();
    assert!(err.contains("Record has Long.MIN_VALUE timestamp"), "{err}");
}
