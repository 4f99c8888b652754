//! Weir's security settings: TLS with Flink's `security.ssl.*` keys, PEM files instead
//! of Java keystores, on rustls with one crypto provider (aws-lc-rs).
//!
//! Modules, one idea each:
//! - [`pem`]: reading a certificate chain with its key ([`Identity`]) and the CAs a
//!   peer must be signed by ([`Trust`]), with errors naming the key and the file.
//! - [`configs`]: rustls server and client configurations (mutual TLS when a trust is
//!   given) and the server name of a `host:port` address.
//! - [`settings`]: what a process reads from its configuration: [`InternalTls`] for
//!   RPC and the data plane, [`rest_server_tls`] / [`rest_client_tls`] for REST.
//! - [`error`](mod@error): [`SecurityError`], why settings could not be loaded.
//! - `test_pki` (feature `test-pki`): certificates made at test time.
//! - [`cluster_tls`]: which internal TLS a cluster started by `weir start-cluster` runs
//!   with (secure by default), and the host names its certificates are valid for.
//! - `cluster_pki` (feature `cluster-pki`): the cluster's own CA in `cluster.dir`.

#![warn(missing_docs)]

#[cfg(any(test, feature = "cluster-pki"))]
pub mod cluster_pki;
pub mod cluster_tls;
pub mod configs;
pub mod error;
pub mod pem;
pub mod settings;
#[cfg(any(test, feature = "test-pki"))]
pub mod test_pki;

#[cfg(test)]
mod tests;

pub use configs::{client_config, install_crypto_provider, server_config, server_name, IdentityKeys};
pub use error::SecurityError;
pub use pem::{Identity, PemPath, Trust};
pub use rustls;
pub use settings::{rest_client_tls, rest_server_tls, InternalTls};
