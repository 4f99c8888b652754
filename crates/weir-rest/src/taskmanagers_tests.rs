//! Tests of [`crate::messages::taskmanagers`], over the example bodies of [`crate::examples`].

use crate::examples;
use crate::sample_check::assert_matches_sample;

#[test]
fn taskmanagers_matches_flink_sample() {
    let list = crate::messages::taskmanagers::TaskManagersList {
        taskmanagers: vec![examples::taskmanager_info()],
    };
    assert_matches_sample(&list, "taskmanagers.json");
}

#[test]
fn taskmanager_detail_matches_flink_sample() {
    assert_matches_sample(&examples::taskmanager_detail(), "taskmanager_detail_busy.json");
}

#[test]
fn blocked_is_written_only_when_true() {
    let mut tm = examples::taskmanager_info();
    let v = serde_json::to_value(&tm).expect("serialises");
    assert!(v.get("blocked").is_none());
    tm.blocked = true;
    let v = serde_json::to_value(&tm).expect("serialises");
    assert_eq!(v["blocked"], true);
}
