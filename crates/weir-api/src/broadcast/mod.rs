//! The broadcast state pattern (Flink's `BroadcastStream`, `BroadcastProcessFunction`
//! and `KeyedBroadcastProcessFunction`).
//!
//! [`DataStream::broadcast_state`] sends every record of a stream to every subtask of
//! the operator it is connected to (the broadcast partitioner) and names the map states
//! that operator keeps for it. Connected with a non-broadcast stream (plain or keyed),
//! the operator calls `process_broadcast_element` for broadcast records, which may
//! write the broadcast state, and `process_element` for the other side, which only
//! reads it (and, keyed, reads and writes the record key's keyed state and timers).
//! Because every subtask sees the same broadcast records in the same order and only
//! they write the state, every subtask holds an equal copy.
//!
//! Checkpoints: every subtask snapshots its copy; on restore a new subtask `i` takes
//! old subtask `i mod old parallelism`'s copy (see [`weir_state::operator_state`]).
//! The declared broadcast states exist from the moment the operator is built (restored
//! or empty); asking for one the broadcast stream did not declare is an error.

mod operator;

use crate::datastream::DataStream;
use crate::functions::{Collector, KeyType, KeyedContext};
use crate::keyed::KeyedStream;
use crate::process::{operator_state_hooks, FunctionContext};
use std::hash::Hash;
use std::sync::Arc;
use weir_graph::Partitioner;
use weir_runtime::error::UserError;
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::{register_checkpointed, OperatorFactory};
use weir_state::heap::StateValue;
use weir_state::{BroadcastState, MapStateDescriptor, OperatorStateStore, ReadOnlyBroadcastState, StateError};

pub use operator::{BroadcastAdapter, BroadcastProcessOperator, KeyedBroadcastProcessOperator};

/// Declares one broadcast state (with its types) in a subtask's store.
type Declare = Arc<dyn Fn(&mut OperatorStateStore) -> Result<(), StateError> + Send + Sync>;

/// A stream broadcast to every subtask of the operator it is connected to, with the
/// broadcast states that operator keeps (Flink's `BroadcastStream`).
pub struct BroadcastStream<T> {
    stream: DataStream<T>,
    states: Vec<(String, Declare)>,
}

impl<T> Clone for BroadcastStream<T> {
    fn clone(&self) -> Self {
        Self {
            stream: self.stream.clone(),
            states: self.states.clone(),
        }
    }
}

impl<T: Data> BroadcastStream<T> {
    /// Declares one more broadcast state `desc` (Flink's `broadcast(d1, d2, …)`).
    pub fn with_state<K: StateValue + Hash + Eq, V: StateValue>(mut self, desc: &MapStateDescriptor<K, V>) -> Self {
        let d = desc.clone();
        let declare: Declare = Arc::new(move |store| store.broadcast_state(&d).map(|_| ()));
        self.states.push((desc.name().to_string(), declare));
        self
    }

    /// The names of the declared broadcast states.
    pub fn state_names(&self) -> Vec<&str> {
        self.states.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn declarations(&self) -> Vec<Declare> {
        self.states.iter().map(|(_, d)| d.clone()).collect()
    }
}

impl<T: Data> DataStream<T> {
    /// Broadcasts this stream with the broadcast state `desc` (more with
    /// [`BroadcastStream::with_state`]); connect it with
    /// [`connect_broadcast`](DataStream::connect_broadcast).
    pub fn broadcast_state<K: StateValue + Hash + Eq, V: StateValue>(
        &self,
        desc: &MapStateDescriptor<K, V>,
    ) -> BroadcastStream<T> {
        BroadcastStream {
            stream: self.repartition(Partitioner::Broadcast, None),
            states: Vec::new(),
        }
        .with_state(desc)
    }

    /// Connects this stream (partitioned as it is) with the broadcast stream `broadcast`.
    pub fn connect_broadcast<B: Data>(&self, broadcast: &BroadcastStream<B>) -> BroadcastConnectedStream<T, B> {
        BroadcastConnectedStream {
            first: self.clone(),
            broadcast: broadcast.clone(),
        }
    }
}

impl<K: KeyType, T: Data> KeyedStream<K, T> {
    /// Connects this keyed stream with the broadcast stream `broadcast`.
    pub fn connect_broadcast<B: Data>(&self, broadcast: &BroadcastStream<B>) -> KeyedBroadcastConnectedStream<K, T, B> {
        KeyedBroadcastConnectedStream {
            keyed: KeyedStream::new(self.stream(), self.key_selector()),
            broadcast: broadcast.clone(),
        }
    }
}

/// The side of a `process_element` call (and keyed `on_timer`): broadcast state
/// read-only, and in the keyed variant the [`KeyedContext`] of the record's key.
pub struct ReadOnlySide<'a, 'k, K: KeyType> {
    pub(crate) keyed: Option<&'a mut KeyedContext<'k, K>>,
}

/// The context of `process_element` (and keyed `on_timer`): broadcast state read-only
/// (Flink's `ReadOnlyContext`). In the keyed variant it also lends out the
/// [`KeyedContext`] of the record's key (keyed state, timers) through
/// [`keyed`](FunctionContext::keyed).
pub type ReadOnlyContext<'a, 'k, K = ()> = FunctionContext<'a, ReadOnlySide<'a, 'k, K>>;

impl<'k, K: KeyType> FunctionContext<'_, ReadOnlySide<'_, 'k, K>> {
    /// The broadcast state `desc`, read-only.
    pub fn broadcast_state<BK: StateValue + Hash + Eq, BV: StateValue>(
        &self,
        desc: &MapStateDescriptor<BK, BV>,
    ) -> Result<ReadOnlyBroadcastState<'_, BK, BV>, StateError> {
        self.store.read_only_broadcast_state(desc)
    }

    /// The keyed context of the current key (keyed variant only; `NoCurrentKey` else).
    pub fn keyed(&mut self) -> Result<&mut KeyedContext<'k, K>, StateError> {
        match self.side.keyed.as_deref_mut() {
            Some(k) => Ok(k),
            None => Err(StateError::NoCurrentKey),
        }
    }

    /// The key of the record or timer being processed (keyed variant only).
    pub fn current_key(&self) -> Option<&K> {
        self.side.keyed.as_deref().and_then(|k| k.current_key())
    }
}

/// The side of a `process_broadcast_element` call: broadcast state writable, no key.
pub struct BroadcastSide;

/// The context of `process_broadcast_element`: broadcast state writable (Flink's
/// `Context`). There is no current key.
pub type BroadcastContext<'a> = FunctionContext<'a, BroadcastSide>;

impl BroadcastContext<'_> {
    /// The broadcast state `desc`, writable; it must be one the broadcast stream
    /// declared.
    pub fn broadcast_state<BK: StateValue + Hash + Eq, BV: StateValue>(
        &mut self,
        desc: &MapStateDescriptor<BK, BV>,
    ) -> Result<BroadcastState<'_, BK, BV>, StateError> {
        if !self.store.registered_broadcast_state_names().contains(&desc.name()) {
            return Err(StateError::UnknownBroadcastState(desc.name().to_string()));
        }
        self.store.broadcast_state(desc)
    }
}

/// Processes a non-keyed stream connected with a broadcast stream (Flink's
/// `BroadcastProcessFunction`). One instance is cloned per subtask.
pub trait BroadcastProcessFunction<A, B, O>: Clone + Send + Sync + 'static {
    operator_state_hooks!();

    /// A record of the non-broadcast side; broadcast state is read-only.
    fn process_element(
        &mut self,
        value: A,
        ctx: &mut ReadOnlyContext<'_, '_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;

    /// A record of the broadcast side; broadcast state is writable.
    fn process_broadcast_element(
        &mut self,
        value: B,
        ctx: &mut BroadcastContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;
}

/// Processes a keyed stream connected with a broadcast stream (Flink's
/// `KeyedBroadcastProcessFunction`). One instance is cloned per subtask.
pub trait KeyedBroadcastProcessFunction<K: KeyType, A, B, O>: Clone + Send + Sync + 'static {
    operator_state_hooks!();

    /// A record of the keyed side, with its key current; broadcast state is read-only.
    fn process_element(
        &mut self,
        value: A,
        ctx: &mut ReadOnlyContext<'_, '_, K>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;

    /// A record of the broadcast side; broadcast state is writable, no key is current.
    fn process_broadcast_element(
        &mut self,
        value: B,
        ctx: &mut BroadcastContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;

    /// A timer of the current key fired; broadcast state is read-only.
    fn on_timer(
        &mut self,
        _timestamp: i64,
        _ctx: &mut ReadOnlyContext<'_, '_, K>,
        _out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        Ok(())
    }
}

/// A non-keyed stream connected with a broadcast stream.
pub struct BroadcastConnectedStream<A, B> {
    first: DataStream<A>,
    broadcast: BroadcastStream<B>,
}

impl<A: Data, B: Data> BroadcastConnectedStream<A, B> {
    /// Processes both sides with `f`.
    pub fn process<O: Data, F: BroadcastProcessFunction<A, B, O>>(&self, f: F) -> DataStream<O> {
        let declarations = self.broadcast.declarations();
        let factory = OperatorFactory::two_input::<A, B, O>(move |ctx, out| {
            let op = BroadcastProcessOperator::with_broadcast_states(
                "BroadcastProcess".into(),
                f.clone(),
                &declarations,
                ctx,
                out,
            )?;
            register_checkpointed(ctx, op)
        });
        self.first
            .transform_two_input(&self.broadcast.stream, "BroadcastProcess", false, factory)
    }
}

/// A keyed stream connected with a broadcast stream.
pub struct KeyedBroadcastConnectedStream<K, A, B> {
    keyed: KeyedStream<K, A>,
    broadcast: BroadcastStream<B>,
}

impl<K: KeyType, A: Data, B: Data> KeyedBroadcastConnectedStream<K, A, B> {
    /// Processes both sides with `f`, with keyed state and timers for the keyed side.
    pub fn process<O: Data, F: KeyedBroadcastProcessFunction<K, A, B, O>>(&self, f: F) -> DataStream<O> {
        let declarations = self.broadcast.declarations();
        let key = self.keyed.key_selector();
        let factory = OperatorFactory::two_input::<A, B, O>(move |ctx, out| {
            let op = KeyedBroadcastProcessOperator::restored(
                "KeyedBroadcastProcess".into(),
                f.clone(),
                key.clone(),
                &declarations,
                ctx,
                out,
            )?;
            register_checkpointed(ctx, op)
        });
        self.keyed
            .stream()
            .transform_two_input(&self.broadcast.stream, "KeyedBroadcastProcess", true, factory)
    }
}

#[cfg(test)]
mod tests;
