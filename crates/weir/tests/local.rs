//! `weir local` runs a job on a MiniCluster: the JobManager and TaskManagers in one
//! process, so the configuration (`conf/config.yaml`, `-D`), the restart strategy and
//! checkpoints apply as on a cluster. Jobs fail on purpose through keyed-sum's
//! `fail-once-after`, which fails the first execution attempt only.

mod common;

use common::{keyed_sum_output, read_parts, weir_cli as weir, weir_with_env, FIXED_DELAY};

fn sorted_lines(out: &str) -> Vec<String> {
    let mut lines: Vec<String> = out.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// `key,sum` lines of keyed-sum over `records` records of `keys` keys with `seed`.
fn expected_sums(keys: u64, records: u64, seed: u64) -> Vec<String> {
    keyed_sum_output(keys, seed, records)
}

const KEYED_SUM: [&str; 8] = [
    "local",
    "keyed-sum",
    "-p",
    "2",
    "--arg",
    "keys=9",
    "--arg",
    "records=4000",
];

#[test]
fn a_job_failing_once_is_restarted_by_the_fixed_delay_strategy_and_prints_what_an_undisturbed_run_prints() {
    let (code, undisturbed, err) = weir(&KEYED_SUM);
    assert_eq!(code, 0, "{err}");
    assert_eq!(undisturbed.lines().count(), 9, "{undisturbed}");
    assert!(!err.contains("restarting"), "{err}");

    let mut args = KEYED_SUM.to_vec();
    args.extend(FIXED_DELAY);
    args.extend(["--arg", "fail-once-after=300"]);
    let (code, restarted, err) = weir(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(sorted_lines(&restarted), sorted_lines(&undisturbed));
    // The restart shows in the default output, once, with its cause.
    let restarts: Vec<&str> = err.lines().filter(|l| l.contains("restarting")).collect();
    assert_eq!(restarts.len(), 1, "{err}");
    assert!(
        restarts[0].contains("injected failure of Sum") && restarts[0].contains("restarting the whole job"),
        "{err}"
    );
}

#[test]
fn a_job_failing_once_without_a_restart_strategy_fails_with_its_root_cause_on_one_line() {
    let mut args = KEYED_SUM.to_vec();
    args.extend(["--arg", "fail-once-after=300"]);
    let (code, out, err) = weir(&args);
    assert_ne!(code, 0, "{out}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("Job execution failed"), "{err}");
    assert!(
        err.contains("Recovery is suppressed by NoRestartBackoffTimeStrategy"),
        "{err}"
    );
    assert!(err.contains("injected failure of Sum"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_job_whose_restart_strategy_gives_up_exits_non_zero_with_the_root_cause_on_stderr() {
    let mut args = KEYED_SUM.to_vec();
    args.extend([
        "-D",
        "restart-strategy.type=fixed-delay",
        "-D",
        "restart-strategy.fixed-delay.attempts=0",
        "--arg",
        "fail-once-after=300",
    ]);
    let (code, _out, err) = weir(&args);
    assert_ne!(code, 0);
    assert!(
        err.contains("Recovery is suppressed by FixedDelayRestartBackoffTimeStrategy"),
        "{err}"
    );
    assert!(err.contains("injected failure of Sum"), "{err}");
    assert!(err.contains("after 300 records"), "{err}");
}

#[test]
fn a_checkpointed_job_restored_after_a_failure_writes_exact_sums() {
    let out = tempfile::tempdir().unwrap();
    let output = format!("output={}", out.path().join("sums").display());
    let (keys, records, seed) = (40u64, 24_000u64, 7u64);
    let (keys_arg, records_arg, seed_arg) = (
        format!("keys={keys}"),
        format!("records={records}"),
        format!("seed={seed}"),
    );
    let mut args = vec![
        "local",
        "keyed-sum",
        "-p",
        "2",
        "--arg",
        &keys_arg,
        "--arg",
        &records_arg,
        "--arg",
        &seed_arg,
        "--arg",
        "rate_per_sec=16000",
        "--arg",
        &output,
        "--arg",
        "fail-once-after=6000",
        "-D",
        "execution.checkpointing.interval=100 ms",
    ];
    args.extend(FIXED_DELAY);
    let (code, _, err) = weir_with_env(&args, &[("WEIR_LOG", "weir_jobmanager=info")], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("Restoring job"),
        "the restart did not restore a checkpoint: {err}"
    );
    assert_eq!(read_parts(&out.path().join("sums")), expected_sums(keys, records, seed));
}

#[test]
fn the_restart_strategy_of_conf_config_yaml_applies_found_in_dash_c_weir_conf_dir_or_dot_conf() {
    let root = tempfile::tempdir().unwrap();
    let conf = root.path().join("conf");
    std::fs::create_dir(&conf).unwrap();
    std::fs::write(
        conf.join("config.yaml"),
        "restart-strategy:\n  type: fixed-delay\n  fixed-delay:\n    attempts: 2\n    delay: 0 s\n",
    )
    .unwrap();
    let mut args = KEYED_SUM.to_vec();
    args.extend(["--arg", "fail-once-after=300"]);
    let conf_dir = conf.display().to_string();

    let mut with_c = args.clone();
    with_c.extend(["-c", &conf_dir]);
    let (code, _, err) = weir(&with_c);
    assert_eq!(code, 0, "-c: {err}");
    let (code, _, err) = weir_with_env(&args, &[("WEIR_CONF_DIR", &conf_dir)], None);
    assert_eq!(code, 0, "WEIR_CONF_DIR: {err}");
    let (code, _, err) = weir_with_env(&args, &[], Some(root.path()));
    assert_eq!(code, 0, "./conf: {err}");
    // -D overrides the file.
    let mut overridden = with_c.clone();
    overridden.extend(["-D", "restart-strategy.type=none"]);
    let (code, _, err) = weir(&overridden);
    assert_ne!(code, 0);
    assert!(err.contains("NoRestartBackoffTimeStrategy"), "{err}");
}

#[test]
fn a_bad_configuration_is_a_one_line_error_naming_the_key_before_anything_starts() {
    for (dynamic, needle) in [
        (
            "restart-strategy.fixed-delay.attempts=many",
            "restart-strategy.fixed-delay.attempts",
        ),
        ("restart-strategy.type=sometimes", "restart-strategy.type"),
        (
            "execution.checkpointing.interval=soon",
            "execution.checkpointing.interval",
        ),
        ("parallelism.default=-3", "parallelism.default"),
        ("taskmanager.memory.process.size=1 kb", "Total Process Memory"),
        ("no-equals-sign", "no-equals-sign"),
    ] {
        let (code, out, err) = weir(&["local", "wordcount", "-D", dynamic]);
        assert_ne!(code, 0, "{dynamic}");
        assert!(out.is_empty(), "{dynamic}: the job ran: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{dynamic}: {err}");
        assert!(err.contains(needle), "{dynamic}: '{err}' does not name '{needle}'");
        assert!(!err.contains("panicked"), "{err}");
    }
    let (code, _, err) = weir(&[
        "local",
        "wordcount",
        "-p",
        "3",
        "-D",
        "taskmanager.numberOfTaskSlots=1",
        "-D",
        "minicluster.number-of-taskmanagers=2",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("the job needs 3 slots"), "{err}");
}

#[test]
fn parallelism_default_from_the_configuration_sets_the_jobs_parallelism() {
    let (code, out, err) = weir(&["local", "wordcount", "-D", "parallelism.default=2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().all(|l| l.starts_with("1> ") || l.starts_with("2> ")),
        "{out}"
    );
    // The command line wins over the configuration.
    let (code, out, err) = weir(&["local", "wordcount", "-p", "1", "-D", "parallelism.default=2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l == "the,7"), "{out}");
}

#[test]
fn a_minicluster_of_several_taskmanagers_exchanges_records_over_its_data_connections() {
    let (code, one, err) = weir(&["local", "wordcount", "-p", "3"]);
    assert_eq!(code, 0, "{err}");
    for tms in ["3", "2"] {
        let setting = format!("minicluster.number-of-taskmanagers={tms}");
        let (code, several, err) = weir(&["local", "wordcount", "-p", "3", "-D", &setting]);
        assert_eq!(code, 0, "{tms} TaskManagers: {err}");
        assert_eq!(sorted_lines(&several), sorted_lines(&one), "{tms} TaskManagers");
    }
}
