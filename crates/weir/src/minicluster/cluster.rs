//! The MiniCluster of `weir local` (Flink's `MiniCluster`): a JobManager (Dispatcher,
//! ResourceManager with its slot table, JobMasters) and TaskManagers in this one
//! process, running the same code as the processes of `weir start-cluster` and talking
//! over the same gRPC interfaces and data connections.
//!
//! Invariants:
//! - every server binds the loopback address on an ephemeral port, except the REST
//!   endpoint, which is served only when `rest.port` is configured and then binds
//!   `rest.address:rest.port` like a standalone JobManager;
//! - [`MiniCluster::start`] returns only once every TaskManager's slots are registered
//!   with the ResourceManager, so a job submitted next is scheduled at once;
//! - the MiniCluster's JobManager ([`EmbeddedJobManager`]) owns the tokio runtime all its
//!   servers and background tasks run on: they live exactly as long as it does. Task threads are OS threads of the
//!   TaskExecutors; a finished job has none left.

use crate::cli::embedded::{EmbeddedJobManager, JobResult};
use crate::cli::settings::{jobmanager_settings, taskmanager_settings};
use anyhow::{bail, Context, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use weir_api::program::ProgramRegistry;
use weir_config::options as o;
use weir_config::Configuration;
use weir_core::ids::JobId;
use weir_jobmanager::RestEndpoint;
use weir_rest::JobSubmitRequest;
use weir_taskmanager::{start_taskmanager, RunningTaskManager};

/// The loopback address every internal server of the MiniCluster binds.
const LOOPBACK: &str = "127.0.0.1";

/// How long the TaskManagers may take to register their slots.
const REGISTRATION_TIMEOUT: Duration = Duration::from_secs(10);

/// How many TaskManagers a MiniCluster runs and how many slots each offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MiniClusterSpec {
    /// Number of TaskManagers (at least 1).
    pub taskmanagers: u32,
    /// Slots of each TaskManager (at least 1).
    pub slots_per_taskmanager: u32,
}

impl MiniClusterSpec {
    /// Flink's sizing for a job needing `slots_needed` slots:
    /// `minicluster.number-of-taskmanagers` TaskManagers (default 1) with
    /// `taskmanager.numberOfTaskSlots` slots each when that is configured, else with
    /// the job's slots spread evenly over them; with only the slots configured, as many
    /// TaskManagers as the job needs. A configuration that cannot run the job is an
    /// error naming both options.
    pub fn for_job(config: &Configuration, slots_needed: u32) -> Result<Self> {
        let taskmanagers = config.get(&o::MINICLUSTER_NUM_TASKMANAGERS)?;
        let slots = config.get(&o::NUM_TASK_SLOTS)?;
        if taskmanagers == 0 {
            bail!("{} must be at least 1", o::MINICLUSTER_NUM_TASKMANAGERS.key());
        }
        if slots == 0 {
            bail!("{} must be at least 1", o::NUM_TASK_SLOTS.key());
        }
        let needed = slots_needed.max(1);
        let spec = match (
            config.contains(&o::NUM_TASK_SLOTS),
            config.contains(&o::MINICLUSTER_NUM_TASKMANAGERS),
        ) {
            (false, _) => Self {
                taskmanagers,
                slots_per_taskmanager: needed.div_ceil(taskmanagers),
            },
            (true, false) => Self {
                taskmanagers: needed.div_ceil(slots),
                slots_per_taskmanager: slots,
            },
            (true, true) => Self {
                taskmanagers,
                slots_per_taskmanager: slots,
            },
        };
        if spec.total_slots() < needed {
            bail!(
                "the job needs {needed} slots but the MiniCluster offers {} ({} = {taskmanagers} TaskManagers × {} = {slots} slots)",
                spec.total_slots(),
                o::MINICLUSTER_NUM_TASKMANAGERS.key(),
                o::NUM_TASK_SLOTS.key()
            );
        }
        Ok(spec)
    }

    /// Slots of all TaskManagers together.
    pub fn total_slots(&self) -> u32 {
        self.taskmanagers.saturating_mul(self.slots_per_taskmanager)
    }
}

/// A JobManager and TaskManagers in this process.
pub struct MiniCluster {
    jobmanager: EmbeddedJobManager,
    taskmanagers: Vec<RunningTaskManager>,
    spec: MiniClusterSpec,
}

impl MiniCluster {
    /// Starts the JobManager and `spec`'s TaskManagers with the settings of `config`
    /// (internal servers on ephemeral loopback ports), and waits until every slot is
    /// registered.
    pub fn start(config: &Configuration, spec: MiniClusterSpec, registry: ProgramRegistry) -> Result<MiniCluster> {
        let mut jm_settings = jobmanager_settings(config)?;
        jm_settings.host = LOOPBACK.to_string();
        jm_settings.rpc_port = 0;
        // Its own TaskManagers, sized for the job: the registration ceiling is for peers.
        jm_settings.max_slots_per_taskmanager = jm_settings.max_slots_per_taskmanager.max(spec.slots_per_taskmanager);
        let rest = if config.contains(&o::REST_PORT) {
            RestEndpoint::Serve
        } else {
            RestEndpoint::Disabled
        };
        let mut tm_settings = taskmanager_settings(config)?;
        tm_settings.host = LOOPBACK.to_string();
        tm_settings.bind_host = LOOPBACK.to_string();
        tm_settings.rpc_port = 0;
        tm_settings.data_port = 0;
        tm_settings.num_slots = spec.slots_per_taskmanager;
        let jobmanager = EmbeddedJobManager::start(jm_settings, registry.clone(), rest, "minicluster")
            .context("cannot start the MiniCluster's JobManager")?;
        let jm_rpc = jobmanager.jobmanager().rpc_address().to_string();
        let taskmanagers = jobmanager.runtime().block_on(async {
            let registry = Arc::new(registry);
            let mut taskmanagers = Vec::new();
            for _ in 0..spec.taskmanagers {
                let mut settings = tm_settings.clone();
                settings.resource_id = JobId::random().to_string();
                settings.jobmanager_rpc = jm_rpc.clone();
                let tm = start_taskmanager(settings, registry.clone())
                    .await
                    .context("cannot start a TaskManager of the MiniCluster")?;
                taskmanagers.push(tm);
            }
            anyhow::Ok(taskmanagers)
        })?;
        let cluster = MiniCluster {
            jobmanager,
            taskmanagers,
            spec,
        };
        cluster.wait_for_slots(spec.total_slots())?;
        Ok(cluster)
    }

    fn wait_for_slots(&self, slots: u32) -> Result<()> {
        let jobmanager = self.jobmanager.jobmanager().jobmanager();
        let enough = |st: &weir_jobmanager::jobmanager::State| (st.slots.total_slots() >= slots).then_some(());
        if jobmanager.wait_for(REGISTRATION_TIMEOUT, enough).is_none() {
            let registered = jobmanager.lock().slots.total_slots();
            bail!("the MiniCluster's TaskManagers registered {registered} of {slots} slots within {REGISTRATION_TIMEOUT:?}");
        }
        Ok(())
    }

    /// The slots of all its TaskManagers together.
    pub fn total_slots(&self) -> u32 {
        self.spec.total_slots()
    }

    /// Where the REST endpoint listens, when `rest.port` is configured.
    pub fn rest_address(&self) -> Option<SocketAddr> {
        self.jobmanager.rest_address()
    }

    /// Submits a job through the Dispatcher, exactly as `POST /jobs` does.
    pub fn submit(&self, request: JobSubmitRequest) -> Result<JobId> {
        self.jobmanager.submit(request)
    }

    /// Submits a job under the fixed id `job` (whose in-process program is registered
    /// under it), through the JobManager's normal submission path.
    pub fn submit_as(&self, request: JobSubmitRequest, job: JobId) -> Result<JobId> {
        self.jobmanager.submit_as(request, job)
    }

    /// Waits until `job` reaches FINISHED, FAILED or CANCELED.
    pub fn wait_for_result(&self, job: JobId) -> Result<JobResult> {
        self.jobmanager.wait_for_result(job)
    }

    /// Stops every server and background task without waiting for them, and deletes
    /// the spill files of the blocking partitions the TaskManagers still hold.
    pub fn shutdown(self) {
        let MiniCluster {
            jobmanager,
            taskmanagers,
            spec: _,
        } = self;
        for tm in &taskmanagers {
            tm.executor().release_all_partitions();
        }
        drop(taskmanagers);
        jobmanager.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(entries: &[&str]) -> Configuration {
        let dynamic: Vec<String> = entries.iter().map(|s| s.to_string()).collect();
        Configuration::load(None, &dynamic).unwrap()
    }

    #[test]
    fn by_default_one_taskmanager_offers_every_slot_the_job_needs() {
        let spec = MiniClusterSpec::for_job(&config(&[]), 4).unwrap();
        assert_eq!(
            spec,
            MiniClusterSpec {
                taskmanagers: 1,
                slots_per_taskmanager: 4
            }
        );
    }

    #[test]
    fn configured_slots_give_as_many_taskmanagers_as_the_job_needs() {
        let spec = MiniClusterSpec::for_job(&config(&["taskmanager.numberOfTaskSlots=2"]), 5).unwrap();
        assert_eq!((spec.taskmanagers, spec.slots_per_taskmanager), (3, 2));
        let spec = MiniClusterSpec::for_job(&config(&["minicluster.number-of-taskmanagers=2"]), 3).unwrap();
        assert_eq!((spec.taskmanagers, spec.slots_per_taskmanager), (2, 2));
    }

    #[test]
    fn too_few_configured_slots_are_an_error_naming_both_options() {
        let err = MiniClusterSpec::for_job(
            &config(&[
                "taskmanager.numberOfTaskSlots=1",
                "minicluster.number-of-taskmanagers=2",
            ]),
            3,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("needs 3 slots"), "{err}");
        assert!(err.contains("minicluster.number-of-taskmanagers"), "{err}");
        assert!(err.contains("taskmanager.numberOfTaskSlots"), "{err}");
    }
}
