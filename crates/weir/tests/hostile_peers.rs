//! Hostile peers against a real cluster of `weir` processes: a forger with a plain
//! gRPC client (no internal SSL) registers absurd TaskManagers, spoofs heartbeats,
//! releases and cancels jobs it did not deploy, reports task failures and
//! acknowledges checkpoints (with state handles naming files elsewhere) for tasks it
//! does not run, and submits jobs of huge parallelism. Each is
//! refused or contained with a clear reason, and the cluster keeps serving.

mod common;

use common::forger::{self, binary_identity, registration};
use common::*;
use serde_json::{json, Value};
use std::time::Duration;
use weir_rpc::job_master_gateway_client::JobMasterGatewayClient;
use weir_rpc::resource_manager_client::ResourceManagerClient;
use weir_rpc::task_executor_gateway_client::TaskExecutorGatewayClient;

/// Runs `f` on a fresh single-threaded runtime.
fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    forger::block_on(f).expect("a runtime")
}

/// A plaintext gRPC channel to `address`.
async fn channel(address: &str) -> tonic::transport::Channel {
    forger::channel(address).await.expect("a connection")
}

/// The JobManager's RPC address.
fn jobmanager_rpc(cluster: &Cluster) -> String {
    format!("127.0.0.1:{}", cluster.rpc_port)
}

fn register(cluster: &Cluster, r: weir_rpc::RegisterTaskExecutorRequest) -> weir_rpc::RegisterTaskExecutorResponse {
    block_on(async {
        ResourceManagerClient::new(channel(&jobmanager_rpc(cluster)).await)
            .register_task_executor(r)
            .await
            .expect("the JobManager answers")
            .into_inner()
    })
}

fn heartbeat(cluster: &Cluster, hb: weir_rpc::TaskExecutorHeartbeat) -> bool {
    block_on(async {
        ResourceManagerClient::new(channel(&jobmanager_rpc(cluster)).await)
            .heartbeat(hb)
            .await
            .expect("the JobManager answers")
            .into_inner()
            .known
    })
}

/// The registered TaskManagers (`/taskmanagers`).
fn taskmanagers(cluster: &Cluster) -> Vec<Value> {
    get(&cluster.rest, "/taskmanagers").1["taskmanagers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_registration_declaring_four_billion_slots_is_refused_naming_the_limit_and_the_jobmanager_serves_on() {
    let mut cluster = Cluster::start(0, 1, &[]);
    let forged = registration(
        "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0",
        "127.0.0.1:9",
        u32::MAX,
        binary_identity(),
    );
    let answer = register(&cluster, forged);
    assert!(!answer.accepted);
    assert!(
        answer.rejection_reason.contains("4294967295 slots")
            && answer
                .rejection_reason
                .contains("limit of 1024 slots per TaskManager (resourcemanager.taskmanager.max-slots)"),
        "{}",
        answer.rejection_reason
    );
    // Still serving: REST answers and a real TaskManager registers.
    assert_eq!(get(&cluster.rest, "/overview").0, 200);
    cluster.add_taskmanager();
    cluster.wait_for_slots(1);
    assert_eq!(taskmanagers(&cluster).len(), 1);
}

#[test]
fn a_refused_registration_does_not_tell_the_forger_the_jobmanagers_binary_fingerprint() {
    let cluster = Cluster::start(0, 1, &[]);
    let expected = binary_identity();
    let answer = register(
        &cluster,
        registration("f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1", "127.0.0.1:9", 1, "guess".into()),
    );
    assert!(!answer.accepted);
    assert!(
        answer.rejection_reason.contains("'guess'"),
        "{}",
        answer.rejection_reason
    );
    assert!(
        !answer.rejection_reason.contains(&expected),
        "the refusal echoes the JobManager's identity: {}",
        answer.rejection_reason
    );
    let fingerprint = expected.rsplit("fingerprint ").next().unwrap_or(&expected);
    assert!(!answer.rejection_reason.contains(fingerprint.trim_end_matches(')')));
}

#[test]
fn a_heartbeat_spoofing_a_real_taskmanagers_id_without_its_instance_id_is_not_believed() {
    let cluster = Cluster::start(1, 1, &[]);
    let id = taskmanagers(&cluster)[0]["id"].as_str().expect("an id").to_string();
    let spoofed = weir_rpc::TaskExecutorHeartbeat {
        resource_id: id.clone(),
        logs: vec![weir_rpc::LogFile {
            name: "spoofed.log".into(),
            size: 1,
            mtime_ms: 1,
        }],
        instance_id: "00000000000000000000000000000000".into(),
        ..Default::default()
    };
    assert!(
        !heartbeat(&cluster, spoofed.clone()),
        "a spoofed heartbeat was accepted"
    );
    assert!(!heartbeat(
        &cluster,
        weir_rpc::TaskExecutorHeartbeat {
            instance_id: String::new(),
            ..spoofed
        }
    ));
    let logs = get(&cluster.rest, &format!("/taskmanagers/{id}/logs")).1;
    assert!(!logs.to_string().contains("spoofed.log"), "{logs}");
    // The real TaskManager's heartbeats still count: it stays registered.
    assert_eq!(get(&cluster.rest, "/overview").1["taskmanagers"], 1);
}

#[test]
fn nan_cpu_absurd_memory_and_log_paths_in_a_registered_peers_heartbeat_never_reach_rest() {
    let cluster = Cluster::start(1, 1, &[]);
    // A peer registers properly (at the real TaskManager's RPC address, so the
    // JobManager's heartbeats to it succeed) and then reports nonsense.
    let rpc = taskmanagers(&cluster)[0]["path"]
        .as_str()
        .expect("an address")
        .to_string();
    let id = "f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2";
    let answer = register(&cluster, registration(id, &rpc, 1, binary_identity()));
    assert!(answer.accepted, "{}", answer.rejection_reason);
    let mut logs: Vec<weir_rpc::LogFile> = ["../../etc/passwd", "/etc/shadow", "a\\b.log", ".."]
        .iter()
        .map(|name| weir_rpc::LogFile {
            name: name.to_string(),
            size: 10,
            mtime_ms: 1_700_000_000_000,
        })
        .collect();
    logs.extend((0..500).map(|i| weir_rpc::LogFile {
        name: format!("f{i}.log"),
        size: 10,
        mtime_ms: 1_700_000_000_000,
    }));
    let nonsense = weir_rpc::TaskExecutorHeartbeat {
        resource_id: id.into(),
        process: Some(weir_rpc::ProcessMetrics {
            cpu_time_ns: Some(u64::MAX),
            cpu_load: Some(f64::NAN),
            rss_bytes: Some(i64::MAX as u64),
            threads: Some(u64::MAX),
        }),
        network: Some(weir_rpc::NetworkMemory {
            total_segments: 1,
            available_segments: u64::MAX,
            segment_size: u64::MAX,
            ..Default::default()
        }),
        logs,
        instance_id: answer.instance_id.clone(),
        ..Default::default()
    };
    assert!(heartbeat(&cluster, nonsense));
    let listed = get(&cluster.rest, &format!("/taskmanagers/{id}/logs")).1;
    let names: Vec<&str> = listed["logs"]
        .as_array()
        .map(|l| l.iter().filter_map(|f| f["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(names.len() <= 16, "{} log files listed", names.len());
    assert!(
        names
            .iter()
            .all(|n| !n.contains('/') && !n.contains('\\') && *n != ".."),
        "{names:?}"
    );
    let (code, metrics) = get(
        &cluster.rest,
        &format!(
            "/taskmanagers/{id}/metrics?get=Status.JVM.CPU.Load,Status.ProcessTree.Memory.RSS,Status.JVM.Threads.Count"
        ),
    );
    assert_eq!(code, 200, "{metrics}");
    let text = metrics.to_string();
    assert!(!text.contains("NaN") && !text.contains(&i64::MAX.to_string()), "{text}");
    assert!(!text.contains(&u64::MAX.to_string()), "{text}");
    assert_eq!(answer.instance_id.len(), 32, "a registration gets a fresh instance id");
    assert_eq!(get(&cluster.rest, "/overview").0, 200);
}

/// A throttled keyed-sum of parallelism 2 into `out` (about five seconds).
fn slow_keyed_sum(out: &std::path::Path) -> Value {
    json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": { "keys": "40", "records": "20000", "rate_per_sec": "4000", "seed": "7",
                  "output": out.display().to_string() },
    })
}

/// The attempt id of subtask 0 of the job's first vertex, as the REST API lists it.
fn first_attempt_id(cluster: &Cluster, jid: &str) -> String {
    let job = get(&cluster.rest, &format!("/jobs/{jid}")).1;
    let vertex = job["vertices"][0]["id"].as_str().expect("a vertex").to_string();
    let accs = get(
        &cluster.rest,
        &format!("/jobs/{jid}/vertices/{vertex}/subtasks/0/attempts/0/accumulators"),
    )
    .1;
    accs["id"].as_str().expect("an attempt id").to_string()
}

#[test]
fn a_forged_release_job_without_the_jobmasters_fencing_token_is_refused_and_the_job_finishes() {
    let cluster = Cluster::start(1, 2, &[]);
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(slow_keyed_sum(out.path()));
    cluster.wait_running(&jid);
    let tm = taskmanagers(&cluster)[0]["path"]
        .as_str()
        .expect("an address")
        .to_string();
    let attempt = first_attempt_id(&cluster, &jid);
    let (released, cancelled) = block_on(async {
        let mut client = TaskExecutorGatewayClient::new(channel(&tm).await);
        let released = client.release_job(forger::release_job(&jid)).await;
        let cancelled = client.cancel_task(forger::cancel_task(&jid, &attempt)).await;
        (released, cancelled)
    });
    for (what, answer) in [("ReleaseJob", released.map(drop)), ("CancelTask", cancelled.map(drop))] {
        let status = answer.expect_err(&format!("a forged {what} was served"));
        assert_eq!(status.code(), tonic::Code::PermissionDenied, "{what}: {status:?}");
        assert!(status.message().contains("deployed by another JobMaster"), "{status:?}");
    }
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(40, 7, 20000));
}

#[test]
fn reports_forged_without_the_jobmasters_fencing_token_are_refused_and_the_job_finishes_untouched() {
    let chk = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret_dir = outside.path().join("some").join("dir");
    std::fs::create_dir_all(&secret_dir).unwrap();
    let secret = secret_dir.join("secret.conf");
    std::fs::write(&secret, b"password=1").unwrap();
    let cluster = Cluster::start_checkpointing(chk.path());
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(slow_keyed_sum(out.path()));
    cluster.wait_running(&jid);
    wait_until(Duration::from_secs(30), || cluster.completed_checkpoints(&jid) >= 2);
    // The ids are public (the REST API lists them); the JobMaster's token is not.
    let attempt = first_attempt_id(&cluster, &jid);
    let answers = block_on(async {
        let mut client = JobMasterGatewayClient::new(channel(&jobmanager_rpc(&cluster)).await);
        let failed = client
            .update_task_execution_state(forger::failure_report(&jid, &attempt))
            .await
            .map(drop);
        let acknowledged = client
            .acknowledge_checkpoint(forger::file_acknowledgement(&jid, &attempt, &secret))
            .await
            .map(drop);
        let declined = client
            .decline_checkpoint(weir_rpc::DeclineCheckpointRequest {
                job_id: jid.clone(),
                attempt_id: attempt.clone(),
                checkpoint_id: 3,
                reason: "forged".into(),
                job_master_id: String::new(),
            })
            .await
            .map(drop);
        let collected = client
            .send_collect_batch(weir_rpc::CollectBatch {
                job_id: jid.clone(),
                attempt_id: attempt.clone(),
                operator_id: "0123456789abcdef0123456789abcdef".into(),
                parallelism: 1,
                rows: vec!["[\"+I\",\"forged\"]".into()],
                end_of_results: true,
                ..Default::default()
            })
            .await
            .map(drop);
        [
            ("UpdateTaskExecutionState", failed),
            ("AcknowledgeCheckpoint", acknowledged),
            ("DeclineCheckpoint", declined),
            ("SendCollectBatch", collected),
        ]
    });
    for (what, answer) in answers {
        let status = answer.expect_err(&format!("a forged {what} was served"));
        assert_eq!(status.code(), tonic::Code::PermissionDenied, "{what}: {status:?}");
        assert!(status.message().contains("fencing token"), "{what}: {status:?}");
    }
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    let exceptions = get(&cluster.rest, &format!("/jobs/{jid}/exceptions")).1;
    assert_eq!(exceptions["exceptionHistory"]["entries"], json!([]), "{exceptions}");
    assert_eq!(read_parts(out.path()), keyed_sum_output(40, 7, 20000));
    assert_eq!(std::fs::read(&secret).unwrap(), b"password=1");
}

/// The JobManager's peak resident memory (VmHWM), in bytes.
fn peak_rss(cluster: &Cluster) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", cluster.jm.child.id())).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

#[test]
fn a_submission_of_parallelism_32768_is_refused_naming_the_key_before_anything_is_allocated() {
    let cluster = Cluster::start(0, 1, &[]);
    let (code, body) = send(
        &cluster.rest,
        "POST",
        "/jobs",
        Some(json!({"program": "keyed-sum", "parallelism": 32768})),
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body.to_string().contains("jobmanager.submission.max-subtasks"),
        "{body}"
    );
    assert!(peak_rss(&cluster) < 256 << 20, "peak RSS {} bytes", peak_rss(&cluster));
    assert_eq!(get(&cluster.rest, "/overview").0, 200);
}

#[test]
fn a_job_of_parallelism_4096_waiting_for_slots_keeps_the_jobmanager_small() {
    // 4096 x 4096 channels are above the default channel limit: allowed here.
    let cluster = Cluster::start(0, 1, &["jobmanager.submission.max-exchange-channels=16777216"]);
    let jid = cluster.submit(json!({"program": "keyed-sum", "parallelism": 4096}));
    wait_until(Duration::from_secs(60), || {
        get(&cluster.rest, &format!("/jobs/{jid}")).1["state"] == "RUNNING"
    });
    // All-to-all edges of 4096 x 4096 subtasks once took 714 MB here.
    let peak = peak_rss(&cluster);
    assert!(peak < 256 << 20, "peak RSS {} MiB", peak >> 20);
}

#[test]
fn a_batch_job_of_parallelism_2048_at_the_default_channel_limit_keeps_the_jobmanager_small() {
    let cluster = Cluster::start(0, 1, &[]);
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2048,
        "config": {"execution.runtime-mode": "BATCH", "execution.batch.adaptive.auto-parallelism.enabled": "false"},
    }));
    wait_until(Duration::from_secs(60), || {
        get(&cluster.rest, &format!("/jobs/{jid}")).1["state"] == "RUNNING"
    });
    // Every consumer region's blocking inputs, kept per region, once took 1.1 GB here;
    // one consumed partition group per all-to-all edge takes a few MB.
    let peak = peak_rss(&cluster);
    assert!(peak < 128 << 20, "peak RSS {} MiB", peak >> 20);
}

#[test]
fn a_batch_job_of_parallelism_4096_is_refused_naming_the_channel_limit_before_its_regions_are_built() {
    let cluster = Cluster::start(0, 1, &[]);
    let batch = json!({
        "program": "keyed-sum",
        "parallelism": 4096,
        "config": {"execution.runtime-mode": "BATCH", "execution.batch.adaptive.auto-parallelism.enabled": "false"},
    });
    let (code, body) = send(&cluster.rest, "POST", "/jobs", Some(batch));
    assert_eq!(code, 400, "{body}");
    assert!(
        body.to_string().contains("jobmanager.submission.max-exchange-channels"),
        "{body}"
    );
    // Its deployment descriptors would grow with its 16M channels.
    assert!(peak_rss(&cluster) < 256 << 20, "peak RSS {} bytes", peak_rss(&cluster));
}
