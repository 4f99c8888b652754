//! Settings a container deployment needs: servers bound to every interface while the
//! processes advertise a reachable address (`jobmanager.bind-host`,
//! `rest.bind-address`, `taskmanager.bind-host`), and configuration lines from the
//! `WEIR_PROPERTIES` environment variable, as Flink's images read `FLINK_PROPERTIES`.

mod common;

use common::*;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Whether something accepts connections on `127.0.0.2:port`: a server bound to every
/// interface does, one bound to `127.0.0.1` does not.
fn listens_beyond_127_0_0_1(port: u64) -> bool {
    let addr: SocketAddr = format!("127.0.0.2:{port}").parse().unwrap();
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

fn port_of(address: &str) -> u64 {
    address
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_matches(|c: char| !c.is_ascii_digit()).parse().ok())
        .unwrap_or_else(|| panic!("no port in {address}"))
}

#[test]
fn processes_bound_to_every_interface_advertise_their_configured_host_and_run_a_job() {
    let mut cluster = Cluster::start(0, 2, &["jobmanager.bind-host=0.0.0.0", "rest.bind-address=0.0.0.0"]);
    cluster.tm_dynamic.push("taskmanager.bind-host=0.0.0.0".to_string());
    cluster.tm_dynamic.push("taskmanager.host=127.0.0.1".to_string());
    cluster.add_taskmanager();
    cluster.add_taskmanager();
    cluster.wait_for_slots(4);
    assert!(listens_beyond_127_0_0_1(port_of(&cluster.rest)), "REST");
    assert!(listens_beyond_127_0_0_1(port_of(&cluster.rpc_port)), "JobManager RPC");
    let (_, tms) = get(&cluster.rest, "/taskmanagers");
    for tm in tms["taskmanagers"].as_array().expect("taskmanagers") {
        let path = tm["path"].as_str().unwrap_or_default();
        assert!(
            path.contains("127.0.0.1:") && !path.contains("0.0.0.0"),
            "advertised: {tm}"
        );
        let rpc = port_of(path.split("127.0.0.1:").nth(1).unwrap_or_default());
        assert!(listens_beyond_127_0_0_1(rpc), "TaskManager RPC: {tm}");
        assert!(
            listens_beyond_127_0_0_1(tm["dataPort"].as_u64().unwrap_or(0)),
            "data: {tm}"
        );
    }
    let jid = cluster.submit(serde_json::json!({"program": "wordcount", "parallelism": 4}));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(20)), "FINISHED");
}

#[test]
fn by_default_every_server_listens_on_the_loopback_address_only() {
    let cluster = Cluster::start(1, 1, &[]);
    assert!(!listens_beyond_127_0_0_1(port_of(&cluster.rest)), "REST");
    assert!(!listens_beyond_127_0_0_1(port_of(&cluster.rpc_port)), "JobManager RPC");
    let (_, tms) = get(&cluster.rest, "/taskmanagers");
    let tm = &tms["taskmanagers"][0];
    assert!(
        !listens_beyond_127_0_0_1(tm["dataPort"].as_u64().unwrap_or(0)),
        "data: {tm}"
    );
}

#[test]
fn weir_properties_lines_apply_over_the_configuration_file_and_under_dash_d() {
    let props = "# as an image would set them\nparallelism.default: 2\n";
    let (code, out, err) = weir_with_env(&["local", "wordcount"], &[("WEIR_PROPERTIES", props)], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().any(|l| l.starts_with("2> ")) && out.lines().all(|l| l.starts_with("1> ") || l.starts_with("2> ")),
        "{out}"
    );
    let (code, out, err) = weir_with_env(
        &["local", "wordcount", "-D", "parallelism.default=1"],
        &[("WEIR_PROPERTIES", props)],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l == "the,7"), "-D wins over WEIR_PROPERTIES: {out}");
    let (code, _, err) = weir_with_env(
        &["local", "wordcount"],
        &[("WEIR_PROPERTIES", "no separator here")],
        None,
    );
    assert_ne!(code, 0);
    assert!(err.contains("WEIR_PROPERTIES line 1"), "{err}");
}

/// `weir jobmanager --application keyed-sum ...` with `extra` settings, a TaskManager
/// registering with it; the JobManager's exit code, stdout and stderr once it exits.
fn run_application(extra: &[&str], output: &std::path::Path) -> (i32, String, String) {
    use std::io::{BufRead, BufReader, Read};
    let output_arg = format!("output={}", output.display());
    let mut args = vec![
        "jobmanager",
        "-D",
        "jobmanager.rpc.port=0",
        "-D",
        "rest.port=0",
        "--application",
        "keyed-sum",
        "-p",
        "2",
        "--arg",
        "keys=20",
        "--arg",
        "records=5000",
        "--arg",
        &output_arg,
    ];
    args.extend_from_slice(extra);
    let mut jm = std::process::Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(&args)
        .env_remove("WEIR_CONF_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the JobManager");
    let mut stdout = BufReader::new(jm.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("start-up line");
    assert!(first.contains("application=keyed-sum"), "{first}");
    let rpc = first
        .split_whitespace()
        .find_map(|f| f.strip_prefix("rpc="))
        .unwrap_or_else(|| panic!("no rpc address in {first}"));
    let rpc_port = rpc.rsplit(':').next().unwrap_or_default().to_string();
    let _tm = weir::cli::daemon::Daemon::start(
        std::path::Path::new(env!("CARGO_BIN_EXE_weir")),
        "taskmanager",
        &[
            format!("jobmanager.rpc.port={rpc_port}"),
            "taskmanager.numberOfTaskSlots=2".to_string(),
        ],
        std::process::Stdio::inherit(),
    )
    .expect("start a TaskManager");
    let status = jm.wait().expect("the JobManager exits");
    let mut rest_out = String::new();
    stdout.read_to_string(&mut rest_out).ok();
    let mut err = String::new();
    jm.stderr.take().expect("stderr").read_to_string(&mut err).ok();
    (status.code().unwrap_or(-1), first + &rest_out, err)
}

#[test]
fn an_application_jobmanager_runs_its_one_job_and_exits_zero_when_it_finished() {
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, err) = run_application(&[], out.path());
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(err.contains("ended FINISHED"), "{err}");
    assert_eq!(read_parts(out.path()), keyed_sum_output(20, 42, 5000));
}

#[test]
fn an_application_whose_job_fails_exits_one_with_the_root_cause() {
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, err) = run_application(&["--arg", "fail-once-after=100"], out.path());
    assert_eq!(code, 1, "{stdout}{err}");
    assert!(err.contains("FAILED") && err.contains("after 100 records"), "{err}");
}

#[test]
fn an_application_of_an_unknown_program_is_refused_before_any_server_starts() {
    let (code, out, err) = weir_cli(&[
        "jobmanager",
        "-D",
        "rest.port=0",
        "-D",
        "jobmanager.rpc.port=0",
        "--application",
        "no-such-program",
    ]);
    assert_ne!(code, 0);
    assert!(out.is_empty(), "a server started: {out}");
    assert!(err.contains("no-such-program"), "{err}");
}
