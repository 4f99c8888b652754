//! The daemons one `weir start-cluster` has started so far, stopped again if it fails.
//!
//! A start-up that fails halfway (the REST port is taken, a TaskManager's settings are
//! refused, the slots never register) must not leave a JobManager or TaskManagers
//! running behind an error: [`Startup`] holds every child it spawned and, unless
//! [`Startup::succeeded`] is called, kills them and removes their pid files and the
//! address file when dropped.

use super::discovery::{BoundAddresses, ADDRESS_FILE};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// Errors of a start-up.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// A daemon ended before the cluster was ready.
    #[error("{name} exited ({status}) during start-up: {last_lines}")]
    Exited {
        /// `jobmanager`, `taskmanager-<i>`.
        name: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last lines of its log.
        last_lines: String,
    },
    /// The JobManager did not print its addresses in time.
    #[error("the jobmanager did not report its addresses within {0:?}; see {1}")]
    NoAddresses(Duration, PathBuf),
    /// Its state could not be checked.
    #[error("cannot check {name}: {source}")]
    Wait {
        /// The daemon.
        name: String,
        /// Why.
        source: std::io::Error,
    },
}

/// A daemon started by this start-up.
struct Started {
    name: String,
    child: Child,
}

/// The daemons started so far, in `dir` (`cluster.dir`).
pub struct Startup {
    dir: PathBuf,
    started: Vec<Started>,
    succeeded: bool,
}

/// The last `n` non-empty lines of `path`, joined with ` | ` (the reason a daemon gave).
fn last_lines(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(n)..].join(" | ");
    if tail.is_empty() {
        "(its log is empty)".into()
    } else {
        tail
    }
}

impl Startup {
    /// Nothing started yet, in `dir`.
    pub fn new(dir: &Path) -> Startup {
        Startup {
            dir: dir.to_path_buf(),
            started: Vec::new(),
            succeeded: false,
        }
    }

    /// Records a spawned daemon `name` (its log is `<dir>/<name>.log`).
    pub fn add(&mut self, name: &str, child: Child) {
        self.started.push(Started {
            name: name.to_string(),
            child,
        });
    }

    /// An error when a daemon started has ended, naming it and its log's last lines.
    pub fn check_alive(&mut self) -> Result<(), StartupError> {
        for s in &mut self.started {
            let status = s.child.try_wait().map_err(|source| StartupError::Wait {
                name: s.name.clone(),
                source,
            })?;
            if let Some(status) = status {
                return Err(StartupError::Exited {
                    name: s.name.clone(),
                    status,
                    last_lines: last_lines(&self.dir.join(format!("{}.log", s.name)), 3),
                });
            }
        }
        Ok(())
    }

    /// Waits until the JobManager's log holds its start-up line and returns the ports
    /// it bound; fails when a daemon ends first or `within` passes.
    pub fn jobmanager_addresses(&mut self, within: Duration) -> Result<BoundAddresses, StartupError> {
        let log = self.dir.join("jobmanager.log");
        let deadline = Instant::now() + within;
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(bound) = text.lines().find_map(BoundAddresses::from_start_line) {
                return Ok(bound);
            }
            self.check_alive()?;
            if Instant::now() >= deadline {
                return Err(StartupError::NoAddresses(within, log));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The cluster is up: its daemons keep running after this process exits.
    pub fn succeeded(mut self) {
        self.succeeded = true;
    }
}

impl Drop for Startup {
    fn drop(&mut self) {
        if self.succeeded {
            return;
        }
        for s in &mut self.started {
            // Already ended is fine: both calls only report that.
            if let Err(e) = s.child.kill() {
                tracing::debug!("{} had ended: {e}", s.name);
            }
            if let Err(e) = s.child.wait() {
                tracing::warn!("cannot reap {}: {e}", s.name);
            }
            eprintln!("Stopped {} (pid {}) after the failed start.", s.name, s.child.id());
            let pid_file = self.dir.join(format!("{}.pid", s.name));
            if let Err(e) = std::fs::remove_file(&pid_file) {
                tracing::warn!("cannot remove {}: {e}", pid_file.display());
            }
        }
        if let Err(e) = std::fs::remove_file(self.dir.join(ADDRESS_FILE)) {
            tracing::debug!("no address file to remove: {e}");
        }
    }
}
