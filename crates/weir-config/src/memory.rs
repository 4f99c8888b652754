//! TaskManager memory: Flink's derivation of every memory component from the
//! `taskmanager.memory.*` options, and the `memoryConfiguration` JSON of the REST API.
//!
//! The derivation is Flink's (`ProcessMemoryUtils`, `TaskExecutorFlinkMemoryUtils`),
//! including its arithmetic: fractions are `Float` options widened to `double`, and a
//! fraction of a size is the exact decimal product truncated to whole bytes. That is why
//! Flink's default TaskManager (1728m) has 536870920 bytes of managed memory rather than
//! 512 MiB — the numbers [`TaskExecutorMemory::flink_model`] reproduces to the byte
//! (see the tests, which check a real Flink REST response).
//!
//! Which options drive the derivation, in Flink's order:
//! 1. `task.heap.size` and `managed.size` both set: total Flink memory is their sum plus
//!    the framework and task off-heap sizes plus network memory (the rest of
//!    `flink.size` when that is set, else derived by inverse fraction).
//! 2. else `flink.size` set: managed = fraction · total Flink (or `managed.size`),
//!    network = clamp(fraction · total Flink, min, max), task heap = the rest (or, with
//!    `task.heap.size` set, network is the rest and must lie within [min, max]).
//! 3. else from `process.size` (Weir's default 1728m): metaspace → overhead =
//!    clamp(fraction · process, min, max) → total Flink = process − metaspace − overhead →
//!    as in 2. A negative task heap is [`ConfigError::NegativeTaskHeap`].
//!
//! In 1 and 2 the overhead is the rest of an explicitly set `process.size` (and must lie
//! within its range) or is derived from total Flink memory plus metaspace by inverse
//! fraction.
//!
//! **Weir adaptation.** A Rust process has no JVM metaspace. [`TaskExecutorMemory::from_config`]
//! (Weir's model) therefore reports `jvm_metaspace = 0` and does not subtract the 256m
//! metaspace: every other step is Flink's, so the 1728m default gives total Flink
//! memory 1536m (1728 − 192 overhead) instead of Flink's 1280m.
//! [`TaskExecutorMemory::flink_model`] keeps the metaspace and gives Flink's numbers.
//! Flink's legacy `taskmanager.network.numberOfBuffers` option is not supported.

use serde::Serialize;

use crate::configuration::Configuration;
use crate::error::ConfigError;
use crate::option::ConfigOption;
use crate::options::{
    FRAMEWORK_HEAP_MEMORY, FRAMEWORK_OFF_HEAP_MEMORY, JVM_METASPACE, JVM_OVERHEAD_FRACTION, JVM_OVERHEAD_MAX,
    JVM_OVERHEAD_MIN, MANAGED_MEMORY_FRACTION, MANAGED_MEMORY_SIZE, NETWORK_MEMORY_FRACTION, NETWORK_MEMORY_MAX,
    NETWORK_MEMORY_MIN, TASK_HEAP_MEMORY, TASK_OFF_HEAP_MEMORY, TOTAL_FLINK_MEMORY, TOTAL_PROCESS_MEMORY,
};
use crate::value::MemorySize;

/// Every memory component of a TaskManager, in bytes.
///
/// Invariants: `total_flink = framework_heap + task_heap + framework_off_heap +
/// task_off_heap + network + managed` and `total_process = total_flink + jvm_metaspace +
/// jvm_overhead`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskExecutorMemory {
    /// Framework heap (`taskmanager.memory.framework.heap.size`).
    pub framework_heap: u64,
    /// Task heap, configured or derived as the rest of total Flink memory.
    pub task_heap: u64,
    /// Framework off-heap (`taskmanager.memory.framework.off-heap.size`).
    pub framework_off_heap: u64,
    /// Task off-heap (`taskmanager.memory.task.off-heap.size`).
    pub task_off_heap: u64,
    /// Network buffers' memory.
    pub network: u64,
    /// Managed memory.
    pub managed: u64,
    /// JVM metaspace: 0 in Weir's model.
    pub jvm_metaspace: u64,
    /// JVM overhead (native memory outside the other components).
    pub jvm_overhead: u64,
    /// Total Flink memory.
    pub total_flink: u64,
    /// Total process memory.
    pub total_process: u64,
}

/// The `memoryConfiguration` object of Flink's `GET /taskmanagers` response, in bytes,
/// with Flink's field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryConfiguration {
    /// Framework heap.
    pub framework_heap: u64,
    /// Task heap.
    pub task_heap: u64,
    /// Framework off-heap.
    pub framework_off_heap: u64,
    /// Task off-heap.
    pub task_off_heap: u64,
    /// Network memory.
    pub network_memory: u64,
    /// Managed memory.
    pub managed_memory: u64,
    /// JVM metaspace.
    pub jvm_metaspace: u64,
    /// JVM overhead.
    pub jvm_overhead: u64,
    /// Total Flink memory.
    pub total_flink_memory: u64,
    /// Total process memory.
    pub total_process_memory: u64,
}

impl TaskExecutorMemory {
    /// Weir's model: Flink's derivation without JVM metaspace (see the module doc).
    pub fn from_config(conf: &Configuration) -> Result<TaskExecutorMemory, ConfigError> {
        derive(conf, MemorySize::ZERO)
    }

    /// Flink's model, JVM metaspace included: the numbers a Flink TaskManager with the
    /// same configuration reports.
    pub fn flink_model(conf: &Configuration) -> Result<TaskExecutorMemory, ConfigError> {
        derive(conf, conf.get(&JVM_METASPACE)?)
    }

    /// How many network buffers of `segment_size` bytes the network memory holds
    /// (Flink: network memory / page size, rounded down); 0 for a zero segment size.
    pub fn network_buffers(&self, segment_size: u64) -> usize {
        let buffers = self.network.checked_div(segment_size).unwrap_or(0);
        usize::try_from(buffers).unwrap_or(usize::MAX)
    }

    /// The REST API's view of these numbers.
    pub fn memory_configuration(&self) -> MemoryConfiguration {
        MemoryConfiguration {
            framework_heap: self.framework_heap,
            task_heap: self.task_heap,
            framework_off_heap: self.framework_off_heap,
            task_off_heap: self.task_off_heap,
            network_memory: self.network,
            managed_memory: self.managed,
            jvm_metaspace: self.jvm_metaspace,
            jvm_overhead: self.jvm_overhead,
            total_flink_memory: self.total_flink,
            total_process_memory: self.total_process,
        }
    }
}

/// The components of total Flink memory.
struct FlinkMemory {
    framework_heap: MemorySize,
    framework_off_heap: MemorySize,
    task_heap: MemorySize,
    task_off_heap: MemorySize,
    network: MemorySize,
    managed: MemorySize,
}

/// Flink's `RangeFraction`: a fraction of some base, clamped to `[min, max]`.
struct RangeFraction {
    min: MemorySize,
    max: MemorySize,
    fraction: f64,
}

fn derive(conf: &Configuration, metaspace: MemorySize) -> Result<TaskExecutorMemory, ConfigError> {
    let (flink, overhead) = if conf.contains(&TASK_HEAP_MEMORY) && conf.contains(&MANAGED_MEMORY_SIZE) {
        let flink = derive_from_fine_grained_options(conf)?;
        let total_flink = total_flink_of(&flink)?;
        (flink, overhead_from_total_flink(conf, total_flink, metaspace)?)
    } else if let Some(total_flink) = conf.get(&TOTAL_FLINK_MEMORY)? {
        let flink = derive_from_total_flink(conf, total_flink)?;
        (flink, overhead_from_total_flink(conf, total_flink, metaspace)?)
    } else {
        let process = conf.get(&TOTAL_PROCESS_MEMORY)?;
        let overhead = derive_with_fraction(process, &overhead_range(conf)?)?;
        let total_flink = sum(&[metaspace, overhead])
            .ok()
            .and_then(|jvm| process.checked_sub(jvm))
            .ok_or_else(|| {
                ConfigError::IllegalConfiguration(format!(
                    "Sum of configured JVM Metaspace ({}) and JVM Overhead ({}) exceed configured Total Process Memory ({}).",
                    metaspace.to_human_readable(),
                    overhead.to_human_readable(),
                    process.to_human_readable()
                ))
            })?;
        (derive_from_total_flink(conf, total_flink)?, overhead)
    };
    let total_flink = total_flink_of(&flink)?;
    let total_process = sum(&[total_flink, metaspace, overhead])?;
    Ok(TaskExecutorMemory {
        framework_heap: flink.framework_heap.bytes(),
        task_heap: flink.task_heap.bytes(),
        framework_off_heap: flink.framework_off_heap.bytes(),
        task_off_heap: flink.task_off_heap.bytes(),
        network: flink.network.bytes(),
        managed: flink.managed.bytes(),
        jvm_metaspace: metaspace.bytes(),
        jvm_overhead: overhead.bytes(),
        total_flink: total_flink.bytes(),
        total_process: total_process.bytes(),
    })
}

/// Path 1: task heap and managed memory are both configured.
fn derive_from_fine_grained_options(conf: &Configuration) -> Result<FlinkMemory, ConfigError> {
    let framework_heap = conf.get(&FRAMEWORK_HEAP_MEMORY)?;
    let framework_off_heap = conf.get(&FRAMEWORK_OFF_HEAP_MEMORY)?;
    let task_off_heap = conf.get(&TASK_OFF_HEAP_MEMORY)?;
    let task_heap = required(conf, &TASK_HEAP_MEMORY)?;
    let managed = required(conf, &MANAGED_MEMORY_SIZE)?;
    let without_network = sum(&[framework_heap, framework_off_heap, task_heap, task_off_heap, managed])?;
    let network = match conf.get(&TOTAL_FLINK_MEMORY)? {
        Some(total_flink) => {
            let network = total_flink.checked_sub(without_network).ok_or_else(|| {
                sum_with_task_heap_exceeds(
                    framework_heap,
                    framework_off_heap,
                    task_heap,
                    task_off_heap,
                    managed,
                    total_flink,
                )
            })?;
            check_network_in_range(conf, network)?;
            network
        }
        None => derive_with_inverse_fraction(without_network, &network_range(conf)?)?,
    };
    Ok(FlinkMemory {
        framework_heap,
        framework_off_heap,
        task_heap,
        task_off_heap,
        network,
        managed,
    })
}

/// Path 2 (and the end of path 3): split a known total Flink memory.
fn derive_from_total_flink(conf: &Configuration, total_flink: MemorySize) -> Result<FlinkMemory, ConfigError> {
    let framework_heap = conf.get(&FRAMEWORK_HEAP_MEMORY)?;
    let framework_off_heap = conf.get(&FRAMEWORK_OFF_HEAP_MEMORY)?;
    let task_off_heap = conf.get(&TASK_OFF_HEAP_MEMORY)?;
    let managed = match conf.get(&MANAGED_MEMORY_SIZE)? {
        Some(size) => size,
        None => derive_with_fraction(
            total_flink,
            &range_fraction(
                MemorySize::ZERO,
                MemorySize(i64::MAX as u64),
                &MANAGED_MEMORY_FRACTION,
                conf,
            )?,
        )?,
    };
    if let Some(task_heap) = conf.get(&TASK_HEAP_MEMORY)? {
        // Task heap configured: network memory is the rest and must lie in its range.
        let without_network = sum(&[framework_heap, framework_off_heap, task_heap, task_off_heap, managed])?;
        let network = total_flink.checked_sub(without_network).ok_or_else(|| {
            sum_with_task_heap_exceeds(
                framework_heap,
                framework_off_heap,
                task_heap,
                task_off_heap,
                managed,
                total_flink,
            )
        })?;
        check_network_in_range(conf, network)?;
        return Ok(FlinkMemory {
            framework_heap,
            framework_off_heap,
            task_heap,
            task_off_heap,
            network,
            managed,
        });
    }
    let network = derive_with_fraction(total_flink, &network_range(conf)?)?;
    let negative_task_heap = || ConfigError::NegativeTaskHeap {
        framework_heap,
        framework_off_heap,
        task_off_heap,
        managed,
        network,
        total_flink,
    };
    let without_task_heap = sum(&[framework_heap, framework_off_heap, task_off_heap, managed, network])
        .map_err(|_| negative_task_heap())?;
    let task_heap = total_flink
        .checked_sub(without_task_heap)
        .ok_or_else(negative_task_heap)?;
    Ok(FlinkMemory {
        framework_heap,
        framework_off_heap,
        task_heap,
        task_off_heap,
        network,
        managed,
    })
}

/// JVM overhead when total Flink memory is known: the rest of an explicitly configured
/// process size (checked against the overhead range), else by inverse fraction of total
/// Flink memory plus metaspace.
fn overhead_from_total_flink(
    conf: &Configuration,
    total_flink: MemorySize,
    metaspace: MemorySize,
) -> Result<MemorySize, ConfigError> {
    let flink_and_metaspace = sum(&[total_flink, metaspace])?;
    let range = overhead_range(conf)?;
    if !conf.contains(&TOTAL_PROCESS_MEMORY) {
        return derive_with_inverse_fraction(flink_and_metaspace, &range);
    }
    let process = conf.get(&TOTAL_PROCESS_MEMORY)?;
    let overhead = process.checked_sub(flink_and_metaspace).ok_or_else(|| {
        ConfigError::IllegalConfiguration(format!(
            "The configured Total Process Memory size ({}) is less than the sum of the derived Total Flink Memory size \
             ({}) and the configured or default JVM Metaspace size  ({}).",
            process.to_human_readable(),
            total_flink.to_human_readable(),
            metaspace.to_human_readable()
        ))
    })?;
    if overhead > range.max || overhead < range.min {
        return Err(ConfigError::IllegalConfiguration(format!(
            "Derived JVM Overhead size ({}) is not in configured JVM Overhead range [{}, {}].",
            overhead.to_human_readable(),
            range.min.to_human_readable(),
            range.max.to_human_readable()
        )));
    }
    Ok(overhead)
}

fn check_network_in_range(conf: &Configuration, network: MemorySize) -> Result<(), ConfigError> {
    let range = network_range(conf)?;
    if network > range.max || network < range.min {
        return Err(ConfigError::IllegalConfiguration(format!(
            "If Total Flink, Task Heap and (or) Managed Memory sizes are explicitly configured then the Network \
             Memory size is the rest of the Total Flink memory after subtracting all other configured types of \
             memory, but the derived Network Memory is inconsistent with its configuration: Derived Network Memory \
             size ({}) is not in configured Network Memory range [{}, {}].",
            network.to_human_readable(),
            range.min.to_human_readable(),
            range.max.to_human_readable()
        )));
    }
    Ok(())
}

fn sum_with_task_heap_exceeds(
    framework_heap: MemorySize,
    framework_off_heap: MemorySize,
    task_heap: MemorySize,
    task_off_heap: MemorySize,
    managed: MemorySize,
    total_flink: MemorySize,
) -> ConfigError {
    ConfigError::IllegalConfiguration(format!(
        "Sum of configured Framework Heap Memory ({}), Framework Off-Heap Memory ({}), Task Heap Memory ({}), \
         Task Off-Heap Memory ({}) and Managed Memory ({}) exceed configured Total Flink Memory ({}).",
        framework_heap.to_human_readable(),
        framework_off_heap.to_human_readable(),
        task_heap.to_human_readable(),
        task_off_heap.to_human_readable(),
        managed.to_human_readable(),
        total_flink.to_human_readable()
    ))
}

fn network_range(conf: &Configuration) -> Result<RangeFraction, ConfigError> {
    range_fraction(
        conf.get(&NETWORK_MEMORY_MIN)?,
        conf.get(&NETWORK_MEMORY_MAX)?,
        &NETWORK_MEMORY_FRACTION,
        conf,
    )
}

fn overhead_range(conf: &Configuration) -> Result<RangeFraction, ConfigError> {
    range_fraction(
        conf.get(&JVM_OVERHEAD_MIN)?,
        conf.get(&JVM_OVERHEAD_MAX)?,
        &JVM_OVERHEAD_FRACTION,
        conf,
    )
}

/// Flink's `getRangeFraction`: the `Float` fraction widened to `double`, checked to lie
/// in `[0, 1)`, with `min <= max`.
fn range_fraction(
    min: MemorySize,
    max: MemorySize,
    fraction_option: &ConfigOption<f32>,
    conf: &Configuration,
) -> Result<RangeFraction, ConfigError> {
    let fraction = f64::from(conf.get(fraction_option)?);
    let problem = if min > max {
        Some("min value must be less or equal to max value")
    } else if !(0.0..1.0).contains(&fraction) {
        Some("fraction must be in range [0, 1)")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(ConfigError::IllegalConfiguration(format!(
            "Inconsistently configured {} ({}) and its min ({}), max ({}) value: {}",
            fraction_option.key(),
            fraction,
            min.to_human_readable(),
            max.to_human_readable(),
            problem
        ))),
        None => Ok(RangeFraction { min, max, fraction }),
    }
}

fn derive_with_fraction(base: MemorySize, range: &RangeFraction) -> Result<MemorySize, ConfigError> {
    Ok(cap_to_min_max(multiply(base, range.fraction)?, range))
}

fn derive_with_inverse_fraction(base: MemorySize, range: &RangeFraction) -> Result<MemorySize, ConfigError> {
    let relative = multiply(base, range.fraction / (1.0 - range.fraction))?;
    Ok(cap_to_min_max(relative, range))
}

fn cap_to_min_max(relative: MemorySize, range: &RangeFraction) -> MemorySize {
    if relative > range.max {
        range.max
    } else if relative < range.min {
        range.min
    } else {
        relative
    }
}

fn multiply(base: MemorySize, fraction: f64) -> Result<MemorySize, ConfigError> {
    base.multiply(fraction).ok_or_else(|| {
        ConfigError::IllegalConfiguration(format!(
            "{} multiplied by {} does not fit a 64-bit byte count",
            base.to_human_readable(),
            fraction
        ))
    })
}

fn sum(parts: &[MemorySize]) -> Result<MemorySize, ConfigError> {
    parts
        .iter()
        .try_fold(MemorySize::ZERO, |acc, part| acc.checked_add(*part))
        .filter(|total| total.bytes() <= i64::MAX as u64)
        .ok_or_else(|| ConfigError::IllegalConfiguration("The sum of the memory sizes overflows".to_string()))
}

fn total_flink_of(flink: &FlinkMemory) -> Result<MemorySize, ConfigError> {
    sum(&[
        flink.framework_heap,
        flink.framework_off_heap,
        flink.task_heap,
        flink.task_off_heap,
        flink.network,
        flink.managed,
    ])
}

fn required(conf: &Configuration, option: &ConfigOption<Option<MemorySize>>) -> Result<MemorySize, ConfigError> {
    conf.get(option)?.ok_or_else(|| ConfigError::MissingValue {
        key: option.key().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn conf(entries: &[(&str, &str)]) -> Configuration {
        let mut conf = Configuration::new();
        for (k, v) in entries {
            conf.set_string(*k, *v);
        }
        conf
    }

    fn assert_invariants(m: &TaskExecutorMemory) {
        assert_eq!(
            m.total_flink,
            m.framework_heap + m.task_heap + m.framework_off_heap + m.task_off_heap + m.network + m.managed
        );
        assert_eq!(m.total_process, m.total_flink + m.jvm_metaspace + m.jvm_overhead);
    }

    #[test]
    fn flink_model_of_the_default_1728m_matches_a_real_flink_taskmanager_to_the_byte() {
        // /work/shared/reference/flink-rest-samples/taskmanagers.json, memoryConfiguration.
        let m = TaskExecutorMemory::flink_model(&Configuration::new()).unwrap();
        assert_invariants(&m);
        let json = serde_json::to_value(m.memory_configuration()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "frameworkHeap": 134217728u64,
                "taskHeap": 402653174u64,
                "frameworkOffHeap": 134217728u64,
                "taskOffHeap": 0,
                "networkMemory": 134217730u64,
                "managedMemory": 536870920u64,
                "jvmMetaspace": 268435456u64,
                "jvmOverhead": 201326592u64,
                "totalFlinkMemory": 1342177280u64,
                "totalProcessMemory": 1811939328u64
            })
        );
        // The fact sheet's rounded view: overhead 192m, total Flink 1280m, network ≈128m,
        // managed ≈512m, task heap ≈384m (the REST "totalResource" shows 383 MB).
        assert_eq!(m.jvm_overhead, 192 * MIB);
        assert_eq!(m.total_flink, 1280 * MIB);
        assert_eq!(m.network / MIB, 128);
        assert_eq!(m.managed / MIB, 512);
        assert_eq!(m.task_heap / MIB, 383);
    }

    #[test]
    fn flink_model_of_1024m_is_the_worked_example() {
        let m = TaskExecutorMemory::flink_model(&conf(&[("taskmanager.memory.process.size", "1024m")])).unwrap();
        assert_invariants(&m);
        assert_eq!(m.jvm_metaspace, 256 * MIB);
        assert_eq!(m.jvm_overhead, 192 * MIB); // 102.4m clamped up to the 192m minimum
        assert_eq!(m.total_flink, 603_979_776); // 576m
        assert_eq!(m.network, 64 * MIB); // 57.6m clamped up to the 64m minimum
                                         // The fact sheet computes 0.4 · 576m = 241591910 and a task heap of 26843546.
                                         // Flink's fraction is the float 0.4f widened to 0.4000000059604645, which gives
                                         // 4 bytes more managed memory (the same effect as the +8 bytes in the REST
                                         // sample above); both render as Flink's log line "taskHeapMemory=25.600mb
                                         // managedMemory=230.400mb networkMemory=64.000mb".
        assert_eq!(m.managed, 241_591_914);
        assert_eq!(m.task_heap, 26_843_542);
        assert_eq!(MemorySize(m.task_heap).to_human_readable(), "25.600mb (26843542 bytes)");
        assert_eq!(MemorySize(m.managed).to_human_readable(), "230.400mb (241591914 bytes)");
        assert_eq!(m.framework_heap + m.task_heap, 161_061_270); // JVM heap ≈ 153.6m
        assert_eq!(m.framework_off_heap + m.task_off_heap + m.network, 192 * MIB);
        // direct memory
    }

    #[test]
    fn weir_model_of_the_default_1728m_has_no_metaspace() {
        let m = TaskExecutorMemory::from_config(&Configuration::new()).unwrap();
        assert_invariants(&m);
        assert_eq!(m.jvm_metaspace, 0);
        assert_eq!(m.jvm_overhead, 192 * MIB); // 172.8m clamped up to 192m
        assert_eq!(m.total_flink, 1536 * MIB); // 1728 − 192
        assert_eq!(m.total_process, 1728 * MIB);
        assert_eq!(m.managed, 644_245_104); // 0.4f · 1536m
        assert_eq!(m.network, 161_061_276); // 0.1f · 1536m, inside [64m, 1g]
        assert_eq!(m.framework_heap, 128 * MIB);
        assert_eq!(m.framework_off_heap, 128 * MIB);
        assert_eq!(m.task_off_heap, 0);
        assert_eq!(m.task_heap, 536_870_900); // ≈ 512m
        assert_eq!(m.memory_configuration().jvm_metaspace, 0);
    }

    #[test]
    fn network_buffers_are_network_memory_over_the_segment_size() {
        let m = TaskExecutorMemory::flink_model(&conf(&[("taskmanager.memory.process.size", "1024m")])).unwrap();
        assert_eq!(m.network_buffers(32 * 1024), 2048);
        let weir = TaskExecutorMemory::from_config(&Configuration::new()).unwrap();
        assert_eq!(weir.network_buffers(32 * 1024), 4915); // 161061276 / 32768
        assert_eq!(weir.network_buffers(0), 0);
    }

    #[test]
    fn a_too_small_process_gives_a_negative_task_heap_error_showing_every_number() {
        let err = TaskExecutorMemory::from_config(&conf(&[("taskmanager.memory.process.size", "600m")])).unwrap_err();
        // overhead 192m → total Flink 408m; managed 163.2m + network 64m + 256m framework > 408m.
        assert!(matches!(err, ConfigError::NegativeTaskHeap { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "Sum of configured Framework Heap Memory (128.000mb (134217728 bytes)), Framework Off-Heap Memory \
             (128.000mb (134217728 bytes)), Task Off-Heap Memory (0 bytes), Managed Memory (163.200mb (171127605 \
             bytes)) and Network Memory (64.000mb (67108864 bytes)) exceed configured Total Flink Memory \
             (408.000mb (427819008 bytes))."
        );
    }

    #[test]
    fn metaspace_and_overhead_larger_than_the_process_is_an_error() {
        let err = TaskExecutorMemory::flink_model(&conf(&[("taskmanager.memory.process.size", "400m")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Sum of configured JVM Metaspace (256.000mb (268435456 bytes)) and JVM Overhead (192.000mb (201326592 \
             bytes)) exceed configured Total Process Memory (400.000mb (419430400 bytes))."
        );
    }

    #[test]
    fn managed_size_overrides_the_fraction() {
        let m = TaskExecutorMemory::from_config(&conf(&[("taskmanager.memory.managed.size", "100m")])).unwrap();
        assert_invariants(&m);
        assert_eq!(m.managed, 100 * MIB);
        assert_eq!(m.total_process, 1728 * MIB);
    }

    #[test]
    fn network_fraction_is_clamped_to_max() {
        let m = TaskExecutorMemory::from_config(&conf(&[
            ("taskmanager.memory.process.size", "4g"),
            ("taskmanager.memory.network.max", "100m"),
        ]))
        .unwrap();
        assert_invariants(&m);
        assert_eq!(m.network, 100 * MIB);
    }

    #[test]
    fn flink_size_drives_the_derivation_and_overhead_comes_by_inverse_fraction() {
        let m = TaskExecutorMemory::flink_model(&conf(&[("taskmanager.memory.flink.size", "1280m")])).unwrap();
        assert_invariants(&m);
        assert_eq!(m.total_flink, 1280 * MIB);
        assert_eq!(m.managed, 536_870_920);
        assert_eq!(m.network, 134_217_730);
        // (1280m + 256m) · 0.1f/0.9f ≈ 170.7m → clamped up to 192m.
        assert_eq!(m.jvm_overhead, 192 * MIB);
        assert_eq!(m.total_process, 1728 * MIB);
    }

    #[test]
    fn flink_size_with_an_inconsistent_process_size_is_an_error() {
        let err = TaskExecutorMemory::flink_model(&conf(&[
            ("taskmanager.memory.flink.size", "1280m"),
            ("taskmanager.memory.process.size", "1600m"),
        ]))
        .unwrap_err();
        // overhead would be 1600 − 1280 − 256 = 64m, below the 192m minimum.
        assert!(
            err.to_string().starts_with("Derived JVM Overhead size (64.000mb"),
            "{err}"
        );
        let err = TaskExecutorMemory::flink_model(&conf(&[
            ("taskmanager.memory.flink.size", "1280m"),
            ("taskmanager.memory.process.size", "1g"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().starts_with("The configured Total Process Memory size"),
            "{err}"
        );
    }

    #[test]
    fn fine_grained_task_heap_and_managed_derive_network_by_inverse_fraction() {
        let m = TaskExecutorMemory::from_config(&conf(&[
            ("taskmanager.memory.task.heap.size", "512m"),
            ("taskmanager.memory.managed.size", "512m"),
        ]))
        .unwrap();
        assert_invariants(&m);
        assert_eq!(m.task_heap, 512 * MIB);
        assert_eq!(m.managed, 512 * MIB);
        // (128 + 128 + 512 + 0 + 512)m = 1280m; network = 1280m · 0.1f/0.9f ≈ 142.2m.
        assert_eq!(
            m.network,
            MemorySize(1280 * MIB)
                .multiply(0.1f32 as f64 / (1.0 - 0.1f32 as f64))
                .unwrap()
                .bytes()
        );
        assert!(m.network > 142 * MIB && m.network < 143 * MIB);
    }

    #[test]
    fn task_heap_with_flink_size_leaves_network_as_the_rest_and_checks_its_range() {
        let m = TaskExecutorMemory::from_config(&conf(&[
            ("taskmanager.memory.flink.size", "1280m"),
            ("taskmanager.memory.task.heap.size", "400m"),
            ("taskmanager.memory.managed.size", "500m"),
        ]))
        .unwrap();
        assert_invariants(&m);
        assert_eq!(m.network, (1280 - 128 - 128 - 400 - 500) * MIB);
        let err = TaskExecutorMemory::from_config(&conf(&[
            ("taskmanager.memory.flink.size", "1280m"),
            ("taskmanager.memory.task.heap.size", "500m"),
            ("taskmanager.memory.managed.size", "500m"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().contains("is not in configured Network Memory range"),
            "{err}"
        );
        let err = TaskExecutorMemory::from_config(&conf(&[
            ("taskmanager.memory.flink.size", "1g"),
            ("taskmanager.memory.task.heap.size", "1g"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().starts_with("Sum of configured Framework Heap Memory"),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("Task Heap Memory (1024.000mb (1073741824 bytes))"),
            "{err}"
        );
    }

    #[test]
    fn inconsistent_ranges_and_fractions_are_errors() {
        let err = TaskExecutorMemory::from_config(&conf(&[
            ("taskmanager.memory.network.min", "2g"),
            ("taskmanager.memory.network.max", "1g"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().contains("min value must be less or equal to max value"),
            "{err}"
        );
        let err =
            TaskExecutorMemory::from_config(&conf(&[("taskmanager.memory.managed.fraction", "1.0")])).unwrap_err();
        assert!(err.to_string().contains("fraction must be in range [0, 1)"), "{err}");
        let err =
            TaskExecutorMemory::from_config(&conf(&[("taskmanager.memory.managed.fraction", "lots")])).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidValue { .. }), "{err:?}");
    }
}
