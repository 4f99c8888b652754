//! What a process exports: one [`MetricSample`] per metric of each scope instance (the
//! JobManager, a job on it, a TaskManager, a subtask on it), produced on demand by the
//! process's [`MetricSource`].

/// Flink's metric group a sample belongs to; it gives the exported name its prefix
/// (`flink_<scope>_<metric>`) and decides which labels the sample carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The JobManager process (`host`).
    JobManager,
    /// A job on the JobManager (`host`, `job_id`, `job_name`).
    JobManagerJob,
    /// A TaskManager process (`host`, `tm_id`).
    TaskManager,
    /// A subtask on a TaskManager (`host`, `tm_id`, `job_id`, `job_name`, `task_id`,
    /// `task_name`, `task_attempt_id`, `task_attempt_num`, `subtask_index`).
    TaskManagerTask,
    /// An operator of a subtask's chain (the task's labels and `operator_id`,
    /// `operator_name`).
    TaskManagerOperator,
}

impl Scope {
    /// The scope's components joined as Flink's PrometheusReporter joins them.
    pub fn prefix(self) -> &'static str {
        match self {
            Scope::JobManager => "flink_jobmanager",
            Scope::JobManagerJob => "flink_jobmanager_job",
            Scope::TaskManager => "flink_taskmanager",
            Scope::TaskManagerTask => "flink_taskmanager_job_task",
            Scope::TaskManagerOperator => "flink_taskmanager_job_task_operator",
        }
    }

    /// The scope as Flink's reporter names it in a metric's help text.
    pub fn help_name(self) -> &'static str {
        &self.prefix()["flink_".len()..]
    }
}

/// One metric of one scope instance, at the moment it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSample {
    /// The metric group.
    pub scope: Scope,
    /// The metric's Flink name, e.g. `numRecordsIn` or `Status.JVM.CPU.Load`.
    pub name: String,
    /// The scope's variables, e.g. `("job_id", "…")`, in the order they are exported.
    pub labels: Vec<(&'static str, String)>,
    /// The value (Flink exports counters, gauges and meters alike as gauges).
    pub value: f64,
}

impl MetricSample {
    /// A sample of `name` with `labels`.
    pub fn new(scope: Scope, name: impl Into<String>, labels: &[(&'static str, String)], value: f64) -> Self {
        Self {
            scope,
            name: name.into(),
            labels: labels.to_vec(),
            value,
        }
    }
}

/// Produces a process's samples when a reporter asks (on each scrape).
pub trait MetricSource: Send + Sync + 'static {
    /// Every metric of the process now.
    fn samples(&self) -> Vec<MetricSample>;
}

/// The exported name of a metric: the scope's prefix and the Flink name, with every
/// character Prometheus does not allow in a name replaced by `_` (as Flink's
/// PrometheusReporter does: `Status.JVM.CPU.Load` → `Status_JVM_CPU_Load`).
pub fn exported_name(scope: Scope, name: &str) -> String {
    let mut out = String::with_capacity(scope.prefix().len() + 1 + name.len());
    out.push_str(scope.prefix());
    out.push('_');
    out.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            c
        } else {
            '_'
        }
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_join_scope_and_metric_with_invalid_characters_replaced() {
        assert_eq!(
            exported_name(Scope::TaskManagerTask, "numRecordsIn"),
            "flink_taskmanager_job_task_numRecordsIn"
        );
        assert_eq!(
            exported_name(Scope::TaskManager, "Status.JVM.CPU.Load"),
            "flink_taskmanager_Status_JVM_CPU_Load"
        );
        assert_eq!(
            exported_name(Scope::JobManagerJob, "a-b c"),
            "flink_jobmanager_job_a_b_c"
        );
        assert_eq!(Scope::TaskManagerOperator.help_name(), "taskmanager_job_task_operator");
    }
}
