//! Tests of [`crate::messages::config`], over the example bodies of [`crate::examples`].

use crate::examples;
use crate::sample_check::assert_matches_sample;

#[test]
fn dashboard_config_matches_flink_sample() {
    assert_matches_sample(&examples::dashboard_config(), "config.json");
}

#[test]
fn jobmanager_config_matches_flink_sample() {
    assert_matches_sample(&examples::jobmanager_config(), "jobmanager_config.json");
}

#[test]
fn job_config_matches_flink_sample() {
    assert_matches_sample(&examples::job_config(), "job_config.json");
}

#[test]
fn user_config_is_written_as_string_map() {
    let mut c = examples::job_config();
    c.execution_config
        .user_config
        .insert("keys".to_string(), "10".to_string());
    let v = serde_json::to_value(&c).expect("serialises");
    assert_eq!(v["execution-config"]["user-config"]["keys"], "10");
    assert_eq!(v["jid"].as_str().map(str::len), Some(32));
}
