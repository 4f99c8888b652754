//! The `user-job` binary is a complete Weir: its own program runs in `local` mode and on
//! a cluster of its own processes, and a process of another binary cannot join that
//! cluster.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use user_job::page_views::expected_lines;
use weir::cli::daemon::Daemon;

const BIN: &str = env!("CARGO_BIN_EXE_user-job");

fn user_job(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run user-job");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Committed part files under `dir`, their lines sorted.
fn output_lines(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir).expect("output directory") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy().to_string();
        if path.is_file() && name.starts_with("part-") {
            lines.extend(
                std::fs::read_to_string(&path)
                    .expect("part file")
                    .lines()
                    .map(str::to_string),
            );
        }
    }
    lines.sort();
    lines
}

fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < timeout, "condition not met within {timeout:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn overview(rest: &str) -> serde_json::Value {
    let body = ureq::get(&format!("http://{rest}/overview"))
        .call()
        .expect("GET /overview")
        .into_string()
        .expect("body");
    serde_json::from_str(&body).expect("JSON")
}

fn start(exe: &Path, role: &str, dynamic: &[String], stderr: Stdio) -> Daemon {
    Daemon::start(exe, role, dynamic, stderr).unwrap_or_else(|e| panic!("start {role}: {e}"))
}

#[test]
fn the_binary_has_weirs_commands_and_its_own_program() {
    let (code, out, _) = user_job(&["--version"]);
    assert_eq!((code, out.trim()), (0, "user-job 0.1.0"));
    let (code, out, _) = user_job(&["programs"]);
    assert_eq!(code, 0);
    assert!(out.contains("page-views"), "{out}");
    assert!(out.contains("wordcount"), "the built-in programs too: {out}");
    let (code, _, err) = user_job(&["local", "nosuch"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unknown program 'nosuch' (this is user-job 0.1.0); available programs:"),
        "{err}"
    );
}

#[test]
fn its_program_runs_locally_with_exact_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = user_job(&[
        "local",
        "page-views",
        "-p",
        "2",
        "--arg",
        "views=3000",
        "--arg",
        "users=20",
        "--arg",
        &format!("output={}", out.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(output_lines(&out), expected_lines(3000, 20, 7));
}

#[test]
fn a_cluster_of_the_binary_runs_its_program_and_refuses_a_taskmanager_of_another_binary() {
    let dir = tempfile::tempdir().unwrap();
    let fast = [
        "heartbeat.interval=300 ms".to_string(),
        "heartbeat.timeout=3 s".to_string(),
    ];
    let mut jm_dynamic = vec!["jobmanager.rpc.port=0".to_string(), "rest.port=0".to_string()];
    jm_dynamic.extend(fast.iter().cloned());
    let jm = start(Path::new(BIN), "jobmanager", &jm_dynamic, Stdio::inherit());
    let rest = jm.field("rest").unwrap();
    let rpc_port = jm.field("rpc").unwrap().rsplit(':').next().unwrap().to_string();
    let mut tm_dynamic = vec![
        format!("jobmanager.rpc.port={rpc_port}"),
        "taskmanager.numberOfTaskSlots=2".to_string(),
    ];
    tm_dynamic.extend(fast.iter().cloned());
    let _tm = start(Path::new(BIN), "taskmanager", &tm_dynamic, Stdio::inherit());
    wait_until(Duration::from_secs(30), || overview(&rest)["taskmanagers"] == 1);

    let out = dir.path().join("out");
    let (code, stdout, err) = user_job(&[
        "run",
        "-m",
        &rest,
        "-p",
        "2",
        "page-views",
        "--arg",
        "views=2000",
        "--arg",
        &format!("output={}", out.display()),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("reached state FINISHED"), "{stdout}");
    assert_eq!(output_lines(&out), expected_lines(2000, 50, 7));

    // A program the cluster's binary does not have: the error names it and the binary.
    let (code, _, err) = user_job(&["run", "-m", &rest, "nosuch"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unknown program 'nosuch' (this is user-job 0.1.0)"),
        "{err}"
    );

    // A TaskManager of the stock `weir` binary (built beside this one) is refused.
    let weir: PathBuf = Path::new(BIN).with_file_name("weir");
    assert!(
        weir.exists(),
        "the weir binary is built beside user-job: {}",
        weir.display()
    );
    let log = dir.path().join("weir-tm.log");
    let _other = start(
        &weir,
        "taskmanager",
        &tm_dynamic,
        Stdio::from(std::fs::File::create(&log).unwrap()),
    );
    wait_until(Duration::from_secs(30), || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("registration refused")
    });
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("TaskManager binary 'weir 0.1.0 (weir 0.1.0, "), "{text}");
    assert!(
        text.contains("does not match the JobManager's binary: every process of a cluster must run the same binary"),
        "{text}"
    );
    // The refusal does not tell a forger the JobManager's binary.
    assert!(!text.contains("user-job 0.1.0"), "{text}");
    assert_eq!(overview(&rest)["taskmanagers"], 1);
}
