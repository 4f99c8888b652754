//! The process's [`PartitionRegistry`]: every result partition this process produces
//! that a consumer may request by [`PartitionId`] — pipelined ones by their
//! subpartitions, blocking ones whole — and what a lookup finds (a subpartition, a
//! stored one, nothing yet, or gone with a reason). Read by in-process gates created
//! with `ChannelSpec::Local` and by the data server for remote requests.

use crate::network::buffer::{lock, wait_slice};
use crate::network::cancel::CancelToken;
use crate::network::error::NetworkError;
use crate::network::partition::blocking_partition::BlockingPartition;
use crate::network::partition::partition_id::PartitionId;
use crate::network::partition::stored_subpartition::LocalSubpartition;
use crate::network::partition::subpartition::{Subpartition, SubpartitionHandle};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a registry lookup found.
pub(crate) enum Lookup {
    /// The subpartition.
    Found(Arc<Subpartition>),
    /// The partition is not registered (yet, or any more).
    NotFound,
    /// The partition exists but has no such subpartition.
    NoSuchSubpartition(usize),
    /// The partition exists but cannot be read now (no buffers for its replay).
    Failed(String),
    /// The partition was registered and is gone (a blocking partition released once its
    /// consumers finished); the reason says why.
    Gone(String),
}

/// A registered partition: the subpartitions of a pipelined one (each read once), a
/// blocking one (each read replays it), or what is left of a released blocking one (why
/// it is gone, so that a late request is told instead of waiting for it).
enum Registered {
    Pipelined(Vec<SubpartitionHandle>),
    Blocking(Arc<BlockingPartition>),
    Released(String),
}

impl Registered {
    fn len(&self) -> usize {
        match self {
            Registered::Pipelined(h) => h.len(),
            Registered::Blocking(b) => b.num_subpartitions(),
            Registered::Released(_) => 0,
        }
    }

    /// Subpartition `index` (a new reader for a blocking partition), or `Ok(None)` when
    /// there is no such subpartition.
    fn subpartition(&self, index: u32) -> Result<Option<Arc<Subpartition>>, NetworkError> {
        match self {
            Registered::Pipelined(h) => Ok(h.get(index as usize).map(|h| h.inner.clone())),
            Registered::Blocking(b) if (index as usize) < b.num_subpartitions() => b.open_reader(index).map(Some),
            Registered::Blocking(_) | Registered::Released(_) => Ok(None),
        }
    }

    /// Subpartition `index` for a consumer in this process (a finished blocking
    /// partition is read in the consumer's thread), or `Ok(None)` when there is no
    /// such subpartition.
    fn local_subpartition(&self, index: u32) -> Result<Option<LocalSubpartition>, NetworkError> {
        match self {
            Registered::Blocking(b) if (index as usize) < b.num_subpartitions() => b.open_local_reader(index).map(Some),
            _ => Ok(self.subpartition(index)?.map(LocalSubpartition::Queue)),
        }
    }

    /// Why the partition is gone, for a released one.
    fn gone(&self) -> Option<&str> {
        match self {
            Registered::Released(reason) => Some(reason),
            _ => None,
        }
    }

    /// Releases a blocking partition's data; `Some` unless it was released before.
    fn release(self) -> Option<()> {
        match self {
            Registered::Blocking(b) => b.release(),
            Registered::Pipelined(_) => {}
            Registered::Released(_) => return None,
        }
        Some(())
    }
}

/// The partitions of one process that Local and Remote consumers can reach.
#[derive(Default)]
pub(crate) struct PartitionRegistry {
    partitions: Mutex<HashMap<PartitionId, Registered>>,
    registered: Condvar,
    /// Local consumers parked in [`wait_for`](Self::wait_for) (under `partitions`' lock).
    #[cfg(test)]
    waiting: std::sync::atomic::AtomicUsize,
}

impl PartitionRegistry {
    /// Registers `id`; fails if it is registered already.
    pub(crate) fn register(&self, id: PartitionId, handles: Vec<SubpartitionHandle>) -> Result<(), NetworkError> {
        if handles.is_empty() {
            return Err(NetworkError::InvalidArgument(format!(
                "partition {id} has no subpartitions"
            )));
        }
        let mut map = lock(&self.partitions);
        if map.contains_key(&id) {
            return Err(NetworkError::InvalidArgument(format!(
                "partition {id} is registered already"
            )));
        }
        map.insert(id, Registered::Pipelined(handles));
        drop(map);
        self.registered.notify_all();
        Ok(())
    }

    /// Registers the blocking partition `id`; fails if it is registered already.
    pub(crate) fn register_blocking(
        &self,
        id: PartitionId,
        partition: Arc<BlockingPartition>,
    ) -> Result<(), NetworkError> {
        let mut map = lock(&self.partitions);
        if map.contains_key(&id) {
            return Err(NetworkError::InvalidArgument(format!(
                "partition {id} is registered already"
            )));
        }
        map.insert(id, Registered::Blocking(partition));
        drop(map);
        self.registered.notify_all();
        Ok(())
    }

    /// Drops `id`; false when it is not registered.
    pub(crate) fn remove(&self, id: &PartitionId) -> bool {
        let removed = lock(&self.partitions).remove(id);
        removed.is_some_and(|r| r.gone().is_none() && r.release().is_some())
    }

    /// Releases the blocking partition `id` (its data and spill file go), remembering
    /// `reason` for later requests of it; false when no live blocking partition `id`
    /// is registered (a pipelined one stays).
    pub(crate) fn release_blocking(&self, id: &PartitionId, reason: &str) -> bool {
        let released = {
            let mut map = lock(&self.partitions);
            match map.get(id) {
                Some(Registered::Blocking(_)) => map.insert(id.clone(), Registered::Released(reason.to_owned())),
                _ => None,
            }
        };
        released.and_then(Registered::release).is_some()
    }

    /// Finds subpartition `subpartition` of `id`.
    pub(crate) fn lookup(&self, id: &PartitionId, subpartition: u32) -> Lookup {
        let map = lock(&self.partitions);
        let Some(registered) = map.get(id) else {
            return Lookup::NotFound;
        };
        if let Some(reason) = registered.gone() {
            return Lookup::Gone(reason.to_owned());
        }
        match registered.subpartition(subpartition) {
            Ok(Some(sub)) => Lookup::Found(sub),
            Ok(None) => Lookup::NoSuchSubpartition(registered.len()),
            Err(e) => Lookup::Failed(e.to_string()),
        }
    }

    /// Drops every partition of `job_id`.
    pub(crate) fn remove_job(&self, job_id: &str, below_attempt: u32) {
        let removed: Vec<_> = {
            let mut map = lock(&self.partitions);
            let ids: Vec<PartitionId> = map
                .keys()
                .filter(|id| id.job_id == job_id && id.attempt < below_attempt)
                .cloned()
                .collect();
            ids.into_iter().filter_map(|id| map.remove(&id)).collect()
        };
        for r in removed {
            r.release();
        }
    }

    /// Releases every blocking partition (its memory and spill file), which is then
    /// gone for `reason`; pipelined partitions stay.
    pub(crate) fn release_all_blocking(&self, reason: &str) {
        let released: Vec<Registered> = {
            let mut map = lock(&self.partitions);
            map.values_mut()
                .filter(|r| matches!(r, Registered::Blocking(_)))
                .map(|r| std::mem::replace(r, Registered::Released(reason.to_owned())))
                .collect()
        };
        for r in released {
            r.release();
        }
    }

    /// Number of registered partitions (released ones not counted).
    pub(crate) fn len(&self) -> usize {
        lock(&self.partitions).values().filter(|r| r.gone().is_none()).count()
    }

    /// The blocking partitions registered and not released.
    pub(crate) fn blocking_partitions(&self) -> Vec<Arc<BlockingPartition>> {
        lock(&self.partitions)
            .values()
            .filter_map(|r| match r {
                Registered::Blocking(b) => Some(b.clone()),
                _ => None,
            })
            .collect()
    }

    /// Local consumers waiting for a partition to be registered.
    #[cfg(test)]
    pub(crate) fn num_waiting(&self) -> usize {
        self.waiting.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits until `id` is registered (or `deadline`, or `cancel`) and returns the
    /// subpartition for a consumer in this process.
    pub(crate) fn wait_for(
        &self,
        id: &PartitionId,
        subpartition: u32,
        deadline: Instant,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<LocalSubpartition, NetworkError> {
        let mut map = lock(&self.partitions);
        loop {
            if let Some(registered) = map.get(id) {
                if let Some(reason) = registered.gone() {
                    return Err(NetworkError::PartitionGone {
                        partition: id.clone(),
                        subpartition,
                        address: "local".into(),
                        reason: reason.to_owned(),
                    });
                }
                return match registered.local_subpartition(subpartition)? {
                    Some(sub) => Ok(sub),
                    None => Err(NetworkError::InvalidArgument(format!(
                        "partition {id} has {} subpartitions, not {}",
                        registered.len(),
                        subpartition as u64 + 1
                    ))),
                };
            }
            if cancel.is_cancelled() {
                return Err(NetworkError::Cancelled);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(NetworkError::PartitionNotFound {
                    partition: id.clone(),
                    subpartition,
                    address: "local".into(),
                    timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                });
            }
            #[cfg(test)]
            self.waiting.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            map = wait_slice(&self.registered, map, deadline - now);
            #[cfg(test)]
            self.waiting.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for PartitionRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartitionRegistry")
            .field("partitions", &self.len())
            .finish()
    }
}
