//! The `weir` command line: plans, local runs and clear one-line errors on bad input.

mod common;

use common::weir_cli as weir;

fn assert_one_line_error(args: &[&str], needle: &str) {
    let (code, _out, err) = weir(args);
    assert_ne!(code, 0, "{args:?} should fail");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: expected one line, got: {err}"
    );
    assert!(err.contains(needle), "{args:?}: '{err}' does not mention '{needle}'");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
}

#[test]
fn plan_of_wordcount_at_p2_has_two_vertices_joined_by_one_hash_edge() {
    let (code, out, err) = weir(&["plan", "wordcount", "-p", "2", "--json"]);
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).unwrap();
    let vertices = plan["vertices"].as_array().unwrap();
    assert_eq!(vertices.len(), 2);
    assert_eq!(vertices[0]["name"], "Source: Built-in Text -> Tokenizer");
    assert_eq!(vertices[1]["name"], "Count -> Map -> Sink: Print to Std. Out");
    assert_eq!(vertices[0]["parallelism"], 2);
    assert_eq!(vertices[1]["max_parallelism"], 128);
    let edges = plan["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 1);
    assert_eq!(edges[0]["ship_strategy"], "HASH");
    assert_eq!(edges[0]["distribution_pattern"], "ALL_TO_ALL");
    assert_eq!(edges[0]["source"], vertices[0]["id"]);
    assert_eq!(edges[0]["target"], vertices[1]["id"]);
}

#[test]
fn plan_text_lists_vertices_and_edges() {
    let (code, out, err) = weir(&["plan", "keyed-sum", "-p", "3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Source: Generator"), "{out}");
    assert!(out.contains("HASH"), "{out}");
}

#[test]
fn local_wordcount_prints_word_count_lines_with_subtask_prefixes() {
    let (code, out, err) = weir(&["local", "wordcount", "-p", "2"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.iter().all(|l| l.starts_with("1> ") || l.starts_with("2> ")),
        "{out}"
    );
    assert!(lines.iter().any(|l| l.ends_with("> the,7")), "{out}");
    let (code, out, _) = weir(&["local", "wordcount"]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l == "the,7"), "{out}");
}

#[test]
fn local_keyed_sum_prints_one_line_per_key() {
    let (code, out, err) = weir(&[
        "local",
        "keyed-sum",
        "-p",
        "2",
        "--arg",
        "keys=7",
        "--arg",
        "records=1000",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut keys: Vec<u64> = out
        .lines()
        .map(|l| l.split_once("> ").map(|(_, r)| r).unwrap_or(l))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    keys.sort();
    assert_eq!(keys, (0..7).collect::<Vec<_>>());
}

#[test]
fn bad_input_gets_a_clear_one_line_error() {
    assert_one_line_error(&["local", "nosuch"], "unknown program 'nosuch'");
    assert_one_line_error(&["plan", "nosuch"], "available programs:");
    assert_one_line_error(&["local", "keyed-sum", "--arg", "keys"], "malformed --arg 'keys'");
    assert_one_line_error(&["local", "keyed-sum", "--arg", "kes=3"], "unknown argument 'kes'");
    assert_one_line_error(
        &["local", "keyed-sum", "--arg", "keys=x"],
        "invalid value 'x' for argument 'keys'",
    );
    assert_one_line_error(
        &["local", "keyed-sum", "-p", "0"],
        "Operator parallelism not within bounds: 0",
    );
    assert_one_line_error(
        &["plan", "keyed-sum", "-p", "40000"],
        "Operator parallelism not within bounds: 40000",
    );
    assert_one_line_error(
        &["plan", "keyed-sum", "-p", "8", "--max-parallelism", "4"],
        "max parallelism 4",
    );
    assert_one_line_error(
        &["local", "wordcount", "--arg", "input=/nonexistent/file.txt"],
        "cannot read input file /nonexistent/file.txt",
    );
}

#[test]
fn parallel_print_sinks_never_tear_lines() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("words.txt");
    let text: String = (0..20_000)
        .map(|i| format!("w{} w{} w{}\n", i % 97, i % 13, i % 1009))
        .collect();
    std::fs::write(&input, text).unwrap();
    let arg = format!("input={}", input.display());
    let (code, out, err) = weir(&["local", "wordcount", "-p", "4", "--arg", &arg]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 60_000);
    for l in lines {
        let (prefix, rest) = l.split_once("> ").unwrap_or_else(|| panic!("torn line: {l:?}"));
        assert!(["1", "2", "3", "4"].contains(&prefix), "torn line: {l:?}");
        let (word, count) = rest.split_once(',').unwrap_or_else(|| panic!("torn line: {l:?}"));
        assert!(
            word.starts_with('w') && count.parse::<u64>().is_ok(),
            "torn line: {l:?}"
        );
    }
}

#[test]
fn stop_cluster_says_a_process_that_no_longer_runs_was_not_running_and_removes_its_pid_file() {
    let dir = tempfile::tempdir().expect("cluster dir");
    // A child that exited and was reaped: no process has its pid any more.
    let mut child = std::process::Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait for true");
    let pid_file = dir.path().join("taskmanager-1.pid");
    std::fs::write(&pid_file, pid.to_string()).expect("pid file");
    let cluster_dir = format!("cluster.dir={}", dir.path().display());
    let (code, out, err) = weir(&["stop-cluster", "-D", &cluster_dir]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.trim(),
        format!("taskmanager-1 (pid {pid}) was not running.\nNo cluster running.")
    );
    assert!(!out.contains("Stopped"), "{out}");
    assert!(!pid_file.exists());
}

#[test]
fn stop_cluster_with_a_pid_file_that_holds_no_process_id_fails_and_keeps_the_file() {
    let dir = tempfile::tempdir().expect("cluster dir");
    let pid_file = dir.path().join("jobmanager.pid");
    std::fs::write(&pid_file, "not-a-pid").expect("pid file");
    let cluster_dir = format!("cluster.dir={}", dir.path().display());
    assert_one_line_error(&["stop-cluster", "-D", &cluster_dir], "not a process id: \"not-a-pid\"");
    assert!(pid_file.exists());
}

#[test]
fn local_job_whose_stdout_reader_has_gone_ends_quietly_with_the_sigpipe_status() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["local", "wordcount"])
        .env_remove("WEIR_LOG")
        .env_remove("WEIR_CONF_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn weir local");
    // The reader goes away before the job prints its first line.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for weir local");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert!(!err.contains("error:"), "{err}");
}
