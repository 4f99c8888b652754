//! The folding state kinds: [`ReducingState`] (every added value reduced into the one
//! held) and [`AggregatingState`] (every added input folded into an accumulator, read
//! as its result), Flink's `ReducingState` and `AggregatingState`.
//!
//! Each is a view on a value table of the backend (the reduced value, the
//! accumulator), so it is snapshotted, restored and redistributed by key group as
//! value state is. Invariant: an entry exists only once a value was added; `clear`
//! removes it, so `get` of a cleared or never-added state is `None`.

use super::{KeyedStateBackend, StateValue, ValueState};
use crate::descriptor::{AggregatingStateDescriptor, ReduceFn, ReducingStateDescriptor, StateAggregator};
use crate::error::StateError;
use crate::Key;

/// The reduced value of everything added for the current key and namespace.
pub struct ReducingState<'a, K, N, V> {
    value: ValueState<'a, K, N, V>,
    reduce: &'a ReduceFn<V>,
}

impl<K: Key, N: Key, V: StateValue> ReducingState<'_, K, N, V> {
    /// The reduced value, if anything was added.
    pub fn get(&self) -> Option<V> {
        self.value.value()
    }

    /// Folds `value` into the held value (or holds it, if nothing was added yet).
    pub fn add(&mut self, value: V) {
        match self.value.map.get_mut(&self.value.key) {
            Some(held) => *held = (self.reduce)(held, &value),
            None => self.value.update(value),
        }
    }

    /// Forgets the reduced value.
    pub fn clear(&mut self) {
        self.value.clear();
    }
}

/// The aggregate of every input added for the current key and namespace.
pub struct AggregatingState<'a, K, N, IN, ACC, OUT> {
    accumulator: ValueState<'a, K, N, ACC>,
    aggregator: &'a dyn StateAggregator<IN, ACC, OUT>,
}

impl<K: Key, N: Key, IN, ACC: StateValue, OUT> AggregatingState<'_, K, N, IN, ACC, OUT> {
    /// The aggregator's result of the accumulator, if anything was added.
    pub fn get(&self) -> Option<OUT> {
        self.accumulator.value_ref().map(|acc| self.aggregator.get_result(acc))
    }

    /// Folds `value` into the accumulator (a new one first, if nothing was added yet).
    pub fn add(&mut self, value: IN) {
        let aggregator = self.aggregator;
        let acc = self.accumulator.get_or_insert_with(|| aggregator.create_accumulator());
        aggregator.add(value, acc);
    }

    /// Forgets the accumulator.
    pub fn clear(&mut self) {
        self.accumulator.clear();
    }
}

impl<K: Key> KeyedStateBackend<K> {
    /// The reducing state `desc` of the current key in `namespace`.
    pub fn reducing<'a, N: Key, V: StateValue>(
        &'a mut self,
        desc: &'a ReducingStateDescriptor<V>,
        namespace: &N,
    ) -> Result<ReducingState<'a, K, N, V>, StateError> {
        let key = self.current_entry_key(namespace)?;
        Ok(ReducingState {
            value: ValueState {
                map: self.table(desc.name(), &key)?,
                key,
            },
            reduce: desc.reduce_fn(),
        })
    }

    /// The aggregating state `desc` of the current key in `namespace`.
    pub fn aggregating<'a, N: Key, IN, ACC: StateValue, OUT>(
        &'a mut self,
        desc: &'a AggregatingStateDescriptor<IN, ACC, OUT>,
        namespace: &N,
    ) -> Result<AggregatingState<'a, K, N, IN, ACC, OUT>, StateError> {
        let key = self.current_entry_key(namespace)?;
        Ok(AggregatingState {
            accumulator: ValueState {
                map: self.table(desc.name(), &key)?,
                key,
            },
            aggregator: desc.aggregator(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::VoidNamespace;
    use weir_core::KeyGroupRange;

    /// The average of the added numbers: (sum, count).
    struct Average;

    impl StateAggregator<u64, (u64, u64), f64> for Average {
        fn create_accumulator(&self) -> (u64, u64) {
            (0, 0)
        }
        fn add(&self, value: u64, acc: &mut (u64, u64)) {
            *acc = (acc.0 + value, acc.1 + 1);
        }
        fn get_result(&self, acc: &(u64, u64)) -> f64 {
            acc.0 as f64 / acc.1 as f64
        }
    }

    fn backend(range: KeyGroupRange) -> KeyedStateBackend<u64> {
        KeyedStateBackend::new(range, 128)
    }

    #[test]
    fn reducing_state_folds_every_added_value_per_key_and_forgets_on_clear() {
        let max = ReducingStateDescriptor::<u64>::new("max", |a, b| *a.max(b));
        let mut b = backend(KeyGroupRange::new(0, 127));
        for (k, v) in [(1u64, 5u64), (2, 7), (1, 9), (1, 3), (2, 1)] {
            b.set_current_key(k).unwrap();
            b.reducing(&max, &VoidNamespace).unwrap().add(v);
        }
        b.set_current_key(1).unwrap();
        assert_eq!(b.reducing(&max, &VoidNamespace).unwrap().get(), Some(9));
        b.reducing(&max, &VoidNamespace).unwrap().clear();
        assert_eq!(b.reducing(&max, &VoidNamespace).unwrap().get(), None);
        b.set_current_key(2).unwrap();
        assert_eq!(b.reducing(&max, &VoidNamespace).unwrap().get(), Some(7));
        b.set_current_key(3).unwrap();
        assert_eq!(b.reducing(&max, &VoidNamespace).unwrap().get(), None);
    }

    #[test]
    fn aggregating_state_reads_the_result_of_its_accumulator() {
        let avg = AggregatingStateDescriptor::new("avg", Average);
        let mut b = backend(KeyGroupRange::new(0, 127));
        b.set_current_key(4).unwrap();
        assert_eq!(b.aggregating(&avg, &VoidNamespace).unwrap().get(), None);
        for v in [1u64, 2, 6] {
            b.aggregating(&avg, &VoidNamespace).unwrap().add(v);
        }
        assert_eq!(b.aggregating(&avg, &VoidNamespace).unwrap().get(), Some(3.0));
        b.aggregating(&avg, &VoidNamespace).unwrap().clear();
        assert_eq!(b.aggregating(&avg, &VoidNamespace).unwrap().get(), None);
    }

    #[test]
    fn folding_state_is_restored_at_another_parallelism_and_folds_on() {
        let sum = ReducingStateDescriptor::<u64>::new("sum", |a, b| a + b);
        let avg = AggregatingStateDescriptor::new("avg", Average);
        let mut whole = backend(KeyGroupRange::new(0, 127));
        for k in 0..50u64 {
            whole.set_current_key(k).unwrap();
            whole.reducing(&sum, &VoidNamespace).unwrap().add(k);
            whole.aggregating(&avg, &VoidNamespace).unwrap().add(k);
        }
        let snap = whole.snapshot().unwrap();
        let mut seen = 0;
        for i in 0..3 {
            let mut part = backend(KeyGroupRange::for_subtask(128, 3, i));
            part.restore(&snap);
            for k in 0..50u64 {
                if part.set_current_key(k).is_err() {
                    continue;
                }
                seen += 1;
                part.reducing(&sum, &VoidNamespace).unwrap().add(1000);
                assert_eq!(part.reducing(&sum, &VoidNamespace).unwrap().get(), Some(k + 1000));
                part.aggregating(&avg, &VoidNamespace).unwrap().add(k + 2);
                assert_eq!(
                    part.aggregating(&avg, &VoidNamespace).unwrap().get(),
                    Some((2 * k + 2) as f64 / 2.0)
                );
            }
        }
        assert_eq!(seen, 50, "every key is in exactly one part");
    }
}
