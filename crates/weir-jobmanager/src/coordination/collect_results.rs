//! Where the JobManager keeps its collect sink coordinators
//! ([`crate::coordination::collect_coordinator`]), one per job and sink operator, and the two entry
//! points: a sink subtask's batch (gRPC) and a client's coordination request (REST).
//!
//! A coordinator is created by its sink's first batch, which names the sink's
//! parallelism and buffer size (as Flink's operator factory configures its
//! coordinator). Before that, a request for an operator of the job's graph is answered
//! with no rows; an operator outside the graph has no coordinator (404). The
//! coordinators have their own lock, taken after the JobManager's when both are held.

use crate::coordination::collect_coordinator::{CollectError, CollectSinkOperatorCoordinator, OfferOutcome};
use crate::jobmanager::JobManager;
use weir_core::collect_batch::CollectBatch;
use weir_core::ids::JobId;
use weir_rest::no_coordinator;
use weir_rest::{CoordinationRequest, CoordinationResponse, RestError};

/// Why the JobManager refused a sink's batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollectBatchRefused {
    /// No such job.
    #[error("job {0} is not known to this JobManager")]
    UnknownJob(JobId),
    /// The job has no such attempt, or no such operator.
    #[error("job {job} has no {what}")]
    NotOfTheJob {
        /// The job.
        job: JobId,
        /// The attempt or operator named.
        what: String,
    },
    /// The job ended.
    #[error("job {0} already ended")]
    JobEnded(JobId),
    /// The coordinator refused the batch.
    #[error(transparent)]
    Coordinator(#[from] CollectError),
}

impl JobManager {
    fn job_has_operator(&self, job: JobId, operator: &str) -> Option<bool> {
        let st = self.lock();
        let jm = st.jobs.get(&job)?;
        Some(
            jm.job_graph
                .vertices
                .iter()
                .flat_map(|v| &v.operators)
                .any(|o| o.operator_id().to_string() == operator),
        )
    }

    /// A sink subtask's batch for operator `operator` of `job`, from `attempt_id`.
    pub fn offer_collect_batch(
        &self,
        job: JobId,
        operator: &str,
        attempt_id: &str,
        offer: CollectBatch,
    ) -> Result<OfferOutcome, CollectBatchRefused> {
        CollectSinkOperatorCoordinator::check(&offer)?;
        {
            let st = self.lock();
            let jm = st.jobs.get(&job).ok_or(CollectBatchRefused::UnknownJob(job))?;
            if jm.is_globally_terminal() {
                return Err(CollectBatchRefused::JobEnded(job));
            }
            if jm.attempt_location(attempt_id).is_none() {
                return Err(CollectBatchRefused::NotOfTheJob {
                    job,
                    what: format!("running attempt {attempt_id}"),
                });
            }
        }
        if self.job_has_operator(job, operator) != Some(true) {
            return Err(CollectBatchRefused::NotOfTheJob {
                job,
                what: format!("operator {operator}"),
            });
        }
        let mut coordinators = self.collect.lock();
        let coordinator = coordinators.entry((job, operator.to_string())).or_insert_with(|| {
            CollectSinkOperatorCoordinator::new(JobId::random().to_string(), offer.parallelism, offer.buffer_bytes)
        });
        Ok(coordinator.offer(offer)?)
    }

    /// A client's request to the coordinator of `operator` of `job`.
    pub fn collect_request(
        &self,
        job: JobId,
        operator: &str,
        request: CoordinationRequest,
    ) -> Result<CoordinationResponse, RestError> {
        match self.job_has_operator(job, operator) {
            None => return Err(RestError::JobNotFound(job)),
            Some(false) => return Err(no_coordinator(operator)),
            Some(true) => {}
        }
        let mut coordinators = self.collect.lock();
        let Some(coordinator) = coordinators.get_mut(&(job, operator.to_string())) else {
            // The sink has not sent its first batch yet.
            if request.offset > 0 || !request.version.is_empty() {
                return Err(RestError::BadRequest(format!(
                    "Offset {} of version '{}' cannot be served: the sink has sent no rows yet.",
                    request.offset, request.version
                )));
            }
            return Ok(CoordinationResponse {
                version: String::new(),
                last_checkpointed_offset: 0,
                results: Vec::new(),
                end_of_results: false,
                failure: None,
            });
        };
        match coordinator.request(&request.version, request.offset) {
            Ok(r) => Ok(CoordinationResponse {
                last_checkpointed_offset: request.offset + r.rows.len() as u64,
                version: r.version,
                results: r.rows,
                end_of_results: r.end_of_results,
                failure: None,
            }),
            Err(CollectError::Failed(f)) => Ok(CoordinationResponse {
                version: String::new(),
                last_checkpointed_offset: request.offset,
                results: Vec::new(),
                end_of_results: false,
                failure: Some(f),
            }),
            Err(e) => Err(RestError::BadRequest(e.to_string())),
        }
    }
}
