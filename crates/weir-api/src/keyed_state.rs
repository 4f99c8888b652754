//! Checkpointing of keyed operators: their keyed state and timers, per key group.
//!
//! A keyed operator's snapshot is its backend's state per key group plus its timers
//! under the reserved names of [`weir_state::timers`]; on restore the key groups of
//! the subtask's range are split back into state (held until the operator declares
//! it) and timers.

use weir_core::KeyGroupRange;
use weir_runtime::operator::TaskContext;
use weir_runtime::TaskError;
use weir_state::incremental::reusable_files;
use weir_state::timers::{EVENT_TIMERS, PROCESSING_TIMERS};
use weir_state::{
    Key, KeyGroupSnapshot, KeyedStateBackend, OperatorSnapshot, PendingOperatorSnapshot, SnapshotFormat, StateError,
    TimerService,
};

fn is_timer(name: &str) -> bool {
    name == EVENT_TIMERS || name == PROCESSING_TIMERS
}

/// The keyed state and timers of an operator as of now, complete.
pub fn snapshot_keyed<K: Key + Ord, N: Key + Ord>(
    backend: &mut KeyedStateBackend<K>,
    timers: &TimerService<K, N>,
) -> Result<OperatorSnapshot, TaskError> {
    snapshot_keyed_async(backend, timers, 0, SnapshotFormat::Canonical)?
        .complete()
        .map_err(|e| TaskError::Build(format!("keyed state snapshot: {e}")))
}

/// The synchronous part of the snapshot of checkpoint `checkpoint_id` of an
/// operator's keyed state and timers: the keyed state frozen (copy-on-write, or its
/// store checkpointed, in `format`) and the timers copied, both encoded when the
/// snapshot is completed, on the checkpoint's upload thread.
pub fn snapshot_keyed_async<K: Key + Ord, N: Key + Ord>(
    backend: &mut KeyedStateBackend<K>,
    timers: &TimerService<K, N>,
    checkpoint_id: u64,
    format: SnapshotFormat,
) -> Result<PendingOperatorSnapshot, TaskError> {
    let fail = |e: weir_state::StateError| TaskError::Build(format!("keyed state snapshot: {e}"));
    let frozen_timers = timers.freeze(backend.key_group_range(), backend.max_parallelism());
    let frozen = backend
        .freeze_as(checkpoint_id, format)
        .map_err(fail)?
        .with_part(Box::new(move || frozen_timers.materialize()));
    Ok(PendingOperatorSnapshot {
        ready: OperatorSnapshot::default(),
        frozen: Some(frozen),
    })
}

/// A backend for this subtask's key groups and empty timers, both restored from the
/// operator's state in the checkpoint the task restores from, if any.
pub fn restore_keyed<K: Key + Ord, N: Key + Ord>(
    ctx: &TaskContext,
) -> Result<(KeyedStateBackend<K>, TimerService<K, N>), TaskError> {
    let range = ctx.key_group_range();
    let restored = ctx.state().restored(range);
    let groups = restored.as_ref().map(|r| r.keyed.as_slice()).unwrap_or(&[]);
    let fail = |e: StateError| TaskError::Restore {
        checkpoint_id: ctx.state().restored_checkpoint().unwrap_or(0),
        reason: format!("{}: {e}", ctx.task_name_with_subtask()),
    };
    let handles = restored.as_ref().map(|r| r.incremental.as_slice()).unwrap_or(&[]);
    let owner = format!("{}_{}", ctx.task_name, ctx.subtask_index);
    let backend = match (ctx.keyed_state_store(), handles, ctx.shared_state()) {
        (Some(factory), [], _) => {
            let store = factory.open(&owner).map_err(fail)?;
            KeyedStateBackend::with_store(range, ctx.max_parallelism, store, factory.cache_entries())
        }
        (Some(factory), handles, Some(transfer)) => {
            let store = factory
                .restore(&owner, range, handles, transfer.as_ref())
                .map_err(fail)?;
            let backend = KeyedStateBackend::with_store(range, ctx.max_parallelism, store, factory.cache_entries());
            backend.restored_from_files(reusable_files(handles, range, transfer.as_ref()));
            backend
        }
        (None, [], _) => KeyedStateBackend::new(range, ctx.max_parallelism),
        (Some(_), _, None) => {
            return Err(fail(StateError::Store(
                "the state is in an incremental checkpoint, but the task has no checkpoint storage to read its files from"
                    .into(),
            )))
        }
        (None, _, _) => {
            return Err(fail(StateError::Store(
                "the state is in an incremental checkpoint of the RocksDB state backend; restore it with state.backend.type: rocksdb, or take a savepoint (canonical format) to change the backend".into(),
            )))
        }
    };
    if let (Some(factory), Some(transfer)) = (ctx.keyed_state_store(), ctx.shared_state()) {
        let operator = ctx
            .state()
            .current_operator()
            .map(|o| o.to_string())
            .unwrap_or_default();
        backend.keep_local_copies(factory.clone(), format!("{}/{operator}", transfer.local_recovery_key()));
    }
    restore_into(backend, groups).map_err(fail)
}

/// A backend for the key groups `range` (of `max_parallelism`) and timers, filled from
/// the keyed part of an operator snapshot (`groups`, as [`snapshot_keyed`] makes it).
pub fn keyed_from_snapshot<K: Key + Ord, N: Key + Ord>(
    range: KeyGroupRange,
    max_parallelism: u32,
    groups: &[(u32, KeyGroupSnapshot)],
) -> Result<(KeyedStateBackend<K>, TimerService<K, N>), StateError> {
    restore_into(KeyedStateBackend::new(range, max_parallelism), groups)
}

/// `backend` and timers filled from the keyed part of an operator snapshot.
fn restore_into<K: Key + Ord, N: Key + Ord>(
    mut backend: KeyedStateBackend<K>,
    groups: &[(u32, KeyGroupSnapshot)],
) -> Result<(KeyedStateBackend<K>, TimerService<K, N>), StateError> {
    let mut timers = TimerService::new();
    let state: Vec<(u32, KeyGroupSnapshot)> = groups
        .iter()
        .map(|(kg, g)| (*kg, g.iter().filter(|(n, _)| !is_timer(n)).cloned().collect()))
        .collect();
    backend.restore(&state);
    timers.restore(groups)?;
    Ok((backend, timers))
}
