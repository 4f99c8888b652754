//! The ResourceManager's view of the cluster: registered TaskManagers, their slots and
//! which job holds each slot, when each TaskManager was last heard from and what its
//! last heartbeat said about its process (CPU, memory, network buffers, log files).
//!
//! A plain data structure driven by events (register, heartbeat, allocate, release,
//! remove); no I/O. Allocation is all-or-nothing, so a job never holds part of what it
//! needs while waiting for the rest.

use std::collections::BTreeMap;
use weir_core::ids::JobId;
use weir_rpc::{Hardware, LogFile, MemoryConfiguration, NetworkMemory, ProcessMetrics};

/// What a TaskManager told us when it registered.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskManagerRegistration {
    /// Stable id (32 hex chars).
    pub resource_id: String,
    /// host:port of its TaskExecutorGateway.
    pub rpc_address: String,
    /// host:port of its data server.
    pub data_address: String,
    /// Number of slots.
    pub num_slots: u32,
    /// Memory components in bytes.
    pub memory: MemoryConfiguration,
    /// The machine.
    pub hardware: Hardware,
}

/// One slot of one TaskManager.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotRef {
    /// The TaskManager.
    pub resource_id: String,
    /// The slot index on it.
    pub slot_index: u32,
}

/// What a TaskManager's heartbeat says about its process.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskManagerStatus {
    /// CPU, memory and threads; absent before the first heartbeat that carried them.
    pub process: Option<ProcessMetrics>,
    /// Its network buffer pool.
    pub network: Option<NetworkMemory>,
    /// The files it logs to.
    pub logs: Vec<LogFile>,
}

/// A registered TaskManager and its slots.
#[derive(Debug, Clone)]
pub struct TaskManagerEntry {
    /// Its registration.
    pub registration: TaskManagerRegistration,
    /// The job holding each slot, if any.
    pub slots: Vec<Option<JobId>>,
    /// Last heartbeat (or registration), ms since the epoch.
    pub last_heartbeat_ms: i64,
    /// What its last heartbeat reported about its process.
    pub status: TaskManagerStatus,
    /// The random id of this registration (Flink's `InstanceID`); its heartbeats must
    /// carry it. Empty: none was given, and no heartbeat is accepted.
    pub instance_id: String,
}

/// What became of a heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeartbeatOutcome {
    /// From the live registration: recorded.
    Accepted,
    /// No TaskManager of that resource id is registered.
    Unknown,
    /// The resource id is registered, but the heartbeat does not carry its live
    /// registration's instance id (a stale or forged heartbeat): ignored.
    WrongInstance,
}

impl TaskManagerEntry {
    /// Number of free slots.
    pub fn free_slots(&self) -> u32 {
        self.slots.iter().filter(|s| s.is_none()).count() as u32
    }
}

/// Registered TaskManagers by resource id.
#[derive(Debug, Default)]
pub struct SlotTable {
    tms: BTreeMap<String, TaskManagerEntry>,
}

impl SlotTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or re-registers) a TaskManager; returns the jobs that held slots on a
    /// previous registration under the same id (they lost them).
    pub fn register(&mut self, registration: TaskManagerRegistration, now_ms: i64) -> Vec<JobId> {
        self.register_instance(registration, String::new(), now_ms)
    }

    /// [`SlotTable::register`] with the registration's instance id, which its
    /// heartbeats must carry.
    pub fn register_instance(
        &mut self,
        registration: TaskManagerRegistration,
        instance_id: String,
        now_ms: i64,
    ) -> Vec<JobId> {
        let lost = self.remove(&registration.resource_id);
        let slots = vec![None; registration.num_slots as usize];
        self.tms.insert(
            registration.resource_id.clone(),
            TaskManagerEntry {
                registration,
                slots,
                last_heartbeat_ms: now_ms,
                status: TaskManagerStatus::default(),
                instance_id,
            },
        );
        lost
    }

    /// Removes a TaskManager; returns the jobs that held slots on it.
    pub fn remove(&mut self, resource_id: &str) -> Vec<JobId> {
        let Some(tm) = self.tms.remove(resource_id) else {
            return Vec::new();
        };
        let mut jobs: Vec<JobId> = tm.slots.into_iter().flatten().collect();
        jobs.sort();
        jobs.dedup();
        jobs
    }

    /// Records a heartbeat with what it reported, if it carries the live
    /// registration's instance id.
    pub fn heartbeat(
        &mut self,
        resource_id: &str,
        instance_id: &str,
        status: TaskManagerStatus,
        now_ms: i64,
    ) -> HeartbeatOutcome {
        match self.tms.get_mut(resource_id) {
            Some(tm) if tm.instance_id.is_empty() || tm.instance_id != instance_id => HeartbeatOutcome::WrongInstance,
            Some(tm) => {
                tm.last_heartbeat_ms = now_ms;
                tm.status = status;
                HeartbeatOutcome::Accepted
            }
            None => HeartbeatOutcome::Unknown,
        }
    }

    /// TaskManagers not heard from for longer than `timeout_ms`.
    pub fn expired(&self, now_ms: i64, timeout_ms: i64) -> Vec<String> {
        self.tms
            .values()
            .filter(|t| now_ms - t.last_heartbeat_ms > timeout_ms)
            .map(|t| t.registration.resource_id.clone())
            .collect()
    }

    /// The entry of a TaskManager.
    pub fn get(&self, resource_id: &str) -> Option<&TaskManagerEntry> {
        self.tms.get(resource_id)
    }

    /// Every TaskManager, by id.
    pub fn iter(&self) -> impl Iterator<Item = &TaskManagerEntry> {
        self.tms.values()
    }

    /// Number of registered TaskManagers.
    pub fn num_taskmanagers(&self) -> usize {
        self.tms.len()
    }

    /// Slots of all TaskManagers.
    pub fn total_slots(&self) -> u32 {
        self.tms.values().map(|t| t.registration.num_slots).sum()
    }

    /// Slots held by no job.
    pub fn free_slots(&self) -> u32 {
        self.tms.values().map(|t| t.free_slots()).sum()
    }

    /// Allocates `n` free slots to `job`, spreading over TaskManagers (the one with most
    /// free slots first, round-robin); `None` (and nothing allocated) if fewer are free.
    pub fn allocate(&mut self, job: JobId, n: u32) -> Option<Vec<SlotRef>> {
        if self.free_slots() < n {
            return None;
        }
        let mut free: Vec<(String, Vec<u32>)> = self
            .tms
            .values()
            .map(|t| {
                let idx = t
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.is_none())
                    .map(|(i, _)| i as u32)
                    .collect();
                (t.registration.resource_id.clone(), idx)
            })
            .filter(|(_, idx): &(String, Vec<u32>)| !idx.is_empty())
            .collect();
        free.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let mut out = Vec::with_capacity(n as usize);
        let mut round = 0usize;
        while out.len() < n as usize {
            let mut progressed = false;
            for (tm, idx) in &free {
                if out.len() == n as usize {
                    break;
                }
                if let Some(&slot) = idx.get(round) {
                    out.push(SlotRef {
                        resource_id: tm.clone(),
                        slot_index: slot,
                    });
                    progressed = true;
                }
            }
            if !progressed {
                return None;
            }
            round += 1;
        }
        for s in &out {
            if let Some(slot) = self
                .tms
                .get_mut(&s.resource_id)
                .and_then(|t| t.slots.get_mut(s.slot_index as usize))
            {
                *slot = Some(job);
            }
        }
        Some(out)
    }

    /// Frees `slot` if `job` holds it (a finished stage of a batch job).
    pub fn release_slot(&mut self, job: JobId, slot: &SlotRef) {
        if let Some(s) = self
            .tms
            .get_mut(&slot.resource_id)
            .and_then(|t| t.slots.get_mut(slot.slot_index as usize))
        {
            if *s == Some(job) {
                *s = None;
            }
        }
    }

    /// Frees every slot of `job`; returns the TaskManagers that held some.
    pub fn release_job(&mut self, job: JobId) -> Vec<String> {
        let mut tms = Vec::new();
        for t in self.tms.values_mut() {
            let mut held = false;
            for s in t.slots.iter_mut() {
                if *s == Some(job) {
                    *s = None;
                    held = true;
                }
            }
            if held {
                tms.push(t.registration.resource_id.clone());
            }
        }
        tms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(id: &str, slots: u32) -> TaskManagerRegistration {
        TaskManagerRegistration {
            resource_id: id.into(),
            rpc_address: format!("{id}:1"),
            data_address: format!("{id}:2"),
            num_slots: slots,
            memory: MemoryConfiguration::default(),
            hardware: Hardware::default(),
        }
    }

    #[test]
    fn allocation_spreads_over_taskmanagers_and_is_all_or_nothing() {
        let mut t = SlotTable::new();
        t.register(reg("a", 2), 0);
        t.register(reg("b", 2), 0);
        let job = JobId(1);
        let slots = t.allocate(job, 4).unwrap();
        let on_a = slots.iter().filter(|s| s.resource_id == "a").count();
        assert_eq!((on_a, slots.len()), (2, 4));
        assert_eq!(t.free_slots(), 0);
        assert_eq!(t.allocate(JobId(2), 1), None);
        assert_eq!(t.release_job(job), vec!["a".to_string(), "b".to_string()]);
        assert_eq!(t.free_slots(), 4);
        assert_eq!(t.allocate(JobId(3), 5), None);
        assert_eq!(t.free_slots(), 4);
    }

    #[test]
    fn two_slots_on_two_taskmanagers_take_one_from_each() {
        let mut t = SlotTable::new();
        t.register(reg("a", 2), 0);
        t.register(reg("b", 2), 0);
        let slots = t.allocate(JobId(1), 2).unwrap();
        assert_ne!(slots[0].resource_id, slots[1].resource_id);
    }

    #[test]
    fn removing_a_taskmanager_reports_the_jobs_that_held_its_slots() {
        let mut t = SlotTable::new();
        t.register(reg("a", 2), 0);
        t.allocate(JobId(7), 2).unwrap();
        assert_eq!(t.remove("a"), vec![JobId(7)]);
        assert_eq!(t.total_slots(), 0);
        assert!(t.remove("a").is_empty());
    }

    #[test]
    fn heartbeats_keep_a_taskmanager_alive_and_silence_expires_it() {
        let mut t = SlotTable::new();
        t.register_instance(reg("a", 1), "i1".into(), 0);
        t.register_instance(reg("b", 1), "i2".into(), 0);
        let ok = TaskManagerStatus::default();
        assert_eq!(t.heartbeat("a", "i1", ok.clone(), 40_000), HeartbeatOutcome::Accepted);
        assert_eq!(t.heartbeat("zzz", "i1", ok.clone(), 40_000), HeartbeatOutcome::Unknown);
        assert_eq!(t.expired(60_000, 50_000), vec!["b".to_string()]);
    }

    #[test]
    fn a_heartbeat_spoofing_a_registered_id_without_its_instance_id_is_ignored() {
        let mut t = SlotTable::new();
        t.register_instance(reg("a", 1), "secret".into(), 0);
        t.register(reg("b", 1), 0);
        let forged = TaskManagerStatus {
            logs: vec![LogFile {
                name: "forged.log".into(),
                size: 1,
                mtime_ms: 1,
            }],
            ..Default::default()
        };
        for (id, instance) in [("a", ""), ("a", "guess"), ("b", "")] {
            assert_eq!(
                t.heartbeat(id, instance, forged.clone(), 40_000),
                HeartbeatOutcome::WrongInstance
            );
            assert!(t.get(id).unwrap().status.logs.is_empty());
            assert_eq!(t.get(id).unwrap().last_heartbeat_ms, 0);
        }
    }
}
