//! Tests of [`crate::messages::checkpoints`]: the statistics and details bodies against Flink
//! 2.3's samples (shape, key order and, where the example reproduces the run, every
//! value), and the percentile estimate.

use crate::examples;
use crate::messages::checkpoints::{
    CheckpointOutcome, CheckpointSummary, CheckpointingStatistics, LatestCheckpoints, StatsSummary,
};
use crate::sample_check::{assert_matches_sample, sample};

#[test]
fn a_running_job_with_three_checkpoints_equals_flinks_sample() {
    let stats = examples::job_checkpoints_running();
    assert_matches_sample(&stats, "job_checkpoints_running.json");
    // The summary is computed, so this also checks min/max/avg and the percentiles.
    assert_eq!(
        serde_json::to_value(&stats).ok(),
        Some(sample("job_checkpoints_running.json"))
    );
}

#[test]
fn a_finished_job_with_a_failed_checkpoint_matches_flinks_sample() {
    let failed = examples::failed_checkpoint(17, 1_795_941_251_083);
    let completed = examples::completed_checkpoint(16, 1_795_941_251_001, 1_795_941_251_072, 9594, 0, true);
    let mut stats = examples::job_checkpoints_running();
    stats.history = vec![failed.clone(), completed.clone()];
    stats.latest = LatestCheckpoints {
        completed: Some(completed),
        failed: Some(failed),
        ..LatestCheckpoints::default()
    };
    assert_matches_sample(&stats, "job_checkpoints_finished.json");
    let flink = sample("job_checkpoints_finished.json");
    let ours = serde_json::to_value(&stats).unwrap_or_default();
    assert_eq!(ours["latest"]["failed"], flink["latest"]["failed"]);
    assert_eq!(ours["history"][1], flink["history"][1]);
}

#[test]
fn a_job_without_checkpointing_equals_flinks_sample() {
    let stats = CheckpointingStatistics::disabled();
    assert_matches_sample(&stats, "job_checkpoints_failed_no_ckpt.json");
    assert_eq!(
        serde_json::to_value(&stats).ok(),
        Some(sample("job_checkpoints_failed_no_ckpt.json"))
    );
}

#[test]
fn checkpoint_details_with_tasks_equal_flinks_sample() {
    let details = examples::checkpoint_details();
    assert_matches_sample(&details, "job_checkpoint_details.json");
    assert_eq!(
        serde_json::to_value(&details).ok(),
        Some(sample("job_checkpoint_details.json"))
    );
}

#[test]
fn an_in_progress_checkpoint_has_neither_completion_nor_failure_fields() {
    let mut pending = examples::completed_checkpoint(4, 10, 20, 0, 0, false);
    pending.outcome = CheckpointOutcome::InProgress;
    let v = serde_json::to_value(&pending).unwrap_or_default();
    assert_eq!(v["className"], "in_progress");
    assert_eq!(v["status"], "IN_PROGRESS");
    for absent in ["external_path", "discarded", "failure_timestamp", "failure_message"] {
        assert!(v.get(absent).is_none(), "{absent} in {v}");
    }
    let text = serde_json::to_string(&pending).unwrap_or_default();
    assert!(text.ends_with(r#""tasks":{}}"#), "{text}");
}

#[test]
fn percentiles_are_estimated_as_commons_math_does() {
    let s = StatsSummary::of(&(1..=10).collect::<Vec<i64>>());
    assert_eq!((s.min, s.max, s.avg), (1, 10, 5));
    assert_eq!(s.p50, 5.5);
    assert!((s.p90 - 9.9).abs() < 1e-9, "{}", s.p90);
    assert_eq!(s.p99, 10.0);

    let one = StatsSummary::of(&[42]);
    assert_eq!((one.min, one.max, one.avg, one.p50, one.p999), (42, 42, 42, 42.0, 42.0));

    let none = StatsSummary::of(&[]);
    assert_eq!((none.min, none.max, none.avg), (0, 0, 0));
    assert!(none.p50.is_nan());
}

#[test]
fn the_summary_ignores_failed_and_pending_checkpoints() {
    let completed = examples::completed_checkpoint(1, 0, 100, 500, 0, false);
    let failed = examples::failed_checkpoint(2, 200);
    let summary = CheckpointSummary::of_completed([&completed, &failed]);
    assert_eq!(summary.end_to_end_duration.min, 100);
    assert_eq!(summary.end_to_end_duration.max, 100);
    assert_eq!(summary.state_size.p50, 500.0);
    assert_eq!(summary.alignment_buffered, StatsSummary::zero());
}
