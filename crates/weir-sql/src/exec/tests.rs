use super::group_agg::{GroupAggFunction, GroupState};
use super::window_agg::CumulativeWindows;
use crate::plan::{AggCall, AggFunc};
use crate::types::DataType;
use crate::value::{Row, RowKind, Value};
use weir_api::prelude::*;
use weir_api::windowing::{AssignerContext, WindowAssigner};

/// An aggregate call of `func` over column `arg` of type `t`.
pub(super) fn call(func: AggFunc, distinct: bool, arg: Option<usize>, t: DataType, result: DataType) -> AggCall {
    AggCall {
        func,
        distinct,
        arg,
        arg_type: t,
        result_type: result,
    }
}

fn kinds(rows: &[Row]) -> Vec<(&'static str, Vec<Value>)> {
    rows.iter().map(|r| (r.kind.short(), r.values.clone())).collect()
}

#[test]
fn a_group_emits_insert_then_update_pairs_and_a_delete_when_its_last_row_is_retracted() {
    // Input rows: key, amount (DECIMAL(10, 2)).
    let f = GroupAggFunction::new(
        1,
        vec![
            call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt),
            call(
                AggFunc::Sum,
                false,
                Some(1),
                DataType::Decimal(10, 2),
                DataType::Decimal(38, 2),
            ),
            call(
                AggFunc::Max,
                false,
                Some(1),
                DataType::Decimal(10, 2),
                DataType::Decimal(10, 2),
            ),
        ],
        RuntimeModeHandle::default(),
    );
    let mut s = GroupState::default();
    let row = |kind, cents| Row {
        kind,
        values: vec![Value::Str("u".into()), Value::Decimal(cents, 2)],
    };
    let out = f.step(&mut s, &row(RowKind::Insert, 150));
    assert_eq!(
        kinds(&out),
        vec![(
            "+I",
            vec![
                Value::Str("u".into()),
                Value::Int(1),
                Value::Decimal(150, 2),
                Value::Decimal(150, 2)
            ]
        )]
    );
    let out = f.step(&mut s, &row(RowKind::Insert, 250));
    assert_eq!(
        kinds(&out),
        vec![
            (
                "-U",
                vec![
                    Value::Str("u".into()),
                    Value::Int(1),
                    Value::Decimal(150, 2),
                    Value::Decimal(150, 2)
                ]
            ),
            (
                "+U",
                vec![
                    Value::Str("u".into()),
                    Value::Int(2),
                    Value::Decimal(400, 2),
                    Value::Decimal(250, 2)
                ]
            ),
        ]
    );
    let out = f.step(&mut s, &row(RowKind::UpdateBefore, 250));
    assert_eq!(
        out[1].values[3],
        Value::Decimal(150, 2),
        "MAX falls back after a retraction"
    );
    let out = f.step(&mut s, &row(RowKind::Delete, 150));
    assert_eq!(
        kinds(&out),
        vec![(
            "-D",
            vec![
                Value::Str("u".into()),
                Value::Int(1),
                Value::Decimal(150, 2),
                Value::Decimal(150, 2)
            ]
        )]
    );
}

#[test]
fn count_distinct_and_avg_ignore_nulls_and_count_each_value_once() {
    let f = GroupAggFunction::new(
        0,
        vec![
            call(AggFunc::Count, true, Some(0), DataType::Int, DataType::BigInt),
            call(AggFunc::Avg, false, Some(0), DataType::Int, DataType::Int),
        ],
        RuntimeModeHandle::default(),
    );
    let mut s = GroupState::default();
    let mut last = Vec::new();
    for v in [Value::Int(4), Value::Int(4), Value::Null, Value::Int(1)] {
        last = f.step(&mut s, &Row::insert(vec![v]));
    }
    assert_eq!(last.last().unwrap().values, vec![Value::Int(2), Value::Int(3)]);
}

#[test]
fn cumulate_windows_grow_by_their_step_up_to_the_max_size() {
    let w = CumulativeWindows { step: 10, size: 30 };
    let clock = weir_runtime::operator::ProcessingTimeService::default();
    let mut out = Vec::new();
    WindowAssigner::<(), TimeWindow>::assign_windows(&w, &(), 45, &AssignerContext::new(&clock), &mut out).unwrap();
    let got: Vec<(i64, i64)> = out.iter().map(|w| (w.start(), w.end())).collect();
    assert_eq!(got, vec![(30, 50), (30, 60)]);
}

#[test]
fn an_int_sum_wraps_as_a_java_int_and_an_overflowing_decimal_sum_stays_null() {
    use super::acc::{create, result, update};
    let int_sum = call(AggFunc::Sum, false, Some(0), DataType::Int, DataType::Int);
    let mut acc = create(&int_sum);
    update(&int_sum, &mut acc, &[Value::Int(i64::from(i32::MAX))], false);
    update(&int_sum, &mut acc, &[Value::Int(2)], false);
    assert_eq!(result(&int_sum, &acc), Value::Int(i64::from(i32::MIN) + 1));
    // Taking the value back out wraps back.
    update(&int_sum, &mut acc, &[Value::Int(2)], true);
    assert_eq!(result(&int_sum, &acc), Value::Int(i64::from(i32::MAX)));

    let dec_sum = call(
        AggFunc::Sum,
        false,
        Some(0),
        DataType::Decimal(38, 0),
        DataType::Decimal(38, 0),
    );
    let mut acc = create(&dec_sum);
    let big = Value::Decimal(10i128.pow(37) * 6, 0);
    update(&dec_sum, &mut acc, std::slice::from_ref(&big), false);
    update(&dec_sum, &mut acc, std::slice::from_ref(&big), false);
    assert_eq!(result(&dec_sum, &acc), Value::Null);
    update(&dec_sum, &mut acc, &[Value::Decimal(1, 0)], false);
    assert_eq!(
        result(&dec_sum, &acc),
        Value::Null,
        "an overflowed sum does not restart from zero"
    );
}
