//! Where a cluster started by `weir start-cluster` really listens.
//!
//! With `jobmanager.rpc.port: 0` or `rest.port: 0` the JobManager binds ephemeral
//! ports that only it knows. `start-cluster` reads them from the JobManager's start-up
//! line and records them in `<cluster.dir>/jobmanager.address` ([`ADDRESS_FILE`]):
//! the TaskManagers are started with the real RPC port, and client commands (`run`,
//! `list`, `cancel`, `savepoint`, `stop`, `top`) given no `-m` find the real REST
//! address there. `stop-cluster` removes the file.

use super::client::Target;
use super::settings::ConfigArgs;
use super::Command;
use clap::parser::ValueSource;
use clap::ArgMatches;
use std::path::{Path, PathBuf};

/// The file in `cluster.dir` holding the addresses the JobManager bound.
pub const ADDRESS_FILE: &str = "jobmanager.address";

/// The addresses a JobManager printed in its start-up line
/// (`JobManager rpc=<host:port> rest=<host:port>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundAddresses {
    /// The RPC port it bound.
    pub rpc_port: u16,
    /// The REST port it bound.
    pub rest_port: u16,
}

/// Errors reading or writing the address file.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The port of `host:port` (IPv6 hosts in brackets included).
fn port_of(address: &str) -> Option<u16> {
    address.rsplit(':').next()?.parse().ok()
}

impl BoundAddresses {
    /// The addresses of a JobManager start-up line; `None` for any other line (and for
    /// one without a REST address).
    pub fn from_start_line(line: &str) -> Option<BoundAddresses> {
        let rest = line.trim().strip_prefix("JobManager ")?;
        let field = |key: &str| {
            rest.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .and_then(port_of)
        };
        Some(BoundAddresses {
            rpc_port: field("rpc=")?,
            rest_port: field("rest=")?,
        })
    }

    /// Writes `rpc_port=` and `rest_port=` lines to `dir/`[`ADDRESS_FILE`].
    pub fn write(&self, dir: &Path) -> Result<(), DiscoveryError> {
        let path = dir.join(ADDRESS_FILE);
        let text = format!("rpc_port={}\nrest_port={}\n", self.rpc_port, self.rest_port);
        std::fs::write(&path, text).map_err(|source| DiscoveryError::Write { path, source })
    }

    /// The addresses recorded in `dir/`[`ADDRESS_FILE`], if it exists and is whole.
    pub fn read(dir: &Path) -> Option<BoundAddresses> {
        let text = std::fs::read_to_string(dir.join(ADDRESS_FILE)).ok()?;
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse().ok())
        };
        Some(BoundAddresses {
            rpc_port: field("rpc_port=")?,
            rest_port: field("rest_port=")?,
        })
    }
}

/// The REST address of the cluster `start-cluster` started in the `cluster.dir` that
/// `dynamic` (over `config.yaml`) names: `rest.address` with the port it bound.
fn started_cluster_rest(dynamic: &[String]) -> Option<String> {
    let config = ConfigArgs {
        conf_dir: None,
        dynamic: dynamic.to_vec(),
    }
    .load()
    .ok()?;
    let bound = BoundAddresses::read(&config.cluster_dir().ok()?)?;
    let host = config.get(&weir_config::options::REST_ADDRESS).ok()?;
    Some(format!("{host}:{}", bound.rest_port))
}

/// For a client command given no `-m`: the REST address of the cluster `start-cluster`
/// started (its [`ADDRESS_FILE`]) instead of the default `127.0.0.1:8081`.
pub fn resolve_jobmanager(command: &mut Command, matches: &ArgMatches) {
    let Some((_, sub)) = matches.subcommand() else {
        return;
    };
    if sub.try_get_raw("jobmanager").ok().flatten().is_none()
        || sub.value_source("jobmanager") != Some(ValueSource::DefaultValue)
    {
        return;
    }
    let target: &mut Target = match command {
        Command::Run(args) => &mut args.target,
        Command::List(target) | Command::Cancel { target, .. } => target,
        Command::Savepoint(args) => &mut args.target,
        Command::Stop(args) => &mut args.target,
        Command::Top(args) => &mut args.target,
        _ => return,
    };
    if let Some(rest) = started_cluster_rest(&target.dynamic) {
        target.jobmanager = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ports_are_read_from_a_jobmanager_start_line_and_nothing_else() {
        let line = "JobManager rpc=127.0.0.1:41234 rest=127.0.0.1:40001 metrics.prom=http://x:9";
        assert_eq!(
            BoundAddresses::from_start_line(line),
            Some(BoundAddresses {
                rpc_port: 41234,
                rest_port: 40001
            })
        );
        assert_eq!(
            BoundAddresses::from_start_line("JobManager rpc=127.0.0.1:1 rest=-"),
            None
        );
        assert_eq!(
            BoundAddresses::from_start_line("2026 WARN something rpc=1:2 rest=3:4"),
            None
        );
    }

    #[test]
    fn written_addresses_are_read_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(BoundAddresses::read(dir.path()), None);
        let bound = BoundAddresses {
            rpc_port: 7,
            rest_port: 9,
        };
        bound.write(dir.path()).unwrap();
        assert_eq!(BoundAddresses::read(dir.path()), Some(bound));
    }
}
