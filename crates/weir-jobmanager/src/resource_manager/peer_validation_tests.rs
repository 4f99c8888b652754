//! Tests of [`super`]: hostile registrations and heartbeats, without sockets.

use super::*;

fn registration(slots: u32) -> RegisterTaskExecutorRequest {
    RegisterTaskExecutorRequest {
        resource_id: "0123456789abcdef0123456789abcdef".into(),
        rpc_address: "127.0.0.1:6122".into(),
        data_address: "127.0.0.1:6121".into(),
        num_slots: slots,
        version: env!("CARGO_PKG_VERSION").into(),
        binary: "weir 0.1.0 (fingerprint 1234)".into(),
        ..Default::default()
    }
}

#[test]
fn a_registration_declaring_u32_max_slots_is_refused_naming_the_limit_and_the_key() {
    let err = check_registration(&registration(u32::MAX), "weir 0.1.0 (fingerprint 1234)", 1024).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("4294967295 slots"), "{text}");
    assert!(text.contains("limit of 1024"), "{text}");
    assert!(text.contains("resourcemanager.taskmanager.max-slots"), "{text}");
    assert_eq!(
        check_registration(&registration(1024), "weir 0.1.0 (fingerprint 1234)", 1024),
        Ok(())
    );
}

#[test]
fn a_refused_binary_never_echoes_the_jobmanagers_fingerprint() {
    let mut r = registration(2);
    r.binary = "forged".into();
    let text = check_registration(&r, "weir 0.1.0 (fingerprint 1234)", 1024)
        .unwrap_err()
        .to_string();
    assert!(!text.contains("1234"), "{text}");
    assert!(text.contains("'forged'"), "{text}");
}

#[test]
fn oversized_or_unprintable_ids_and_addresses_are_refused() {
    let mut r = registration(2);
    r.resource_id = "a".repeat(10_000);
    assert!(matches!(
        check_registration(&r, &r.binary.clone(), 1024),
        Err(RegistrationRefused::BadField {
            field: "resource_id",
            ..
        })
    ));
    let mut r = registration(2);
    r.rpc_address = "host\n:1".into();
    assert!(matches!(
        check_registration(&r, &r.binary.clone(), 1024),
        Err(RegistrationRefused::BadField {
            field: "rpc_address",
            ..
        })
    ));
}

#[test]
fn nan_cpu_and_absurd_rss_are_dropped_with_reasons_and_sane_values_kept() {
    let mut problems = Vec::new();
    let p = sanitize_process(
        ProcessMetrics {
            cpu_time_ns: Some(5),
            cpu_load: Some(f64::NAN),
            rss_bytes: Some(i64::MAX as u64),
            threads: Some(12),
        },
        &mut problems,
    );
    assert_eq!(p.cpu_load, None);
    assert_eq!(p.rss_bytes, None);
    assert_eq!((p.cpu_time_ns, p.threads), (Some(5), Some(12)));
    assert_eq!(problems.len(), 2, "{problems:?}");
    let mut problems = Vec::new();
    for load in [f64::INFINITY, -0.5, 1.5] {
        let p = sanitize_process(
            ProcessMetrics {
                cpu_load: Some(load),
                ..Default::default()
            },
            &mut problems,
        );
        assert_eq!(p.cpu_load, None, "{load}");
    }
    let ok = sanitize_process(
        ProcessMetrics {
            cpu_load: Some(0.25),
            ..Default::default()
        },
        &mut problems,
    );
    assert_eq!(ok.cpu_load, Some(0.25));
}

#[test]
fn log_names_with_paths_or_control_characters_are_dropped_and_the_count_bounded() {
    let file = |name: &str| LogFile {
        name: name.into(),
        size: 10,
        mtime_ms: 1_700_000_000_000,
    };
    let mut problems = Vec::new();
    let kept = sanitize_logs(
        vec![
            file("taskmanager.log"),
            file("../../etc/passwd"),
            file("/etc/shadow"),
            file("a\\b"),
            file(".."),
            file(""),
            file("x\u{0}y"),
            file(&"n".repeat(300)),
        ],
        &mut problems,
    );
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].name, "taskmanager.log");
    assert_eq!(problems.len(), 7);
    let many: Vec<LogFile> = (0..1000).map(|i| file(&format!("f{i}.log"))).collect();
    let mut problems = Vec::new();
    assert_eq!(sanitize_logs(many, &mut problems).len(), MAX_LOG_FILES);
    assert!(matches!(problems[0], ReportProblem::TooManyLogs(1000)));
    let mut problems = Vec::new();
    let weird = LogFile {
        name: "ok.log".into(),
        size: u64::MAX,
        mtime_ms: -1,
    };
    assert!(sanitize_logs(vec![weird], &mut problems).is_empty());
}

#[test]
fn a_network_report_with_more_available_than_total_segments_is_dropped() {
    let mut problems = Vec::new();
    let n = NetworkMemory {
        total_segments: 10,
        available_segments: 11,
        segment_size: 32768,
        ..Default::default()
    };
    assert_eq!(sanitize_network(n, &mut problems), None);
    let ok = NetworkMemory {
        total_segments: 10,
        available_segments: 3,
        segment_size: 32768,
        ..Default::default()
    };
    assert_eq!(sanitize_network(ok, &mut problems), Some(ok));
    let huge = NetworkMemory {
        segment_size: u64::MAX,
        ..Default::default()
    };
    assert_eq!(sanitize_network(huge, &mut problems), None);
    assert_eq!(problems.len(), 2);
}

#[test]
fn task_counters_are_clamped_and_operator_lists_bounded() {
    let mut m = TaskMetricsReport {
        attempt_id: "a".into(),
        records_in: u64::MAX,
        in_pool_usage_permille: 5000,
        operators: (0..2000)
            .map(|i| OperatorMetricsReport {
                operator_id: format!("{i:032x}"),
                operator_name: "x".repeat(1000),
                counters: (0..100).map(|c| (format!("c{c}"), c)).collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let mut problems = Vec::new();
    sanitize_task_metrics(&mut m, &mut problems);
    assert_eq!(m.records_in, i64::MAX as u64);
    assert_eq!(m.in_pool_usage_permille, 1000);
    assert_eq!(m.operators.len(), MAX_OPERATORS);
    assert!(m.operators.iter().all(|o| o.operator_name.len() <= MAX_NAME_CHARS));
    assert!(m.operators.iter().all(|o| o.counters.len() <= MAX_OPERATOR_COUNTERS));
    assert_eq!(problems.len(), 1);
    let mut fine = TaskMetricsReport {
        records_in: 7,
        ..Default::default()
    };
    let mut problems = Vec::new();
    sanitize_task_metrics(&mut fine, &mut problems);
    assert!(problems.is_empty());
}
