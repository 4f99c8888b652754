//! A `weir jobmanager`/`weir taskmanager` child process whose first stdout line (the
//! addresses it bound) has been read; killed when dropped. Used by `bench-cluster` and
//! by the tests that start real clusters.

use anyhow::{anyhow, Context, Result};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running child process of the `weir` binary.
pub struct Daemon {
    /// The process.
    pub child: Child,
    /// Its start-up line, e.g. `JobManager rpc=127.0.0.1:41234 rest=127.0.0.1:40001`.
    pub line: String,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Daemon {
    /// Starts `exe <role> -D <dynamic>...` (stderr goes to `stderr`) and waits for its
    /// start-up line; stdout is drained afterwards so the child never blocks on it.
    pub fn start(exe: &Path, role: &str, dynamic: &[String], stderr: Stdio) -> Result<Daemon> {
        let mut cmd = Command::new(exe);
        cmd.arg(role);
        for d in dynamic {
            cmd.arg("-D").arg(d);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("cannot start {role}"))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout of {role}"))?;
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        std::thread::spawn(move || {
            let mut sink = String::new();
            while reader.read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
                sink.clear();
            }
        });
        let line = line.trim().to_string();
        if line.is_empty() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(anyhow!("{role} exited before it started serving"));
        }
        Ok(Daemon { child, line })
    }

    /// The value of `key=` in the start-up line.
    pub fn field(&self, key: &str) -> Result<String> {
        self.line
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .map(str::to_string)
            .ok_or_else(|| anyhow!("no {key}= in the start-up line '{}'", self.line))
    }

    /// SIGKILLs the process (idempotent).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
