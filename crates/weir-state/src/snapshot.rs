//! The snapshot of one task (subtask of a chain) at one checkpoint, and how a restored
//! task finds the part of it that belongs to each of its operators.
//!
//! Format (version 3, documented in docs/checkpoints.md, "Formats"): the magic bytes `WEIRSTAT`, a
//! big-endian u32 version, then the bincode encoding of [`TaskSnapshot`]: per
//! operator (by [`OperatorId`]) its keyed state per key group (`(state name, bytes)`
//! pairs; timers are the reserved names `_timers/event` and `_timers/processing`),
//! its operator list state and its union list state (each a list of opaque elements
//! per state name); then the channel state of an unaligned checkpoint: the input
//! channel state (per input gate and channel, the channel's in-flight data: the
//! records it delivered between the task's snapshot and its barrier, then the data
//! its barrier overtook at the consumer) and the output channel state (per produced
//! job edge and subpartition, the data the task's barrier overtook in the
//! subpartition). Both are byte streams in the network's record frame format; an
//! input channel's may end inside a frame, which the producer's output channel state
//! of the same channel continues. Versions 1 (no channel state) and 2 (input channel
//! state of whole frames, without channel counts) are still read.
//!
//! Redistribution on restore ([`RestoredState`]): keyed state is filtered by the new
//! subtask's key-group range; list state elements of all old subtasks are dealt out
//! round-robin (element `j` of the concatenation in old-subtask order goes to new
//! subtask `j % parallelism`) when the parallelism changed, and kept as they are
//! otherwise; union state goes whole to every subtask. Channel state is not
//! redistributed: restoring it at another parallelism is refused
//! ([`RestoredState::take_channel_state`]), and the task checks that its channels and
//! subpartitions are as many as when it was recorded.

use crate::error::StateError;
use crate::heap::KeyGroupSnapshot;
use crate::incremental::handle::IncrementalKeyedStateHandle;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use weir_core::checkpoint::SharedStateFile;
use weir_core::ids::OperatorId;
use weir_core::KeyGroupRange;

const MAGIC: &[u8; 8] = b"WEIRSTAT";
/// The snapshot format version this build writes (it also reads versions 1 and 2).
pub const TASK_SNAPSHOT_VERSION: u32 = 4;

/// The state of one operator in one subtask.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorSnapshot {
    /// Keyed state and timers, per key group.
    pub keyed: Vec<(u32, KeyGroupSnapshot)>,
    /// Operator list state: redistributed round-robin on rescale.
    pub list: BTreeMap<String, Vec<Vec<u8>>>,
    /// Union list state: every subtask gets all elements on restore.
    pub union: BTreeMap<String, Vec<Vec<u8>>>,
    /// Keyed state as the files of an on-disk store (an incremental checkpoint); the
    /// state of `keyed` comes on top (timers, states restored and not declared since).
    pub incremental: Vec<IncrementalKeyedStateHandle>,
}

impl OperatorSnapshot {
    /// True when it holds no state at all.
    pub fn is_empty(&self) -> bool {
        self.keyed.iter().all(|(_, g)| g.is_empty())
            && self.list.is_empty()
            && self.union.is_empty()
            && self.incremental.is_empty()
    }
}

/// An operator's state in versions 1 to 3: no incremental handles.
#[derive(Deserialize)]
struct OperatorSnapshotV3 {
    keyed: Vec<(u32, KeyGroupSnapshot)>,
    list: BTreeMap<String, Vec<Vec<u8>>>,
    union: BTreeMap<String, Vec<Vec<u8>>>,
}

impl From<OperatorSnapshotV3> for OperatorSnapshot {
    fn from(o: OperatorSnapshotV3) -> Self {
        OperatorSnapshot {
            keyed: o.keyed,
            list: o.list,
            union: o.union,
            incremental: Vec::new(),
        }
    }
}

fn upgrade(operators: BTreeMap<OperatorId, OperatorSnapshotV3>) -> BTreeMap<OperatorId, OperatorSnapshot> {
    operators.into_iter().map(|(id, o)| (id, o.into())).collect()
}

/// Version 3 of the format: no incremental handles.
#[derive(Deserialize)]
struct TaskSnapshotV3 {
    operators: BTreeMap<OperatorId, OperatorSnapshotV3>,
    input_channel_state: Vec<InputChannelState>,
    output_channel_state: Vec<ResultSubpartitionState>,
}

/// The in-flight data of one input channel recorded for an unaligned checkpoint
/// (Flink's `InputChannelStateHandle`): a byte stream in `weir_core::codec`'s record
/// frame format, in channel order — the frames of the records the channel delivered
/// after the task's snapshot, then the bytes the channel had received and not
/// processed when its barrier overtook them (which may end inside a frame).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputChannelState {
    /// The task's input gate (0, or 1 for the second input of a two-input task).
    pub gate: u32,
    /// The channel within the gate.
    pub channel: u32,
    /// The gate's number of channels when it was recorded (0: unknown, version 2).
    pub channels: u32,
    /// The bytes.
    pub data: Vec<u8>,
}

/// The output channel state of one subpartition recorded for an unaligned checkpoint
/// (Flink's `ResultSubpartitionStateHandle`): the bytes of the buffers queued in the
/// subpartition that the task's barrier overtook, in order. They begin where its
/// consumer's input channel state of the same checkpoint ends (possibly inside a
/// frame) and end with a whole frame.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultSubpartitionState {
    /// The job edge the partition produces (its index in the JobGraph's edges).
    pub job_edge: u32,
    /// The subpartition (consumer channel) within the partition.
    pub subpartition: u32,
    /// The partition's number of subpartitions when it was recorded.
    pub subpartitions: u32,
    /// The bytes.
    pub data: Vec<u8>,
}

/// The state of every stateful operator of one subtask's chain, and the in-flight
/// data of its input and output channels when the checkpoint was unaligned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSnapshot {
    /// Per operator.
    pub operators: BTreeMap<OperatorId, OperatorSnapshot>,
    /// Per input channel with in-flight data (unaligned checkpoints only; channels
    /// without any are left out).
    pub input_channel_state: Vec<InputChannelState>,
    /// Per subpartition whose queued buffers the barrier overtook (unaligned
    /// checkpoints only; subpartitions without any are left out).
    pub output_channel_state: Vec<ResultSubpartitionState>,
}

/// The channel state a restored task starts from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoredChannelState {
    /// In-flight data to feed into the input channels before anything they receive.
    pub input: Vec<InputChannelState>,
    /// In-flight data to send on the subpartitions before anything else.
    pub output: Vec<ResultSubpartitionState>,
}

impl RestoredChannelState {
    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty() && self.output.is_empty()
    }
}

/// Version 1 of the format: operators only.
#[derive(Deserialize)]
struct TaskSnapshotV1 {
    operators: BTreeMap<OperatorId, OperatorSnapshotV3>,
}

/// Version 2 of the format: operators and input channel state of whole frames.
#[derive(Deserialize)]
struct TaskSnapshotV2 {
    operators: BTreeMap<OperatorId, OperatorSnapshotV3>,
    channel_state: Vec<InputChannelStateV2>,
}

/// An input channel's state in version 2.
#[derive(Deserialize)]
struct InputChannelStateV2 {
    gate: u32,
    channel: u32,
    frames: Vec<u8>,
}

impl TaskSnapshot {
    /// True when no operator has state and no channel state was recorded.
    pub fn is_empty(&self) -> bool {
        self.operators.values().all(OperatorSnapshot::is_empty)
            && self.input_channel_state.is_empty()
            && self.output_channel_state.is_empty()
    }

    /// True when an operator has union list state (which every subtask restores).
    pub fn has_union_state(&self) -> bool {
        self.operators
            .values()
            .any(|o| o.union.values().any(|elements| !elements.is_empty()))
    }

    /// Every shared file its incremental handles refer to.
    pub fn shared_state(&self) -> Vec<SharedStateFile> {
        self.operators
            .values()
            .flat_map(|o| &o.incremental)
            .flat_map(|h| &h.shared)
            .map(|f| f.file.clone())
            .collect()
    }

    /// Bytes of the shared files its incremental handles refer to.
    pub fn shared_state_size(&self) -> u64 {
        self.operators
            .values()
            .flat_map(|o| &o.incremental)
            .map(|h| h.shared.iter().map(|f| f.file.size).sum::<u64>())
            .sum()
    }

    /// Bytes of the shared files uploaded by the checkpoint it belongs to.
    pub fn uploaded_shared_size(&self) -> u64 {
        self.operators
            .values()
            .flat_map(|o| &o.incremental)
            .map(IncrementalKeyedStateHandle::uploaded_size)
            .sum()
    }

    /// Bytes of recorded in-flight data, input and output (Flink's `persisted_data`).
    pub fn persisted_data(&self) -> u64 {
        let input: u64 = self.input_channel_state.iter().map(|c| c.data.len() as u64).sum();
        let output: u64 = self.output_channel_state.iter().map(|c| c.data.len() as u64).sum();
        input + output
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
                    operators: upgrade(v1.operators),
                    ..TaskSnapshot::default()
                })
            }
            2 => {
                let v2: TaskSnapshotV2 = weir_core::codec::decode(&bytes[12..]).map_err(|e| corrupt(e.to_string()))?;
                Ok(TaskSnapshot {
                    operators: upgrade(v2.operators),
                    input_channel_state: v2
                        .channel_state
                        .into_iter()
                        .map(|c| InputChannelState {
                            gate: c.gate,
                            channel: c.channel,
                            channels: 0,
                            data: c.frames,
                        })
                        .collect(),
                    output_channel_state: Vec::new(),
                })
            }
            3 => {
                let v3: TaskSnapshotV3 = weir_core::codec::decode(&bytes[12..]).map_err(|e| corrupt(e.to_string()))?;
                Ok(TaskSnapshot {
                    operators: upgrade(v3.operators),
                    input_channel_state: v3.input_channel_state,
                    output_channel_state: v3.output_channel_state,
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
    /// Takes the channel state to restore before anything else: that of this subtask's
    /// own snapshot (input channel state to replay before any network input, output
    /// channel state to send before any new record). At another parallelism (the key
    /// groups and channels no longer match) channel state is refused with an error
    /// naming `vertex`.
    pub fn take_channel_state(&mut self, vertex: &str) -> Result<RestoredChannelState, StateError> {
        let own: Vec<usize> = (0..self.snapshots.len()).filter(|i| !self.is_union_only(*i)).collect();
        let recorded: usize = own
            .iter()
            .map(|i| self.snapshots[*i].input_channel_state.len() + self.snapshots[*i].output_channel_state.len())
            .sum();
        if recorded == 0 {
            return Ok(RestoredChannelState::default());
        }
        if self.rescaled || own.len() != 1 {
            return Err(StateError::ChannelStateNotRescalable {
                vertex: vertex.to_string(),
                checkpoint_id: self.checkpoint_id,
                parallelism: self.parallelism,
            });
        }
        let snapshot = &mut self.snapshots[own[0]];
        Ok(RestoredChannelState {
            input: std::mem::take(&mut snapshot.input_channel_state),
            output: std::mem::take(&mut snapshot.output_channel_state),
        })
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
                out.incremental.extend(
                    part.incremental
                        .iter()
                        .filter(|h| h.key_group_range.intersects(&range))
                        .cloned(),
                );
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

    fn channel(gate: u32, channel: u32, data: &[u8]) -> InputChannelState {
        InputChannelState {
            gate,
            channel,
            channels: 4,
            data: data.to_vec(),
        }
    }

    fn subpartition(job_edge: u32, subpartition: u32, data: &[u8]) -> ResultSubpartitionState {
        ResultSubpartitionState {
            job_edge,
            subpartition,
            subpartitions: 2,
            data: data.to_vec(),
        }
    }

    #[test]
    fn input_and_output_channel_state_round_trip_and_count_as_state_and_persisted_data() {
        let mut s = TaskSnapshot::default();
        s.input_channel_state.push(channel(1, 3, &[1, 2, 3]));
        assert!(!s.is_empty());
        assert_eq!(s.persisted_data(), 3);
        let mut out_only = TaskSnapshot::default();
        out_only.output_channel_state.push(subpartition(2, 1, &[4, 5]));
        assert!(!out_only.is_empty());
        assert_eq!(out_only.persisted_data(), 2);
        s.output_channel_state = out_only.output_channel_state.clone();
        assert_eq!(s.persisted_data(), 5);
        for snapshot in [s, out_only] {
            assert_eq!(TaskSnapshot::decode(&snapshot.encode().unwrap()).unwrap(), snapshot);
        }
    }

    /// An operator's state as versions 1 to 3 wrote it.
    #[derive(Serialize)]
    struct OperatorV3<'a> {
        keyed: &'a Vec<(u32, KeyGroupSnapshot)>,
        list: &'a BTreeMap<String, Vec<Vec<u8>>>,
        union: &'a BTreeMap<String, Vec<Vec<u8>>>,
    }

    fn operators_v3(s: &TaskSnapshot) -> BTreeMap<OperatorId, OperatorV3<'_>> {
        s.operators
            .iter()
            .map(|(id, o)| {
                (
                    *id,
                    OperatorV3 {
                        keyed: &o.keyed,
                        list: &o.list,
                        union: &o.union,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn a_version_3_snapshot_is_still_read_without_incremental_handles() {
        #[derive(Serialize)]
        struct V3<'a> {
            operators: BTreeMap<OperatorId, OperatorV3<'a>>,
            input_channel_state: &'a Vec<InputChannelState>,
            output_channel_state: &'a Vec<ResultSubpartitionState>,
        }
        let mut s = snapshot(&[1], &[2], &[3]);
        s.input_channel_state = vec![channel(0, 1, &[7])];
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&3u32.to_be_bytes());
        weir_core::codec::encode_into(
            &mut bytes,
            &V3 {
                operators: operators_v3(&s),
                input_channel_state: &s.input_channel_state,
                output_channel_state: &s.output_channel_state,
            },
        )
        .unwrap();
        assert_eq!(TaskSnapshot::decode(&bytes).unwrap(), s);
    }

    #[test]
    fn a_version_2_snapshot_is_still_read_as_input_channel_state_without_channel_counts() {
        #[derive(Serialize)]
        struct V2<'a> {
            operators: BTreeMap<OperatorId, OperatorV3<'a>>,
            channel_state: Vec<(u32, u32, Vec<u8>)>,
        }
        let mut s = snapshot(&[1], &[], &[3]);
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&2u32.to_be_bytes());
        weir_core::codec::encode_into(
            &mut bytes,
            &V2 {
                operators: operators_v3(&s),
                channel_state: vec![(0, 1, vec![7, 8])],
            },
        )
        .unwrap();
        s.input_channel_state = vec![InputChannelState {
            gate: 0,
            channel: 1,
            channels: 0,
            data: vec![7, 8],
        }];
        assert_eq!(TaskSnapshot::decode(&bytes).unwrap(), s);
    }

    #[test]
    fn a_version_1_snapshot_is_still_read_without_channel_state() {
        #[derive(Serialize)]
        struct V1<'a> {
            operators: BTreeMap<OperatorId, OperatorV3<'a>>,
        }
        let s = snapshot(&[1], &[2], &[3]);
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&1u32.to_be_bytes());
        weir_core::codec::encode_into(
            &mut bytes,
            &V1 {
                operators: operators_v3(&s),
            },
        )
        .unwrap();
        assert_eq!(TaskSnapshot::decode(&bytes).unwrap(), s);
    }

    #[test]
    fn channel_state_is_restored_at_the_same_parallelism_and_refused_naming_the_vertex_after_rescaling() {
        let mut with_channels = snapshot(&[], &[], &[]);
        with_channels.input_channel_state = vec![channel(0, 0, &[7]), channel(0, 1, &[8])];
        with_channels.output_channel_state = vec![subpartition(3, 0, &[9])];
        let mut same = RestoredState {
            checkpoint_id: 5,
            snapshots: vec![with_channels.clone()],
            rescaled: false,
            union_only: Vec::new(),
            subtask_index: 0,
            parallelism: 2,
        };
        let restored = same.take_channel_state("Keyed Sum").unwrap();
        assert_eq!((restored.input.len(), restored.output.len()), (2, 1));
        assert!(same.snapshots[0].input_channel_state.is_empty());
        assert!(same.snapshots[0].output_channel_state.is_empty());
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
        let mut producer = snapshot(&[], &[], &[]);
        producer.output_channel_state = vec![subpartition(3, 0, &[9])];
        let mut rescaled_producer = RestoredState {
            snapshots: vec![producer, snapshot(&[], &[], &[])],
            rescaled: true,
            union_only: Vec::new(),
            ..RestoredState::default()
        };
        assert!(
            rescaled_producer.take_channel_state("Source").is_err(),
            "output channel state alone is refused too"
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
