//! Delivery of task state reports and checkpoint acknowledgements/declines to the
//! JobMaster.
//!
//! Reports go out one at a time in the order they were made, across all attempts: the
//! first failure the JobMaster hears of becomes the job's root cause, so a source's
//! real error must not be overtaken by its consumers' "producer released" errors. No
//! report holds the others back for long: every report's free text is bounded
//! ([`crate::report_text`]) before it is sent, and a report the JobMaster refuses
//! permanently (too large, invalid, or not of the job's JobMaster) is retried once with
//! a tighter bound, then logged and dropped. A transient failure (JobManager
//! unreachable) is retried for up to [`MAX_ATTEMPTS`] × [`RETRY_DELAY`]; the reports
//! behind it wait, as they would fail the same way.

use crate::checkpointing::Report;
use crate::report_text::{MAX_REPORT_TEXT_BYTES, RETRY_REPORT_TEXT_BYTES};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tonic::transport::Channel;
use tonic::Code;
use weir_rpc::job_master_gateway_client::JobMasterGatewayClient;

/// Attempts to deliver one report while the JobManager fails transiently.
pub const MAX_ATTEMPTS: u32 = 50;

/// The pause between two transient failures.
pub const RETRY_DELAY: Duration = Duration::from_millis(200);

/// What to do after a failed delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    /// Wait and send the same report again.
    Retry,
    /// Send it again at once with its text cut to [`RETRY_REPORT_TEXT_BYTES`].
    RetryTruncated,
    /// Log it and drop it.
    GiveUp,
}

/// Whether a gRPC status means the JobMaster will never take this report as it is
/// (`PermissionDenied`: the report's JobMaster id is not that of the job's JobMaster,
/// which replaced the one that deployed the attempt).
pub fn is_permanent(code: Code) -> bool {
    matches!(
        code,
        Code::OutOfRange | Code::ResourceExhausted | Code::InvalidArgument | Code::PermissionDenied
    )
}

/// The step after delivery attempt `attempt` (0-based) failed with `code`, when the
/// report was already retried truncated or not.
pub fn next_step(code: Code, attempt: u32, retried_truncated: bool) -> NextStep {
    if is_permanent(code) {
        if retried_truncated {
            NextStep::GiveUp
        } else {
            NextStep::RetryTruncated
        }
    } else if attempt + 1 >= MAX_ATTEMPTS {
        NextStep::GiveUp
    } else {
        NextStep::Retry
    }
}

/// Delivers reports in order until the channel closes.
pub async fn run_reporter(
    jobmanager_rpc: String,
    tls: Option<std::sync::Arc<weir_security::InternalTls>>,
    mut reports: UnboundedReceiver<Report>,
) {
    let endpoint = match weir_rpc::tls::endpoint(&jobmanager_rpc, tls.as_deref(), Duration::from_secs(2)) {
        Ok(e) => e,
        Err(e) => {
            tracing::error!("cannot report to the JobManager at {jobmanager_rpc}: {e}");
            return;
        }
    };
    let mut client = JobMasterGatewayClient::new(endpoint.connect_lazy());
    while let Some(report) = reports.recv().await {
        deliver(&mut client, report).await;
    }
}

async fn send(client: &mut JobMasterGatewayClient<Channel>, report: Report) -> Result<(), tonic::Status> {
    match report {
        Report::State(s) => client.update_task_execution_state(*s).await.map(|_| ()),
        Report::Acknowledge(a) => client.acknowledge_checkpoint(a).await.map(|_| ()),
        Report::Decline(d) => client.decline_checkpoint(d).await.map(|_| ()),
    }
}

async fn deliver(client: &mut JobMasterGatewayClient<Channel>, mut report: Report) {
    if report.bound_text(MAX_REPORT_TEXT_BYTES) {
        tracing::warn!(
            "report of attempt {} carried more than {MAX_REPORT_TEXT_BYTES} bytes of text; sending it truncated",
            report.attempt_id()
        );
    }
    let mut retried_truncated = false;
    for attempt in 0..MAX_ATTEMPTS {
        let status = match send(client, report.clone()).await {
            Ok(()) => return,
            Err(status) => status,
        };
        match next_step(status.code(), attempt, retried_truncated) {
            NextStep::Retry => {
                tracing::debug!(
                    "report of attempt {} to the JobMaster failed (try {attempt}): {status}",
                    report.attempt_id()
                );
                tokio::time::sleep(RETRY_DELAY).await;
            }
            NextStep::RetryTruncated => {
                tracing::warn!(
                    "the JobMaster refused the report of attempt {} ({}); retrying with its text cut to {RETRY_REPORT_TEXT_BYTES} bytes",
                    report.attempt_id(),
                    status.code()
                );
                report.bound_text(RETRY_REPORT_TEXT_BYTES);
                retried_truncated = true;
            }
            NextStep::GiveUp => break,
        }
    }
    tracing::error!(
        "report of attempt {} could not be delivered to the JobMaster and is dropped: {}",
        report.attempt_id(),
        crate::report_text::bound_text(&format!("{report:?}"), RETRY_REPORT_TEXT_BYTES)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_too_large_is_retried_once_truncated_then_given_up() {
        assert_eq!(next_step(Code::ResourceExhausted, 0, false), NextStep::RetryTruncated);
        assert_eq!(next_step(Code::OutOfRange, 1, true), NextStep::GiveUp);
        assert_eq!(next_step(Code::InvalidArgument, 0, false), NextStep::RetryTruncated);
    }

    #[test]
    fn a_report_refused_for_its_jobmaster_id_is_not_retried_as_if_the_jobmanager_were_away() {
        assert_eq!(next_step(Code::PermissionDenied, 0, false), NextStep::RetryTruncated);
        assert_eq!(next_step(Code::PermissionDenied, 0, true), NextStep::GiveUp);
    }

    #[test]
    fn an_unreachable_jobmanager_is_retried_until_the_attempts_run_out() {
        assert_eq!(next_step(Code::Unavailable, 0, false), NextStep::Retry);
        assert_eq!(next_step(Code::Unavailable, MAX_ATTEMPTS - 2, true), NextStep::Retry);
        assert_eq!(next_step(Code::Unavailable, MAX_ATTEMPTS - 1, false), NextStep::GiveUp);
    }
}
