//! Typed accumulator columns of the slicing window aggregate: a slice holds, per
//! aggregate call, one column with an accumulator per key. `COUNT` is a column of
//! `i64`, `SUM`/`AVG` over FLOAT/DOUBLE a column of `f64` sums with their counts, both
//! updated in place; every other aggregate (integer and DECIMAL sums, MIN, MAX,
//! DISTINCT) is a column of the general [`Acc`].
//!
//! Invariant: a typed column computes exactly what the general [`Acc`]s of the same
//! call compute, value for value (the same sum order, NULLs skipped, an empty sum
//! NULL); [`AccColumn::get`] gives that `Acc`, which is what merges and snapshots go
//! through. A value of another kind than the typed column expects (or a restored `Acc`
//! it cannot hold) turns the whole column into its general form first. Every column of
//! a table has one accumulator per key.

use super::acc::{self, Acc};
use super::cache_warm;
use crate::plan::{AggCall, AggFunc};
use crate::types::DataType;
use crate::value::Value;

/// The accumulators of one aggregate call, one per key of a slice.
#[derive(Debug, Clone, PartialEq)]
pub enum AccColumn {
    /// A non-distinct `COUNT`.
    Count(Vec<i64>),
    /// A non-distinct `SUM`/`AVG` over FLOAT or DOUBLE: the sums and how many values
    /// each holds (a sum is meaningless while its count is 0).
    DoubleSum {
        /// The sums.
        sums: Vec<f64>,
        /// Values summed.
        counts: Vec<i64>,
    },
    /// Any other aggregate.
    General(Vec<Acc>),
}

impl AccColumn {
    /// An empty column for `call`.
    pub fn create(call: &AggCall) -> Self {
        match (call.func, call.distinct, call.arg_type) {
            (AggFunc::Count, false, _) => AccColumn::Count(Vec::new()),
            (AggFunc::Sum | AggFunc::Avg, false, DataType::Double | DataType::Float) => AccColumn::DoubleSum {
                sums: Vec::new(),
                counts: Vec::new(),
            },
            _ => AccColumn::General(Vec::new()),
        }
    }

    /// Empties the column for accumulators of `call`, keeping its memory when it has
    /// the form a new column of `call` has.
    pub fn clear(&mut self, call: &AggCall) {
        match (&mut *self, AccColumn::create(call)) {
            (AccColumn::Count(n), AccColumn::Count(_)) => n.clear(),
            (AccColumn::DoubleSum { sums, counts }, AccColumn::DoubleSum { .. }) => {
                sums.clear();
                counts.clear();
            }
            (AccColumn::General(accs), AccColumn::General(_)) => accs.clear(),
            (_, fresh) => *self = fresh,
        }
    }

    /// Makes room for `additional` more accumulators.
    pub fn reserve(&mut self, additional: usize) {
        match self {
            AccColumn::Count(n) => n.reserve(additional),
            AccColumn::DoubleSum { sums, counts } => {
                sums.reserve(additional);
                counts.reserve(additional);
            }
            AccColumn::General(accs) => accs.reserve(additional),
        }
    }

    /// Accumulators held.
    pub fn len(&self) -> usize {
        match self {
            AccColumn::Count(n) => n.len(),
            AccColumn::DoubleSum { counts, .. } => counts.len(),
            AccColumn::General(accs) => accs.len(),
        }
    }

    /// True when no accumulator is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Brings the typed accumulators into the cache ([`cache_warm`]).
    pub fn warm(&self) {
        match self {
            AccColumn::Count(n) => cache_warm::warm(n),
            AccColumn::DoubleSum { sums, counts } => {
                cache_warm::warm(sums);
                cache_warm::warm(counts);
            }
            AccColumn::General(_) => {}
        }
    }

    /// Appends the empty accumulator of `call` (a new key).
    #[inline(always)]
    pub fn push_empty(&mut self, call: &AggCall) {
        match self {
            AccColumn::Count(n) => n.push(0),
            AccColumn::DoubleSum { sums, counts } => {
                sums.push(0.0);
                counts.push(0);
            }
            AccColumn::General(accs) => accs.push(acc::create(call)),
        }
    }

    /// Appends `acc`, an accumulator of `call` (a restored or merged entry).
    pub fn push(&mut self, call: &AggCall, acc: Acc) {
        self.push_empty(call);
        let last = self.len() - 1;
        self.set(last, acc);
    }

    /// The general accumulator holding the state of entry `i`.
    pub fn get(&self, i: usize) -> Acc {
        match self {
            AccColumn::Count(n) => Acc::Count(n[i]),
            AccColumn::DoubleSum { counts, .. } if counts[i] == 0 => Acc::Sum(Value::Null, 0),
            AccColumn::DoubleSum { sums, counts } => Acc::Sum(Value::Double(sums[i]), counts[i]),
            AccColumn::General(accs) => accs[i].clone(),
        }
    }

    /// Replaces entry `i` with `acc`, an accumulator of this column's call.
    pub fn set(&mut self, i: usize, acc: Acc) {
        match (&mut *self, acc) {
            (AccColumn::Count(n), Acc::Count(c)) => n[i] = c,
            (AccColumn::DoubleSum { sums, counts }, Acc::Sum(Value::Double(sum), c)) => {
                sums[i] = sum;
                counts[i] = c;
            }
            (AccColumn::DoubleSum { sums, counts }, Acc::Sum(_, 0)) => {
                sums[i] = 0.0;
                counts[i] = 0;
            }
            (AccColumn::General(accs), acc) => accs[i] = acc,
            (_, acc) => {
                self.generalize();
                self.set(i, acc);
            }
        }
    }

    /// Turns the column into general accumulators holding the same states.
    fn generalize(&mut self) {
        if !matches!(self, AccColumn::General(_)) {
            let accs = (0..self.len()).map(|i| self.get(i)).collect();
            *self = AccColumn::General(accs);
        }
    }

    /// Adds (`retract` false) or takes back the argument of `call` in `row` to entry `i`.
    #[inline(always)]
    pub fn update(&mut self, call: &AggCall, i: usize, row: &[Value], retract: bool) {
        let sign = if retract { -1 } else { 1 };
        match self {
            AccColumn::Count(n) => {
                let counted = match call.arg {
                    None => true,
                    Some(a) => row.get(a).is_some_and(|v| !v.is_null()),
                };
                if counted {
                    n[i] = n[i].wrapping_add(sign);
                }
            }
            AccColumn::DoubleSum { sums, counts } => match call.arg.and_then(|a| row.get(a)) {
                None | Some(Value::Null) => {}
                Some(Value::Double(d)) => {
                    let base = if counts[i] == 0 { 0.0 } else { sums[i] };
                    sums[i] = if retract { base - d } else { base + d };
                    counts[i] = counts[i].wrapping_add(sign);
                }
                Some(_) => {
                    self.generalize();
                    self.update(call, i, row, retract);
                }
            },
            AccColumn::General(accs) => acc::update(call, &mut accs[i], row, retract),
        }
    }

    /// Entry `i` with entry `j` of `other` (a later slice of the same window) added.
    pub fn merge(&mut self, call: &AggCall, i: usize, other: &AccColumn, j: usize) {
        match (&mut *self, other) {
            (AccColumn::Count(x), AccColumn::Count(y)) => x[i] = x[i].wrapping_add(y[j]),
            _ => {
                let merged = acc::merge(call, self.get(i), other.get(j));
                self.set(i, merged);
            }
        }
    }

    /// Appends the results of `entries` (what [`AccColumn::result`] gives) to `rows`,
    /// one each, in order.
    pub fn push_results(&self, call: &AggCall, entries: impl Iterator<Item = usize>, rows: &mut [Vec<Value>]) {
        let rows = rows.iter_mut().zip(entries);
        match self {
            AccColumn::Count(n) => rows.for_each(|(row, i)| row.push(Value::Int(n[i]))),
            AccColumn::DoubleSum { sums, counts } => {
                let avg = matches!(call.func, AggFunc::Avg);
                for (row, i) in rows {
                    row.push(match counts[i] {
                        0 => Value::Null,
                        n if avg => Value::Double(sums[i] / n as f64),
                        _ => Value::Double(sums[i]),
                    });
                }
            }
            AccColumn::General(accs) => rows.for_each(|(row, i)| row.push(acc::result(call, &accs[i]))),
        }
    }

    /// The aggregate's result of entry `i` (what [`acc::result`] gives for
    /// [`AccColumn::get`]).
    #[inline]
    pub fn result(&self, call: &AggCall, i: usize) -> Value {
        match self {
            AccColumn::Count(n) => Value::Int(n[i]),
            AccColumn::DoubleSum { counts, .. } if counts[i] == 0 => Value::Null,
            AccColumn::DoubleSum { sums, counts } => match call.func {
                AggFunc::Avg => Value::Double(sums[i] / counts[i] as f64),
                _ => Value::Double(sums[i]),
            },
            AccColumn::General(accs) => acc::result(call, &accs[i]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::tests::call;

    /// `acc` with the meaningless sum of an empty sum cleared.
    fn normalized(acc: Acc) -> Acc {
        match acc {
            Acc::Sum(_, 0) => Acc::Sum(Value::Null, 0),
            acc => acc,
        }
    }

    /// Feeds `rows` (insert when true) to entry 0 of a typed column of `c` and to a
    /// general accumulator.
    fn both(c: &AggCall, rows: &[(Value, bool)]) -> (AccColumn, Acc) {
        let mut typed = AccColumn::create(c);
        typed.push_empty(c);
        let mut general = acc::create(c);
        for (v, insert) in rows {
            typed.update(c, 0, std::slice::from_ref(v), !insert);
            acc::update(c, &mut general, std::slice::from_ref(v), !insert);
        }
        (typed, general)
    }

    #[test]
    fn typed_counts_and_double_sums_compute_what_the_general_accumulators_do() {
        let d = |x: f64| Value::Double(x);
        let cases = [
            call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt),
            call(AggFunc::Count, false, Some(0), DataType::Double, DataType::BigInt),
            call(AggFunc::Sum, false, Some(0), DataType::Double, DataType::Double),
            call(AggFunc::Avg, false, Some(0), DataType::Double, DataType::Double),
        ];
        let rows = [
            (d(0.1), true),
            (Value::Null, true),
            (d(-0.0), true),
            (d(0.2), true),
            (d(0.1), false),
            (d(0.3), true),
        ];
        for c in &cases {
            for n in 0..=rows.len() {
                let (typed, general) = both(c, &rows[..n]);
                assert!(!matches!(typed, AccColumn::General(_)), "{c:?}");
                assert_eq!(typed.get(0), normalized(general.clone()), "{c:?} after {n} rows");
                assert_eq!(typed.result(c, 0), acc::result(c, &general), "{c:?} after {n} rows");
            }
        }
        // A sum of no values and a sum taken back to no values are NULL.
        let sum = &cases[2];
        assert_eq!(both(sum, &[]).0.result(sum, 0), Value::Null);
        assert_eq!(
            both(sum, &[(d(1.5), true), (d(1.5), false)]).0.result(sum, 0),
            Value::Null
        );
    }

    /// Found by `typed_accumulators_compute_exactly_what_the_general_accumulators_compute`:
    /// a count restored at Java's `long` limit panicked on the next row (overflow) in
    /// both paths; Flink's `long` count wraps.
    #[test]
    fn a_count_at_javas_long_limit_wraps_in_the_typed_and_the_general_accumulator() {
        let star = call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt);
        let mut typed = AccColumn::create(&star);
        typed.push(&star, Acc::Count(i64::MAX));
        let mut general = Acc::Count(i64::MAX);
        typed.update(&star, 0, &[Value::Null], false);
        acc::update(&star, &mut general, &[Value::Null], false);
        assert_eq!(typed.get(0), Acc::Count(i64::MIN));
        assert_eq!(general, Acc::Count(i64::MIN));
        typed.update(&star, 0, &[Value::Null], true);
        acc::update(&star, &mut general, &[Value::Null], true);
        assert_eq!((typed.get(0), general), (Acc::Count(i64::MAX), Acc::Count(i64::MAX)));
        // A sum's count wraps too, and so does an integer AVG's division.
        let avg = call(AggFunc::Avg, false, Some(0), DataType::BigInt, DataType::BigInt);
        let mut sum = Acc::Sum(Value::Int(i64::MIN), i64::MAX);
        acc::update(&avg, &mut sum, &[Value::Int(0)], false);
        assert_eq!(sum, Acc::Sum(Value::Int(i64::MIN), i64::MIN));
        let taken_back = Acc::Sum(Value::Int(i64::MIN), -1);
        assert_eq!(acc::result(&avg, &taken_back), Value::Int(i64::MIN));
    }

    #[test]
    fn a_value_the_typed_column_does_not_expect_turns_the_column_general() {
        let c = call(AggFunc::Sum, false, Some(0), DataType::Double, DataType::Double);
        let mut column = AccColumn::create(&c);
        column.push_empty(&c);
        column.push_empty(&c);
        column.update(&c, 0, &[Value::Double(1.25)], false);
        column.update(&c, 1, &[Value::Double(0.5)], false);
        column.update(&c, 1, &[Value::Int(2)], false);
        assert!(matches!(column, AccColumn::General(_)));
        assert_eq!(column.result(&c, 0), Value::Double(1.25));
        let mut general = acc::create(&c);
        acc::update(&c, &mut general, &[Value::Double(0.5)], false);
        acc::update(&c, &mut general, &[Value::Int(2)], false);
        assert_eq!(column.result(&c, 1), acc::result(&c, &general));
    }

    #[test]
    fn merged_entries_give_the_general_merge() {
        let c = call(AggFunc::Sum, false, Some(0), DataType::Double, DataType::Double);
        let (mut a, ga) = both(&c, &[(Value::Double(0.5), true)]);
        let (empty, ge) = both(&c, &[]);
        let (b, gb) = both(&c, &[(Value::Double(2.0), true)]);
        a.merge(&c, 0, &empty, 0);
        a.merge(&c, 0, &b, 0);
        let general = acc::merge(&c, acc::merge(&c, ga, ge), gb);
        assert_eq!(a.get(0), normalized(general));
        assert_eq!(a.result(&c, 0), Value::Double(2.5));

        let count = call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt);
        let mut x = AccColumn::Count(vec![2]);
        x.merge(&count, 0, &AccColumn::Count(vec![7, 3]), 1);
        assert_eq!(x.result(&count, 0), Value::Int(5));
    }

    #[test]
    fn restored_accumulators_keep_the_typed_form_when_they_fit() {
        let c = call(AggFunc::Avg, false, Some(0), DataType::Double, DataType::Double);
        let (typed, _) = both(&c, &[(Value::Double(3.0), true), (Value::Double(4.0), true)]);
        let mut restored = AccColumn::create(&c);
        restored.push(&c, typed.get(0));
        restored.push(&c, Acc::Sum(Value::Null, 0));
        assert_eq!(restored.get(0), typed.get(0));
        assert!(matches!(restored, AccColumn::DoubleSum { .. }));
        restored.push(&c, Acc::Sum(Value::Int(7), 1));
        assert!(matches!(restored, AccColumn::General(_)));
        assert_eq!(restored.get(0), typed.get(0));
        assert_eq!(restored.get(1), Acc::Sum(Value::Null, 0));
        assert_eq!(restored.get(2), Acc::Sum(Value::Int(7), 1));
    }

    #[test]
    fn results_pushed_a_column_at_a_time_are_the_results_of_each_entry() {
        let cases = [
            call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt),
            call(AggFunc::Sum, false, Some(0), DataType::Double, DataType::Double),
            call(AggFunc::Avg, false, Some(0), DataType::Double, DataType::Double),
            call(AggFunc::Max, false, Some(0), DataType::Double, DataType::Double),
        ];
        for c in &cases {
            let mut column = AccColumn::create(c);
            for _ in 0..4 {
                column.push_empty(c);
            }
            for (i, x) in [(0, 1.5), (2, 0.25), (0, 3.0), (3, -2.0)] {
                column.update(c, i, &[Value::Double(x)], false);
            }
            let order = [3, 1, 0, 2, 0];
            let mut rows: Vec<Vec<Value>> = vec![vec![Value::Null]; order.len()];
            column.push_results(c, order.iter().copied(), &mut rows);
            let expected: Vec<Vec<Value>> = order.iter().map(|i| vec![Value::Null, column.result(c, *i)]).collect();
            assert_eq!(rows, expected, "{c:?}");
        }
    }
}
