//! The snapshot of one task (subtask of a chain) at one checkpoint, and how a restored
//! task finds the part of it that belongs to each of its operators.
//!
//! Format (version 1, documented in ARCHITECTURE.md): the magic bytes `WEIRSTAT`, a
//! big-endian u32 version, then the bincode encoding of [`TaskSnapshot`]: per
//! operator (by [`OperatorId`]) its keyed state per key group (`(state name, bytes)`
//! pairs; timers are the reserved names `_timers/event` and `_timers/processing`),
//! its operator list state and its union list state (each a list of opaque elements
//! per state name).
//!
//! Redistribution on restore ([`RestoredState`]): keyed state is filtered by the new
//! subtask's key-group range; list state elements of all old subtasks are dealt out
//! round-robin (element `j` of the concatenation in old-subtask order goes to new
//! subtask `j % parallelism`) when the parallelism changed, and kept as they are
//! otherwise; union state goes whole to every subtask.

use crate::error::StateError;
use crate::heap::KeyGroupSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use weir_core::ids::OperatorId;
use weir_core::KeyGroupRange;

const MAGIC: &[u8; 8] = b"WEIRSTAT";
/// The snapshot format version this build writes and reads.
pub const TASK_SNAPSHOT_VERSION: u32 = 1;

/// The state of one operator in one subtask.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorSnapshot {
    /// Keyed state and timers, per key group.
    pub keyed: Vec<(u32, KeyGroupSnapshot)>,
    /// Operator list state: redistributed round-robin on rescale.
    pub list: BTreeMap<String, Vec<Vec<u8>>>,
    /// Union list state: every subtask gets all elements on restore.
    pub union: BTreeMap<String, Vec<Vec<u8>>>,
}

impl OperatorSnapshot {
    /// True when it holds no state at all.
    pub fn is_empty(&self) -> bool {
        self.keyed.iter().all(|(_, g)| g.is_empty()) && self.list.is_empty() && self.union.is_empty()
    }
}

/// The state of every stateful operator of one subtask's chain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSnapshot {
    /// Per operator.
    pub operators: BTreeMap<OperatorId, OperatorSnapshot>,
}

impl TaskSnapshot {
    /// True when no operator has state.
    pub fn is_empty(&self) -> bool {
        self.operators.values().all(OperatorSnapshot::is_empty)
    }

    /// The versioned bytes.
    pub fn encode(&self) -> Result<Vec<u8>, StateError> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&TASK_SNAPSHOT_VERSION.to_be_bytes());
        weir_core::codec::encode_into(&mut out, self)?;
        Ok(out)
    }

    /// Reads bytes written by [`encode`](Self::encode); anything else is a
    /// [`StateError::CorruptSnapshot`].
    pub fn decode(bytes: &[u8]) -> Result<Self, StateError> {
        let corrupt = |reason: String| StateError::CorruptSnapshot(reason);
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(corrupt("not a Weir task snapshot (bad magic bytes)".into()));
        }
        let version = u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != TASK_SNAPSHOT_VERSION {
            return Err(corrupt(format!(
                "snapshot format version {version} is not supported (this build reads {TASK_SNAPSHOT_VERSION})"
            )));
        }
        weir_core::codec::decode(&bytes[12..]).map_err(|e| corrupt(e.to_string()))
    }
}

/// The state a restored subtask starts from: the decoded snapshots of the old subtasks
/// it was assigned, and where it stands now.
#[derive(Debug, Clone, Default)]
pub struct RestoredState {
    /// The checkpoint restored from.
    pub checkpoint_id: u64,
    /// The old subtasks' snapshots, in old-subtask order.
    pub snapshots: Vec<TaskSnapshot>,
    /// True when the parallelism changed (list state is redistributed).
    pub rescaled: bool,
    /// This subtask's index.
    pub subtask_index: u32,
    /// The new parallelism.
    pub parallelism: u32,
}

impl RestoredState {
    /// What subtask `subtask_index` of `parallelism` restores from checkpoint
    /// `checkpoint_id` when `old` are the snapshots of every old subtask, in old-subtask
    /// order, dealt out as a restore assigns them: at the same parallelism only its own
    /// old subtask's, at another all of them, to be redistributed.
    pub fn of_subtask(
        checkpoint_id: u64,
        old: impl IntoIterator<Item = TaskSnapshot>,
        subtask_index: u32,
        parallelism: u32,
    ) -> Self {
        let old: Vec<TaskSnapshot> = old.into_iter().collect();
        let rescaled = old.len() as u32 != parallelism;
        let snapshots = old
            .into_iter()
            .enumerate()
            .filter(|(i, _)| rescaled || *i as u32 == subtask_index)
            .map(|(_, s)| s)
            .collect();
        Self {
            checkpoint_id,
            snapshots,
            rescaled,
            subtask_index,
            parallelism,
        }
    }

    /// The state of `operator` for this subtask: keyed state of `range`, list state
    /// dealt out, union state whole; `None` when no snapshot has state of it.
    pub fn operator(&self, operator: OperatorId, range: KeyGroupRange) -> Option<OperatorSnapshot> {
        let parts: Vec<&OperatorSnapshot> = self
            .snapshots
            .iter()
            .filter_map(|s| s.operators.get(&operator))
            .collect();
        if parts.is_empty() {
            return None;
        }
        let mut out = OperatorSnapshot::default();
        for part in &parts {
            out.keyed
                .extend(part.keyed.iter().filter(|(kg, _)| range.contains(*kg)).cloned());
            for (name, elements) in &part.union {
                out.union
                    .entry(name.clone())
                    .or_default()
                    .extend(elements.iter().cloned());
            }
        }
        let mut positions: BTreeMap<&String, usize> = BTreeMap::new();
        for part in &parts {
            for (name, elements) in &part.list {
                let kept = out.list.entry(name.clone()).or_default();
                for element in elements {
                    let j = positions.entry(name).or_insert(0);
                    if !self.rescaled || (*j as u64 % self.parallelism.max(1) as u64) == self.subtask_index as u64 {
                        kept.push(element.clone());
                    }
                    *j += 1;
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(n: u128) -> OperatorId {
        OperatorId(n)
    }

    fn snapshot(list: &[u8], union: &[u8], groups: &[u32]) -> TaskSnapshot {
        let mut s = OperatorSnapshot::default();
        s.list.insert("offsets".into(), list.iter().map(|b| vec![*b]).collect());
        s.union
            .insert("config".into(), union.iter().map(|b| vec![*b]).collect());
        s.keyed = groups
            .iter()
            .map(|g| (*g, vec![("count".to_string(), vec![*g as u8])]))
            .collect();
        let mut t = TaskSnapshot::default();
        t.operators.insert(op(7), s);
        t
    }

    #[test]
    fn a_snapshot_round_trips_through_its_versioned_bytes() {
        let s = snapshot(&[1, 2], &[9], &[0, 1, 2]);
        assert_eq!(TaskSnapshot::decode(&s.encode().unwrap()).unwrap(), s);
    }

    #[test]
    fn corrupt_truncated_or_foreign_bytes_are_clear_errors() {
        let bytes = snapshot(&[1], &[], &[0]).encode().unwrap();
        for bad in [&b"WEIR"[..], &b"NOTASNAPSHOT"[..], &bytes[..bytes.len() - 3]] {
            assert!(matches!(TaskSnapshot::decode(bad), Err(StateError::CorruptSnapshot(_))));
        }
        let mut future = bytes.clone();
        future[11] = 9;
        let err = TaskSnapshot::decode(&future).unwrap_err().to_string();
        assert!(err.contains("version 9 is not supported"), "{err}");
    }

    #[test]
    fn rescaling_from_two_to_three_deals_list_state_round_robin_and_filters_key_groups() {
        let old = vec![snapshot(&[1, 2, 3], &[9], &[0, 1]), snapshot(&[4, 5], &[8], &[2, 3])];
        let mut got_lists = Vec::new();
        for i in 0..3 {
            let r = RestoredState {
                checkpoint_id: 4,
                snapshots: old.clone(),
                rescaled: true,
                subtask_index: i,
                parallelism: 3,
            };
            let range = KeyGroupRange::for_subtask(4, 3, i);
            let s = r.operator(op(7), range).unwrap();
            assert!(s.keyed.iter().all(|(kg, _)| range.contains(*kg)));
            assert_eq!(s.union["config"], vec![vec![9], vec![8]]);
            got_lists.push(s.list["offsets"].clone());
        }
        assert_eq!(
            got_lists,
            vec![vec![vec![1], vec![4]], vec![vec![2], vec![5]], vec![vec![3]]]
        );
        assert_eq!(RestoredState::default().operator(op(7), KeyGroupRange::new(0, 3)), None);
    }

    #[test]
    fn without_rescaling_a_subtask_keeps_its_own_list_state() {
        let r = RestoredState {
            checkpoint_id: 1,
            snapshots: vec![snapshot(&[1, 2, 3], &[], &[5])],
            rescaled: false,
            subtask_index: 1,
            parallelism: 2,
        };
        let s = r.operator(op(7), KeyGroupRange::new(4, 7)).unwrap();
        assert_eq!(s.list["offsets"].len(), 3);
        assert_eq!(s.keyed.len(), 1);
    }
}
