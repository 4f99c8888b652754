//! Window joins and co-groups (Flink's `JoinedStreams` and `CoGroupedStreams`).
//!
//! `a.join(&b).where_(ka).equal_to(kb).window(assigner)` builds, as Flink does, one
//! stream of [`TaggedUnion`]s (`One` for `a`'s records, `Two` for `b`'s, each tagged by
//! a map), keys it by `ka` or `kb` of whichever side a record is from, and windows it
//! with the ordinary window operator keeping every element (`WindowedStream::process`).
//! A firing window splits its elements back into the two sides, in arrival order, and
//! calls the [`CoGroupFunction`] with both (either may be empty, not both); `apply` of a
//! join wraps its function into the co-group that calls it once per pair of the cross
//! product (nothing when a side is empty). So triggers, allowed lateness, lateness
//! dropping, state and checkpoints are those of windows, and every output record
//! carries the window's `max_timestamp()`.

use crate::datastream::DataStream;
use crate::functions::{Collector, KeyType};
use crate::windowing::{ProcessWindowFunction, Trigger, Window, WindowAssigner, WindowContext, WindowedStream};
use serde::{Deserialize, Serialize};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;
use weir_runtime::error::UserError;
use weir_runtime::operator::factory::Data;

/// A record of either input of a window join (Flink's `TaggedUnion`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaggedUnion<A, B> {
    /// From the first input.
    One(A),
    /// From the second input.
    Two(B),
}

/// Combines one pair of a window's cross product into one result (Flink's
/// `JoinFunction`). Closures `Fn(A, B) -> O` are join functions.
pub trait JoinFunction<A, B, O>: Clone + Send + Sync + 'static {
    /// The result of `first` joined with `second`.
    fn join(&mut self, first: A, second: B) -> Result<O, UserError>;
}

impl<A, B, O, F: Fn(A, B) -> O + Clone + Send + Sync + 'static> JoinFunction<A, B, O> for F {
    fn join(&mut self, first: A, second: B) -> Result<O, UserError> {
        Ok(self(first, second))
    }
}

/// Combines one pair of a window's cross product into any number of results (Flink's
/// `FlatJoinFunction`). Closures `Fn(A, B, &mut Collector<O>)` are flat join functions.
pub trait FlatJoinFunction<A, B, O>: Clone + Send + Sync + 'static {
    /// Emits the results of `first` joined with `second` to `out`.
    fn join(&mut self, first: A, second: B, out: &mut Collector<'_, O>) -> Result<(), UserError>;
}

impl<A, B, O, F: Fn(A, B, &mut Collector<'_, O>) + Clone + Send + Sync + 'static> FlatJoinFunction<A, B, O> for F {
    fn join(&mut self, first: A, second: B, out: &mut Collector<'_, O>) -> Result<(), UserError> {
        self(first, second, out);
        Ok(())
    }
}

/// Combines the elements both inputs have in one window of one key (Flink's
/// `CoGroupFunction`); called when at least one side has elements. Closures
/// `Fn(Vec<A>, Vec<B>, &mut Collector<O>)` are co-group functions.
pub trait CoGroupFunction<A, B, O>: Clone + Send + Sync + 'static {
    /// Emits the results for `first` and `second` (each in arrival order) to `out`.
    fn co_group(&mut self, first: Vec<A>, second: Vec<B>, out: &mut Collector<'_, O>) -> Result<(), UserError>;
}

impl<A, B, O, F: Fn(Vec<A>, Vec<B>, &mut Collector<'_, O>) + Clone + Send + Sync + 'static> CoGroupFunction<A, B, O>
    for F
{
    fn co_group(&mut self, first: Vec<A>, second: Vec<B>, out: &mut Collector<'_, O>) -> Result<(), UserError> {
        self(first, second, out);
        Ok(())
    }
}

/// A join function as a flat one: one result per pair.
#[derive(Clone)]
struct OneResultPerPair<F>(F);

impl<A, B, O, F: JoinFunction<A, B, O>> FlatJoinFunction<A, B, O> for OneResultPerPair<F> {
    fn join(&mut self, first: A, second: B, out: &mut Collector<'_, O>) -> Result<(), UserError> {
        out.collect(self.0.join(first, second)?);
        Ok(())
    }
}

/// The co-group of a join: the flat join function over every pair of the cross
/// product, first input outer (Flink's `JoinCoGroupFunction`).
#[derive(Clone)]
struct CrossProduct<F>(F);

impl<A: Clone, B: Clone, O, F: FlatJoinFunction<A, B, O>> CoGroupFunction<A, B, O> for CrossProduct<F> {
    fn co_group(&mut self, first: Vec<A>, second: Vec<B>, out: &mut Collector<'_, O>) -> Result<(), UserError> {
        for a in first {
            for b in &second {
                self.0.join(a.clone(), b.clone(), out)?;
            }
        }
        Ok(())
    }
}

/// The window function of a co-group: splits a window's tagged elements into the two
/// sides and calls the co-group function (Flink's `CoGroupWindowFunction`).
struct CoGroupWindowFunction<F, A, B> {
    f: F,
    _t: PhantomData<fn(A, B)>,
}

impl<F: Clone, A, B> Clone for CoGroupWindowFunction<F, A, B> {
    fn clone(&self) -> Self {
        Self {
            f: self.f.clone(),
            _t: PhantomData,
        }
    }
}

impl<K, A, B, O, W, F> ProcessWindowFunction<K, TaggedUnion<A, B>, O, W> for CoGroupWindowFunction<F, A, B>
where
    K: KeyType,
    A: 'static,
    B: 'static,
    W: Window,
    F: CoGroupFunction<A, B, O>,
{
    fn process(
        &mut self,
        _key: &K,
        _ctx: &mut WindowContext<'_, K, W>,
        elements: Vec<TaggedUnion<A, B>>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        let mut first = Vec::new();
        let mut second = Vec::new();
        for e in elements {
            match e {
                TaggedUnion::One(a) => first.push(a),
                TaggedUnion::Two(b) => second.push(b),
            }
        }
        self.f.co_group(first, second, out)
    }
}

/// Marks a [`TwoStreams`] chain that ends in a join.
pub struct JoinKind;
/// Marks a [`TwoStreams`] chain that ends in a co-group.
pub struct CoGroupKind;

/// Two streams to be joined or co-grouped; `J` says which ([`JoinKind`],
/// [`CoGroupKind`]).
pub struct TwoStreams<A, B, J> {
    first: DataStream<A>,
    second: DataStream<B>,
    _j: PhantomData<fn() -> J>,
}

/// Two streams to be joined by key and window (Flink's `JoinedStreams`).
pub type JoinedStreams<A, B> = TwoStreams<A, B, JoinKind>;
/// Two streams to be co-grouped by key and window (Flink's `CoGroupedStreams`).
pub type CoGroupedStreams<A, B> = TwoStreams<A, B, CoGroupKind>;

impl<A: Data> DataStream<A> {
    /// Joins this stream with `other`: pairs of records with equal keys in the same
    /// window; continue with `where_`, `equal_to`, `window`, `apply`.
    pub fn join<B: Data>(&self, other: &DataStream<B>) -> JoinedStreams<A, B> {
        TwoStreams {
            first: self.clone(),
            second: other.clone(),
            _j: PhantomData,
        }
    }

    /// Co-groups this stream with `other`: both sides' records with equal keys in the
    /// same window, together; continue with `where_`, `equal_to`, `window`, `apply`.
    pub fn co_group<B: Data>(&self, other: &DataStream<B>) -> CoGroupedStreams<A, B> {
        TwoStreams {
            first: self.clone(),
            second: other.clone(),
            _j: PhantomData,
        }
    }
}

impl<A: Data, B: Data, J> TwoStreams<A, B, J> {
    /// The key of the first input's records.
    pub fn where_<K: KeyType>(self, key1: impl Fn(&A) -> K + Send + Sync + 'static) -> Where<K, A, B, J> {
        Where {
            streams: self,
            key1: Arc::new(key1),
        }
    }
}

/// Two streams with the first one's key (Flink's `Where`).
pub struct Where<K, A, B, J> {
    streams: TwoStreams<A, B, J>,
    key1: Arc<dyn Fn(&A) -> K + Send + Sync>,
}

impl<K: KeyType, A: Data, B: Data, J> Where<K, A, B, J> {
    /// The key of the second input's records; records of both with equal keys meet.
    pub fn equal_to(self, key2: impl Fn(&B) -> K + Send + Sync + 'static) -> EqualTo<K, A, B, J> {
        EqualTo {
            streams: self.streams,
            key1: self.key1,
            key2: Arc::new(key2),
        }
    }
}

/// Two streams with both keys (Flink's `EqualTo`).
pub struct EqualTo<K, A, B, J> {
    streams: TwoStreams<A, B, J>,
    key1: Arc<dyn Fn(&A) -> K + Send + Sync>,
    key2: Arc<dyn Fn(&B) -> K + Send + Sync>,
}

impl<K: KeyType, A: Data, B: Data, J> EqualTo<K, A, B, J> {
    /// Cuts the tagged union of both inputs into windows of `assigner` per key.
    pub fn window<W: Window, AS: WindowAssigner<TaggedUnion<A, B>, W>>(
        self,
        assigner: AS,
    ) -> WithWindow<K, A, B, W, J> {
        let (key1, key2) = (self.key1, self.key2);
        let one = self.streams.first.map(TaggedUnion::<A, B>::One);
        let two = self.streams.second.map(TaggedUnion::<A, B>::Two);
        let windowed = one
            .union(&[two])
            .key_by(move |u: &TaggedUnion<A, B>| match u {
                TaggedUnion::One(a) => key1(a),
                TaggedUnion::Two(b) => key2(b),
            })
            .window(assigner);
        WithWindow {
            windowed,
            _j: PhantomData,
        }
    }
}

/// Both inputs keyed and windowed, waiting for the function (Flink's `WithWindow`).
pub struct WithWindow<K, A, B, W, J> {
    windowed: WindowedStream<K, TaggedUnion<A, B>, W>,
    _j: PhantomData<fn() -> J>,
}

impl<K: KeyType, A: Data, B: Data, W: Window, J> WithWindow<K, A, B, W, J> {
    /// Replaces the assigner's default trigger.
    pub fn trigger(self, trigger: impl Trigger<K, TaggedUnion<A, B>, W>) -> Self {
        Self {
            windowed: self.windowed.trigger(trigger),
            _j: PhantomData,
        }
    }

    /// Keeps window state `lateness` past the window's end, so that late elements
    /// re-fire it (event time only; default 0).
    pub fn allowed_lateness(self, lateness: Duration) -> Self {
        Self {
            windowed: self.windowed.allowed_lateness(lateness),
            _j: PhantomData,
        }
    }

    fn co_group_with<O: Data, F: CoGroupFunction<A, B, O>>(&self, f: F) -> DataStream<O> {
        self.windowed.process(CoGroupWindowFunction { f, _t: PhantomData })
    }
}

impl<K: KeyType, A: Data, B: Data, W: Window> WithWindow<K, A, B, W, JoinKind> {
    /// Calls `f` once per pair of each window's cross product of both inputs' records
    /// of one key; every result carries the window's `max_timestamp()`.
    pub fn apply<O: Data>(&self, f: impl JoinFunction<A, B, O>) -> DataStream<O> {
        self.flat_apply(OneResultPerPair(f))
    }

    /// Like [`apply`](Self::apply) with a function emitting any number of results per
    /// pair.
    pub fn flat_apply<O: Data>(&self, f: impl FlatJoinFunction<A, B, O>) -> DataStream<O> {
        self.co_group_with(CrossProduct(f))
    }
}

impl<K: KeyType, A: Data, B: Data, W: Window> WithWindow<K, A, B, W, CoGroupKind> {
    /// Calls `f` with both inputs' records of one key in each window (one side may be
    /// empty); every result carries the window's `max_timestamp()`.
    pub fn apply<O: Data>(&self, f: impl CoGroupFunction<A, B, O>) -> DataStream<O> {
        self.co_group_with(f)
    }
}

#[cfg(test)]
#[path = "window_join_tests.rs"]
mod tests;
