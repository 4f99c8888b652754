//! Typed accumulators of the slicing window aggregate: `COUNT` as an `i64` and `SUM`/
//! `AVG` over FLOAT/DOUBLE as an `f64` with its count, updated in place; every other
//! aggregate (integer and DECIMAL sums, MIN, MAX, DISTINCT) is the general [`Acc`].
//!
//! Invariant: a typed accumulator computes exactly what the general [`Acc`] of the same
//! call computes, value for value (the same sum order, NULLs skipped, an empty sum
//! NULL); [`TypedAcc::to_acc`] gives that `Acc`, which is what results, merges and
//! snapshots go through. A value of another kind than the typed path expects turns the
//! accumulator into its general form before it is added.

use super::acc::{self, Acc};
use crate::plan::{AggCall, AggFunc};
use crate::types::DataType;
use crate::value::Value;

/// One aggregate's accumulator in a slice.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedAcc {
    /// A non-distinct `COUNT`.
    Count(i64),
    /// A non-distinct `SUM`/`AVG` over FLOAT or DOUBLE: the sum and how many values it
    /// holds (the sum is meaningless while the count is 0).
    DoubleSum {
        /// The sum.
        sum: f64,
        /// Values summed.
        n: i64,
    },
    /// Any other aggregate.
    General(Acc),
}

impl TypedAcc {
    /// A new accumulator for `call`.
    pub fn create(call: &AggCall) -> Self {
        match (call.func, call.distinct, call.arg_type) {
            (AggFunc::Count, false, _) => TypedAcc::Count(0),
            (AggFunc::Sum | AggFunc::Avg, false, DataType::Double | DataType::Float) => {
                TypedAcc::DoubleSum { sum: 0.0, n: 0 }
            }
            _ => TypedAcc::General(acc::create(call)),
        }
    }

    /// The typed form of `acc`, an accumulator of `call`.
    pub fn from_acc(call: &AggCall, acc: Acc) -> Self {
        match (Self::create(call), acc) {
            (TypedAcc::Count(_), Acc::Count(n)) => TypedAcc::Count(n),
            (TypedAcc::DoubleSum { .. }, Acc::Sum(Value::Double(sum), n)) => TypedAcc::DoubleSum { sum, n },
            (TypedAcc::DoubleSum { .. }, Acc::Sum(_, 0)) => TypedAcc::DoubleSum { sum: 0.0, n: 0 },
            (_, acc) => TypedAcc::General(acc),
        }
    }

    /// The general accumulator holding the same state.
    pub fn to_acc(&self) -> Acc {
        match self {
            TypedAcc::Count(n) => Acc::Count(*n),
            TypedAcc::DoubleSum { n: 0, .. } => Acc::Sum(Value::Null, 0),
            TypedAcc::DoubleSum { sum, n } => Acc::Sum(Value::Double(*sum), *n),
            TypedAcc::General(acc) => acc.clone(),
        }
    }

    /// Adds (`retract` false) or takes back the argument of `call` in `row`.
    #[inline]
    pub fn update(&mut self, call: &AggCall, row: &[Value], retract: bool) {
        let sign = if retract { -1 } else { 1 };
        match self {
            TypedAcc::Count(n) => {
                let counted = match call.arg {
                    None => true,
                    Some(i) => row.get(i).is_some_and(|v| !v.is_null()),
                };
                if counted {
                    *n += sign;
                }
            }
            TypedAcc::DoubleSum { sum, n } => match call.arg.and_then(|i| row.get(i)) {
                None | Some(Value::Null) => {}
                Some(Value::Double(d)) => {
                    let base = if *n == 0 { 0.0 } else { *sum };
                    *sum = if retract { base - d } else { base + d };
                    *n += sign;
                }
                Some(_) => {
                    let mut general = self.to_acc();
                    acc::update(call, &mut general, row, retract);
                    *self = TypedAcc::General(general);
                }
            },
            TypedAcc::General(acc) => acc::update(call, acc, row, retract),
        }
    }

    /// This accumulator with `other`'s values added (the slices of one window).
    pub fn merge(&mut self, call: &AggCall, other: &TypedAcc) {
        match (&mut *self, other) {
            (TypedAcc::Count(x), TypedAcc::Count(y)) => *x = x.wrapping_add(*y),
            _ => {
                let merged = acc::merge(call, self.to_acc(), other.to_acc());
                *self = TypedAcc::from_acc(call, merged);
            }
        }
    }

    /// The aggregate's result.
    pub fn result(&self, call: &AggCall) -> Value {
        match self {
            TypedAcc::General(acc) => acc::result(call, acc),
            typed => acc::result(call, &typed.to_acc()),
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

    /// Feeds `rows` (insert when true) to a typed and a general accumulator of `c`.
    fn both(c: &AggCall, rows: &[(Value, bool)]) -> (TypedAcc, Acc) {
        let mut typed = TypedAcc::create(c);
        let mut general = acc::create(c);
        for (v, insert) in rows {
            typed.update(c, std::slice::from_ref(v), !insert);
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
                assert!(!matches!(typed, TypedAcc::General(_)), "{c:?}");
                assert_eq!(typed.to_acc(), normalized(general.clone()), "{c:?} after {n} rows");
                assert_eq!(typed.result(c), acc::result(c, &general), "{c:?} after {n} rows");
            }
        }
        // A sum of no values and a sum taken back to no values are NULL.
        let sum = &cases[2];
        assert_eq!(both(sum, &[]).0.result(sum), Value::Null);
        assert_eq!(both(sum, &[(d(1.5), true), (d(1.5), false)]).0.result(sum), Value::Null);
    }

    #[test]
    fn a_value_the_typed_path_does_not_expect_goes_through_the_general_accumulator() {
        let c = call(AggFunc::Sum, false, Some(0), DataType::Double, DataType::Double);
        let rows = [(Value::Double(1.25), true), (Value::Int(2), true)];
        let (typed, general) = both(&c, &rows);
        assert!(matches!(typed, TypedAcc::General(_)));
        assert_eq!(typed.result(&c), acc::result(&c, &general));
    }

    #[test]
    fn merged_slices_give_the_general_merge() {
        let c = call(AggFunc::Sum, false, Some(0), DataType::Double, DataType::Double);
        let (mut a, ga) = both(&c, &[(Value::Double(0.5), true)]);
        let (empty, ge) = both(&c, &[]);
        let (b, gb) = both(&c, &[(Value::Double(2.0), true)]);
        a.merge(&c, &empty);
        a.merge(&c, &b);
        let general = acc::merge(&c, acc::merge(&c, ga, ge), gb);
        assert_eq!(a.to_acc(), normalized(general));
        assert_eq!(a.result(&c), Value::Double(2.5));

        let count = call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt);
        let mut x = TypedAcc::Count(2);
        x.merge(&count, &TypedAcc::Count(3));
        assert_eq!(x.result(&count), Value::Int(5));
    }

    #[test]
    fn a_snapshot_accumulator_restores_to_its_typed_form() {
        let c = call(AggFunc::Avg, false, Some(0), DataType::Double, DataType::Double);
        let (typed, _) = both(&c, &[(Value::Double(3.0), true), (Value::Double(4.0), true)]);
        assert_eq!(TypedAcc::from_acc(&c, typed.to_acc()), typed);
        let empty = TypedAcc::create(&c);
        assert_eq!(TypedAcc::from_acc(&c, empty.to_acc()), empty);
    }
}
