//! The batch runtime on real processes: blocking result partitions (spilled beyond the
//! memory budget, deleted when released: during the job once their consumers finished,
//! else with the job), stage-by-stage scheduling on fewer slots than the job's
//! parallelism, failover of one stage from its kept inputs, and the named cause of a
//! replay from a spill file that was cut short.

mod common;

use common::{get, keyed_sum_output, read_parts, wait_until, Cluster};
use serde_json::json;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `keyed-sum` at parallelism 2 over `records` records into `output`, in `mode`.
fn keyed_sum(mode: &str, records: u64, output: &std::path::Path, extra: &[(&str, &str)]) -> serde_json::Value {
    let mut args = json!({"keys": "50", "records": records.to_string(), "output": output.display().to_string()});
    for (k, v) in extra {
        args[*k] = json!(v);
    }
    json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": args,
        // Parallelism 2 for every vertex, as the tests below count subtasks (the
        // adaptive batch scheduler would decide 1 from these few bytes).
        "config": {"execution.runtime-mode": mode, "execution.batch.adaptive.auto-parallelism.enabled": "false"},
    })
}

fn sorted_parts(dir: &std::path::Path) -> Vec<String> {
    let mut lines = read_parts(dir);
    lines.sort();
    lines
}

/// The ids of the job's vertices, in order.
fn vertex_ids(rest: &str, jid: &str) -> Vec<String> {
    let (_, job) = get(rest, &format!("/jobs/{jid}"));
    job["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

/// The attempt number of every subtask of a vertex.
fn attempts(rest: &str, jid: &str, vid: &str) -> Vec<u64> {
    let (_, vertex) = get(rest, &format!("/jobs/{jid}/vertices/{vid}"));
    vertex["subtasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no subtasks in {vertex}"))
        .iter()
        .map(|s| s["attempt"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_two_stage_batch_job_runs_on_a_single_slot_where_the_streaming_one_cannot() {
    let cluster = Cluster::start(1, 1, &["slot.request.timeout=2 s"]);
    let dir = tempfile::tempdir().unwrap();

    let batch = dir.path().join("batch");
    let jid = cluster.submit(keyed_sum("BATCH", 20_000, &batch, &[]));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(sorted_parts(&batch), keyed_sum_output(50, 42, 20_000));
    // Both vertices ran at parallelism 2 on the one slot, one subtask after the other.
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let parallelism: Vec<u64> = job["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["parallelism"].as_u64().unwrap())
        .collect();
    assert_eq!(parallelism, vec![2, 2], "{job}");

    // The same job in STREAMING mode needs both slots at once: it fails as before.
    let jid = cluster.submit(keyed_sum("STREAMING", 20_000, &dir.path().join("streaming"), &[]));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FAILED");
    let (_, exceptions) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    assert!(
        exceptions.to_string().contains("NoResourceAvailableException"),
        "{exceptions}"
    );
}

/// A TaskManager started with `dynamic` settings whose log (at info for the runtime)
/// goes to `log`; killed on drop.
struct LoggingTaskManager(Child);

impl LoggingTaskManager {
    fn start(dynamic: &[String], log: &std::path::Path) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_weir"));
        cmd.arg("taskmanager");
        for d in dynamic {
            cmd.arg("-D").arg(d);
        }
        let child = cmd
            .env(
                "WEIR_LOG",
                "warn,weir_runtime::network::partition::blocking_partition=info,weir_taskmanager::executor=info",
            )
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        Self(child)
    }
}

impl Drop for LoggingTaskManager {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `text` without its ANSI colour sequences (`ESC [ ... m`).
fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The values of field `field` (`field=value`) on the log lines containing `message`,
/// in log order.
fn logged(log: &std::path::Path, message: &str, field: &str) -> Vec<String> {
    let prefix = format!("{field}=");
    without_colours(&std::fs::read_to_string(log).unwrap())
        .lines()
        .filter(|l| l.contains(message))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix(prefix.as_str())))
        .map(str::to_string)
        .collect()
}

/// The spill files the log names (`path=...` of the spilling lines).
fn spill_files(log: &std::path::Path) -> Vec<std::path::PathBuf> {
    logged(log, "spilling blocking partition", "path")
        .into_iter()
        .map(std::path::PathBuf::from)
        .collect()
}

/// A JobManager and one TaskManager of two slots logging into `log`, whose blocking
/// partitions spill into `tmp` beyond its budget.
struct SpillingCluster {
    cluster: Cluster,
    /// The TaskManager process.
    taskmanager: LoggingTaskManager,
    tmp: std::path::PathBuf,
    log: std::path::PathBuf,
    /// Where the job writes its output.
    output: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl SpillingCluster {
    /// A JobManager started with `jm_dynamic`, and a TaskManager with a blocking
    /// partition budget of `budget` spilling into `tmp` and logging into `log`, both
    /// in a new temporary directory.
    fn start(jm_dynamic: &[&str], budget: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (tmp, log) = (dir.path().join("tmp"), dir.path().join("tm.log"));
        std::fs::create_dir(&tmp).unwrap();
        let cluster = Cluster::start(0, 1, jm_dynamic);
        let mut dynamic = cluster.tm_dynamic.clone();
        dynamic.push("taskmanager.numberOfTaskSlots=2".into());
        dynamic.push(format!("taskmanager.network.blocking-partition.memory-budget={budget}"));
        dynamic.push(format!("io.tmp.dirs={}", tmp.display()));
        let tm = LoggingTaskManager::start(&dynamic, &log);
        cluster.wait_for_slots(2);
        Self {
            cluster,
            taskmanager: tm,
            tmp,
            log,
            output: dir.path().join("out"),
            _dir: dir,
        }
    }
}

#[test]
fn a_tiny_memory_budget_spills_blocking_partitions_to_files_that_are_gone_after_the_job() {
    let spilling = SpillingCluster::start(&[], "1kb");
    let (cluster, tmp, log, output) = (&spilling.cluster, &spilling.tmp, &spilling.log, &spilling.output);
    let jid = cluster.submit(keyed_sum("BATCH", 50_000, output, &[]));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(sorted_parts(output), keyed_sum_output(50, 42, 50_000));

    let spilled = spill_files(log);
    assert!(
        !spilled.is_empty(),
        "no spill file was logged: {}",
        std::fs::read_to_string(log).unwrap()
    );
    assert!(spilled.iter().all(|p| p.parent() == Some(tmp.as_path())), "{spilled:?}");
    // The JobManager releases the partitions once the job is finished.
    wait_until(Duration::from_secs(30), || spilled.iter().all(|p| !p.exists()));
    wait_until(Duration::from_secs(30), || {
        std::fs::read_dir(tmp).unwrap().next().is_none()
    });
}

#[test]
fn a_second_stage_task_that_fails_once_reruns_only_its_stage() {
    let cluster = Cluster::start(2, 1, &common::RESTART_THREE_TIMES);
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out");
    let jid = cluster.submit(keyed_sum("BATCH", 10_000, &output, &[("fail-once-after", "100")]));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(sorted_parts(&output), keyed_sum_output(50, 42, 10_000));

    let vertices = vertex_ids(&cluster.rest, &jid);
    assert_eq!(vertices.len(), 2);
    assert_eq!(
        attempts(&cluster.rest, &jid, &vertices[0]),
        vec![0, 0],
        "the sources ran once"
    );
    assert_eq!(
        attempts(&cluster.rest, &jid, &vertices[1]),
        vec![1, 1],
        "each Sum failed once"
    );
    let (_, exceptions) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    let entries = exceptions["exceptionHistory"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{exceptions}");
}

/// Runs keyed-sum without chaining (source -> Sum -> Map -> Sink: four stages of two
/// subtasks) on `spilling` with the job options `config`, checks its output, and
/// returns its id.
fn run_four_spilling_stages(spilling: &SpillingCluster, config: &[(&str, &str)]) -> String {
    let (cluster, output) = (&spilling.cluster, &spilling.output);
    let mut job = keyed_sum("BATCH", 20_000, output, &[]);
    job["config"]["pipeline.operator-chaining.enabled"] = json!("false");
    for (key, value) in config {
        job["config"][*key] = json!(value);
    }
    let jid = cluster.submit(job);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(sorted_parts(output), keyed_sum_output(50, 42, 20_000));
    assert_eq!(vertex_ids(&cluster.rest, &jid).len(), 4);
    jid
}

/// The partitions the TaskManager logging into `log` released because the JobMaster
/// told it their consumers finished (the release with the job is not logged so).
fn released_during_the_job(log: &std::path::Path) -> Vec<String> {
    logged(
        log,
        "released a blocking partition: its consumers finished",
        "partition",
    )
}

#[test]
fn each_stages_spilled_partitions_are_deleted_once_the_next_stage_finished_not_at_the_job_end() {
    let spilling = SpillingCluster::start(&[], "0");
    let (tmp, log) = (&spilling.tmp, &spilling.log);
    let jid = run_four_spilling_stages(&spilling, &[]);

    let spilled: std::collections::HashMap<String, String> = logged(log, "spilling blocking partition", "partition")
        .into_iter()
        .zip(logged(log, "spilling blocking partition", "path"))
        .collect();
    let released = released_during_the_job(log);
    let of_edge = |edge: u32| -> Vec<String> {
        (0..2)
            .map(|i| format!("{jid}/edge-{edge}/subtask-{i}/attempt-0"))
            .collect()
    };
    // The source's partitions went when both Sum subtasks finished, each Sum
    // subtask's when the Map subtask reading it (a forward edge) finished: through the
    // JobMaster's release during the job, which the release with the job does not log.
    // (The Map's partitions go when the sink stage ends the job, maybe with it.)
    for p in of_edge(0).iter().chain(&of_edge(1)) {
        assert!(
            released.contains(p),
            "{p} was not released during the job: {released:?}"
        );
        let file = spilled
            .get(p)
            .unwrap_or_else(|| panic!("{p} did not spill: {spilled:?}"));
        assert!(!std::path::Path::new(file).exists(), "{file} of {p} is still there");
    }
    wait_until(Duration::from_secs(30), || {
        std::fs::read_dir(tmp).unwrap().next().is_none()
    });
}

#[test]
fn with_release_during_job_execution_off_no_partition_is_released_before_the_job_ends() {
    let spilling = SpillingCluster::start(&[], "0");
    let (tmp, log) = (&spilling.tmp, &spilling.log);
    run_four_spilling_stages(
        &spilling,
        &[("jobmanager.partition.release-during-job-execution", "false")],
    );
    assert!(
        !spill_files(log).is_empty(),
        "nothing spilled: {}",
        std::fs::read_to_string(log).unwrap()
    );
    let released = released_during_the_job(log);
    assert!(released.is_empty(), "released during the job: {released:?}");
    // They go with the job.
    wait_until(Duration::from_secs(30), || {
        std::fs::read_dir(tmp).unwrap().next().is_none()
    });
}

#[test]
fn a_spill_file_cut_short_before_a_rerun_fails_it_naming_the_partition_the_file_and_the_offset() {
    let restart = [
        "restart-strategy.type=fixed-delay",
        "restart-strategy.fixed-delay.attempts=3",
        "restart-strategy.fixed-delay.delay=2 s",
    ];
    let spilling = SpillingCluster::start(&restart, "0");
    let (cluster, log, output) = (&spilling.cluster, &spilling.log, &spilling.output);
    // Each Sum subtask fails once; before their region restarts, the sources' spill
    // files (all of their output: the budget is 0) are truncated to nothing.
    let jid = cluster.submit(keyed_sum("BATCH", 10_000, output, &[("fail-once-after", "100")]));
    wait_until(Duration::from_secs(60), || {
        let (_, exceptions) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
        exceptions["exceptionHistory"]["entries"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    });
    let files = spill_files(log);
    assert_eq!(files.len(), 2, "one spill file per source subtask: {files:?}");
    for f in &files {
        std::fs::OpenOptions::new()
            .write(true)
            .open(f)
            .unwrap()
            .set_len(0)
            .unwrap();
    }
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FAILED");
    let (_, exceptions) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    let text = exceptions.to_string();
    let named = files.iter().any(|f| {
        text.contains(&format!(
            "spill file {}: unexpected end of file at offset 0: a buffer of",
            f.display()
        ))
    });
    assert!(named, "no entry names a truncated spill file: {exceptions}");
    assert!(
        text.contains(&format!("blocking partition {jid}/edge-0/subtask-")),
        "no entry names the partition: {exceptions}"
    );
    assert!(
        !text.contains("PartitionNotFoundException"),
        "a corrupt file fails the consumer, it does not rerun the producer: {exceptions}"
    );
    let vertices = vertex_ids(&cluster.rest, &jid);
    assert_eq!(
        attempts(&cluster.rest, &jid, &vertices[0]),
        vec![0, 0],
        "the sources ran once"
    );
}

#[test]
fn a_taskmanager_stopped_by_sigterm_deletes_the_spill_files_of_the_partitions_it_held() {
    // The Sum subtasks fail once and wait a minute for their restart: meanwhile the
    // sources' partitions (all spilled: the budget is 0) are held for the rerun.
    let restart = [
        "restart-strategy.type=fixed-delay",
        "restart-strategy.fixed-delay.attempts=3",
        "restart-strategy.fixed-delay.delay=60 s",
    ];
    let mut spilling = SpillingCluster::start(&restart, "0");
    let jid = spilling.cluster.submit(keyed_sum(
        "BATCH",
        10_000,
        &spilling.output,
        &[("fail-once-after", "100")],
    ));
    wait_until(Duration::from_secs(60), || {
        let (_, exceptions) = get(&spilling.cluster.rest, &format!("/jobs/{jid}/exceptions"));
        exceptions["exceptionHistory"]["entries"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    });
    let files = spill_files(&spilling.log);
    assert_eq!(files.len(), 2, "one spill file per source subtask: {files:?}");
    assert!(files.iter().all(|f| f.exists()), "held for the rerun: {files:?}");

    let tm = &mut spilling.taskmanager.0;
    let pid = i32::try_from(tm.id()).unwrap();
    // SAFETY: a signal to the child process this test started and still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let mut status = None;
    wait_until(Duration::from_secs(30), || {
        status = tm.try_wait().unwrap();
        status.is_some()
    });
    assert!(
        status.unwrap().success(),
        "a stopped TaskManager exits cleanly: {status:?}"
    );
    let left: Vec<_> = std::fs::read_dir(&spilling.tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "spill files left behind: {left:?}");
}
