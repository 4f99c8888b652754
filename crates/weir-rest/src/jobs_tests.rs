//! Tests of [`crate::messages::jobs`], over the example bodies of [`crate::examples`].

use crate::examples;
use crate::sample_check::assert_matches_sample;

#[test]
fn jobs_list_matches_flink_sample() {
    assert_matches_sample(&examples::jobs_overview().to_jobs_list(), "jobs_list.json");
}

#[test]
fn jobs_overview_matches_flink_sample() {
    assert_matches_sample(&examples::jobs_overview(), "jobs_overview_after.json");
}

#[test]
fn job_detail_matches_flink_samples() {
    // One vertex with an unknown busy time ("NaN") and one with a measured one, as
    // in Flink's sample of a failed job.
    assert_matches_sample(&examples::job_detail(), "job_detail_failed.json");
}

#[test]
fn job_plan_matches_flink_sample() {
    let plan = crate::messages::jobs::JobPlanInfo {
        plan: examples::job_plan(),
    };
    assert_matches_sample(&plan, "job_plan.json");
}

#[test]
fn running_job_writes_minus_one_end_time() {
    let d = examples::job_detail();
    let v = serde_json::to_value(&d).expect("serialises");
    assert_eq!(v["end-time"], -1);
    assert_eq!(v["vertices"][0]["metrics"]["accumulated-busy-time"], "NaN");
    assert_eq!(v["vertices"][1]["metrics"]["accumulated-busy-time"], 35.0);
}
