//! The registry: every option Weir reads, with Flink's key, type and default.
//!
//! This module is the one place where an option is declared. Each declaration produces
//! a `pub const` [`ConfigOption`] and an entry of [`ALL_OPTIONS`], so the list used to
//! print the registry and to detect unknown keys cannot miss an option.
//!
//! Weir departures from Flink's defaults, each deliberate:
//! - addresses (`rest.address`, `jobmanager.rpc.address`, `taskmanager.host`) default to
//!   the loopback address `127.0.0.1`, so a Weir process never listens on other
//!   interfaces unless told to;
//! - `taskmanager.memory.process.size` defaults to `1728m` and
//!   `jobmanager.memory.process.size` to `1600m` (Flink has no default but ships a
//!   `config.yaml` with these values; Weir ships no file);
//! - `cluster.dir` is Weir's own.

use std::time::Duration;

use crate::option::{ConfigOption, OptionInfo};
use weir_core::{CheckpointingMode, RuntimeExecutionMode};

use crate::failover::FailoverStrategy;
use crate::value::{ExternalizedCheckpointRetention, MemorySize, RestartStrategyType, StateBackendType};

macro_rules! config_options {
    ($( $(#[$attr:meta])* $name:ident : $ty:ty = ($key:literal, $default:expr, $desc:literal
        $(, deprecated = [$($old:literal),* $(,)?])? ); )*) => {
        $(
            #[doc = concat!("`", $key, "`: ", $desc)]
            $(#[$attr])*
            pub const $name: ConfigOption<$ty> =
                ConfigOption::new($key, $default, $desc).with_deprecated_keys(&[$($($old),*)?]);
        )*

        /// Every option of the registry, in declaration order.
        pub static ALL_OPTIONS: &[OptionInfo] = &[$($name.info()),*];
    };
}

config_options! {
    // --- cluster processes -------------------------------------------------------------
    NUM_TASK_SLOTS: u32 = ("taskmanager.numberOfTaskSlots", Some("1"),
        "Number of task slots a TaskManager offers; each slot runs one parallel pipeline (one subtask of each vertex of a slot sharing group).");
    PARALLELISM_DEFAULT: u32 = ("parallelism.default", Some("1"),
        "Parallelism of operators and jobs that do not set one.");
    REST_ADDRESS: String = ("rest.address", Some("127.0.0.1"),
        "Address the REST endpoint binds to and that clients connect to. Weir defaults to the loopback address.");
    REST_PORT: u16 = ("rest.port", Some("8081"),
        "Port of the REST endpoint.");
    JOBMANAGER_RPC_ADDRESS: String = ("jobmanager.rpc.address", Some("127.0.0.1"),
        "Address of the JobManager's RPC endpoint, which TaskManagers connect to. Weir defaults to the loopback address.");
    JOBMANAGER_BIND_HOST: Option<String> = ("jobmanager.bind-host", None,
        "Address the JobManager's RPC endpoint binds to (e.g. 0.0.0.0 in a container); defaults to jobmanager.rpc.address.");
    REST_BIND_ADDRESS: Option<String> = ("rest.bind-address", None,
        "Address the REST endpoint binds to (e.g. 0.0.0.0 in a container); defaults to rest.address.");
    TASKMANAGER_BIND_HOST: Option<String> = ("taskmanager.bind-host", None,
        "Address the TaskManager's RPC and data servers bind to (e.g. 0.0.0.0 in a container); defaults to taskmanager.host, which stays the address the TaskManager advertises.");
    JOBMANAGER_RPC_PORT: u16 = ("jobmanager.rpc.port", Some("6123"),
        "Port of the JobManager's RPC endpoint.");
    TASKMANAGER_RPC_PORT: String = ("taskmanager.rpc.port", Some("0"),
        "Port of the TaskManager's RPC endpoint: a port, a range like 50100-50200, or 0 for any free port.");
    TASKMANAGER_DATA_PORT: u16 = ("taskmanager.data.port", Some("0"),
        "Port of the TaskManager's data (shuffle) server; 0 picks a free port.");
    TASKMANAGER_HOST: String = ("taskmanager.host", Some("127.0.0.1"),
        "Address the TaskManager's servers bind to and advertise. Weir defaults to the loopback address.");
    HEARTBEAT_INTERVAL: Duration = ("heartbeat.interval", Some("10 s"),
        "Time between heartbeat requests from the sender to the receiver side.");
    HEARTBEAT_TIMEOUT: Duration = ("heartbeat.timeout", Some("50 s"),
        "Time without a heartbeat response after which the other side is considered lost.");
    SLOT_REQUEST_TIMEOUT: Duration = ("slot.request.timeout", Some("5 min"),
        "How long a slot request may stay pending before the job fails with NoResourceAvailableException.");
    SLOT_IDLE_TIMEOUT: Duration = ("slot.idle.timeout", Some("50 s"),
        "How long a free slot stays in the JobMaster's slot pool before it is given back.");
    MINICLUSTER_NUM_TASKMANAGERS: u32 = ("minicluster.number-of-taskmanagers", Some("1"),
        "Number of TaskManagers of the MiniCluster that `weir local` runs a job on (each with taskmanager.numberOfTaskSlots slots; when that is not set, the slots the job needs are spread evenly).");
    CLUSTER_DIR: Option<String> = ("cluster.dir", None,
        "Weir only: directory where `weir start-cluster` keeps pid files and logs of the processes it starts. Defaults to $HOME/.weir/cluster when unset.");

    // --- pipeline and execution ----------------------------------------------------------
    BUFFER_TIMEOUT: Duration = ("execution.buffer-timeout.interval", Some("100 ms"),
        "Longest time a partially filled network buffer waits before it is flushed; 0 flushes after every record.");
    BUFFER_TIMEOUT_ENABLED: bool = ("execution.buffer-timeout.enabled", Some("true"),
        "Whether buffers are flushed on the buffer timeout; false flushes only full buffers (and on events).");
    MAX_PARALLELISM: i32 = ("pipeline.max-parallelism", Some("-1"),
        "Maximum parallelism (number of key groups) of jobs that do not set one; -1 derives it from the parallelism.");
    RUNTIME_MODE: RuntimeExecutionMode = ("execution.runtime-mode", Some("STREAMING"),
        "Runtime execution mode of DataStream and SQL jobs: STREAMING, BATCH (every source must be bounded; blocking exchanges, stage-by-stage scheduling, final results only) or AUTOMATIC (BATCH when every source is bounded).");
    BATCH_AUTO_PARALLELISM_ENABLED: bool = ("execution.batch.adaptive.auto-parallelism.enabled", Some("true"),
        "In BATCH mode, whether the adaptive batch scheduler decides the parallelism of operators whose parallelism the user did not set, from the bytes their inputs produced.");
    BATCH_AUTO_PARALLELISM_MIN: u32 = ("execution.batch.adaptive.auto-parallelism.min-parallelism", Some("1"),
        "The lower bound of a parallelism the adaptive batch scheduler decides.");
    BATCH_AUTO_PARALLELISM_MAX: Option<u32> = ("execution.batch.adaptive.auto-parallelism.max-parallelism", None,
        "The upper bound of a parallelism the adaptive batch scheduler decides (and the number of subpartitions its producers write). Unset: parallelism.default when that is set, else 128.");
    BATCH_AUTO_PARALLELISM_AVG_DATA_VOLUME: MemorySize = ("execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", Some("16mb"),
        "The amount of input data a subtask should process on average; the adaptive batch scheduler divides an operator's input bytes by it.");
    BATCH_AUTO_PARALLELISM_DEFAULT_SOURCE: Option<u32> = ("execution.batch.adaptive.auto-parallelism.default-source-parallelism", None,
        "The parallelism of sources whose parallelism neither the user nor their splits decide. Unset: the max parallelism.");
    CHAINING_ENABLED: bool = ("pipeline.operator-chaining.enabled", Some("true"),
        "Whether chainable operators are fused into one task.");
    AUTO_WATERMARK_INTERVAL: Duration = ("pipeline.auto-watermark-interval", Some("200 ms"),
        "Interval of periodic watermark emission; 0 disables periodic watermarks.");
    MAX_WINDOWS_PER_RECORD: u32 = ("pipeline.window.max-windows-per-record", Some("10000"),
        "Weir only (Flink has no limit): the most windows one record may belong to. A sliding (HOP) window puts each record into size / slide windows and a CUMULATE window into max size / step; a job whose windows exceed this is refused when it is planned, instead of growing memory without bound.");
    SQL_MAX_STATEMENT_SIZE: MemorySize = ("table.sql.max-statement-size", Some("1mb"),
        "Weir only: the largest SQL statement (and catalog script) a job may have, in bytes of text, literal lists included. The text travels to every task, so the limit stays well below the 4 MiB RPC message limit; a larger statement is refused at submission.");
    CHECKPOINTING_INTERVAL: Option<Duration> = ("execution.checkpointing.interval", None,
        "Interval between checkpoints; unset disables checkpointing.");
    CHECKPOINTING_MODE: CheckpointingMode = ("execution.checkpointing.mode", Some("EXACTLY_ONCE"),
        "The checkpointing mode (exactly-once vs. at-least-once).");
    CHECKPOINTING_TIMEOUT: Duration = ("execution.checkpointing.timeout", Some("10 min"),
        "The maximum time that a checkpoint may take before being discarded.");
    CHECKPOINTING_MIN_PAUSE: Duration = ("execution.checkpointing.min-pause", Some("0 ms"),
        "The minimal pause between checkpointing attempts. This setting defines how soon the checkpoint coordinator may trigger another checkpoint after it becomes possible to trigger another checkpoint with respect to the maximum number of concurrent checkpoints (see execution.checkpointing.max-concurrent-checkpoints).");
    CHECKPOINTING_MAX_CONCURRENT: u32 = ("execution.checkpointing.max-concurrent-checkpoints", Some("1"),
        "The maximum number of checkpoint attempts that may be in progress at the same time. If this value is n, then no checkpoints will be triggered while n checkpoint attempts are currently in flight. For the next checkpoint to be triggered, one checkpoint attempt would need to finish or expire.");
    CHECKPOINTING_TOLERABLE_FAILURES: u32 = ("execution.checkpointing.tolerable-failed-checkpoints", Some("0"),
        "The tolerable checkpoint consecutive failure number. If set to 0, that means we do not tolerance any checkpoint failure. This only applies to the following failure reasons: IOException on the Job Manager, failures in the async phase on the Task Managers and checkpoint expiration due to a timeout. Failures originating from the sync phase on the Task Managers are always forcing failover of an affected task. Other types of checkpoint failures (such as checkpoint being subsumed) are being ignored.");
    CHECKPOINTING_NUM_RETAINED: u32 = ("execution.checkpointing.num-retained", Some("1"),
        "The maximum number of completed checkpoints to retain.",
        deprecated = ["state.checkpoints.num-retained"]);
    CHECKPOINTING_EXTERNALIZED_RETENTION: ExternalizedCheckpointRetention = ("execution.checkpointing.externalized-checkpoint-retention", Some("NO_EXTERNALIZED_CHECKPOINTS"),
        "Externalized checkpoints write their meta data out to persistent storage and are not automatically cleaned up when the owning job fails or is suspended (terminating with job status FAILED or SUSPENDED). In this case, you have to manually clean up the checkpoint state, both the meta data and actual program state. The mode defines how an externalized checkpoint should be cleaned up on job cancellation. If you choose to retain externalized checkpoints on cancellation you have to handle checkpoint clean up manually when you cancel the job as well (terminating with job status CANCELED). The target directory for externalized checkpoints' meta data is configured via execution.checkpointing.dir. Values: NO_EXTERNALIZED_CHECKPOINTS, RETAIN_ON_CANCELLATION, DELETE_ON_CANCELLATION.");
    CHECKPOINTS_DIRECTORY: Option<String> = ("execution.checkpointing.dir", None,
        "The default directory used for storing the data files and meta data of checkpoints in a Flink supported filesystem. The storage path must be accessible from all participating processes/nodes(i.e. all TaskManagers and JobManagers). Unset: checkpoints are kept in the JobManager's memory.",
        deprecated = ["state.checkpoints.dir"]);
    SAVEPOINT_DIRECTORY: Option<String> = ("execution.checkpointing.savepoint-dir", None,
        "The default directory for savepoints. Used by the state backends that write savepoints to file systems (HashMapStateBackend, EmbeddedRocksDBStateBackend).",
        deprecated = ["state.savepoints.dir"]);
    CHECKPOINTING_DATA_INLINE_THRESHOLD: MemorySize = ("execution.checkpointing.data-inline-threshold", Some("20kb"),
        "The minimum size of state data files. All state chunks smaller than that are stored inline in the root checkpoint metadata file. The max memory threshold for this configuration is 1MB.",
        deprecated = ["state.storage.fs.memory-threshold"]);
    CHECKPOINTING_INCREMENTAL: bool = ("execution.checkpointing.incremental", Some("false"),
        "Whether checkpoints of the RocksDB state backend are incremental: each checkpoint uploads only the store files created since the last completed one to the job's shared state directory and refers to the older ones; the JobManager deletes a shared file once no retained checkpoint refers to it. Needs a checkpoint directory; savepoints are always complete (canonical format). The heap state backend ignores it.",
        deprecated = ["state.backend.incremental"]);
    STATE_RECOVERY_FROM_LOCAL: bool = ("execution.state-recovery.from-local", Some("false"),
        "Local recovery, read by the TaskManagers: each keeps the RocksDB files of the last checkpoint every keyed operator subtask confirmed on local disk (hard links) and a task restarted on the same TaskManager takes those files from there instead of downloading them; the copies of a job go when the job ends.",
        deprecated = ["state.backend.local-recovery"]);
    CHECKPOINTING_UNALIGNED_ENABLED: bool = ("execution.checkpointing.unaligned.enabled", Some("false"),
        "Enables unaligned checkpoints, which greatly reduce checkpointing times under backpressure. Unaligned checkpoints contain data stored in buffers as part of the checkpoint state, which allows checkpoint barriers to overtake these buffers. Thus, the checkpoint duration becomes independent of the current throughput as checkpoint barriers are effectively not embedded into the stream of data anymore. Unaligned checkpoints can only be enabled if execution.checkpointing.mode is EXACTLY_ONCE and if execution.checkpointing.max-concurrent-checkpoints is 1.",
        deprecated = ["execution.checkpointing.unaligned"]);
    CHECKPOINTING_ALIGNED_TIMEOUT: Duration = ("execution.checkpointing.aligned-checkpoint-timeout", Some("0 ms"),
        "Only relevant if execution.checkpointing.unaligned.enabled is enabled. If timeout is 0, checkpoints will always start unaligned. If timeout has a positive value, checkpoints will start aligned. If during checkpointing, checkpoint start delay exceeds this timeout, alignment will timeout and checkpoint barrier will start working as unaligned checkpoint.",
        deprecated = ["execution.checkpointing.alignment-timeout"]);
    CHECKPOINTS_HISTORY_SIZE: u32 = ("web.checkpoints.history", Some("10"),
        "Number of checkpoints to remember for recent history.");
    EXCEPTION_HISTORY_SIZE: u32 = ("web.exception-history-size", Some("16"),
        "Number of root failures kept in a job's exception history.");

    // --- file systems (checkpoint and savepoint storage on object stores) ----------------
    S3_ENDPOINT: Option<String> = ("s3.endpoint", None,
        "Endpoint of the S3 service for s3:// (and s3a://) checkpoint and savepoint paths, e.g. an S3-compatible store such as MinIO (`http://127.0.0.1:9000`; http:// endpoints are allowed). Unset: AWS's endpoint of s3.region, or AWS_ENDPOINT. Read by every JobManager and TaskManager process when it starts.");
    S3_ACCESS_KEY: Option<String> = ("s3.access-key", None,
        "Access key id for s3:// paths. Unset: AWS_ACCESS_KEY_ID and the other credential sources of the AWS environment (web identity, container and instance credentials).",
        deprecated = ["s3.access.key"]);
    S3_SECRET_KEY: Option<String> = ("s3.secret-key", None,
        "Secret access key for s3:// paths, with s3.access-key. Unset: AWS_SECRET_ACCESS_KEY. Hidden in the REST API's view of the configuration.",
        deprecated = ["s3.secret.key"]);
    S3_PATH_STYLE_ACCESS: Option<bool> = ("s3.path.style.access", None,
        "Whether S3 requests name the bucket in the path (`<endpoint>/<bucket>/<key>`, true; S3-compatible stores usually need it) or in the host name (`<bucket>.<endpoint host>`, false). Unset: path-style unless AWS_VIRTUAL_HOSTED_STYLE_REQUEST is true.");
    S3_REGION: Option<String> = ("s3.region", None,
        "AWS region of the buckets of s3:// paths (also used to sign requests to an S3-compatible s3.endpoint). Unset: AWS_REGION (or AWS_DEFAULT_REGION), else us-east-1.",
        deprecated = ["s3.endpoint.region"]);

    // --- metrics ---------------------------------------------------------------------------
    METRICS_REPORTERS: Option<String> = ("metrics.reporters", None,
        "Comma-separated names of the metric reporters to start; unset: every reporter configured under `metrics.reporter.<name>.*`. Each reporter is configured with `metrics.reporter.<name>.factory.class` (Weir has Prometheus's: org.apache.flink.metrics.prometheus.PrometheusReporterFactory) and `metrics.reporter.<name>.port` (a port, a range like 9249-9259, or 0 for any free port; default 9249-9259, so processes on one host take the next free port).");

    METRICS_FETCHER_UPDATE_INTERVAL: Duration = ("metrics.fetcher.update-interval", Some("10 s"),
        "How old the task metrics the REST API serves may be: a REST read of job, vertex or subtask metrics older than this asks the TaskManagers for fresh values first (Flink's MetricFetcher); a job read for the first time is always fetched. A bare number is milliseconds, as in Flink.");
    METRICS_COLLECTION_ENABLED: bool = ("metrics.collection.enabled", Some("true"),
        "Weir's own switch (Flink always collects): whether a TaskManager's tasks count their operators' records (numRecordsIn/Out, numLateRecordsDropped per operator) and publish their task metrics while they run. Off: no per-operator counting, and a task's counters are published only when it ends, so running jobs show no metrics. Read when the TaskManager starts; for measuring the cost of metrics.");

    // --- network stack ------------------------------------------------------------------
    NETWORK_BUFFERS_PER_CHANNEL: u32 = ("taskmanager.network.memory.buffers-per-channel", Some("2"),
        "Exclusive buffers per input channel: a remote channel's initial credit.");
    NETWORK_FLOATING_BUFFERS_PER_GATE: u32 = ("taskmanager.network.memory.floating-buffers-per-gate", Some("8"),
        "Floating buffers per input gate, shared by its channels and granted on announced backlog.");
    NETWORK_MAX_BUFFERS_PER_CHANNEL: u32 = ("taskmanager.network.memory.max-buffers-per-channel", Some("10"),
        "Most buffers one output subpartition may hold, so that one skewed channel cannot take a whole pool.");
    MEMORY_SEGMENT_SIZE: MemorySize = ("taskmanager.memory.segment-size", Some("32kb"),
        "Size of a network buffer (memory segment).");

    // --- security (Flink's security.ssl.* keys, with PEM files instead of keystores) -----
    SSL_INTERNAL_ENABLED: bool = ("security.ssl.internal.enabled", Some("false"),
        "Mutual TLS for the cluster's internal connections: the RPC endpoints of the JobManager and TaskManagers and the TaskManagers' data servers. Every peer must present a certificate signed by security.ssl.internal.trust-cert. Off: anyone who reaches an RPC or data port can act as a cluster member. weir start-cluster turns it on unless it is set to false explicitly, with a CA of its own in cluster.dir when no certificate files are set.");
    SSL_INTERNAL_CERT: Option<String> = ("security.ssl.internal.cert", None,
        "Weir only (Flink: security.ssl.internal.keystore): PEM file with this process's certificate chain for internal connections.");
    SSL_INTERNAL_KEY: Option<String> = ("security.ssl.internal.key", None,
        "Weir only (Flink: security.ssl.internal.keystore): PEM file with the private key of security.ssl.internal.cert.");
    SSL_INTERNAL_TRUST_CERT: Option<String> = ("security.ssl.internal.trust-cert", None,
        "Weir only (Flink: security.ssl.internal.truststore): PEM file with the CA certificate(s) a peer's internal certificate must be signed by.");
    SSL_REST_ENABLED: bool = ("security.ssl.rest.enabled", Some("false"),
        "HTTPS for the REST endpoint (and the web dashboard); the weir client commands connect with HTTPS when set.");
    SSL_REST_AUTHENTICATION_ENABLED: bool = ("security.ssl.rest.authentication-enabled", Some("false"),
        "With security.ssl.rest.enabled: the REST endpoint requires a client certificate signed by security.ssl.rest.trust-cert, and the weir client commands present security.ssl.rest.cert.");
    SSL_REST_CERT: Option<String> = ("security.ssl.rest.cert", None,
        "Weir only (Flink: security.ssl.rest.keystore): PEM file with the REST endpoint's certificate chain (a client's certificate when used by the weir client commands).");
    SSL_REST_KEY: Option<String> = ("security.ssl.rest.key", None,
        "Weir only (Flink: security.ssl.rest.keystore): PEM file with the private key of security.ssl.rest.cert.");
    SSL_REST_TRUST_CERT: Option<String> = ("security.ssl.rest.trust-cert", None,
        "Weir only (Flink: security.ssl.rest.truststore): PEM file with the CA certificate(s) the REST endpoint's certificate (for clients) or a client's certificate (with authentication) must be signed by.");
    JOB_ALLOWED_PATHS: Option<String> = ("security.job.allowed-paths", None,
        "Weir only (Flink has no such restriction): the directories jobs' file sources and sinks may open, separated by ';'. Unset or empty: any file the process can open. Read when a TaskManager (and the JobManager, for the checks at submission) starts; a job opening a file outside them fails with an error naming the path and this key.");
    WEB_ACCESS_CONTROL_ALLOW_ORIGIN: Option<String> = ("web.access-control-allow-origin", None,
        "The Access-Control-Allow-Origin header of REST responses. Unset (Weir's default; Flink's is *): no such header, so web pages of other origins can neither read responses nor make cross-origin requests that need a preflight; every write needs Content-Type: application/json in any case.");
    REST_SERVER_MAX_CONNECTIONS: u32 = ("rest.server.max-connections", Some("512"),
        "Weir only: connections the REST endpoint serves at once once they sent their first request, and again as many that have not yet (TLS handshake, first request's headers). A new connection while those are full closes the oldest of them; one while the served ones are full is closed at once (one warning per burst). At least 1.");
    REST_SERVER_MAX_CONNECTIONS_PER_PEER: u32 = ("rest.server.max-connections-per-peer", Some("128"),
        "Weir only: connections the REST endpoint serves at once for one client address, before and after their first request; a new connection beyond closes that address's oldest connection still without a request, or is closed at once when there is none. At least 1.");
    REST_SERVER_HEADER_READ_TIMEOUT: Duration = ("rest.server.header-read-timeout", Some("30 s"),
        "Weir only: how long the REST endpoint waits for a request's headers (and for a TLS handshake, and on a kept-alive connection for its next request) before it closes the connection. More than 0.");
    TASKMANAGER_DATA_MAX_CONNECTIONS: u32 = ("taskmanager.data.max-connections", Some("256"),
        "Weir only: connections a TaskManager's data server serves at once once they said hello (each takes two threads), and again as many in their TLS handshake and hello (one thread each). A new connection while those are full closes the oldest of them; one while the served ones are full is closed at once (one warning per burst). At least 1.");
    TASKMANAGER_DATA_MAX_CONNECTIONS_PER_PEER: u32 = ("taskmanager.data.max-connections-per-peer", Some("64"),
        "Weir only: connections a TaskManager's data server serves at once for one address (all TaskManagers of one host share it), in their handshake or served; a new connection beyond closes that address's oldest connection still in its handshake, or is closed at once when there is none. At least 1.");
    TASKMANAGER_DATA_HANDSHAKE_TIMEOUT: Duration = ("taskmanager.data.handshake-timeout", Some("10 s"),
        "Weir only: how long a new data connection may take for its TLS handshake and hello before the data server closes it. More than 0.");
    STATE_BACKEND_TYPE: StateBackendType = ("state.backend.type", Some("hashmap"),
        "The state backend for keyed state: hashmap (on the heap) or rocksdb (an embedded RocksDB on local disk under state.backend.rocksdb.localdir, with a bounded cache on the heap). Set on the TaskManagers' configuration.",
        deprecated = ["state.backend"]);
    ROCKSDB_LOCAL_DIR: Option<String> = ("state.backend.rocksdb.localdir", None,
        "The local directory (on the TaskManager) where RocksDB puts its files; defaults to the first of io.tmp.dirs.");
    ROCKSDB_CACHE_ENTRIES: u32 = ("state.backend.rocksdb.weir.cache-entries", Some("65536"),
        "Weir only: entries each keyed operator subtask keeps decoded on the heap in front of its RocksDB store; beyond it the cache is written to RocksDB. Bounds the heap whatever the state's size.");
    ROCKSDB_MEMORY_MANAGED: bool = ("state.backend.rocksdb.memory.managed", Some("true"),
        "If set, RocksDB's block cache and write buffers share the TaskManager's managed memory (taskmanager.memory.managed.size / .fraction).");
    ROCKSDB_WRITE_BUFFER_RATIO: f64 = ("state.backend.rocksdb.memory.write-buffer-ratio", Some("0.5"),
        "The share of RocksDB's memory for write buffers (memtables); the rest is block cache.");
    IO_TMP_DIRS: Option<String> = ("io.tmp.dirs", None,
        "Directories for temporary files (the spill files of blocking result partitions), separated by ',' or the system's path separator; defaults to the system's temp directory. Weir uses the first.");
    BLOCKING_PARTITION_MEMORY_BUDGET: MemorySize = ("taskmanager.network.blocking-partition.memory-budget", Some("64mb"),
        "Weir only: bytes of blocking result partitions (BATCH jobs) a TaskManager keeps in memory; beyond it they spill to files under io.tmp.dirs.");
    TASKMANAGER_DATA_IDLE_TIMEOUT: Duration = ("taskmanager.data.idle-timeout", Some("5 min"),
        "Weir only: how long a data connection that serves no channel may stay silent before the data server, or the TaskManager that opened it, closes it.");

    RESOURCEMANAGER_TASKMANAGER_MAX_SLOTS: u32 = ("resourcemanager.taskmanager.max-slots", Some("1024"),
        "Weir only: most slots one TaskManager may declare when it registers; a registration declaring more is refused (naming this key) and the JobManager serves on.");
    JOBMANAGER_SUBMISSION_MAX_SUBTASKS: u32 = ("jobmanager.submission.max-subtasks", Some("16384"),
        "Weir only: most subtasks (the sum of every vertex's parallelism) one submitted job may have; a larger submission is refused before anything is allocated for it.");
    JOBMANAGER_SUBMISSION_MAX_EXCHANGE_CHANNELS: u32 = ("jobmanager.submission.max-exchange-channels", Some("4194304"),
        "Weir only: most input channels (producer-consumer subtask pairs of the job's data exchanges: producers times consumers for an all-to-all edge) one submitted job may have. The deployment descriptors, and the pipelined regions of a BATCH job, grow with this number; a larger submission is refused before anything is allocated for it.");

    PARTITION_RELEASE_DURING_JOB_EXECUTION: bool = ("jobmanager.partition.release-during-job-execution", Some("true"),
        "Whether a BATCH job's blocking result partitions are released while the job runs, as soon as every region reading them finished (freeing their memory and spill files); false keeps them until the job ends.");

    // --- failover -----------------------------------------------------------------------
    FAILOVER_STRATEGY: FailoverStrategy = ("jobmanager.execution.failover-strategy", Some("region"),
        "Which tasks a task failure restarts: 'region' restarts the pipelined regions the failure touches (subtasks connected through data exchanges), each restored from the latest checkpoint; 'full' restarts the whole job.");

    // --- restart strategies -------------------------------------------------------------
    RESTART_STRATEGY_TYPE: Option<RestartStrategyType> = ("restart-strategy.type", None,
        "Restart strategy on failure: none/off/disable, fixed-delay/fixeddelay, failure-rate/failurerate, exponential-delay/exponentialdelay. Unset: disable without checkpointing, exponential-delay with its default settings when checkpointing is on.");
    RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS: i32 = ("restart-strategy.fixed-delay.attempts", Some("1"),
        "fixed-delay: number of restarts before the job fails.");
    RESTART_STRATEGY_FIXED_DELAY_DELAY: Duration = ("restart-strategy.fixed-delay.delay", Some("1 s"),
        "fixed-delay: delay between a failure and the restart.");
    RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL: i32 = ("restart-strategy.failure-rate.max-failures-per-interval", Some("1"),
        "failure-rate: restarts allowed within one interval before the job fails.");
    RESTART_STRATEGY_FAILURE_RATE_INTERVAL: Duration = ("restart-strategy.failure-rate.failure-rate-interval", Some("1 min"),
        "failure-rate: the sliding interval over which failures are counted.");
    RESTART_STRATEGY_FAILURE_RATE_DELAY: Duration = ("restart-strategy.failure-rate.delay", Some("1 s"),
        "failure-rate: delay between a failure and the restart.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF: Duration = ("restart-strategy.exponential-delay.initial-backoff", Some("1 s"),
        "exponential-delay: delay before the first restart.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF: Duration = ("restart-strategy.exponential-delay.max-backoff", Some("1 min"),
        "exponential-delay: upper bound of the delay.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER: f64 = ("restart-strategy.exponential-delay.backoff-multiplier", Some("1.5"),
        "exponential-delay: factor applied to the delay after every restart attempt (must be greater than 1).");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD: Duration = ("restart-strategy.exponential-delay.reset-backoff-threshold", Some("1 h"),
        "exponential-delay: failure-free time after which the delay and the attempt count start over.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR: f64 = ("restart-strategy.exponential-delay.jitter-factor", Some("0.1"),
        "exponential-delay: random share of the delay added or subtracted, in [0, 1].");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF: i32 = ("restart-strategy.exponential-delay.attempts-before-reset-backoff", Some("2147483647"),
        "exponential-delay: restart attempts before the job fails, counted since the last reset (default: unlimited).");

    // --- TaskManager memory ---------------------------------------------------------------
    TOTAL_PROCESS_MEMORY: MemorySize = ("taskmanager.memory.process.size", Some("1728m"),
        "Total memory of the TaskManager process, from which all components are derived unless flink.size or task.heap.size and managed.size are set.");
    TOTAL_FLINK_MEMORY: Option<MemorySize> = ("taskmanager.memory.flink.size", None,
        "Total Flink memory of the TaskManager: the process memory without JVM metaspace and overhead.");
    FRAMEWORK_HEAP_MEMORY: MemorySize = ("taskmanager.memory.framework.heap.size", Some("128m"),
        "Heap memory reserved for the TaskManager framework.");
    TASK_HEAP_MEMORY: Option<MemorySize> = ("taskmanager.memory.task.heap.size", None,
        "Heap memory for tasks; derived as the rest of total Flink memory when unset.");
    FRAMEWORK_OFF_HEAP_MEMORY: MemorySize = ("taskmanager.memory.framework.off-heap.size", Some("128m"),
        "Off-heap memory reserved for the TaskManager framework.");
    TASK_OFF_HEAP_MEMORY: MemorySize = ("taskmanager.memory.task.off-heap.size", Some("0"),
        "Off-heap memory for tasks.");
    MANAGED_MEMORY_FRACTION: f32 = ("taskmanager.memory.managed.fraction", Some("0.4"),
        "Share of total Flink memory used as managed memory, unless managed.size is set.");
    MANAGED_MEMORY_SIZE: Option<MemorySize> = ("taskmanager.memory.managed.size", None,
        "Managed memory (state backends, sorting); overrides managed.fraction.");
    NETWORK_MEMORY_FRACTION: f32 = ("taskmanager.memory.network.fraction", Some("0.1"),
        "Share of total Flink memory used for network buffers, clamped to [network.min, network.max].");
    NETWORK_MEMORY_MIN: MemorySize = ("taskmanager.memory.network.min", Some("64m"),
        "Lower bound of network memory.");
    NETWORK_MEMORY_MAX: MemorySize = ("taskmanager.memory.network.max", Some("1g"),
        "Upper bound of network memory.");
    JVM_METASPACE: MemorySize = ("taskmanager.memory.jvm-metaspace.size", Some("256m"),
        "JVM metaspace of the TaskManager. Used by Flink's model only: a Weir process has no metaspace and reports 0.");
    JVM_OVERHEAD_FRACTION: f32 = ("taskmanager.memory.jvm-overhead.fraction", Some("0.1"),
        "Share of total process memory reserved as overhead (native memory, thread stacks), clamped to [jvm-overhead.min, jvm-overhead.max].");
    JVM_OVERHEAD_MIN: MemorySize = ("taskmanager.memory.jvm-overhead.min", Some("192m"),
        "Lower bound of the overhead.");
    JVM_OVERHEAD_MAX: MemorySize = ("taskmanager.memory.jvm-overhead.max", Some("1g"),
        "Upper bound of the overhead.");

    // --- JobManager memory ----------------------------------------------------------------
    JOBMANAGER_TOTAL_PROCESS_MEMORY: MemorySize = ("jobmanager.memory.process.size", Some("1600m"),
        "Total memory of the JobManager process.");
}

/// Key families whose keys carry a user-chosen name (`metrics.reporter.<name>.port`):
/// every key under these prefixes is known, and read by the component that owns it.
pub static KEY_FAMILIES: &[&str] = &["metrics.reporter."];

/// True when `key` belongs to one of the [`KEY_FAMILIES`].
pub fn in_key_family(key: &str) -> bool {
    KEY_FAMILIES.iter().any(|prefix| key.starts_with(prefix))
}

/// The registry entry for `key` (a main or a deprecated key), if Weir knows the key.
pub fn find_option(key: &str) -> Option<&'static OptionInfo> {
    ALL_OPTIONS
        .iter()
        .find(|info| info.key == key)
        .or_else(|| ALL_OPTIONS.iter().find(|info| info.deprecated_keys.contains(&key)))
}

/// The registry as a Markdown table (key, type, default, description), for `weir
/// config --list`-style output and documentation.
pub fn options_markdown() -> String {
    let mut out = String::from("| key | type | default | description |\n|---|---|---|---|\n");
    for info in ALL_OPTIONS {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            info.key,
            info.type_name,
            info.default
                .map(|d| format!("`{d}`"))
                .unwrap_or_else(|| "(none)".to_string()),
            info.description.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_default_parses_as_its_type() {
        for info in ALL_OPTIONS {
            if let Some(default) = info.default {
                assert_eq!((info.check)(default), Ok(()), "default of {}", info.key);
            }
        }
    }

    #[test]
    fn keys_are_unique_and_every_option_is_documented() {
        let mut seen = BTreeSet::new();
        for info in ALL_OPTIONS {
            assert!(seen.insert(info.key), "duplicate key {}", info.key);
            for old in info.deprecated_keys {
                assert!(seen.insert(old), "duplicate key {old}");
            }
            assert!(!info.description.is_empty(), "{} has no description", info.key);
        }
    }

    #[test]
    fn the_registry_carries_flinks_keys_and_defaults() {
        let expect = [
            ("taskmanager.numberOfTaskSlots", "Integer", Some("1")),
            ("parallelism.default", "Integer", Some("1")),
            ("rest.address", "String", Some("127.0.0.1")),
            ("rest.port", "Integer", Some("8081")),
            ("jobmanager.rpc.port", "Integer", Some("6123")),
            ("heartbeat.timeout", "Duration", Some("50 s")),
            ("slot.request.timeout", "Duration", Some("5 min")),
            ("execution.buffer-timeout.interval", "Duration", Some("100 ms")),
            ("pipeline.max-parallelism", "Integer", Some("-1")),
            ("execution.checkpointing.interval", "Duration", None),
            ("taskmanager.memory.segment-size", "MemorySize", Some("32kb")),
            ("restart-strategy.type", "Enum", None),
            (
                "restart-strategy.exponential-delay.backoff-multiplier",
                "Double",
                Some("1.5"),
            ),
            ("taskmanager.memory.managed.fraction", "Float", Some("0.4")),
            ("taskmanager.memory.process.size", "MemorySize", Some("1728m")),
            ("jobmanager.memory.process.size", "MemorySize", Some("1600m")),
            ("web.exception-history-size", "Integer", Some("16")),
            ("execution.checkpointing.mode", "Enum", Some("EXACTLY_ONCE")),
            ("execution.checkpointing.timeout", "Duration", Some("10 min")),
            (
                "execution.checkpointing.max-concurrent-checkpoints",
                "Integer",
                Some("1"),
            ),
            (
                "execution.checkpointing.tolerable-failed-checkpoints",
                "Integer",
                Some("0"),
            ),
            ("execution.checkpointing.num-retained", "Integer", Some("1")),
            ("state.checkpoints.num-retained", "Integer", Some("1")),
            (
                "execution.checkpointing.externalized-checkpoint-retention",
                "Enum",
                Some("NO_EXTERNALIZED_CHECKPOINTS"),
            ),
            ("execution.checkpointing.dir", "String", None),
            (
                "execution.checkpointing.data-inline-threshold",
                "MemorySize",
                Some("20kb"),
            ),
            ("execution.checkpointing.unaligned.enabled", "Boolean", Some("false")),
            (
                "execution.checkpointing.aligned-checkpoint-timeout",
                "Duration",
                Some("0 ms"),
            ),
            ("web.checkpoints.history", "Integer", Some("10")),
            ("s3.endpoint", "String", None),
            ("s3.access-key", "String", None),
            ("s3.access.key", "String", None),
            ("s3.secret-key", "String", None),
            ("s3.secret.key", "String", None),
            ("s3.path.style.access", "Boolean", None),
            ("s3.region", "String", None),
            ("s3.endpoint.region", "String", None),
        ];
        for (key, type_name, default) in expect {
            let info = find_option(key).unwrap_or_else(|| panic!("{key} is not registered"));
            assert_eq!(info.type_name, type_name, "{key}");
            assert_eq!(info.default, default, "{key}");
        }
        let backend = find_option("state.backend.type").unwrap();
        assert_eq!(
            (backend.default, backend.deprecated_keys),
            (Some("hashmap"), &["state.backend"][..])
        );
    }

    #[test]
    fn the_markdown_table_lists_every_option() {
        let table = options_markdown();
        assert_eq!(table.lines().count(), ALL_OPTIONS.len() + 2);
        assert!(table.contains("| `rest.port` | Integer | `8081` |"));
        assert!(table.contains("| `cluster.dir` | String | (none) |"));
    }
}
