//! Tests of [`crate::messages::overview`], over the example bodies of [`crate::examples`].

use crate::examples::overview as example;
use crate::sample_check::assert_matches_sample;

#[test]
fn matches_flink_sample() {
    assert_matches_sample(&example(), "overview_running.json");
    assert_matches_sample(&example(), "overview_idle.json");
}

#[test]
fn blocked_fields_appear_when_non_zero() {
    let mut o = example();
    o.slots_free_and_blocked = 1;
    o.taskmanagers_blocked = 1;
    let v = serde_json::to_value(&o).expect("serialises");
    assert_eq!(v["slots-free-and-blocked"], 1);
    assert_eq!(v["taskmanagers-blocked"], 1);
}
