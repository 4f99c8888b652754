//! Security with real processes and certificates made at test time: internal mutual
//! TLS (RPC and data plane), TaskManagers the cluster does not trust, REST over HTTPS
//! with and without client authentication, CORS and JSON-only writes, and forged
//! control messages from clients the cluster does not trust.

mod common;

use common::security::ssl;
use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use weir_security::test_pki::TestCa;

fn keyed_sum(out: &Path, p: u32) -> serde_json::Value {
    json!({
        "program": "keyed-sum",
        "parallelism": p,
        "args": { "keys": "40", "records": "100000", "seed": "7", "output": out.display().to_string() }
    })
}

/// A process started with its stderr in `log`.
fn start_logged(role: &str, dynamic: &[String], log: &Path) -> Proc {
    let file = std::fs::File::create(log).unwrap();
    Proc::start(Path::new(env!("CARGO_BIN_EXE_weir")), role, dynamic, Stdio::from(file)).expect("start weir")
}

fn registered_taskmanagers(rest: &str) -> Vec<serde_json::Value> {
    get(rest, "/taskmanagers").1["taskmanagers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_cluster_with_internal_ssl_runs_a_job_across_two_taskmanagers() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("cluster");
    let internal = ssl("internal", dir.path(), &ca, &ca, "node");
    let cluster = Cluster::start_with(2, 1, &[], &internal);
    let out = dir.path().join("out");
    let jid = cluster.submit(keyed_sum(&out, 2));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(&out), keyed_sum_output(40, 7, 100_000));
    let hosts: Vec<_> = registered_taskmanagers(&cluster.rest)
        .iter()
        .map(|tm| tm["dataPort"].clone())
        .collect();
    assert_eq!(hosts.len(), 2, "both TaskManagers took part");
}

#[test]
fn taskmanagers_without_a_trusted_certificate_are_refused_and_the_job_runs_on_the_trusted_one() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, intruder_ca) = (TestCa::new("cluster"), TestCa::new("intruder"));
    let internal = ssl("internal", dir.path(), &ca, &ca, "node");
    let cluster = Cluster::start_with(1, 2, &[], &internal);
    let trusted_id = registered_taskmanagers(&cluster.rest)[0]["id"].clone();

    let mut rogue = cluster.tm_dynamic.clone();
    rogue.retain(|d| !d.starts_with("security.ssl."));
    // Trusts the cluster's CA but holds a certificate of another CA.
    let mut other_ca = rogue.clone();
    other_ca.extend(ssl("internal", dir.path(), &intruder_ca, &ca, "intruder"));
    let (other_log, plain_log) = (dir.path().join("other.log"), dir.path().join("plain.log"));
    let _other = start_logged("taskmanager", &other_ca, &other_log);
    let _plain = start_logged("taskmanager", &rogue, &plain_log);
    let log_of = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    let refused = |log: &PathBuf| {
        let text = log_of(log);
        text.contains("registration failed") || text.contains("cannot connect to the JobManager")
    };
    wait_until(Duration::from_secs(30), || refused(&other_log) && refused(&plain_log));
    let tms = registered_taskmanagers(&cluster.rest);
    assert_eq!(tms.len(), 1, "{tms:?}");
    assert_eq!(tms[0]["id"], trusted_id);

    let out = dir.path().join("out");
    let jid = cluster.submit(keyed_sum(&out, 2));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(&out), keyed_sum_output(40, 7, 100_000));
}

/// A JobManager serving REST over HTTPS (with `extra` settings) and one TaskManager.
fn https_cluster(dir: &Path, ca: &TestCa, extra: &[&str]) -> (Proc, Proc, String) {
    let mut jm_conf = vec!["jobmanager.rpc.port=0".to_string(), "rest.port=0".to_string()];
    jm_conf.extend(ssl("rest", dir, ca, ca, "rest-server"));
    jm_conf.extend(extra.iter().map(|s| s.to_string()));
    let jm = start_logged("jobmanager", &jm_conf, &dir.join("jm.log"));
    let rest = jm.field("rest").unwrap();
    let rpc_port = jm.field("rpc").unwrap().rsplit(':').next().unwrap().to_string();
    let tm = start_logged(
        "taskmanager",
        &[
            format!("jobmanager.rpc.port={rpc_port}"),
            "taskmanager.numberOfTaskSlots=2".into(),
        ],
        &dir.join("tm.log"),
    );
    (jm, tm, rest)
}

#[test]
fn rest_over_https_serves_the_cli_and_plaintext_clients_cannot_talk_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("rest");
    let (_jm, _tm, rest) = https_cluster(dir.path(), &ca, &[]);
    let trust = format!(
        "security.ssl.rest.trust-cert={}",
        ca.write_ca(dir.path(), "client-trust").display()
    );
    let tls_opts = ["-D", "security.ssl.rest.enabled=true", "-D", &trust];

    let (code, out, err) = weir_list(&rest, &["security.ssl.rest.enabled=true", &trust]);
    assert_eq!(code, 0, "{out}{err}");

    let out_dir = dir.path().join("out");
    let out_arg = format!("output={}", out_dir.display());
    let mut options = tls_opts.to_vec();
    options.extend(["-p", "2"]);
    let args = ["keys=5".to_string(), "records=1000".to_string(), out_arg];
    let (code, out, err) = run_program(&rest, &options, "keyed-sum", &args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("reached state FINISHED"), "{out}");
    assert_eq!(read_parts(&out_dir), keyed_sum_output(5, 42, 1000));

    let (code, _, err) = weir_list(&rest, &[]);
    assert_ne!(code, 0, "a plaintext client is refused");
    assert!(err.contains("cannot reach the JobManager"), "{err}");
    let plain = ureq::get(&format!("http://{rest}/overview"))
        .timeout(Duration::from_secs(10))
        .call();
    assert!(plain.is_err(), "plain HTTP gets no answer from the HTTPS port");
}

#[test]
fn with_rest_authentication_a_client_without_a_certificate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("rest");
    let (_jm, _tm, rest) = https_cluster(dir.path(), &ca, &["security.ssl.rest.authentication-enabled=true"]);
    let trust = format!(
        "security.ssl.rest.trust-cert={}",
        ca.write_ca(dir.path(), "client-trust").display()
    );
    let (code, _, err) = weir_list(&rest, &["security.ssl.rest.enabled=true", &trust]);
    assert_ne!(code, 0, "no client certificate");
    assert!(err.contains("cannot reach the JobManager"), "{err}");

    let client = ca.issue(dir.path(), "client");
    let (cert, key) = (
        format!("security.ssl.rest.cert={}", client.cert.display()),
        format!("security.ssl.rest.key={}", client.key.display()),
    );
    let (code, out, err) = weir_list(
        &rest,
        &[
            "security.ssl.rest.enabled=true",
            "security.ssl.rest.authentication-enabled=true",
            &trust,
            &cert,
            &key,
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
}

/// `weir list -m rest -D <setting>...`.
fn weir_list(rest: &str, settings: &[&str]) -> (i32, String, String) {
    let mut args = vec!["list", "-m", rest];
    for setting in settings {
        args.extend(["-D", setting]);
    }
    weir_cli(&args)
}

fn post_as(rest: &str, content_type: &str, origin: &str) -> (u16, Option<String>, String) {
    let result = ureq::post(&format!("http://{rest}/jobs"))
        .set("Content-Type", content_type)
        .set("Origin", origin)
        .timeout(Duration::from_secs(10))
        .send_string(r#"{"program":"wordcount","args":{"input":"/etc/hostname"}}"#);
    let response = match result {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("POST /jobs: {e}"),
    };
    let origin = response.header("Access-Control-Allow-Origin").map(str::to_string);
    (response.status(), origin, response.into_string().unwrap_or_default())
}

#[test]
fn a_web_page_cannot_submit_a_job_and_cors_follows_the_configured_origin() {
    let cluster = Cluster::start(1, 1, &[]);
    let (code, allow, body) = post_as(&cluster.rest, "text/plain", "https://evil.example");
    assert_eq!(code, 415, "{body}");
    assert_eq!(allow, None, "no cross-origin access by default");
    let errors: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        errors["errors"][0].as_str().unwrap().contains("application/json"),
        "{body}"
    );
    assert!(get(&cluster.rest, "/jobs").1["jobs"].as_array().unwrap().is_empty());

    let open = Cluster::start(1, 1, &["web.access-control-allow-origin=https://dashboard.example"]);
    let (code, allow, _) = post_as(
        &open.rest,
        "application/x-www-form-urlencoded",
        "https://dashboard.example",
    );
    assert_eq!((code, allow.as_deref()), (415, Some("https://dashboard.example")));
}

/// What a forger's RPC got: `Ok` when the server answered, else the transport error.
type Forged = Result<(), String>;

/// A gRPC channel to `address` with `tls` (plaintext when `None`).
async fn channel(address: &str, tls: Option<&weir_security::InternalTls>) -> Result<tonic::transport::Channel, String> {
    let endpoint = weir_rpc::tls::endpoint(address, tls, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    endpoint.connect().await.map_err(|e| format!("{e:?}"))
}

/// Sends a forged `ReleaseJob` of `jid` to the TaskExecutor at `tm`, and a forged
/// `RegisterTaskExecutor` of 64 slots at an unreachable address to the ResourceManager
/// at `jm`, over channels with `tls` (plaintext when `None`).
fn forge(tm: &str, jm: &str, jid: &str, tls: Option<&weir_security::InternalTls>) -> (Forged, Forged) {
    use weir_rpc::resource_manager_client::ResourceManagerClient;
    use weir_rpc::task_executor_gateway_client::TaskExecutorGatewayClient;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let release = weir_rpc::ReleaseJobRequest {
            job_id: jid.to_string(),
            below_generation: u32::MAX,
            job_master_id: String::new(),
            keep_local_state: false,
        };
        let register = weir_rpc::RegisterTaskExecutorRequest {
            resource_id: "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0".into(),
            rpc_address: "192.0.2.1:6122".into(),
            data_address: "192.0.2.1:6121".into(),
            num_slots: 64,
            version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        };
        let released = match channel(tm, tls).await {
            Ok(c) => TaskExecutorGatewayClient::new(c)
                .release_job(release)
                .await
                .map(drop)
                .map_err(|e| format!("{e:?}")),
            Err(e) => Err(e),
        };
        let registered = match channel(jm, tls).await {
            Ok(c) => ResourceManagerClient::new(c)
                .register_task_executor(register)
                .await
                .map(drop)
                .map_err(|e| format!("{e:?}")),
            Err(e) => Err(e),
        };
        (released, registered)
    })
}

#[test]
fn with_internal_ssl_forged_release_job_and_register_task_executor_are_refused_and_the_job_runs_on() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, intruder_ca) = (TestCa::new("cluster"), TestCa::new("intruder"));
    let internal = ssl("internal", dir.path(), &ca, &ca, "node");
    let cluster = Cluster::start_with(1, 2, &[], &internal);
    let tm = registered_taskmanagers(&cluster.rest)[0]["path"]
        .as_str()
        .expect("the TaskManager's RPC address")
        .to_string();
    let jm = format!("127.0.0.1:{}", cluster.rpc_port);
    let out = dir.path().join("out");
    let mut job = keyed_sum(&out, 2);
    job["args"]["records"] = json!("20000");
    job["args"]["rate_per_sec"] = json!("4000");
    let jid = cluster.submit(job);
    cluster.wait_running(&jid);

    let tls_of = |settings: Vec<String>| {
        let mut c = weir_config::Configuration::new();
        c.apply_dynamic_properties(&settings).unwrap();
        weir_security::InternalTls::from_config(&c)
            .unwrap()
            .expect("internal SSL is on")
    };
    // A certificate of another CA that trusts the cluster's CA, and plaintext.
    let intruder = tls_of(ssl("internal", dir.path(), &intruder_ca, &ca, "intruder"));
    for (who, tls) in [("another CA's certificate", Some(&*intruder)), ("plaintext", None)] {
        let (release, register) = forge(&tm, &jm, &jid, tls);
        assert!(release.is_err(), "{who}: ReleaseJob was served: {release:?}");
        assert!(
            register.is_err(),
            "{who}: RegisterTaskExecutor was served: {register:?}"
        );
    }
    assert_eq!(get(&cluster.rest, "/overview").1["slots-total"], 2);
    assert_eq!(
        get(&cluster.rest, &format!("/jobs/{jid}/status")).1["status"],
        "RUNNING"
    );
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(&out), keyed_sum_output(40, 7, 20000));

    // The same messages from a holder of a trusted certificate reach the services: the
    // refusals above came from the missing trust, not from malformed requests. (The
    // ReleaseJob carries no JobMaster fencing token, so the TaskManager itself may
    // refuse it while it still knows the job.)
    let trusted = tls_of(ssl("internal", dir.path(), &ca, &ca, "trusted"));
    let (release, register) = forge(&tm, &jm, &jid, Some(&trusted));
    assert!(
        release.is_ok() || release.as_ref().is_err_and(|e| e.contains("PermissionDenied")),
        "{release:?}"
    );
    assert_eq!(register, Ok(()));
}
