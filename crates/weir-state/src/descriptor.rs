//! Named, typed declarations of keyed state, as Flink's `StateDescriptor`s.

use std::marker::PhantomData;

macro_rules! descriptor {
    ($(#[$doc:meta])* $name:ident<$($t:ident),+>) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<$($t),+> {
            name: String,
            _t: PhantomData<fn() -> ($($t,)+)>,
        }

        impl<$($t),+> $name<$($t),+> {
            /// A descriptor for state called `name` (unique within the operator).
            pub fn new(name: impl Into<String>) -> Self {
                Self { name: name.into(), _t: PhantomData }
            }

            /// The state's name.
            pub fn name(&self) -> &str {
                &self.name
            }
        }

        impl<$($t),+> Clone for $name<$($t),+> {
            fn clone(&self) -> Self {
                Self::new(self.name.clone())
            }
        }
    };
}

descriptor!(
    /// A single value per key and namespace.
    ValueStateDescriptor<T>
);
descriptor!(
    /// A list of values per key and namespace.
    ListStateDescriptor<T>
);
descriptor!(
    /// A map per key and namespace.
    MapStateDescriptor<UK, UV>
);

/// Folds a value added to a [`ReducingStateDescriptor`]'s state into the one it holds
/// (Flink's `ReduceFunction`).
pub type ReduceFn<T> = std::sync::Arc<dyn Fn(&T, &T) -> T + Send + Sync>;

/// A value per key and namespace that every added value is folded into with a reduce
/// function (Flink's `ReducingStateDescriptor`). Its table holds the reduced value, as
/// a [`ValueStateDescriptor`] of the same name would.
pub struct ReducingStateDescriptor<T> {
    name: String,
    reduce: ReduceFn<T>,
}

impl<T> ReducingStateDescriptor<T> {
    /// A descriptor for state called `name` (unique within the operator) folding with
    /// `reduce(held, added)`.
    pub fn new(name: impl Into<String>, reduce: impl Fn(&T, &T) -> T + Send + Sync + 'static) -> Self {
        Self {
            name: name.into(),
            reduce: std::sync::Arc::new(reduce),
        }
    }

    /// The state's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The reduce function.
    pub fn reduce_fn(&self) -> &ReduceFn<T> {
        &self.reduce
    }
}

impl<T> Clone for ReducingStateDescriptor<T> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            reduce: self.reduce.clone(),
        }
    }
}

impl<T> std::fmt::Debug for ReducingStateDescriptor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReducingStateDescriptor")
            .field("name", &self.name)
            .finish()
    }
}

/// How an aggregating state folds its inputs into an accumulator and reads its result
/// (Flink's `AggregateFunction`, whose `merge` the state does not need).
pub trait StateAggregator<IN, ACC, OUT>: Send + Sync {
    /// A new, empty accumulator.
    fn create_accumulator(&self) -> ACC;
    /// Adds `value` to `accumulator`.
    fn add(&self, value: IN, accumulator: &mut ACC);
    /// The result of `accumulator`.
    fn get_result(&self, accumulator: &ACC) -> OUT;
}

/// An accumulator per key and namespace that every added input is folded into, read
/// as its result (Flink's `AggregatingStateDescriptor`). Its table holds the
/// accumulators, as a [`ValueStateDescriptor`] of `ACC` of the same name would.
pub struct AggregatingStateDescriptor<IN, ACC, OUT> {
    name: String,
    aggregator: std::sync::Arc<dyn StateAggregator<IN, ACC, OUT>>,
}

impl<IN, ACC, OUT> AggregatingStateDescriptor<IN, ACC, OUT> {
    /// A descriptor for state called `name` (unique within the operator) aggregating
    /// with `aggregator`.
    pub fn new(name: impl Into<String>, aggregator: impl StateAggregator<IN, ACC, OUT> + 'static) -> Self {
        Self {
            name: name.into(),
            aggregator: std::sync::Arc::new(aggregator),
        }
    }

    /// The state's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The aggregator.
    pub fn aggregator(&self) -> &dyn StateAggregator<IN, ACC, OUT> {
        self.aggregator.as_ref()
    }
}

impl<IN, ACC, OUT> Clone for AggregatingStateDescriptor<IN, ACC, OUT> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            aggregator: self.aggregator.clone(),
        }
    }
}

impl<IN, ACC, OUT> std::fmt::Debug for AggregatingStateDescriptor<IN, ACC, OUT> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AggregatingStateDescriptor")
            .field("name", &self.name)
            .finish()
    }
}
