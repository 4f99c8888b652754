//! Secure by default: a cluster `weir start-cluster` starts runs internal mutual TLS
//! with a CA of its own in `cluster.dir/tls/`. Its RPC and data ports serve only
//! clients holding a certificate of that CA (a plaintext client sending the protocol's
//! preface gets no answer, one of another CA fails the handshake with `UnknownCA`, a
//! client of the cluster CA is served, which shows the probes can tell);
//! `security.ssl.internal.enabled: false` gives Flink's plaintext; a TaskManager
//! started by hand with `--cluster-dir` joins and runs tasks, one started by hand
//! without it stays plaintext, says so, and is refused.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use weir_security::cluster_pki::ClusterPki;
use weir_security::rustls::{ClientConfig, ClientConnection, StreamOwned};
use weir_security::test_pki::TestCa;
use weir_security::InternalTls;

/// What a gRPC client sends first: HTTP/2's connection preface and an empty SETTINGS
/// frame.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

/// The data protocol's hello of this build.
fn data_hello() -> Vec<u8> {
    let mut hello = weir_runtime::network::transport::MAGIC.to_be_bytes().to_vec();
    hello.extend(weir_runtime::network::transport::PROTOCOL_VERSION.to_be_bytes());
    hello.extend([0, 0]);
    hello
}

/// The first `n` bytes a server answers to `payload` (fewer when it closes first), or
/// the error that ended the exchange.
fn answer(stream: &mut impl ReadWrite, payload: &[u8], n: usize) -> Result<Vec<u8>, String> {
    stream.write_all(payload).map_err(|e| format!("write: {e}"))?;
    stream.flush().map_err(|e| format!("flush: {e}"))?;
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while got.len() < n {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    Ok(got)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// The answer of a plaintext client.
fn plain(address: &str, payload: &[u8], n: usize) -> Result<Vec<u8>, String> {
    let mut s = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    answer(&mut s, payload, n)
}

/// The answer of a TLS client with `tls`'s certificate, offering HTTP/2.
fn over_tls(address: &str, tls: &InternalTls, payload: &[u8], n: usize) -> Result<Vec<u8>, String> {
    let mut config: ClientConfig = (*tls.client).clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let name = weir_security::server_name(address)?;
    let conn = ClientConnection::new(Arc::new(config), name).map_err(|e| e.to_string())?;
    let tcp = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    answer(&mut StreamOwned::new(conn, tcp), payload, n)
}

/// Whether an answer is HTTP/2 service: a frame header of a SETTINGS frame.
fn h2_served(answer: &Result<Vec<u8>, String>) -> bool {
    matches!(answer, Ok(bytes) if bytes.len() >= 9 && bytes[3] == 0x04)
}

/// Whether an answer is the data server's hello.
fn data_served(answer: &Result<Vec<u8>, String>) -> bool {
    matches!(answer, Ok(bytes) if bytes.starts_with(&data_hello()))
}

/// Whether the server failed the handshake because the client's certificate is of a CA
/// it does not trust (TLS 1.3 sends the alert after the client's last handshake flight,
/// so the client learns it on its first read).
fn refused_handshake(answer: &Result<Vec<u8>, String>) -> bool {
    matches!(answer, Err(e) if e.contains("received fatal alert: UnknownCA"))
}

/// The JobManager's RPC address, from the cluster's address file.
fn jobmanager_rpc(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("jobmanager.address")).unwrap();
    let port = text.lines().find_map(|l| l.strip_prefix("rpc_port=")).unwrap();
    format!("127.0.0.1:{port}")
}

/// The registered TaskManagers' (RPC address, data address).
fn taskmanager_addresses(rest: &str) -> Vec<(String, String)> {
    let tms = get(rest, "/taskmanagers").1["taskmanagers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    tms.iter()
        .map(|tm| {
            let rpc = tm["path"].as_str().unwrap().to_string();
            let host = rpc.rsplit_once(':').unwrap().0.to_string();
            (rpc, format!("{host}:{}", tm["dataPort"]))
        })
        .collect()
}

/// Polls `condition` until it holds.
fn wait_for(mut condition: impl FnMut() -> bool) {
    while !condition() {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs keyed-sum at parallelism `p` on the cluster and checks its output.
fn run_keyed_sum(rest: &str, out: &Path, p: &str) {
    let args = [
        "keys=5".to_string(),
        "records=1000".to_string(),
        format!("output={}", out.display()),
    ];
    let (code, stdout, err) = run_program(rest, &["-p", p], "keyed-sum", &args);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("reached state FINISHED"), "{stdout}");
    assert_eq!(read_parts(out), keyed_sum_output(5, 42, 1000));
}

/// A `weir taskmanager <args>` process with its stderr in `log`, killed on drop.
struct HandStarted(Child);

impl HandStarted {
    fn start(args: &[String], log: &Path) -> HandStarted {
        let child = Command::new(env!("CARGO_BIN_EXE_weir"))
            .arg("taskmanager")
            .args(args)
            .env_remove("WEIR_CONF_DIR")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("start weir taskmanager");
        HandStarted(child)
    }
}

impl Drop for HandStarted {
    fn drop(&mut self) {
        if let Err(e) = self.0.kill() {
            eprintln!("the hand-started TaskManager had ended: {e}");
        }
        self.0.wait().expect("reap the hand-started TaskManager");
    }
}

#[test]
fn a_default_cluster_runs_a_job_and_its_rpc_and_data_ports_serve_only_certificates_of_its_own_ca() {
    let cluster = BackgroundCluster::start(2, &[]);
    let dir = cluster.dir.path();
    assert!(
        cluster.start_output.contains(&format!(
            "mutual TLS with the cluster CA in {}",
            dir.join("tls").display()
        )),
        "{}",
        cluster.start_output
    );
    let mode = |p: PathBuf| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(dir.join("tls")), 0o700);
    for file in [
        "ca.key",
        "ca.crt",
        "jobmanager.key",
        "taskmanager-0.key",
        "taskmanager-1.crt",
    ] {
        assert_eq!(mode(dir.join("tls").join(file)), 0o600, "{file}");
    }
    run_keyed_sum(&cluster.rest, &dir.join("sums"), "2");

    let scratch = tempfile::tempdir().unwrap();
    let ca = ClusterPki::open(dir).unwrap();
    let (identity, trust) = ca.issue_identity("probe", &["127.0.0.1".into()]).unwrap();
    let member = InternalTls::new(identity, trust).unwrap();
    let foreign_files = TestCa::new("intruder").issue(scratch.path(), "intruder");
    let mut foreign_config = weir_config::Configuration::new();
    foreign_config
        .apply_dynamic_properties(&[
            "security.ssl.internal.enabled=true".into(),
            format!("security.ssl.internal.cert={}", foreign_files.cert.display()),
            format!("security.ssl.internal.key={}", foreign_files.key.display()),
            // Trusts the cluster's CA, so only the server's check of the client fails.
            format!("security.ssl.internal.trust-cert={}", ca.ca_cert().display()),
        ])
        .unwrap();
    let foreign = InternalTls::from_config(&foreign_config).unwrap().expect("on");

    let tms = taskmanager_addresses(&cluster.rest);
    assert_eq!(tms.len(), 2, "{tms:?}");
    let mut rpc_ports = vec![jobmanager_rpc(dir)];
    rpc_ports.extend(tms.iter().map(|(rpc, _)| rpc.clone()));
    for rpc in &rpc_ports {
        let plain_answer = plain(rpc, H2_PREFACE, 9);
        assert!(!h2_served(&plain_answer), "{rpc}: plaintext served: {plain_answer:?}");
        let foreign_answer = over_tls(rpc, &foreign, H2_PREFACE, 9);
        assert!(
            refused_handshake(&foreign_answer),
            "{rpc}: another CA: {foreign_answer:?}"
        );
        let member_answer = over_tls(rpc, &member, H2_PREFACE, 9);
        assert!(
            h2_served(&member_answer),
            "{rpc}: the cluster CA not served: {member_answer:?}"
        );
    }
    for (_, data) in &tms {
        let hello = data_hello();
        let plain_answer = plain(data, &hello, hello.len());
        assert!(
            !data_served(&plain_answer),
            "{data}: plaintext served: {plain_answer:?}"
        );
        let foreign_answer = over_tls(data, &foreign, &hello, hello.len());
        assert!(
            refused_handshake(&foreign_answer),
            "{data}: another CA: {foreign_answer:?}"
        );
        let member_answer = over_tls(data, &member, &hello, hello.len());
        assert!(
            data_served(&member_answer),
            "{data}: the cluster CA not served: {member_answer:?}"
        );
    }
}

#[test]
fn with_internal_ssl_explicitly_off_the_cluster_is_plaintext_as_in_flink() {
    let cluster = BackgroundCluster::start(1, &["security.ssl.internal.enabled=false"]);
    let dir = cluster.dir.path();
    assert!(
        cluster
            .start_output
            .contains("Internal connections (RPC, data): plaintext"),
        "{}",
        cluster.start_output
    );
    assert!(!dir.join("tls").exists(), "nothing generated");
    let tms = taskmanager_addresses(&cluster.rest);
    assert_eq!(tms.len(), 1, "{tms:?}");
    for rpc in [jobmanager_rpc(dir), tms[0].0.clone()] {
        let served = plain(&rpc, H2_PREFACE, 9);
        assert!(h2_served(&served), "{rpc}: {served:?}");
    }
    let hello = data_hello();
    let served = plain(&tms[0].1, &hello, hello.len());
    assert!(data_served(&served), "{served:?}");
    let log = std::fs::read_to_string(dir.join("jobmanager.log")).unwrap();
    assert!(log.contains("WARN") && log.contains("PLAINTEXT"), "{log}");
    run_keyed_sum(&cluster.rest, &dir.join("sums"), "1");
}

#[test]
fn a_taskmanager_started_by_hand_with_the_cluster_dir_joins_and_runs_tasks_and_one_without_it_is_refused() {
    let cluster = BackgroundCluster::start(1, &[]);
    let dir = cluster.dir.path();
    let logs = tempfile::tempdir().unwrap();
    let joined_log = logs.path().join("joined.log");
    let _joined = HandStarted::start(&["--cluster-dir".into(), dir.display().to_string()], &joined_log);
    wait_for(|| taskmanager_addresses(&cluster.rest).len() == 2);
    let (_, overview) = get(&cluster.rest, "/overview");
    assert_eq!(overview["slots-total"], 2);
    run_keyed_sum(&cluster.rest, &dir.join("sums"), "2");
    let log = std::fs::read_to_string(&joined_log).unwrap();
    assert!(!log.contains("PLAINTEXT"), "{log}");

    let rpc_port = jobmanager_rpc(dir).rsplit(':').next().unwrap().to_string();
    let plain_log = logs.path().join("plain.log");
    let _plain = HandStarted::start(&["-D".into(), format!("jobmanager.rpc.port={rpc_port}")], &plain_log);
    wait_for(|| {
        let text = std::fs::read_to_string(&plain_log).unwrap_or_default();
        text.contains("PLAINTEXT")
            && (text.contains("registration failed") || text.contains("cannot connect to the JobManager"))
    });
    let log = std::fs::read_to_string(&plain_log).unwrap();
    let warning = log.lines().find(|l| l.contains("PLAINTEXT")).unwrap();
    assert!(
        warning.contains("WARN") && warning.contains("--cluster-dir"),
        "{warning}"
    );
    assert_eq!(
        taskmanager_addresses(&cluster.rest).len(),
        2,
        "the plaintext TaskManager is not registered"
    );
}
