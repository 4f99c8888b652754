//! The `weir` command line.

pub mod application;
pub mod bench;
pub mod bench_cluster;
pub mod bench_nexmark;
pub mod client;
pub mod cluster;
pub mod commands;
pub mod daemon;
pub mod discovery;
pub mod embedded;
pub mod entry;
pub mod internal_tls;
pub mod savepoint;
pub mod security;
pub mod settings;
pub mod sql;
pub mod startup;
pub mod submission;
pub mod terminal;
pub mod top;

use clap::{Args, Parser, Subcommand};

/// Weir: a Flink-class stream processor in one native binary.
#[derive(Debug, Parser)]
#[command(name = "weir", version, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a program on a MiniCluster: a JobManager and TaskManagers in this process.
    Local(LocalArgs),
    /// Print the JobGraph a program compiles to.
    Plan {
        /// Program and settings.
        #[command(flatten)]
        job: JobArgs,
        /// Print the stable JSON form.
        #[arg(long)]
        json: bool,
    },
    /// List the programs this binary can run.
    Programs,
    /// Measure records/s of the benchmark pipelines.
    Bench(bench::BenchArgs),
    /// Compare a two-TaskManager cluster with a MiniCluster in this process.
    BenchCluster(bench_cluster::BenchClusterArgs),
    /// Run a JobManager (Dispatcher with REST API, ResourceManager, JobMasters); with
    /// `--application`, run that one job and exit with its outcome.
    Jobmanager(cluster::JobManagerArgs),
    /// Run a TaskManager that registers with the JobManager; with `--cluster-dir`, with
    /// the cluster `start-cluster` started there (its port and its internal TLS).
    Taskmanager(cluster::TaskManagerArgs),
    /// Start a JobManager and TaskManagers as background processes.
    StartCluster(cluster::StartClusterArgs),
    /// Stop the processes `start-cluster` started.
    StopCluster(settings::ConfigArgs),
    /// Submit a program to a running cluster.
    Run(client::RunArgs),
    /// List the jobs of a running cluster.
    List(client::Target),
    /// Take a savepoint of a running job.
    Savepoint(savepoint::SavepointArgs),
    /// Stop a job with a savepoint (it ends FINISHED).
    Stop(savepoint::StopArgs),
    /// A terminal view of the cluster: jobs, and per running job its vertices' records/s,
    /// busy and back-pressured time and watermark lag, refreshed in place.
    Top(top::TopArgs),
    /// Flink's SQL client: a REPL, or `-f file.sql`.
    Sql(sql::SqlArgs),
    /// Cancel a job.
    Cancel {
        /// The JobManager.
        #[command(flatten)]
        target: client::Target,
        /// The job id (32 hex chars).
        jid: String,
    },
}

/// Options of `weir local`: the configuration (`conf/config.yaml`, `-D`) of the
/// MiniCluster, and the program with its job settings.
#[derive(Debug, Args, Clone)]
pub struct LocalArgs {
    /// Configuration.
    #[command(flatten)]
    pub config: settings::ConfigArgs,
    /// The program and its settings.
    #[command(flatten)]
    pub job: JobArgs,
}

/// A program with its arguments and job settings.
#[derive(Debug, Args, Clone)]
pub struct JobArgs {
    /// The program's name (see `weir programs`).
    pub program: String,
    /// Default parallelism (`parallelism.default`).
    #[arg(short = 'p', long = "parallelism")]
    pub parallelism: Option<u32>,
    /// A program argument `key=value`; repeatable.
    #[arg(long = "arg", value_name = "KEY=VALUE")]
    pub args: Vec<String>,
    /// Job-wide max parallelism (`pipeline.max-parallelism`).
    #[arg(long = "max-parallelism")]
    pub max_parallelism: Option<u32>,
    /// Turn operator chaining off (`pipeline.operator-chaining.enabled: false`).
    #[arg(long = "disable-chaining")]
    pub disable_chaining: bool,
    /// Buffer timeout in ms (`execution.buffer-timeout.interval`; 0 = flush every record).
    #[arg(long = "buffer-timeout", allow_hyphen_values = true)]
    pub buffer_timeout: Option<i64>,
    /// Periodic watermark interval in ms (`pipeline.auto-watermark-interval`; 0 disables).
    #[arg(long = "auto-watermark-interval")]
    pub auto_watermark_interval: Option<u64>,
}
