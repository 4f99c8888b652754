//! Fencing of job-scoped RPCs (Flink's `JobMasterId`): a TaskManager remembers, per
//! job, the fencing token of the JobMaster that deployed its tasks, and accepts
//! `CancelTask`, `ReleaseJob`, `ReleasePartitions`, `TriggerCheckpoint` and
//! `NotifyCheckpoint` of that job only with the same token. A peer that merely knows a
//! job id (it is listed by the REST API) cannot cancel or release the job's tasks.

use std::collections::HashMap;
use thiserror::Error;

/// Why a job-scoped RPC or a deployment is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FencingError {
    /// The token does not match the one that deployed the job here.
    #[error("job {job} on this TaskManager was deployed by another JobMaster: the request's JobMaster id does not match, so it is refused")]
    Mismatch {
        /// The job.
        job: String,
    },
    /// A deployment without a token.
    #[error("the deployment of job {job} carries no JobMaster id")]
    Missing {
        /// The job.
        job: String,
    },
}

/// The fencing token of each job with tasks or code on this TaskManager.
#[derive(Debug, Default)]
pub struct JobFencing {
    tokens: HashMap<String, String>,
}

impl JobFencing {
    /// Admits a deployment of `job` by the JobMaster with `token`: the first one sets
    /// the job's token; a later one must carry the same while the job has tasks here
    /// (`job_is_live`), else it replaces it (a new JobMaster of the job).
    pub fn admit_deployment(&mut self, job: &str, token: &str, job_is_live: bool) -> Result<(), FencingError> {
        if token.is_empty() {
            return Err(FencingError::Missing { job: job.to_string() });
        }
        match self.tokens.get(job) {
            Some(t) if t == token => Ok(()),
            Some(_) if job_is_live => Err(FencingError::Mismatch { job: job.to_string() }),
            _ => {
                self.tokens.insert(job.to_string(), token.to_string());
                Ok(())
            }
        }
    }

    /// Accepts a job-scoped request with `token` for `job`. A job without a token here
    /// has nothing on this TaskManager a request could affect, so it passes.
    pub fn check(&self, job: &str, token: &str) -> Result<(), FencingError> {
        match self.tokens.get(job) {
            Some(t) if t != token => Err(FencingError::Mismatch { job: job.to_string() }),
            _ => Ok(()),
        }
    }

    /// Forgets `job` (nothing of it is left here).
    pub fn forget(&mut self, job: &str) {
        self.tokens.remove(job);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_the_deploying_jobmasters_token_is_refused() {
        let mut f = JobFencing::default();
        f.admit_deployment("job", "t1", false).unwrap();
        assert_eq!(f.check("job", "t1"), Ok(()));
        for forged in ["", "t2"] {
            let err = f.check("job", forged).unwrap_err();
            assert!(err.to_string().contains("deployed by another JobMaster"), "{err}");
        }
        assert_eq!(f.check("other", ""), Ok(()));
    }

    #[test]
    fn a_second_jobmaster_cannot_deploy_into_a_live_job_but_may_after_it_is_released() {
        let mut f = JobFencing::default();
        assert!(matches!(
            f.admit_deployment("job", "", false),
            Err(FencingError::Missing { .. })
        ));
        f.admit_deployment("job", "t1", false).unwrap();
        f.admit_deployment("job", "t1", true).unwrap();
        assert!(matches!(
            f.admit_deployment("job", "t2", true),
            Err(FencingError::Mismatch { .. })
        ));
        f.admit_deployment("job", "t2", false).unwrap();
        assert!(f.check("job", "t1").is_err());
        f.forget("job");
        assert_eq!(f.check("job", "anything"), Ok(()));
    }
}
