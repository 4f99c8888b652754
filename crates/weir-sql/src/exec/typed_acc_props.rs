//! Property test of the typed accumulator columns ([`super::typed_acc`]) against the
//! general accumulators ([`super::acc`]): every call the typed columns hold (COUNT(*),
//! COUNT of a column, SUM and AVG over FLOAT and DOUBLE) fed the same generated inserts,
//! retractions, merges and restored states, with NULLs, NaN, infinities, negative zero,
//! counts at Java's `long` limits and values of another kind than the column expects.

use super::acc::{self, Acc};
use super::tests::call;
use super::typed_acc::AccColumn;
use crate::plan::{AggCall, AggFunc};
use crate::types::DataType;
use crate::value::Value;
use proptest::prelude::*;

/// The calls a typed column holds.
fn typed_calls() -> Vec<AggCall> {
    vec![
        call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt),
        call(AggFunc::Count, false, Some(0), DataType::Double, DataType::BigInt),
        call(AggFunc::Count, false, Some(0), DataType::BigInt, DataType::BigInt),
        call(AggFunc::Sum, false, Some(0), DataType::Double, DataType::Double),
        call(AggFunc::Avg, false, Some(0), DataType::Double, DataType::Double),
        call(AggFunc::Sum, false, Some(0), DataType::Float, DataType::Float),
        call(AggFunc::Avg, false, Some(0), DataType::Float, DataType::Float),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => Just(Value::Null),
        1 => prop::sample::select(vec![i64::MAX, i64::MIN, 0, 2]).prop_map(Value::Int),
        3 => prop::sample::select(crate::edge_values::EDGE_DOUBLES.to_vec())
        .prop_map(Value::Double),
        6 => any::<f64>().prop_map(Value::Double),
        6 => (-1e3f64..1e3).prop_map(Value::Double),
    ]
}

/// A restored accumulator of a COUNT or of a SUM/AVG.
fn restored(count: bool) -> BoxedStrategy<Acc> {
    let n = prop_oneof![
        prop::sample::select(vec![i64::MAX, i64::MIN, i64::MAX - 1, 0, 1, -1]),
        -5i64..1000
    ];
    if count {
        n.prop_map(Acc::Count).boxed()
    } else {
        prop_oneof![
            1 => Just(Acc::Sum(Value::Null, 0)),
            1 => (-5i64..5).prop_map(|n| Acc::Sum(Value::Int(7), n)),
            4 => (any::<f64>(), n).prop_map(|(s, n)| if n == 0 { Acc::Sum(Value::Null, 0) } else { Acc::Sum(Value::Double(s), n) }),
        ]
        .boxed()
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Adds (or takes back) a value of the call's argument to key `key`.
    Update { key: usize, value: Value, retract: bool },
    /// Merges key `from` of the other column into key `key`.
    Merge { key: usize, from: usize },
}

fn op(keys: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..keys, value(), prop::bool::weighted(0.3)).prop_map(|(key, value, retract)| Op::Update { key, value, retract }),
        1 => (0..keys, 0..keys).prop_map(|(key, from)| Op::Merge { key, from }),
    ]
}

/// A typed column and general accumulators, entry for entry.
struct Both {
    typed: AccColumn,
    general: Vec<Acc>,
}

impl Both {
    fn new(c: &AggCall, restored: &[Option<Acc>]) -> Self {
        let mut both = Both {
            typed: AccColumn::create(c),
            general: Vec::new(),
        };
        for r in restored {
            match r {
                Some(a) => {
                    both.typed.push(c, a.clone());
                    both.general.push(a.clone());
                }
                None => {
                    both.typed.push_empty(c);
                    both.general.push(acc::create(c));
                }
            }
        }
        both
    }

    fn update(&mut self, c: &AggCall, key: usize, value: &Value, retract: bool) {
        self.typed.update(c, key, std::slice::from_ref(value), retract);
        acc::update(c, &mut self.general[key], std::slice::from_ref(value), retract);
    }
}

/// `acc` with the meaningless sum of an empty sum cleared, as text (doubles exactly).
fn normalized(acc: Acc) -> String {
    match acc {
        Acc::Sum(_, 0) => format!("{:?}", Acc::Sum(Value::Null, 0)),
        acc => format!("{acc:?}"),
    }
}

fn restored_states(count: bool) -> impl Strategy<Value = Vec<Option<Acc>>> {
    prop::collection::vec(prop::option::weighted(0.3, restored(count)), 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// After any inserts, retractions and merges from any restored states, every entry
    /// of a typed column holds the general accumulator's state and gives its result,
    /// one at a time and a column at a time.
    #[test]
    fn typed_accumulators_compute_exactly_what_the_general_accumulators_compute(
        which in 0..7usize,
        (states, other_states, ops, other_ops) in any::<bool>().prop_flat_map(|count| (
            restored_states(count),
            restored_states(count),
            prop::collection::vec(op(4), 0..40),
            prop::collection::vec(op(4), 0..10),
        )),
    ) {
        let c = &typed_calls()[which];
        let counting = matches!(c.func, AggFunc::Count);
        // A COUNT's restored states are counts, a sum's sums.
        let fits = |s: &Option<Acc>| s.as_ref().is_none_or(|a| matches!(a, Acc::Count(_)) == counting);
        if !states.iter().all(fits) || !other_states.iter().all(fits) {
            return Ok(());
        }
        let mut main = Both::new(c, &states);
        let mut other = Both::new(c, &other_states);
        for op in &other_ops {
            if let Op::Update { key, value, retract } = op {
                let key = key % other_states.len();
                other.update(c, key, value, *retract);
            }
        }
        for op in &ops {
            match op {
                Op::Update { key, value, retract } => {
                    let key = key % states.len();
                    main.update(c, key, value, *retract);
                }
                Op::Merge { key, from } => {
                    let (key, from) = (key % states.len(), from % other_states.len());
                    main.typed.merge(c, key, &other.typed, from);
                    let merged = acc::merge(c, main.general[key].clone(), other.general[from].clone());
                    main.general[key] = merged;
                }
            }
        }
        let keys = states.len();
        let mut rows = vec![Vec::new(); keys];
        main.typed.push_results(c, (0..keys).rev(), &mut rows);
        for i in 0..keys {
            let general = &main.general[i];
            prop_assert_eq!(normalized(main.typed.get(i)), normalized(general.clone()), "{:?} entry {}", c, i);
            let expected = format!("{:?}", acc::result(c, general));
            prop_assert_eq!(format!("{:?}", main.typed.result(c, i)), expected.clone(), "{:?} entry {}", c, i);
            prop_assert_eq!(format!("{:?}", rows[keys - 1 - i]), format!("[{expected}]"), "{:?} entry {}", c, i);
        }
    }
}
