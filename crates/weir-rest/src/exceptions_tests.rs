//! Tests of [`crate::messages::exceptions`], over the example bodies of [`crate::examples`].

use crate::examples;
use crate::messages::exceptions::*;
use crate::sample_check::assert_matches_sample;

#[test]
fn failed_job_matches_flink_sample() {
    assert_matches_sample(&examples::job_exceptions(), "job_exceptions_failed.json");
}

#[test]
fn no_exceptions_matches_flink_sample() {
    assert_matches_sample(&JobExceptions::default(), "job_exceptions_running_none.json");
}

#[test]
fn global_failure_omits_task_fields() {
    let v = serde_json::to_value(examples::job_exceptions()).expect("serialises");
    let root = &v["exceptionHistory"]["entries"][0];
    assert!(root.get("taskName").is_none());
    assert!(root.get("endpoint").is_none());
    assert!(root.get("taskManagerId").is_none());
    let concurrent = &root["concurrentExceptions"][0];
    assert!(concurrent.get("concurrentExceptions").is_none());
    assert!(concurrent.get("taskName").is_some());
}

#[test]
fn filter_and_limit() {
    let mut ex = examples::job_exceptions();
    let mut second = ex.exception_history.entries[0].clone();
    second
        .exception
        .failure_labels
        .insert("type".to_string(), "user".to_string());
    ex.exception_history.entries.push(second);

    let mut limited = ex.clone();
    limited.filter_and_limit(&[], 1);
    assert_eq!(limited.exception_history.entries.len(), 1);
    assert!(limited.exception_history.truncated);

    let mut filtered = ex.clone();
    filtered.filter_and_limit(&[("type".to_string(), "user".to_string())], 20);
    assert_eq!(filtered.exception_history.entries.len(), 1);
    assert!(!filtered.exception_history.truncated);

    let mut all = ex;
    all.filter_and_limit(&[], 2);
    assert_eq!(all.exception_history.entries.len(), 2);
    assert!(!all.exception_history.truncated);
}
