//! Where checkpoints and savepoints are stored: a location is a local path or an object
//! store URL (`s3://`, `gs://`, `az://`), and this crate owns every read, write and
//! delete of one (Flink's `FileSystem` abstraction, for checkpoint storage).
//!
//! - [`location`]: parsing a location string ([`Location`]), pure; unsupported schemes
//!   are [`FsError::UnsupportedScheme`] naming the supported ones.
//! - [`operations`]: the blocking operations ([`put`], [`put_new`], [`get`], [`stat`],
//!   [`list`], [`delete_all`], [`move_file`]) on either kind of location.
//! - [`options`] and [`stores`]: the process-wide object store settings (Flink's `s3.*`
//!   options plus the `AWS_*`, `GOOGLE_*`, `AZURE_*` environment) and the stores built
//!   from them, one per bucket.
//! - `bridge`: the dedicated runtime that drives object_store's async requests for
//!   callers on plain threads and on tokio runtimes alike.
//!
//! Invariants: local paths behave exactly as plain files did before object stores
//! (temporary file and rename, `_metadata` published by hard link and never replaced);
//! on object stores every write is one whole-object PUT, so a visible object is always
//! complete; every error names the location it is about.

#![warn(missing_docs)]

mod bridge;
mod created_dirs;
mod entry;
pub mod error;
mod local;
pub mod location;
mod object;
pub mod operations;
pub mod options;
pub mod stores;
#[cfg(feature = "s3-test-server")]
pub mod test_server;

pub use error::FsError;
pub use error::SUPPORTED_SCHEMES;
pub use location::{is_relative, Location, ObjectLocation, StoreKind};
pub use operations::{create_dir_all, delete_all, get, list, move_file, put, put_new, remove_empty_dir, stat, Entry};
pub use options::ObjectStoreOptions;
pub use stores::{build_store, initialize, register_store};
