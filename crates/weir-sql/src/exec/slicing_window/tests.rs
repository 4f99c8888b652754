use super::*;
use crate::exec::slice_snapshot;
use crate::key::GroupKey;
use crate::plan::AggFunc;
use crate::types::DataType;
use std::cell::RefCell;
use std::rc::Rc;
use weir_core::key_group::{assign_to_key_group, operator_index_for_key_group};
use weir_core::key_hash::key_hash;
use weir_core::KeyGroupRange;

/// What the operator emitted: rows with their timestamps, and watermarks.
#[derive(Debug, Clone, PartialEq)]
enum Emitted {
    Row(Vec<Value>, Option<i64>),
    Watermark(i64),
}

#[derive(Clone, Default)]
struct Sink(Rc<RefCell<Vec<Emitted>>>);

impl Output<Row> for Sink {
    fn collect(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        self.0
            .borrow_mut()
            .push(Emitted::Row(record.value.values, record.timestamp));
        Ok(())
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.0.borrow_mut().push(Emitted::Watermark(watermark.0));
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}

impl Sink {
    fn take(&self) -> Vec<Emitted> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

/// COUNT(*) and SUM(amount DOUBLE) of rows `key, amount`.
fn spec(assigner: SliceAssigner) -> WindowAggSpec {
    let call = |func, arg, result_type| AggCall {
        func,
        distinct: false,
        arg,
        arg_type: DataType::Double,
        result_type,
    };
    WindowAggSpec {
        name: "WindowAggregate".into(),
        assigner,
        keys: 1,
        aggs: Arc::new(vec![
            call(AggFunc::Count, None, DataType::BigInt),
            call(AggFunc::Sum, Some(1), DataType::Double),
        ]),
        projection: None,
    }
}

struct Harness {
    op: SlicingWindowOperator,
    sink: Sink,
    late: Counter,
}

fn harness(assigner: SliceAssigner, restored: RestoredSlices) -> Harness {
    harness_of(spec(assigner), restored)
}

fn harness_of(spec: WindowAggSpec, restored: RestoredSlices) -> Harness {
    harness_in(spec, restored, false)
}

/// The harness of an operator of a job in BATCH mode when `batch`, else in STREAMING.
fn harness_in(spec: WindowAggSpec, restored: RestoredSlices, batch: bool) -> Harness {
    let sink = Sink::default();
    let late = Counter::default();
    let op = SlicingWindowOperator::new(spec, restored, batch, 128, Box::new(sink.clone()), late.clone());
    Harness { op, sink, late }
}

impl Harness {
    fn row(&mut self, key: i64, amount: f64, ts: i64) {
        let row = Row::insert(vec![Value::Int(key), Value::Double(amount)]);
        self.op
            .collect(StreamRecord {
                value: row,
                timestamp: Some(ts),
            })
            .unwrap();
    }
    fn watermark(&mut self, wm: i64) -> Vec<Emitted> {
        self.op.emit_watermark(Watermark(wm)).unwrap();
        self.sink.take()
    }
}

/// The row a window `[start, end)` emits for `key`.
fn out(start: i64, end: i64, key: i64, count: i64, sum: f64) -> Emitted {
    Emitted::Row(
        vec![
            Value::Timestamp(start),
            Value::Timestamp(end),
            Value::Timestamp(end - 1),
            Value::Int(key),
            Value::Int(count),
            Value::Double(sum),
        ],
        Some(end - 1),
    )
}

#[test]
fn a_tumble_window_emits_each_key_once_in_key_order_when_the_watermark_reaches_its_last_millisecond() {
    let mut h = harness(SliceAssigner::Tumble { size: 10 }, RestoredSlices::default());
    h.row(3, 1.5, 1);
    h.row(1, 2.0, 9);
    h.row(3, 0.5, 4);
    h.row(2, 1.0, 12);
    assert_eq!(h.watermark(8), vec![Emitted::Watermark(8)]);
    assert_eq!(
        h.watermark(9),
        vec![out(0, 10, 1, 1, 2.0), out(0, 10, 3, 2, 2.0), Emitted::Watermark(9)]
    );
    assert_eq!(h.op.num_slices(), 1, "the fired window's slice is dropped");
    assert_eq!(
        h.watermark(i64::MAX),
        vec![out(10, 20, 2, 1, 1.0), Emitted::Watermark(i64::MAX)]
    );
    assert_eq!(h.op.num_slices(), 0);
}

#[test]
fn a_row_whose_windows_have_all_fired_is_dropped_and_counted_late() {
    let mut h = harness(SliceAssigner::Tumble { size: 10 }, RestoredSlices::default());
    h.row(1, 1.0, 3);
    h.watermark(9);
    h.row(1, 5.0, 5);
    h.row(1, 7.0, 10);
    assert_eq!(h.late.get(), 1);
    assert_eq!(h.watermark(19), vec![out(10, 20, 1, 1, 7.0), Emitted::Watermark(19)]);
}

#[test]
fn hop_windows_merge_their_slices_and_a_row_of_a_partly_fired_slice_counts_for_the_later_windows() {
    // Size 10, slide 5.
    let mut h = harness(SliceAssigner::Hop { size: 10, slide: 5 }, RestoredSlices::default());
    h.row(1, 1.0, 2);
    h.row(1, 2.0, 7);
    h.row(2, 4.0, 12);
    assert_eq!(h.watermark(4), vec![out(-5, 5, 1, 1, 1.0), Emitted::Watermark(4)]);
    assert_eq!(h.watermark(9), vec![out(0, 10, 1, 2, 3.0), Emitted::Watermark(9)]);
    // [0, 10) has fired; the row still belongs to [5, 15).
    h.row(2, 8.0, 6);
    assert_eq!(h.late.get(), 0);
    assert_eq!(
        h.watermark(i64::MAX),
        vec![
            out(5, 15, 1, 1, 2.0),
            out(5, 15, 2, 2, 12.0),
            out(10, 20, 2, 1, 4.0),
            Emitted::Watermark(i64::MAX)
        ]
    );
    assert_eq!(h.op.num_slices(), 0);
    h.row(2, 1.0, 14);
    assert_eq!(h.late.get(), 1);
}

#[test]
fn cumulate_windows_grow_by_their_step_and_drop_their_slices_at_the_max_size() {
    let mut h = harness(
        SliceAssigner::Cumulate { max_size: 30, step: 10 },
        RestoredSlices::default(),
    );
    h.row(1, 1.0, 5);
    h.row(1, 2.0, 15);
    h.row(2, 4.0, 25);
    h.row(1, 8.0, 35);
    assert_eq!(
        h.watermark(29),
        vec![
            out(0, 10, 1, 1, 1.0),
            out(0, 20, 1, 2, 3.0),
            out(0, 30, 1, 2, 3.0),
            out(0, 30, 2, 1, 4.0),
            Emitted::Watermark(29)
        ]
    );
    assert_eq!(h.op.num_slices(), 1, "only the slice of [30, 40) is left");
}

#[test]
fn a_row_without_a_timestamp_fails_the_task_with_the_window_assigners_message() {
    let mut h = harness(SliceAssigner::Tumble { size: 10 }, RestoredSlices::default());
    let err =
        h.op.collect(StreamRecord {
            value: Row::insert(vec![Value::Int(1), Value::Double(1.0)]),
            timestamp: None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("Long.MIN_VALUE"), "{err}");
}

/// The part of `snapshot` a subtask of `range` restores.
fn restrict(snapshot: &OperatorSnapshot, range: KeyGroupRange) -> OperatorSnapshot {
    OperatorSnapshot {
        keyed: snapshot
            .keyed
            .iter()
            .filter(|(kg, _)| range.contains(*kg))
            .cloned()
            .collect(),
        ..snapshot.clone()
    }
}

#[test]
fn a_restored_operator_at_the_same_and_another_parallelism_emits_what_the_undisturbed_one_does() {
    let assigner = SliceAssigner::Hop { size: 20, slide: 10 };
    let feed = |h: &mut Harness, from: i64, to: i64| {
        for i in from..to {
            h.row(i % 7, i as f64 * 0.25, i);
        }
    };
    let mut undisturbed = harness(assigner, RestoredSlices::default());
    feed(&mut undisturbed, 0, 25);
    let mut expected = undisturbed.watermark(14);
    feed(&mut undisturbed, 25, 60);
    expected.extend(undisturbed.watermark(i64::MAX));

    let mut first = harness(assigner, RestoredSlices::default());
    feed(&mut first, 0, 25);
    let before = first.watermark(14);
    let snapshot = first.op.snapshot_state(1).unwrap();
    assert!(!snapshot.keyed.is_empty());

    for parallelism in [1u32, 3] {
        let mut subtasks: Vec<Harness> = (0..parallelism)
            .map(|i| {
                let part = restrict(&snapshot, KeyGroupRange::for_subtask(128, parallelism, i));
                harness(assigner, slice_snapshot::restore(&part, &spec(assigner).aggs).unwrap())
            })
            .collect();
        // A row late for the restored watermark is dropped as it would have been.
        subtasks[0].row(0, 1.0, -5);
        assert_eq!(subtasks[0].late.get(), 1);
        for i in 25..60 {
            let key = i % 7;
            let kg = assign_to_key_group(key_hash(&GroupKey::of(&[Value::Int(key)])), 128);
            let owner = operator_index_for_key_group(128, parallelism, kg);
            subtasks[owner as usize].row(key, i as f64 * 0.25, i);
        }
        let mut rows: Vec<Emitted> = before.clone();
        let mut after: Vec<Emitted> = Vec::new();
        for s in &mut subtasks {
            after.extend(
                s.watermark(i64::MAX)
                    .into_iter()
                    .filter(|e| matches!(e, Emitted::Row(..))),
            );
        }
        after.push(Emitted::Watermark(i64::MAX));
        if parallelism > 1 {
            // Subtasks emit their keys separately; compare in window, then key order.
            let key = |e: &Emitted| match e {
                Emitted::Row(v, ts) => (*ts, format!("{:?}", v[3])),
                Emitted::Watermark(w) => (Some(*w), String::new()),
            };
            after.sort_by_key(key);
        }
        rows.extend(after);
        assert_eq!(rows, expected, "parallelism {parallelism}");
    }
}

#[test]
fn a_snapshot_of_another_operators_state_is_refused_with_a_clear_reason() {
    let mut foreign = OperatorSnapshot::default();
    foreign.keyed.push((3, vec![("window-contents".into(), vec![1, 2])]));
    let err = slice_snapshot::restore(&foreign, &spec(SliceAssigner::Tumble { size: 10 }).aggs).unwrap_err();
    assert!(err.contains("'window-contents'"), "{err}");
    let mut corrupt = OperatorSnapshot::default();
    corrupt
        .keyed
        .push((3, vec![(slice_snapshot::SLICES_STATE.into(), vec![0xff; 3])]));
    let err = slice_snapshot::restore(&corrupt, &spec(SliceAssigner::Tumble { size: 10 }).aggs).unwrap_err();
    assert!(err.contains("key group 3"), "{err}");
}

#[test]
fn a_projection_compiled_into_the_aggregate_emits_only_the_selected_columns_in_its_order() {
    let mut spec = spec(SliceAssigner::Tumble { size: 10 });
    spec.projection = Some(vec![0, 3, 4, 5]);
    let mut h = harness_of(spec.clone(), RestoredSlices::default());
    h.row(7, 1.5, 1);
    h.row(-2, 2.0, 3);
    h.row(7, 0.25, 5);
    let row = |values: Vec<Value>| Emitted::Row(values, Some(9));
    assert_eq!(
        h.watermark(9),
        vec![
            row(vec![
                Value::Timestamp(0),
                Value::Int(-2),
                Value::Int(1),
                Value::Double(2.0)
            ]),
            row(vec![
                Value::Timestamp(0),
                Value::Int(7),
                Value::Int(2),
                Value::Double(1.75)
            ]),
            Emitted::Watermark(9),
        ]
    );
    spec.projection = Some(vec![5, 3, 1, 3, 2]);
    let mut h = harness_of(spec, RestoredSlices::default());
    h.row(4, 1.0, 2);
    assert_eq!(
        h.watermark(9),
        vec![
            row(vec![
                Value::Double(1.0),
                Value::Int(4),
                Value::Timestamp(10),
                Value::Int(4),
                Value::Timestamp(9),
            ]),
            Emitted::Watermark(9),
        ]
    );
}

#[test]
fn each_window_of_a_tumble_counts_only_its_own_rows_when_fired_tables_are_reused() {
    let mut h = harness(SliceAssigner::Tumble { size: 10 }, RestoredSlices::default());
    let windows: [&[i64]; 4] = [&[3, 1, 3, 2], &[1 << 40, 5, -(1 << 40)], &[7], &[2, 9_000, 2]];
    for (w, keys) in windows.iter().enumerate() {
        let start = 10 * w as i64;
        for (n, key) in keys.iter().enumerate() {
            h.row(*key, n as f64, start + n as i64);
        }
        let mut expected: Vec<Emitted> = Vec::new();
        let mut distinct: Vec<i64> = keys.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        for key in distinct {
            let positions: Vec<usize> = (0..keys.len()).filter(|n| keys[*n] == key).collect();
            let sum = positions.iter().map(|n| *n as f64).sum();
            expected.push(out(start, start + 10, key, positions.len() as i64, sum));
        }
        expected.push(Emitted::Watermark(start + 9));
        assert_eq!(h.watermark(start + 9), expected, "window {w}");
        assert_eq!(h.op.num_slices(), 0);
    }
}

#[test]
fn rows_coming_to_slices_whose_index_was_released_still_find_their_keys_when_all_fire_at_the_end() {
    let mut h = harness(SliceAssigner::Tumble { size: 10 }, RestoredSlices::default());
    let windows = 3 * INDEXED_SLICES as i64;
    // Keys 0, 7, 14, ... of each window first, then (once every later slice exists)
    // the same keys again and one key more, in reverse window order.
    for w in 0..windows {
        for k in 0..5 {
            h.row(k * 7, 1.0, 10 * w + k);
        }
    }
    for w in (0..windows).rev() {
        for k in 0..6 {
            h.row(k * 7, 2.0, 10 * w + 9);
        }
    }
    let mut expected = Vec::new();
    for w in 0..windows {
        for k in 0..5 {
            expected.push(out(10 * w, 10 * w + 10, k * 7, 2, 3.0));
        }
        expected.push(out(10 * w, 10 * w + 10, 35, 1, 2.0));
    }
    expected.push(Emitted::Watermark(i64::MAX));
    assert_eq!(h.watermark(i64::MAX), expected);
    assert_eq!(h.op.num_slices(), 0);
}

/// The rows `(key, amount, timestamp)` of a BATCH input: each of `groups` key groups
/// sends its rows in buffers of `run` rows spanning many slices, the groups' buffers
/// interleaved (as a subtask reads its subpartitions), so every slice is revisited out of
/// order, by keys of every group.
fn interleaved_rows(
    groups: i64,
    rows_per_group: i64,
    run: i64,
    key_of: impl Fn(i64) -> Value,
) -> Vec<(Value, f64, i64)> {
    let mut rows = Vec::new();
    for buffer in 0..rows_per_group / run {
        for g in (0..groups).rev() {
            for n in buffer * run..(buffer + 1) * run {
                let seq = n * groups + g;
                rows.push((key_of(seq), (seq % 9) as f64 * 0.25, 7 * n + g));
            }
        }
    }
    rows
}

/// What a TUMBLE of `size` emits for `rows` when every window fires at the end: per
/// window, per key in ascending order, the count and sum (sums of quarters are exact in
/// any order).
fn tumbled(rows: &[(Value, f64, i64)], size: i64) -> Vec<Emitted> {
    let mut windows: BTreeMap<(i64, GroupKey), (i64, f64)> = BTreeMap::new();
    for (key, amount, ts) in rows {
        let start = ts - ts.rem_euclid(size);
        let acc = windows.entry((start, GroupKey::One(key.clone()))).or_insert((0, 0.0));
        acc.0 += 1;
        acc.1 += amount;
    }
    let mut out: Vec<Emitted> = windows
        .into_iter()
        .map(|((start, key), (count, sum))| {
            let mut values = vec![
                Value::Timestamp(start),
                Value::Timestamp(start + size),
                Value::Timestamp(start + size - 1),
            ];
            values.extend(key.values().iter().cloned());
            values.extend([Value::Int(count), Value::Double(sum)]);
            Emitted::Row(values, Some(start + size - 1))
        })
        .collect();
    out.push(Emitted::Watermark(i64::MAX));
    out
}

fn feed(h: &mut Harness, rows: &[(Value, f64, i64)]) {
    for (key, amount, ts) in rows {
        let row = Row::insert(vec![key.clone(), Value::Double(*amount)]);
        h.op.collect(StreamRecord {
            value: row,
            timestamp: Some(*ts),
        })
        .unwrap();
    }
}

#[test]
fn a_batch_aggregate_of_slices_revisited_out_of_order_emits_exactly_what_a_direct_computation_gives() {
    let assigner = SliceAssigner::Tumble { size: 60 };
    let compact = |seq: i64| Value::Int((seq * 7919) % 10_000);
    let spread = |seq: i64| Value::Int(((seq * 7919) % 3_000) << 32);
    let mixed = |seq: i64| match seq % 5 {
        0 => Value::Null,
        1 => Value::Str(format!("k{}", seq % 13)),
        _ => Value::Int(seq % 17 - 8),
    };
    let inputs = [
        interleaved_rows(12, 600, 47, compact),
        interleaved_rows(5, 400, 31, spread),
        interleaved_rows(3, 90, 9, mixed),
    ];
    // The projection of the usual `SELECT window_start, key, COUNT(*), SUM(..)`, built
    // in chunks of rows a column at a time, and the full rows.
    let projection = [0, 3, 4, 5];
    let projected = |emitted: &[Emitted]| -> Vec<Emitted> {
        emitted
            .iter()
            .map(|e| match e {
                Emitted::Row(values, ts) => Emitted::Row(projection.iter().map(|c| values[*c].clone()).collect(), *ts),
                other => other.clone(),
            })
            .collect()
    };
    for (n, rows) in inputs.iter().enumerate() {
        let expected = tumbled(rows, 60);
        if n == 0 {
            let first_window = expected
                .iter()
                .filter(|e| matches!(e, Emitted::Row(_, Some(59))))
                .count();
            assert!(
                first_window > ROWS_AT_ONCE,
                "a window of more rows than are built at once"
            );
        }
        for batch in [true, false] {
            let mut h = harness_in(spec(assigner), RestoredSlices::default(), batch);
            feed(&mut h, rows);
            assert_eq!(h.watermark(i64::MAX), expected, "input {n}, batch {batch}");
            assert_eq!(h.op.num_slices(), 0);
            let mut with_projection = spec(assigner);
            with_projection.projection = Some(projection.to_vec());
            let mut h = harness_in(with_projection, RestoredSlices::default(), batch);
            feed(&mut h, rows);
            assert_eq!(
                h.watermark(i64::MAX),
                projected(&expected),
                "input {n}, batch {batch}, projected"
            );
        }
    }
}

#[test]
fn a_batch_aggregate_fires_hop_windows_at_an_early_watermark_and_reuses_fired_tables_for_later_slices() {
    let assigner = SliceAssigner::Hop { size: 20, slide: 10 };
    let rows: Vec<(i64, f64, i64)> = (0..120)
        .map(|i| ((i * 37) % 11, (i % 4) as f64 * 0.5, (i * 13) % 60))
        .collect();
    let run = |batch: bool| {
        let mut h = harness_in(spec(assigner), RestoredSlices::default(), batch);
        for (key, amount, ts) in &rows[..80] {
            h.row(*key, *amount, *ts);
        }
        let mut emitted = h.watermark(29);
        for (key, amount, ts) in &rows[80..] {
            h.row(*key, *amount, *ts);
        }
        emitted.extend(h.watermark(i64::MAX));
        (emitted, h.late.get())
    };
    let (streaming, late) = run(false);
    assert!(late > 0, "rows of the fired windows' slices are late");
    assert_eq!(run(true), (streaming, late));
}

#[test]
fn a_batch_aggregates_snapshot_holds_keys_not_ids_and_restores_into_either_mode() {
    let assigner = SliceAssigner::Tumble { size: 10 };
    let rows: Vec<(Value, f64, i64)> = (0..40)
        .map(|i| match i % 3 {
            0 => (Value::Str(format!("s{}", i % 4)), 1.0, i),
            _ => (Value::Int(100 - i % 6), 0.5, i),
        })
        .collect();
    let mut streaming = harness_in(spec(assigner), RestoredSlices::default(), false);
    let mut batch = harness_in(spec(assigner), RestoredSlices::default(), true);
    feed(&mut streaming, &rows);
    feed(&mut batch, &rows);
    let snapshot = batch.op.snapshot_state(1).unwrap();
    assert_eq!(snapshot, streaming.op.snapshot_state(1).unwrap());
    let expected = tumbled(&rows, 10);
    for restored_batch in [true, false] {
        let restored = slice_snapshot::restore(&snapshot, &spec(assigner).aggs).unwrap();
        let mut h = harness_in(spec(assigner), restored, restored_batch);
        assert_eq!(h.watermark(i64::MAX), expected, "restored in batch: {restored_batch}");
    }
}
