//! Internal mutual TLS on by default for the processes `weir start-cluster` and `weir
//! bench-cluster` start, and for a TaskManager joining a started cluster with `weir
//! taskmanager --cluster-dir <dir>`.
//!
//! The rule is [`InternalTlsSource`]'s: plaintext only when the configuration says
//! `security.ssl.internal.enabled: false`, the operator's files when it names any,
//! otherwise the cluster's own CA in `<cluster.dir>/tls/` (`weir_security::cluster_pki`):
//! the starting command issues each process a certificate file and hands it the
//! `security.ssl.internal.*` entries, so a daemon reads them like any configuration. A
//! joining TaskManager issues itself a certificate from the same CA, in memory.
//! Whoever can read `cluster.dir` is the cluster's operator: it holds the CA key (mode
//! 0600 in a 0700 directory).

use super::discovery::BoundAddresses;
use anyhow::{anyhow, Result};
use std::path::Path;
use std::sync::Arc;
use weir_config::options as o;
use weir_config::Configuration;
use weir_security::cluster_pki::ClusterPki;
use weir_security::cluster_tls::{internal_ssl_entries, jobmanager_hosts, taskmanager_hosts, InternalTlsSource};
use weir_security::InternalTls;

/// The `-D` entries each process of a cluster being started gets for internal TLS.
#[derive(Debug, Clone)]
pub struct ClusterTls {
    /// Where the cluster's internal TLS comes from.
    pub source: InternalTlsSource,
    /// The JobManager's entries.
    pub jobmanager: Vec<String>,
    /// The entries of TaskManager `i`.
    pub taskmanagers: Vec<Vec<String>>,
}

/// Decides the internal TLS of a cluster of one JobManager and `taskmanagers`
/// TaskManagers configured by `config` and, for the cluster CA, makes or reuses it in
/// `dir` and issues every process its certificate.
pub fn prepare(config: &Configuration, dir: &Path, taskmanagers: u32) -> Result<ClusterTls> {
    let source = InternalTlsSource::of(config)?;
    let (jobmanager, taskmanagers) = match source {
        InternalTlsSource::Off => (Vec::new(), vec![Vec::new(); taskmanagers as usize]),
        InternalTlsSource::Configured => {
            let on = vec![format!("{}=true", o::SSL_INTERNAL_ENABLED.key())];
            (on.clone(), vec![on; taskmanagers as usize])
        }
        InternalTlsSource::ClusterCa => {
            let pki = ClusterPki::open_or_create(dir)?;
            let jm = pki.issue_files("jobmanager", &jobmanager_hosts(config)?)?;
            let tm_hosts = taskmanager_hosts(config)?;
            let mut tms = Vec::with_capacity(taskmanagers as usize);
            for i in 0..taskmanagers {
                let tm = pki.issue_files(&format!("taskmanager-{i}"), &tm_hosts)?;
                tms.push(internal_ssl_entries(&tm.cert, &tm.key, &pki.ca_cert()));
            }
            (internal_ssl_entries(&jm.cert, &jm.key, &pki.ca_cert()), tms)
        }
    };
    Ok(ClusterTls {
        source,
        jobmanager,
        taskmanagers,
    })
}

/// Points `config` at the cluster `weir start-cluster` started in `dir`: `cluster.dir`,
/// the JobManager RPC port it bound, and internal TLS by the same rule as the cluster
/// (for the cluster CA, a certificate issued in memory, returned). An error when no
/// cluster runs there or its CA cannot be used.
pub fn join(config: &mut Configuration, dir: &Path) -> Result<Option<Arc<InternalTls>>> {
    let bound = BoundAddresses::read(dir).ok_or_else(|| {
        anyhow!(
            "no {} in {}: is a cluster started by `weir start-cluster` running there?",
            super::discovery::ADDRESS_FILE,
            dir.display()
        )
    })?;
    config.set_string("cluster.dir", dir.display().to_string());
    config.set(&o::JOBMANAGER_RPC_PORT, bound.rpc_port);
    match InternalTlsSource::of(config)? {
        InternalTlsSource::Off => Ok(None),
        InternalTlsSource::Configured => {
            config.set(&o::SSL_INTERNAL_ENABLED, true);
            Ok(None)
        }
        InternalTlsSource::ClusterCa => {
            // The process's settings must not look for files of their own.
            config.remove(o::SSL_INTERNAL_ENABLED.key());
            let pki = ClusterPki::open(dir)?;
            let (identity, trust) = pki.issue_identity("taskmanager", &taskmanager_hosts(config)?)?;
            Ok(Some(InternalTls::new(identity, trust)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(entries: &[&str]) -> Configuration {
        let mut c = Configuration::new();
        let entries: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        c.apply_dynamic_properties(&entries).unwrap();
        c
    }

    #[test]
    fn a_default_cluster_gets_certificate_files_of_its_own_ca_and_an_opted_out_one_none() {
        let dir = tempfile::tempdir().unwrap();
        let tls = prepare(&config(&[]), dir.path(), 2).unwrap();
        assert_eq!(tls.source, InternalTlsSource::ClusterCa);
        let ca = dir.path().join("tls/ca.crt");
        let tm1 = dir.path().join("tls/taskmanager-1");
        assert_eq!(
            tls.taskmanagers[1],
            internal_ssl_entries(&tm1.with_extension("crt"), &tm1.with_extension("key"), &ca)
        );
        let mut jm = config(&[]);
        jm.apply_dynamic_properties(&tls.jobmanager).unwrap();
        assert!(InternalTls::from_config(&jm).unwrap().is_some());

        let off = tempfile::tempdir().unwrap();
        let tls = prepare(&config(&["security.ssl.internal.enabled=false"]), off.path(), 1).unwrap();
        assert_eq!((tls.jobmanager.len(), tls.taskmanagers), (0, vec![Vec::new()]));
        assert!(!off.path().join("tls").exists(), "nothing generated");
    }

    #[test]
    fn a_joining_taskmanager_takes_the_bound_port_and_a_certificate_of_the_cluster_ca() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(&[]);
        let err = join(&mut c, dir.path()).unwrap_err().to_string();
        assert!(err.contains("jobmanager.address"), "{err}");
        BoundAddresses {
            rpc_port: 40123,
            rest_port: 40124,
        }
        .write(dir.path())
        .unwrap();
        let err = join(&mut c, dir.path()).unwrap_err().to_string();
        assert!(err.contains("no cluster CA"), "{err}");
        prepare(&config(&[]), dir.path(), 0).unwrap();
        let mut c = config(&["security.ssl.internal.enabled=true"]);
        let tls = join(&mut c, dir.path()).unwrap().expect("the cluster CA's TLS");
        assert_eq!(c.get(&o::JOBMANAGER_RPC_PORT).unwrap(), 40123);
        assert!(!c.contains(&o::SSL_INTERNAL_ENABLED));
        assert_eq!(tls.identity.certs.len(), 1);
        let mut off = config(&["security.ssl.internal.enabled=false"]);
        assert!(join(&mut off, dir.path()).unwrap().is_none());
    }
}
