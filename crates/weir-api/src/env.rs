//! `StreamExecutionEnvironment`: job settings, sources, and running a job.
//!
//! Running hands the built pipeline to a [`PipelineExecutor`] (the environment's own,
//! else the process default; see [`crate::executor`]): the MiniCluster of the `weir`
//! crate runs it through the same JobMaster and TaskExecutor code as a cluster.

use crate::builder::{Boundedness, GraphBuilder, RuntimeModeHandle};
use crate::datastream::DataStream;
use crate::error::ApiError;
use crate::executor::{default_executor, ExecutionError, JobExecutionResult, Pipeline, PipelineExecutor};
use crate::watermark::generator::millis;
use crate::watermark::{WatermarkStrategy, WatermarkedSource};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use weir_connectors::source::{CollectionSource, GeneratorSource, TextFileSource};
use weir_connectors::Rng;
use weir_core::RuntimeExecutionMode;
use weir_graph::{ExecutionConfig, NodeKind};
use weir_runtime::executor::ExecutableGraph;
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::{OperatorFactory, SourceFunction, TaskContext};
use weir_runtime::TaskError;

/// The context a job is built in: settings and sources. Like Flink's, it is built on
/// one thread; the job's operators run elsewhere.
pub struct StreamExecutionEnvironment {
    config: ExecutionConfig,
    configuration: BTreeMap<String, String>,
    executor: Option<Arc<dyn PipelineExecutor>>,
    builder: Rc<RefCell<GraphBuilder>>,
}

impl Default for StreamExecutionEnvironment {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamExecutionEnvironment {
    /// An environment with Flink's defaults (parallelism 1, chaining on, buffer timeout 100 ms).
    pub fn new() -> Self {
        Self {
            config: ExecutionConfig::default(),
            configuration: BTreeMap::new(),
            executor: None,
            builder: Rc::default(),
        }
    }

    /// The same environment running its jobs on `executor` instead of the process
    /// default.
    pub fn with_executor(mut self, executor: Arc<dyn PipelineExecutor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// The default parallelism of operators that set none.
    pub fn set_parallelism(&mut self, parallelism: u32) -> &mut Self {
        self.config.parallelism = parallelism;
        self
    }

    /// The default parallelism.
    pub fn parallelism(&self) -> u32 {
        self.config.parallelism
    }

    /// The job-wide max parallelism (number of key groups).
    pub fn set_max_parallelism(&mut self, max_parallelism: u32) -> &mut Self {
        self.config.max_parallelism = Some(max_parallelism);
        self
    }

    /// Turns operator chaining off for the whole job.
    pub fn disable_operator_chaining(&mut self) -> &mut Self {
        self.config.chaining_enabled = false;
        self
    }

    /// The buffer timeout in ms: 0 flushes after every record, -1 only when a buffer is full.
    pub fn set_buffer_timeout(&mut self, millis: i64) -> &mut Self {
        self.config.buffer_timeout_ms = millis;
        self
    }

    /// `execution.runtime-mode`: STREAMING (default), BATCH or AUTOMATIC (BATCH when
    /// every source is bounded), resolved when the graph is built.
    pub fn set_runtime_mode(&mut self, mode: RuntimeExecutionMode) -> &mut Self {
        self.config.runtime_mode = mode;
        self
    }

    /// The runtime mode asked for (AUTOMATIC until the graph is built).
    pub fn runtime_mode(&self) -> RuntimeExecutionMode {
        self.config.runtime_mode
    }

    /// The runtime mode asked for, resolved over the sources added so far (AUTOMATIC is
    /// BATCH when all of them are bounded): what a planner that has added every
    /// source can rely on.
    pub fn resolve_runtime_mode(&self) -> RuntimeExecutionMode {
        let all_bounded = self
            .builder
            .borrow()
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Source)
            .all(|n| n.boundedness == Boundedness::Bounded);
        self.config.runtime_mode.resolve(all_bounded)
    }

    /// The runtime mode the job is built in, for operators to read on their task.
    pub fn runtime_mode_handle(&self) -> RuntimeModeHandle {
        self.builder.borrow().runtime_mode.clone()
    }

    /// The job settings.
    pub fn config(&self) -> &ExecutionConfig {
        &self.config
    }

    /// Sets the limits the job's plan is checked against while it is built.
    pub fn set_plan_limits(&mut self, limits: crate::limits::PlanLimits) -> &mut Self {
        self.builder.borrow_mut().limits = limits;
        self
    }

    /// The limits the job's plan is checked against.
    pub fn plan_limits(&self) -> crate::limits::PlanLimits {
        self.builder.borrow().limits
    }

    /// Sets a configuration option of the jobs this environment runs, by Flink's key
    /// (e.g. `restart-strategy.type`, `taskmanager.network.memory.buffers-per-channel`):
    /// the executor passes it to the cluster it runs the job on, which checks it.
    pub fn set_config_option(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.configuration.insert(key.into(), value.into());
        self
    }

    /// The configuration options set on this environment.
    pub fn configuration(&self) -> &BTreeMap<String, String> {
        &self.configuration
    }

    /// A source built per subtask by `build`; `parallelism` fixes its parallelism. It
    /// counts as unbounded (as Flink's `SourceFunction`) unless declared bounded with
    /// [`DataStream::set_boundedness`].
    pub fn add_source<T: Data>(
        &self,
        name: impl Into<String>,
        parallelism: Option<u32>,
        build: impl Fn(&TaskContext) -> Result<Box<dyn SourceFunction<T>>, TaskError> + Send + Sync + 'static,
    ) -> DataStream<T> {
        let mut b = self.builder.borrow_mut();
        let id = b.add_node(
            format!("Source: {}", name.into()),
            NodeKind::Source,
            OperatorFactory::source::<T>(build),
        );
        b.nodes[id as usize].parallelism = parallelism;
        drop(b);
        DataStream::from_node(self.builder.clone(), id)
    }

    /// The elements of `items`, in order (a non-parallel source, as in Flink).
    pub fn from_collection<T: Data + Sync>(&self, items: Vec<T>) -> DataStream<T> {
        let items = Arc::new(items);
        self.add_source("Collection Source", Some(1), move |ctx| {
            Ok(Box::new(CollectionSource::new(
                &items,
                ctx.subtask_index,
                ctx.parallelism,
            )))
        })
        .set_boundedness(Boundedness::Bounded)
    }

    /// `count` records made by `f(index, rng)`, with `rng` seeded from `seed` and the
    /// index: the same records at every parallelism.
    pub fn from_generator<T: Data>(
        &self,
        count: u64,
        seed: u64,
        f: impl Fn(u64, &mut Rng) -> T + Send + Sync + 'static,
    ) -> DataStream<T> {
        self.from_generator_with_rate(count, seed, 0.0, f)
    }

    /// Like [`Self::from_generator`], throttled to `records_per_sec` in wall-clock time
    /// (0 = as fast as possible).
    pub fn from_generator_with_rate<T: Data>(
        &self,
        count: u64,
        seed: u64,
        records_per_sec: f64,
        f: impl Fn(u64, &mut Rng) -> T + Send + Sync + 'static,
    ) -> DataStream<T> {
        let f: weir_connectors::source::generator::GeneratorFn<T> = Arc::new(f);
        self.add_source("Generator", None, move |ctx| {
            Ok(Box::new(
                GeneratorSource::new(count, seed, f.clone(), ctx.subtask_index, ctx.parallelism)
                    .with_rate(records_per_sec),
            ))
        })
        .set_boundedness(if count == u64::MAX {
            Boundedness::ContinuousUnbounded
        } else {
            Boundedness::Bounded
        })
    }

    /// The lines of a text file (a non-parallel source, lines in file order).
    pub fn read_text_file(&self, path: impl Into<PathBuf>) -> DataStream<String> {
        let path = path.into();
        self.add_source("TextFile", Some(1), move |ctx| {
            Ok(Box::new(TextFileSource::new(
                path.clone(),
                ctx.subtask_index,
                ctx.parallelism,
            )))
        })
        .set_boundedness(Boundedness::Bounded)
    }

    /// `pipeline.auto-watermark-interval`: how often sources and
    /// `assign_timestamps_and_watermarks` emit periodic watermarks (default 200 ms;
    /// zero disables periodic emission, and with it idleness detection).
    pub fn set_auto_watermark_interval(&mut self, interval: Duration) -> &mut Self {
        self.builder.borrow().watermark_interval.set(millis(interval));
        self
    }

    /// The auto-watermark interval.
    pub fn auto_watermark_interval(&self) -> Duration {
        Duration::from_millis(self.builder.borrow().watermark_interval.get() as u64)
    }

    /// A source with event time: every record gets its timestamp from `strategy`, whose
    /// generator emits watermarks per subtask (Flink's `fromSource`). `build` makes the
    /// source function of each subtask; the default parallelism applies.
    pub fn from_source<T: Data>(
        &self,
        build: impl Fn(&TaskContext) -> Result<Box<dyn SourceFunction<T>>, TaskError> + Send + Sync + 'static,
        strategy: WatermarkStrategy<T>,
        name: impl Into<String>,
    ) -> DataStream<T> {
        if let Err(e) = strategy.validate() {
            self.builder.borrow_mut().errors.push(e);
        }
        let interval = self.builder.borrow().watermark_interval.clone();
        self.add_source(name, None, move |ctx| {
            let source = build(ctx)?;
            Ok(Box::new(WatermarkedSource::new(
                source,
                strategy.clone(),
                interval.get(),
                ctx.processing_time_service(),
            )))
        })
    }

    /// The pipeline built so far, checked, with its operator code.
    pub fn build_graph(&self, job_name: &str) -> Result<ExecutableGraph, ApiError> {
        self.builder.borrow().build(job_name, &self.config)
    }

    /// Whether the tasks of [`execute`](Self::execute) collect their metrics while they
    /// run (`metrics.collection.enabled`, on by default).
    pub fn set_metrics_collection(&mut self, enabled: bool) -> &mut Self {
        self.set_config_option("metrics.collection.enabled", enabled.to_string())
    }

    /// The pipeline built so far, ready for an executor.
    pub fn pipeline(&self, job_name: &str) -> Result<Pipeline, ApiError> {
        Ok(Pipeline {
            job_name: job_name.to_string(),
            graph: self.build_graph(job_name)?,
            execution: self.config.clone(),
            auto_watermark_interval_ms: self.builder.borrow().watermark_interval.get(),
            configuration: self.configuration.clone(),
        })
    }

    /// Builds the job and runs it on the environment's executor (else the process
    /// default: the MiniCluster, where the `weir` crate installs it), waiting for its
    /// end: `Ok` when it FINISHED, else the error naming the failed task and its cause.
    pub fn execute(&self, job_name: &str) -> Result<JobExecutionResult, ApiError> {
        let pipeline = self.pipeline(job_name)?;
        let executor = self
            .executor
            .clone()
            .or_else(default_executor)
            .ok_or(ExecutionError::NoExecutor)?;
        Ok(executor.execute(pipeline)?)
    }
}
