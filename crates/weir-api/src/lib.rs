//! The DataStream API: build a job as a chain of transformations on a
//! [`StreamExecutionEnvironment`], then run it on an executor ([`executor`]): the
//! `weir` crate's MiniCluster, which runs it through the same JobMaster and
//! TaskExecutor code as a cluster.
//!
//! ```no_run
//! use weir_api::prelude::*;
//!
//! let mut env = StreamExecutionEnvironment::new();
//! env.set_parallelism(2);
//! let out = env
//!     .from_collection(vec!["a b".to_string(), "b".to_string()])
//!     .flat_map(|line: String| line.split(' ').map(|w| w.to_string()).collect::<Vec<_>>())
//!     .key_by(|w: &String| w.clone())
//!     .process(CountPerKey)
//!     .collect();
//! env.execute("count words").unwrap();
//! let mut got = out.get();
//! got.sort();
//! assert_eq!(got, vec![("a".to_string(), 1), ("b".to_string(), 1), ("b".to_string(), 2)]);
//!
//! #[derive(Clone)]
//! struct CountPerKey;
//! impl KeyedProcessFunction<String, String, (String, u64)> for CountPerKey {
//!     fn process_element(&mut self, word: String, ctx: &mut KeyedContext<'_, String>, out: &mut Collector<'_, (String, u64)>) -> Result<(), UserError> {
//!         let desc = ValueStateDescriptor::<u64>::new("count");
//!         let mut count = ctx.value_state(&desc)?;
//!         let n = count.value().unwrap_or(0) + 1;
//!         count.update(n);
//!         out.collect((word, n));
//!         Ok(())
//!     }
//! }
//! ```

#![warn(missing_docs)]

pub mod binary;
pub mod broadcast;
pub mod builder;
pub mod co_process;
pub mod connected;
pub mod datastream;
pub mod env;
pub mod error;
pub mod executor;
mod forwarding;
pub mod functions;
pub mod in_process;
pub mod join;
pub mod keyed;
pub mod keyed_state;
pub mod limits;
pub mod operators;
pub mod process;
pub mod program;
pub mod side_output;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod test_fixtures;
pub mod watermark;
pub mod windowing;

pub use builder::{Boundedness, RuntimeModeHandle};
pub use datastream::DataStream;
pub use env::StreamExecutionEnvironment;
pub use error::ApiError;
pub use executor::{JobExecutionResult, PipelineExecutor};
pub use keyed::KeyedStream;

/// Everything a program needs: `use weir_api::prelude::*;`.
pub mod prelude {
    pub use crate::broadcast::{
        BroadcastConnectedStream, BroadcastContext, BroadcastProcessFunction, BroadcastStream,
        KeyedBroadcastConnectedStream, KeyedBroadcastProcessFunction, ReadOnlyContext,
    };
    pub use crate::builder::{Boundedness, RuntimeModeHandle};
    pub use crate::co_process::CoProcessFunction;
    pub use crate::connected::{ConnectedStreams, KeyedCoProcessFunction, KeyedConnectedStreams};
    pub use crate::datastream::DataStream;
    pub use crate::env::StreamExecutionEnvironment;
    pub use crate::error::ApiError;
    pub use crate::functions::{Collector, KeyType, KeyedContext, KeyedProcessFunction, KeyedTimerService, TaskInfo};
    pub use crate::join::{
        CoGroupFunction, FlatJoinFunction, JoinFunction, ProcessJoinContext, ProcessJoinFunction, TaggedUnion,
    };
    pub use crate::keyed::KeyedStream;
    pub use crate::process::{ProcessContext, ProcessFunction};
    pub use crate::program::{Program, ProgramArgs, ProgramError, ProgramRegistry};
    pub use crate::side_output::OutputTag;
    pub use crate::watermark::{WatermarkGenerator, WatermarkOutput, WatermarkStrategy};
    pub use crate::windowing::{
        AggregateFunction, CountTrigger, EventTimeSessionWindows, EventTimeTrigger, GlobalWindow, GlobalWindows,
        ProcessWindowFunction, ProcessingTimeSessionWindows, ProcessingTimeTrigger, PurgingTrigger,
        SlidingEventTimeWindows, SlidingProcessingTimeWindows, StateAggregateFunction, TimeWindow, Trigger,
        TriggerContext, TriggerResult, TumblingEventTimeWindows, TumblingProcessingTimeWindows, Window, WindowContext,
        WindowedStream,
    };
    pub use std::time::Duration;
    pub use weir_connectors::sink::CollectHandle;
    pub use weir_connectors::Rng;
    pub use weir_core::element::WatermarkStatus;
    pub use weir_core::{RuntimeExecutionMode, StreamRecord, Watermark};
    pub use weir_graph::{ChainingStrategy, Partitioner};
    pub use weir_runtime::error::UserError;
    pub use weir_state::TimeDomain;
    pub use weir_state::{
        AggregatingStateDescriptor, ListStateDescriptor, MapStateDescriptor, ReducingStateDescriptor, StateAggregator,
        ValueStateDescriptor, VoidNamespace,
    };
    pub use weir_state::{BroadcastState, OperatorListState, OperatorStateStore, ReadOnlyBroadcastState};
}
