//! The in-process cluster (`weir local`, Flink's MiniCluster).
//!
//! Compiles the StreamGraph to a JobGraph, creates one result partition per (producing
//! subtask, outgoing JobEdge) and one gate per input of each consuming subtask in one
//! process-wide [`NetworkEnvironment`] (the subtask wiring of the ExecutionGraph), and
//! runs every subtask on its own thread. The first task failure cancels the others; the job's result names the
//! failing subtask and its root cause.

use super::ExecutableGraph;
use crate::error::{RuntimeError, TaskError};
use crate::network::{CancelToken, NetworkConfig, NetworkEnvironment, SubpartitionHandle};
use crate::task::chain::NetworkOutput;
use crate::task::{run_task, TaskSpec};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use weir_core::ids::JobId;
use weir_graph::{consumed_subpartitions, num_subpartitions, JobGraph};

/// The outcome of a finished job.
#[derive(Debug, Clone)]
pub struct JobExecutionResult {
    /// The job's id.
    pub job_id: JobId,
    /// Wall-clock run time.
    pub duration: Duration,
    /// Number of subtasks that ran.
    pub subtasks: usize,
}

/// Runs jobs inside this process.
#[derive(Debug, Clone)]
pub struct LocalExecutor {
    network: NetworkConfig,
    metrics_collection: bool,
}

impl Default for LocalExecutor {
    fn default() -> Self {
        Self::new(NetworkConfig::default())
    }
}

impl LocalExecutor {
    /// An executor with the given network settings, its tasks collecting metrics.
    pub fn new(network: NetworkConfig) -> Self {
        Self {
            network,
            metrics_collection: true,
        }
    }

    /// The same executor with its tasks collecting metrics while they run, or not
    /// (`metrics.collection.enabled`).
    pub fn with_metrics_collection(mut self, enabled: bool) -> Self {
        self.metrics_collection = enabled;
        self
    }

    /// Runs `program` to completion.
    pub fn execute(&self, program: ExecutableGraph) -> Result<JobExecutionResult, RuntimeError> {
        let start = Instant::now();
        let job_graph = Arc::new(JobGraph::from_stream_graph(&program.stream_graph)?);
        for v in &job_graph.vertices {
            for op in &v.operators {
                if program.factories.get(op.node_id as usize).is_none() {
                    return Err(RuntimeError::MissingFactory(op.node_id));
                }
            }
        }
        let job_id = JobId::random();
        let program = Arc::new(program);
        let env = NetworkEnvironment::new(self.network.clone());
        let cancel = CancelToken::new();

        // Result partitions: (edge, producer subtask) -> handles of its subpartitions.
        let mut writers: HashMap<(usize, u32), Vec<NetworkOutput>> = HashMap::new();
        let mut handles: HashMap<(usize, u32), Vec<SubpartitionHandle>> = HashMap::new();
        for (ei, edge) in job_graph.edges.iter().enumerate() {
            let (pp, cp) = (
                job_graph.vertices[edge.source_vertex].parallelism,
                job_graph.vertices[edge.target_vertex].parallelism,
            );
            for i in 0..pp {
                let n = num_subpartitions(edge.distribution, pp, cp, i) as usize;
                let (writer, subs) = env.create_result_partition(n, cancel.clone())?;
                writers
                    .entry((edge.source_vertex, i))
                    .or_default()
                    .push(NetworkOutput { job_edge: ei, writer });
                handles.insert((ei, i), subs);
            }
        }

        let mut threads = Vec::new();
        let first_error: Arc<Mutex<Option<(String, TaskError)>>> = Arc::new(Mutex::new(None));
        for (vi, v) in job_graph.vertices.iter().enumerate() {
            for i in 0..v.parallelism {
                let mut channels: [Vec<SubpartitionHandle>; 2] = [Vec::new(), Vec::new()];
                for (ei, edge) in job_graph
                    .edges
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.target_vertex == vi)
                {
                    let pp = job_graph.vertices[edge.source_vertex].parallelism;
                    for (producer, sub) in consumed_subpartitions(edge.distribution, pp, v.parallelism, i) {
                        let h = handles
                            .get(&(ei, producer))
                            .and_then(|subs| subs.get(sub as usize))
                            .cloned()
                            .ok_or_else(|| {
                                RuntimeError::Network(crate::network::NetworkError::Corrupt(format!(
                                    "no subpartition {sub} of producer {producer} on edge {ei}"
                                )))
                            })?;
                        channels[(edge.target_input as usize).min(1)].push(h);
                    }
                }
                let [first, second] = channels;
                let input = if first.is_empty() {
                    None
                } else {
                    Some(env.create_input_gate(first, cancel.clone())?)
                };
                let second_input = if second.is_empty() {
                    None
                } else {
                    Some(env.create_input_gate(second, cancel.clone())?)
                };
                let spec = TaskSpec {
                    program: program.clone(),
                    job_graph: job_graph.clone(),
                    vertex: vi,
                    subtask_index: i,
                    attempt_number: 0,
                    input,
                    second_input,
                    outputs: writers.remove(&(vi, i)).unwrap_or_default(),
                    cancel: cancel.clone(),
                    metrics: Arc::new(crate::task::metrics::TaskMetrics::with_collection(
                        self.metrics_collection,
                    )),
                    checkpointing: None,
                    on_running: None,
                    operator_events: None,
                };
                let name = format!("{} ({}/{})", v.name, i + 1, v.parallelism);
                let (cancel, first_error) = (cancel.clone(), first_error.clone());
                let handle = std::thread::Builder::new()
                    .name(name.clone())
                    .spawn(move || match run_task(spec) {
                        Ok(_) | Err(TaskError::Cancelled) => {}
                        Err(e) => {
                            let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                            if slot.is_none() {
                                *slot = Some((name, e));
                            }
                            cancel.cancel();
                        }
                    })
                    .map_err(RuntimeError::Spawn)?;
                threads.push(handle);
            }
        }
        let subtasks = threads.len();
        for t in threads {
            let _ = t.join();
        }
        let failure = first_error.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((task, cause)) = failure {
            return Err(RuntimeError::TaskFailed { task, cause });
        }
        Ok(JobExecutionResult {
            job_id,
            duration: start.elapsed(),
            subtasks,
        })
    }
}
