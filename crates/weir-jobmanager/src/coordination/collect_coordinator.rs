//! The collect sink's operator coordinator (Flink's `CollectSinkOperatorCoordinator`):
//! the JobMaster's buffer of a SELECT's results between the sink subtasks, which
//! offer batches of rows over gRPC (`SendCollectBatch`), and the SQL client, which
//! pulls them over REST (`POST /jobs/:jid/coordinators/:operatorid`).
//!
//! Invariants:
//! - rows are numbered from 0 in the order they were accepted (the *offset*); the
//!   buffer holds the rows from `first_offset` on, which the client has not
//!   acknowledged yet; a request for offset `o` acknowledges every row before `o`;
//! - the buffer never grows past its byte capacity, except that an empty buffer takes
//!   one batch whatever its size: a full buffer refuses a batch (the sink waits and
//!   offers it again, which is the back pressure), it never drops one;
//! - each subtask's rows keep their order; a batch offered again (same attempt,
//!   offset below the rows already taken from it) is recognised and not taken twice;
//! - results are never handed out twice: a sink subtask that restarts after rows of an
//!   earlier attempt were accepted fails the results (Weir keeps no checkpointed
//!   result offset to resume from), instead of repeating them.
//!
//! A pure state machine, tested without threads.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use weir_core::collect_batch::CollectBatch;
use weir_core::ids::JobId;

/// The most rows one batch may carry.
pub const MAX_BATCH_ROWS: usize = 1 << 16;

/// The most row bytes one batch may carry (under gRPC's 4 MiB message limit).
pub const MAX_BATCH_BYTES: u64 = 3 << 20;

/// The largest buffer a sink may ask for.
pub const MAX_BUFFER_BYTES: u64 = 256 << 20;

/// What became of an offered batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferOutcome {
    /// Taken (or taken before: an offer sent again).
    Accepted,
    /// The buffer is full: offer it again later.
    Full,
}

/// Why a batch or a client request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollectError {
    /// The batch breaks the limits of the protocol.
    #[error("invalid collect batch from sink subtask {subtask}: {reason}")]
    InvalidBatch {
        /// The subtask.
        subtask: u32,
        /// What is wrong.
        reason: String,
    },
    /// A sink subtask restarted after rows of its earlier attempt were handed on.
    #[error(
        "The collect sink subtask {subtask} restarted (attempt {attempt}) after {rows} of its result rows were \
         accepted; Weir cannot resume a SELECT's results across a restart without repeating rows, so the query \
         fails. Run the SELECT again, or disable the restart strategy for it."
    )]
    SinkRestarted {
        /// The subtask.
        subtask: u32,
        /// Its new attempt number.
        attempt: u32,
        /// Rows its earlier attempt handed on.
        rows: u64,
    },
    /// A batch of an attempt older than the one the coordinator follows.
    #[error("collect batch of sink subtask {subtask} attempt {attempt} refused: attempt {current} replaced it")]
    StaleAttempt {
        /// The subtask.
        subtask: u32,
        /// The batch's attempt.
        attempt: u32,
        /// The attempt followed.
        current: u32,
    },
    /// The results failed before (see [`CollectError::SinkRestarted`]).
    #[error("{0}")]
    Failed(String),
    /// The client's version is not this result's.
    #[error("Unknown result version '{requested}' (the current one is '{current}').")]
    UnknownVersion {
        /// Asked for.
        requested: String,
        /// The coordinator's.
        current: String,
    },
    /// The client asks for rows it acknowledged before, or beyond the rows received.
    #[error("Offset {offset} cannot be served: the coordinator holds rows {first} to {end} (exclusive).")]
    OffsetOutOfRange {
        /// Asked for.
        offset: u64,
        /// The first row held.
        first: u64,
        /// One past the last row received.
        end: u64,
    },
}

/// An answer to a client (see `weir_rest::CoordinationResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectResults {
    /// The result's version.
    pub version: String,
    /// The rows from the requested offset.
    pub rows: Vec<String>,
    /// Every sink subtask ended and no row follows these.
    pub end_of_results: bool,
}

#[derive(Debug, Clone, Default)]
struct SubtaskProgress {
    attempt_number: u32,
    accepted: u64,
    ended: bool,
}

/// The coordinator of one collect sink of one job.
#[derive(Debug)]
pub struct CollectSinkOperatorCoordinator {
    version: String,
    capacity_bytes: u64,
    rows: VecDeque<String>,
    buffered_bytes: u64,
    first_offset: u64,
    subtasks: Vec<SubtaskProgress>,
    failure: Option<String>,
}

impl CollectSinkOperatorCoordinator {
    /// A coordinator for a sink of `parallelism` subtasks keeping `capacity_bytes`
    /// (capped to [`MAX_BUFFER_BYTES`]); `version` names this result.
    pub fn new(version: String, parallelism: u32, capacity_bytes: u64) -> Self {
        Self {
            version,
            capacity_bytes: capacity_bytes.clamp(1, MAX_BUFFER_BYTES),
            rows: VecDeque::new(),
            buffered_bytes: 0,
            first_offset: 0,
            subtasks: vec![SubtaskProgress::default(); parallelism as usize],
            failure: None,
        }
    }

    /// Bytes of rows held.
    pub fn buffered_bytes(&self) -> u64 {
        self.buffered_bytes
    }

    /// Why the results failed, if they did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Checks a batch against the protocol's limits before anything is decided.
    pub fn check(offer: &CollectBatch) -> Result<(), CollectError> {
        let invalid = |reason: String| CollectError::InvalidBatch {
            subtask: offer.subtask_index,
            reason,
        };
        if offer.parallelism == 0 || offer.subtask_index >= offer.parallelism {
            return Err(invalid(format!(
                "subtask index {} is not below the parallelism {}",
                offer.subtask_index, offer.parallelism
            )));
        }
        if offer.rows.len() > MAX_BATCH_ROWS {
            return Err(invalid(format!("{} rows, at most {MAX_BATCH_ROWS}", offer.rows.len())));
        }
        if offer.row_bytes() > MAX_BATCH_BYTES {
            return Err(invalid(format!(
                "{} bytes of rows, at most {MAX_BATCH_BYTES}",
                offer.row_bytes()
            )));
        }
        if offer.buffer_bytes == 0 || offer.buffer_bytes > MAX_BUFFER_BYTES {
            return Err(invalid(format!(
                "a buffer of {} bytes, between 1 and {MAX_BUFFER_BYTES}",
                offer.buffer_bytes
            )));
        }
        Ok(())
    }

    /// Takes `offer` into the buffer if there is room.
    pub fn offer(&mut self, offer: CollectBatch) -> Result<OfferOutcome, CollectError> {
        Self::check(&offer)?;
        if let Some(f) = &self.failure {
            return Err(CollectError::Failed(f.clone()));
        }
        if offer.parallelism as usize != self.subtasks.len() {
            return Err(CollectError::InvalidBatch {
                subtask: offer.subtask_index,
                reason: format!(
                    "parallelism {} where the sink started with {}",
                    offer.parallelism,
                    self.subtasks.len()
                ),
            });
        }
        let progress = &mut self.subtasks[offer.subtask_index as usize];
        if offer.attempt_number < progress.attempt_number {
            return Err(CollectError::StaleAttempt {
                subtask: offer.subtask_index,
                attempt: offer.attempt_number,
                current: progress.attempt_number,
            });
        }
        if offer.attempt_number > progress.attempt_number {
            if progress.accepted > 0 {
                let e = CollectError::SinkRestarted {
                    subtask: offer.subtask_index,
                    attempt: offer.attempt_number,
                    rows: progress.accepted,
                };
                self.failure = Some(e.to_string());
                self.rows.clear();
                self.buffered_bytes = 0;
                return Err(e);
            }
            *progress = SubtaskProgress {
                attempt_number: offer.attempt_number,
                ..SubtaskProgress::default()
            };
        }
        let count = offer.rows.len() as u64;
        if offer.offset < progress.accepted {
            return if offer.offset + count == progress.accepted {
                Ok(OfferOutcome::Accepted)
            } else {
                Err(CollectError::InvalidBatch {
                    subtask: offer.subtask_index,
                    reason: format!(
                        "rows {}..{} overlap the {} rows taken before",
                        offer.offset,
                        offer.offset + count,
                        progress.accepted
                    ),
                })
            };
        }
        if offer.offset > progress.accepted {
            return Err(CollectError::InvalidBatch {
                subtask: offer.subtask_index,
                reason: format!(
                    "rows from {} where {} were taken: rows are missing",
                    offer.offset, progress.accepted
                ),
            });
        }
        if progress.ended {
            return Err(CollectError::InvalidBatch {
                subtask: offer.subtask_index,
                reason: "rows after the end of its results".into(),
            });
        }
        let bytes = offer.row_bytes();
        if self.buffered_bytes > 0 && self.buffered_bytes + bytes > self.capacity_bytes {
            return Ok(OfferOutcome::Full);
        }
        progress.accepted += count;
        progress.ended = offer.end_of_results;
        self.buffered_bytes += bytes;
        self.rows.extend(offer.rows);
        Ok(OfferOutcome::Accepted)
    }

    /// Answers a client asking for the rows from `offset` (acknowledging every row
    /// before it): at most half the buffer's bytes of rows, at least one.
    pub fn request(&mut self, version: &str, offset: u64) -> Result<CollectResults, CollectError> {
        if !version.is_empty() && version != self.version {
            return Err(CollectError::UnknownVersion {
                requested: version.to_string(),
                current: self.version.clone(),
            });
        }
        if let Some(f) = &self.failure {
            return Err(CollectError::Failed(f.clone()));
        }
        let end = self.first_offset + self.rows.len() as u64;
        if offset < self.first_offset || offset > end {
            return Err(CollectError::OffsetOutOfRange {
                offset,
                first: self.first_offset,
                end,
            });
        }
        while self.first_offset < offset {
            if let Some(r) = self.rows.pop_front() {
                self.buffered_bytes -= r.len() as u64;
            }
            self.first_offset += 1;
        }
        let budget = (self.capacity_bytes / 2).max(1);
        let mut taken = 0u64;
        let mut rows = Vec::new();
        for r in &self.rows {
            if !rows.is_empty() && taken + r.len() as u64 > budget {
                break;
            }
            taken += r.len() as u64;
            rows.push(r.clone());
        }
        let end_of_results = rows.len() == self.rows.len() && self.subtasks.iter().all(|s| s.ended);
        Ok(CollectResults {
            version: self.version.clone(),
            rows,
            end_of_results,
        })
    }
}

/// The coordinators of every job, by job and operator id (32 lower-case hex digits).
#[derive(Default)]
pub struct CollectCoordinators {
    inner: Mutex<HashMap<(JobId, String), CollectSinkOperatorCoordinator>>,
}

impl CollectCoordinators {
    /// The coordinators, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<(JobId, String), CollectSinkOperatorCoordinator>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
#[path = "collect_coordinator_tests.rs"]
mod tests;
