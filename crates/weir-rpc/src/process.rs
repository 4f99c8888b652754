//! How a Weir process measures itself: CPU time, CPU load, resident memory and threads
//! read from `/proc/self` on Linux (elsewhere every field stays absent, never zero),
//! packed as the [`ProcessMetrics`] a TaskManager's heartbeat carries and the
//! JobManager reports for itself; and the [`LogFile`] entry describing a log file.
//!
//! Reading `/proc/self/stat` and `/proc/self/status` costs microseconds; callers sample
//! once per heartbeat or REST request, never on the record path.

use crate::{LogFile, ProcessMetrics};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Instant, UNIX_EPOCH};

/// The shortest window a CPU load is kept over: samples closer to the kept one than
/// this are measured against it without replacing it, so frequent callers do not get
/// the noisy load of a few milliseconds.
const MIN_LOAD_WINDOW_MS: u128 = 1000;

/// Samples this process; remembers the previous CPU time for the load.
#[derive(Debug)]
pub struct ProcessSampler {
    previous: Mutex<Option<(Instant, u64)>>,
    cores: f64,
}

impl Default for ProcessSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessSampler {
    /// A sampler whose first load covers the time since it was created.
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        Self {
            previous: Mutex::new(read_cpu_time_ns().map(|ns| (Instant::now(), ns))),
            cores,
        }
    }

    /// The process now: CPU time, the load since the kept earlier sample (a share of
    /// every available core, 0..1), RSS and threads.
    pub fn sample(&self) -> ProcessMetrics {
        let now = Instant::now();
        let cpu_time_ns = read_cpu_time_ns();
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let (rss_bytes, threads) = parse_status(&status);
        let mut previous = self.previous.lock().unwrap_or_else(|p| p.into_inner());
        let cpu_load = match (*previous, cpu_time_ns) {
            (Some((then, before)), Some(ns)) => cpu_load(now.duration_since(then).as_nanos(), ns, before, self.cores),
            _ => None,
        };
        let keep_previous = previous.is_some_and(|(then, _)| now.duration_since(then).as_millis() < MIN_LOAD_WINDOW_MS);
        if !keep_previous {
            *previous = cpu_time_ns.map(|ns| (now, ns));
        }
        ProcessMetrics {
            cpu_time_ns,
            cpu_load,
            rss_bytes,
            threads,
        }
    }
}

/// The share of `cores` used over `wall_ns` by a process whose CPU time went from
/// `before` to `after`; `None` over an empty window.
fn cpu_load(wall_ns: u128, after: u64, before: u64, cores: f64) -> Option<f64> {
    if wall_ns == 0 || cores <= 0.0 {
        return None;
    }
    let used = after.saturating_sub(before) as f64;
    Some((used / (wall_ns as f64 * cores)).clamp(0.0, 1.0))
}

/// User plus system CPU time of every thread of this process, in nanoseconds.
fn read_cpu_time_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let ticks = parse_stat_cpu_ticks(&stat)?;
    let per_second = clock_ticks_per_second()?;
    Some(ticks.saturating_mul(1_000_000_000) / per_second)
}

#[cfg(target_os = "linux")]
fn clock_ticks_per_second() -> Option<u64> {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|t| *t > 0)
}

#[cfg(not(target_os = "linux"))]
fn clock_ticks_per_second() -> Option<u64> {
    None
}

/// `utime + stime` (fields 14 and 15, in clock ticks) of a `/proc/<pid>/stat` line. The
/// command name (field 2) may hold spaces and parentheses, so fields are counted after
/// its last `)`.
pub fn parse_stat_cpu_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime.saturating_add(stime))
}

/// `VmRSS` (in bytes) and `Threads` of a `/proc/<pid>/status` text.
pub fn parse_status(status: &str) -> (Option<u64>, Option<u64>) {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    (field("VmRSS:").map(|kib| kib.saturating_mul(1024)), field("Threads:"))
}

/// The [`LogFile`] entry of the file at `path`; `None` when it cannot be read.
pub fn log_file(path: &Path) -> Option<LogFile> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime_ms = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    Some(LogFile {
        name: path.file_name()?.to_string_lossy().into_owned(),
        size: meta.len(),
        mtime_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_counted_after_a_command_name_with_spaces_and_parentheses() {
        let stat = "42 (weir (tm) 1) S 1 42 42 0 -1 4194304 10 0 0 0 250 50 0 0 20 0 7 0 100 0 0";
        assert_eq!(parse_stat_cpu_ticks(stat), Some(300));
        assert_eq!(parse_stat_cpu_ticks("42 (weir) S 1"), None);
        assert_eq!(parse_stat_cpu_ticks("no parenthesis"), None);
    }

    #[test]
    fn rss_is_read_in_bytes_and_threads_as_counted() {
        let status = "Name:\tweir\nVmRSS:\t    2200 kB\nThreads:\t7\n";
        assert_eq!(parse_status(status), (Some(2200 * 1024), Some(7)));
        assert_eq!(parse_status("Name:\tweir\n"), (None, None));
    }

    #[test]
    fn load_is_the_share_of_all_cores_over_the_window() {
        // 0.5 s of CPU over 1 s of wall time on 2 cores: a quarter of the machine.
        assert_eq!(cpu_load(1_000_000_000, 1_500_000_000, 1_000_000_000, 2.0), Some(0.25));
        assert_eq!(cpu_load(0, 10, 0, 2.0), None);
        assert_eq!(cpu_load(10, 0, 5, 1.0), Some(0.0), "a clock going back reads as idle");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_cpu_time_memory_and_threads() {
        let sampler = ProcessSampler::new();
        let spin = Instant::now();
        while spin.elapsed().as_millis() < 20 {
            std::hint::black_box(spin.elapsed());
        }
        let m = sampler.sample();
        assert!(m.cpu_time_ns.is_some_and(|ns| ns > 0), "{m:?}");
        assert!(m.rss_bytes.is_some_and(|b| b > 0), "{m:?}");
        assert!(m.threads.is_some_and(|t| t >= 1), "{m:?}");
        assert!(m.cpu_load.is_some_and(|l| (0.0..=1.0).contains(&l)), "{m:?}");
    }
}
