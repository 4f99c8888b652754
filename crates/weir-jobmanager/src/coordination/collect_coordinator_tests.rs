use super::*;
use weir_core::collect_batch::CollectBatch;

fn batch(subtask: u32, attempt: u32, offset: u64, rows: &[&str], end: bool) -> CollectBatch {
    CollectBatch {
        subtask_index: subtask,
        parallelism: 2,
        attempt_number: attempt,
        offset,
        rows: rows.iter().map(|r| r.to_string()).collect(),
        end_of_results: end,
        buffer_bytes: 8,
    }
}

fn coordinator() -> CollectSinkOperatorCoordinator {
    CollectSinkOperatorCoordinator::new("v1".into(), 2, 8)
}

#[test]
fn a_full_buffer_refuses_a_batch_until_the_client_acknowledges_rows() {
    let mut c = coordinator();
    assert_eq!(
        c.offer(batch(0, 0, 0, &["aaaa", "bbbb"], false)),
        Ok(OfferOutcome::Accepted)
    );
    assert_eq!(c.offer(batch(0, 0, 2, &["cc"], false)), Ok(OfferOutcome::Full));
    let first = c.request("", 0).unwrap();
    assert_eq!(first.rows, vec!["aaaa"]);
    assert_eq!(c.offer(batch(0, 0, 2, &["cc"], false)), Ok(OfferOutcome::Full));
    // Offset 1 acknowledges "aaaa": room for "cc".
    assert_eq!(c.request("v1", 1).unwrap().rows, vec!["bbbb"]);
    assert_eq!(c.offer(batch(0, 0, 2, &["cc"], false)), Ok(OfferOutcome::Accepted));
    assert_eq!(c.buffered_bytes(), 6);
}

#[test]
fn an_empty_buffer_takes_a_batch_larger_than_its_capacity() {
    let mut c = coordinator();
    assert_eq!(
        c.offer(batch(1, 0, 0, &["0123456789"], false)),
        Ok(OfferOutcome::Accepted)
    );
    assert_eq!(c.request("", 0).unwrap().rows, vec!["0123456789"]);
}

#[test]
fn a_request_sent_again_returns_the_same_rows_and_skips_none() {
    let mut c = coordinator();
    c.offer(batch(0, 0, 0, &["a", "b", "c"], true)).unwrap();
    c.offer(batch(1, 0, 0, &[], true)).unwrap();
    let once = c.request("", 0).unwrap();
    let again = c.request("v1", 0).unwrap();
    assert_eq!(once, again);
    assert_eq!(once.rows, vec!["a", "b", "c"]);
    assert!(once.end_of_results);
    let after = c.request("v1", 3).unwrap();
    assert!(after.rows.is_empty());
    assert!(after.end_of_results);
}

#[test]
fn the_results_end_only_when_every_subtask_ended_and_the_client_read_everything() {
    let mut c = coordinator();
    c.offer(batch(0, 0, 0, &["a"], true)).unwrap();
    assert!(!c.request("", 0).unwrap().end_of_results);
    c.offer(batch(1, 0, 0, &["b"], true)).unwrap();
    let r = c.request("", 1).unwrap();
    assert_eq!(r.rows, vec!["b"]);
    assert!(r.end_of_results);
}

#[test]
fn a_batch_sent_again_after_a_lost_answer_is_not_taken_twice() {
    let mut c = coordinator();
    c.offer(batch(0, 0, 0, &["a", "b"], false)).unwrap();
    assert_eq!(c.offer(batch(0, 0, 0, &["a", "b"], false)), Ok(OfferOutcome::Accepted));
    assert_eq!(c.buffered_bytes(), 2);
    assert!(matches!(
        c.offer(batch(0, 0, 1, &["b", "x"], false)),
        Err(CollectError::InvalidBatch { .. })
    ));
    assert!(matches!(
        c.offer(batch(0, 0, 5, &["z"], false)),
        Err(CollectError::InvalidBatch { .. })
    ));
}

#[test]
fn a_sink_restarted_after_handing_rows_on_fails_the_results_instead_of_repeating_them() {
    let mut c = coordinator();
    c.offer(batch(0, 0, 0, &["a"], false)).unwrap();
    let e = c.offer(batch(0, 1, 0, &["a"], false)).unwrap_err();
    assert_eq!(
        e,
        CollectError::SinkRestarted {
            subtask: 0,
            attempt: 1,
            rows: 1
        }
    );
    let message = c.request("", 0).unwrap_err().to_string();
    assert!(
        message.contains("restarted (attempt 1) after 1 of its result rows"),
        "{message}"
    );
    assert_eq!(c.buffered_bytes(), 0);
}

#[test]
fn a_sink_restarted_before_sending_rows_goes_on_and_old_attempts_are_refused() {
    let mut c = coordinator();
    c.offer(batch(0, 0, 0, &[], false)).unwrap();
    assert_eq!(c.offer(batch(0, 1, 0, &["a"], false)), Ok(OfferOutcome::Accepted));
    assert!(matches!(
        c.offer(batch(0, 0, 0, &["old"], false)),
        Err(CollectError::StaleAttempt { current: 1, .. })
    ));
}

#[test]
fn a_client_asking_for_acknowledged_rows_or_rows_not_received_gets_an_error() {
    let mut c = coordinator();
    c.offer(batch(0, 0, 0, &["a", "b"], false)).unwrap();
    c.request("", 2).unwrap();
    assert_eq!(
        c.request("v1", 1),
        Err(CollectError::OffsetOutOfRange {
            offset: 1,
            first: 2,
            end: 2
        })
    );
    assert!(matches!(c.request("v1", 3), Err(CollectError::OffsetOutOfRange { .. })));
    assert!(matches!(
        c.request("other", 2),
        Err(CollectError::UnknownVersion { .. })
    ));
}

#[test]
fn batches_beyond_the_protocol_limits_are_refused() {
    let mut c = coordinator();
    let mut wrong_subtask = batch(2, 0, 0, &["a"], false);
    assert!(c.offer(wrong_subtask.clone()).is_err());
    wrong_subtask.subtask_index = 0;
    wrong_subtask.buffer_bytes = MAX_BUFFER_BYTES + 1;
    assert!(c.offer(wrong_subtask).is_err());
    let mut too_many = batch(0, 0, 0, &[], false);
    too_many.rows = vec![String::new(); MAX_BATCH_ROWS + 1];
    assert!(c.offer(too_many).is_err());
    let mut other_parallelism = batch(0, 0, 0, &["a"], false);
    other_parallelism.parallelism = 3;
    assert!(matches!(
        c.offer(other_parallelism),
        Err(CollectError::InvalidBatch { .. })
    ));
}
