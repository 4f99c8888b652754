//! The snapshot of one task (subtask of a chain) at one checkpoint, and how a restored
//! task finds the part of it that belongs to each of its operators.
//!
//! Format (version 2, documented in ARCHITECTURE.md): the magic bytes `WEIRSTAT`, a
//! big-endian u32 version, then the bincode encoding of [`TaskSnapshot`]: per
//! operator (by [`OperatorId`]) its keyed state per key group (`(state name, bytes)`
//! pairs; timers are the reserved names `_timers/event` and `_timers/processing`),
//! its operator list state and its union list state (each a list of opaque elements
//! per state name); then the input channel state of an unaligned checkpoint (per
//! input gate and channel, the record frames the channel delivered between the
//! task's snapshot and the channel's barrier). Version 1 (no channel state) is still
//! read.
//!
//! Redistribution on restore ([`RestoredState`]): keyed state is filtered by the new
//! subtask's key-group range; list state elements of all old subtasks are dealt out
//! round-robin (element `j` of the concatenation in old-subtask order goes to new
//! subtask `j % parallelism`) when the parallelism changed, and kept as they are
//! otherwise; union state goes whole to every subtask. Input channel state is not
//! redistributed: restoring it at another parallelism is refused
//! ([`RestoredState::take_channel_state`]).

use crate::error::StateError;
use crate::heap::KeyGroupSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use weir_core::ids::OperatorId;
use weir_core::KeyGroupRange;

const MAGIC: &[u8; 8] = b"WEIRSTAT";
/// The snapshot format version this build writes (it also reads version 1).
pub const TASK_SNAPSHOT_VERSION: u32 = 2;

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

/// The in-flight data of one input channel recorded for an unaligned checkpoint
/// (Flink's `InputChannelStateHandle`): record frames in `weir_core::codec`'s frame
/// format, in the order the channel delivered them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputChannelState {
    /// The task's input gate (0, or 1 for the second input of a two-input task).
    pub gate: u32,
    /// The channel within the gate.
    pub channel: u32,
    /// Concatenated record frames.
    pub frames: Vec<u8>,
}

/// The state of every stateful operator of one subtask's chain, and the in-flight
/// data of its input channels when the checkpoint was unaligned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSnapshot {
    /// Per operator.
    pub operators: BTreeMap<OperatorId, OperatorSnapshot>,
    /// Per input channel that delivered records after the snapshot and before its
    /// barrier (unaligned checkpoints only; channels without such records are left out).
    pub channel_state: Vec<InputChannelState>,
}

/// Version 1 of the format: operators only.
#[derive(Deserialize)]
struct TaskSnapshotV1 {
    operators: BTreeMap<OperatorId, OperatorSnapshot>,
}

impl TaskSnapshot {
    /// True when no operator has state and no channel state was recorded.
    pub fn is_empty(&self) -> bool {
        self.operators.values().all(OperatorSnapshot::is_empty) && self.channel_state.is_empty()
    }

    /// True when an operator has union list state (which every subtask restores).
    pub fn has_union_state(&self) -> bool {
        self.operators
            .values()
            .any(|o| o.union.values().any(|elements| !elements.is_empty()))
    }

    /// Bytes of recorded in-flight data (Flink's `persisted_data`).
    pub fn persisted_data(&self) -> u64 {
        self.channel_state.iter().map(|c| c.frames.len() as u64).sum()
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
        match version {
            1 => {
                let v1: TaskSnapshotV1 = weir_core::codec::decode(&bytes[12..]).map_err(|e| corrupt(e.to_string()))?;
                Ok(TaskSnapshot {
                    operators: v1.operators,
                    channel_state: Vec::new(),
                })
            }
            TASK_SNAPSHOT_VERSION => weir_core::codec::decode(&bytes[12..]).map_err(|e| corrupt(e.to_string())),
            _ => Err(corrupt(format!(
                "snapshot format version {version} is not supported (this build reads 1 to {TASK_SNAPSHOT_VERSION})"
            ))),
        }
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
    /// Per snapshot: given only for its union list state (another subtask's, at the
    /// same parallelism); missing entries read as false.
    pub union_only: Vec<bool>,
    /// This subtask's index.
    pub subtask_index: u32,
    /// The new parallelism.
    pub parallelism: u32,
}

impl RestoredState {
    /// Takes the input channel state to replay before any network input: that of this
    /// subtask's own snapshot. At another parallelism (the key groups and channels no
    /// longer match) channel state is refused with an error naming `vertex`.
    pub fn take_channel_state(&mut self, vertex: &str) -> Result<Vec<InputChannelState>, StateError> {
        let own: Vec<usize> = (0..self.snapshots.len()).filter(|i| !self.is_union_only(*i)).collect();
        let recorded: usize = own.iter().map(|i| self.snapshots[*i].channel_state.len()).sum();
        if recorded == 0 {
            return Ok(Vec::new());
        }
        if self.rescaled || own.len() != 1 {
            return Err(StateError::ChannelStateNotRescalable {
                vertex: vertex.to_string(),
                checkpoint_id: self.checkpoint_id,
                parallelism: self.parallelism,
            });
        }
        Ok(std::mem::take(&mut self.snapshots[own[0]].channel_state))
    }

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
            union_only: Vec::new(),
            subtask_index,
            parallelism,
        }
    }

    fn is_union_only(&self, snapshot: usize) -> bool {
        self.union_only.get(snapshot).copied().unwrap_or(false)
    }

    /// The state of `operator` for this subtask: keyed state of `range`, list state
    /// dealt out, union state whole (from every snapshot given); `None` when no
    /// snapshot of its own (not only given for union state) has state of it.
    pub fn operator(&self, operator: OperatorId, range: KeyGroupRange) -> Option<OperatorSnapshot> {
        let parts: Vec<(bool, &OperatorSnapshot)> = self
            .snapshots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((self.is_union_only(i), s.operators.get(&operator)?)))
            .collect();
        if parts.iter().all(|(union_only, _)| *union_only) {
            return None;
        }
        let mut out = OperatorSnapshot::default();
        for (union_only, part) in &parts {
            if !union_only {
                out.keyed
                    .extend(part.keyed.iter().filter(|(kg, _)| range.contains(*kg)).cloned());
            }
            for (name, elements) in &part.union {
                out.union
                    .entry(name.clone())
                    .or_default()
                    .extend(elements.iter().cloned());
            }
        }
        let mut positions: BTreeMap<&String, usize> = BTreeMap::new();
        for (_, part) in parts.iter().filter(|(union_only, _)| !union_only) {
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

    fn channel(gate: u32, channel: u32, frames: &[u8]) -> InputChannelState {
        InputChannelState {
            gate,
            channel,
            frames: frames.to_vec(),
        }
    }

    #[test]
    fn channel_state_round_trips_and_counts_as_state_and_persisted_data() {
        let mut s = TaskSnapshot::default();
        s.channel_state.push(channel(1, 3, &[1, 2, 3]));
        assert!(!s.is_empty());
        assert_eq!(s.persisted_data(), 3);
        assert_eq!(TaskSnapshot::decode(&s.encode().unwrap()).unwrap(), s);
    }

    #[test]
    fn a_version_1_snapshot_is_still_read_without_channel_state() {
        #[derive(Serialize)]
        struct V1<'a> {
            operators: &'a BTreeMap<OperatorId, OperatorSnapshot>,
        }
        let s = snapshot(&[1], &[2], &[3]);
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&1u32.to_be_bytes());
        weir_core::codec::encode_into(
            &mut bytes,
            &V1 {
                operators: &s.operators,
            },
        )
        .unwrap();
        assert_eq!(TaskSnapshot::decode(&bytes).unwrap(), s);
    }

    #[test]
    fn channel_state_is_replayed_at_the_same_parallelism_and_refused_naming_the_vertex_after_rescaling() {
        let mut with_channels = snapshot(&[], &[], &[]);
        with_channels.channel_state = vec![channel(0, 0, &[7]), channel(0, 1, &[8])];
        let mut same = RestoredState {
            checkpoint_id: 5,
            snapshots: vec![with_channels.clone()],
            rescaled: false,
            union_only: Vec::new(),
            subtask_index: 0,
            parallelism: 2,
        };
        assert_eq!(same.take_channel_state("Keyed Sum").unwrap().len(), 2);
        assert!(same.snapshots[0].channel_state.is_empty());
        let mut rescaled = RestoredState {
            snapshots: vec![with_channels, snapshot(&[], &[], &[])],
            rescaled: true,
            union_only: Vec::new(),
            ..same
        };
        let err = rescaled.take_channel_state("Keyed Sum").unwrap_err().to_string();
        assert!(
            err.contains("'Keyed Sum'") && err.contains("checkpoint 5") && err.contains("unaligned"),
            "{err}"
        );
        let mut aligned = RestoredState {
            snapshots: vec![snapshot(&[], &[], &[])],
            rescaled: true,
            union_only: Vec::new(),
            ..RestoredState::default()
        };
        assert!(aligned.take_channel_state("Keyed Sum").unwrap().is_empty());
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
                union_only: Vec::new(),
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
            union_only: Vec::new(),
            subtask_index: 1,
            parallelism: 2,
        };
        let s = r.operator(op(7), KeyGroupRange::new(4, 7)).unwrap();
        assert_eq!(s.list["offsets"].len(), 3);
        assert_eq!(s.keyed.len(), 1);
    }

    #[test]
    fn union_only_snapshots_give_their_union_state_but_not_their_list_or_keyed_state() {
        let mut own = TaskSnapshot::default();
        let mut o = OperatorSnapshot::default();
        o.list.insert("offsets".into(), vec![vec![1]]);
        o.union.insert("config".into(), vec![vec![10]]);
        o.keyed = vec![(0, vec![("count".to_string(), vec![0])])];
        own.operators.insert(op(7), o);
        let mut other = TaskSnapshot::default();
        let mut o = OperatorSnapshot::default();
        o.list.insert("offsets".into(), vec![vec![2]]);
        o.union.insert("config".into(), vec![vec![20]]);
        o.keyed = vec![(0, vec![("count".to_string(), vec![9])])];
        other.operators.insert(op(7), o);
        let r = RestoredState {
            checkpoint_id: 1,
            snapshots: vec![own, other],
            rescaled: false,
            union_only: vec![false, true],
            subtask_index: 0,
            parallelism: 2,
        };
        let s = r.operator(op(7), KeyGroupRange::new(0, 0)).unwrap();
        assert_eq!(s.list["offsets"], vec![vec![1]]);
        assert_eq!(s.union["config"], vec![vec![10], vec![20]]);
        assert_eq!(s.keyed, vec![(0, vec![("count".to_string(), vec![0])])]);
        assert!(r.operator(op(8), KeyGroupRange::new(0, 0)).is_none());
    }
}
