//! The slicing window aggregate's state in checkpoints and savepoints, format v1.
//!
//! Keyed state, per key group: one entry named [`SLICES_STATE`] whose bytes are the
//! codec encoding of the `Vec<SliceEntry>` of the key group's keys (slice end, key,
//! the general accumulators [`Acc`] of the aggregate calls), in ascending slice order.
//! A key's group is that of its key hash, as at the keyed exchange, so a restored
//! subtask takes exactly the entries of its key-group range (rescaling).
//! Operator union state: [`WATERMARK_STATE`], one element per subtask, the codec
//! encoding of the `i64` watermark the subtask had reached (the windows it had fired);
//! a restored subtask takes the smallest, so no window whose state was kept is lost.
//! A later format gets new names; names of this operator it does not know are refused.

use super::acc::Acc;
use super::slice_table::SliceTable;
use crate::key::GroupKey;
use crate::plan::AggCall;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use weir_core::codec;
use weir_core::key_group::assign_to_key_group;
use weir_core::key_hash::key_hash;
use weir_state::OperatorSnapshot;

/// The keyed state entry holding a key group's slices (format v1).
pub const SLICES_STATE: &str = "window-agg/slices/v1";
/// The union state holding each subtask's watermark (format v1).
pub const WATERMARK_STATE: &str = "window-agg/watermark/v1";
const STATE_PREFIX: &str = "window-agg/";

/// One key of one slice in a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceEntry {
    /// The slice's end.
    pub slice_end: i64,
    /// The group key.
    pub key: GroupKey,
    /// The accumulators, one per aggregate call.
    pub accs: Vec<Acc>,
}

/// The state a subtask restores.
#[derive(Debug)]
pub struct RestoredSlices {
    /// Slice tables by slice end.
    pub slices: BTreeMap<i64, SliceTable>,
    /// The watermark the operator had reached (`i64::MIN` when none was recorded).
    pub watermark: i64,
}

impl Default for RestoredSlices {
    /// No slices, no watermark yet.
    fn default() -> Self {
        RestoredSlices {
            slices: BTreeMap::new(),
            watermark: i64::MIN,
        }
    }
}

/// The snapshot of the slices' `entries` (in ascending slice order) and `watermark`
/// (the key groups of `max_parallelism`).
pub fn snapshot(
    entries: impl IntoIterator<Item = SliceEntry>,
    watermark: i64,
    max_parallelism: u32,
) -> Result<OperatorSnapshot, String> {
    let mut groups: BTreeMap<u32, Vec<SliceEntry>> = BTreeMap::new();
    for entry in entries {
        let kg = assign_to_key_group(key_hash(&entry.key), max_parallelism);
        groups.entry(kg).or_default().push(entry);
    }
    let mut snapshot = OperatorSnapshot::default();
    for (kg, entries) in groups {
        let bytes = codec::encode(&entries).map_err(|e| format!("encoding key group {kg}: {e}"))?;
        snapshot.keyed.push((kg, vec![(SLICES_STATE.to_string(), bytes)]));
    }
    let wm = codec::encode(&watermark).map_err(|e| format!("encoding the watermark: {e}"))?;
    snapshot.union.insert(WATERMARK_STATE.to_string(), vec![wm]);
    Ok(snapshot)
}

/// The slices and watermark held in `snapshot` (already restricted to the subtask's
/// key groups) for the aggregate calls `aggs`.
pub fn restore(snapshot: &OperatorSnapshot, aggs: &[AggCall]) -> Result<RestoredSlices, String> {
    let mut restored = RestoredSlices::default();
    for (kg, group) in &snapshot.keyed {
        for (name, bytes) in group {
            if name != SLICES_STATE {
                return Err(unknown_state(name));
            }
            let entries: Vec<SliceEntry> =
                codec::decode(bytes).map_err(|e| format!("key group {kg} of {SLICES_STATE}: {e}"))?;
            for e in entries {
                let table = restored.slices.entry(e.slice_end).or_default();
                let held = e.accs.len();
                if !table.insert(e.key, e.accs, aggs) {
                    return Err(format!(
                        "key group {kg} of {SLICES_STATE}: an entry of slice {} with {held} accumulators (the query has {}) or a key held twice",
                        e.slice_end,
                        aggs.len()
                    ));
                }
            }
        }
    }
    let mut watermarks = Vec::new();
    for (name, elements) in &snapshot.union {
        if name != WATERMARK_STATE {
            return Err(unknown_state(name));
        }
        for bytes in elements {
            watermarks.push(codec::decode::<i64>(bytes).map_err(|e| format!("{WATERMARK_STATE}: {e}"))?);
        }
    }
    restored.watermark = watermarks.into_iter().min().unwrap_or(i64::MIN);
    if !snapshot.list.is_empty() {
        return Err(unknown_state(snapshot.list.keys().next().map_or("", |s| s.as_str())));
    }
    Ok(restored)
}

fn unknown_state(name: &str) -> String {
    if name.starts_with(STATE_PREFIX) {
        format!("state '{name}' is of a window aggregate format this build does not read")
    } else {
        format!(
            "state '{name}' is not the slicing window aggregate's (a savepoint of the general window operator, taken before the SQL window aggregate was sliced, cannot be restored)"
        )
    }
}
