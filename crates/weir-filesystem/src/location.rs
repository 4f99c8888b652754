//! What a checkpoint location is: a local path or an object in an object store.
//!
//! [`Location::parse`] is pure (no I/O) and is the one place that decides which form a
//! string has:
//!
//! - a plain path (`/data/chk`, `chk`), `file:///data/chk`, `file://localhost/data/chk`
//!   or `file:/data/chk` is a local path;
//! - `s3://bucket/prefix` (also `s3a://`), `gs://bucket/prefix` and
//!   `az://container/prefix` (also `abfs://` and `abfss://`, in object_store's forms
//!   `abfss://container/prefix` and `abfss://container@account.dfs.core.windows.net/prefix`)
//!   are objects: the store is `scheme://authority` (one bucket), the key the path in it;
//! - any other `scheme://…` is [`FsError::UnsupportedScheme`].
//!
//! Invariants: an object location's key has no empty, `.` or `..` segment (object_store's
//! path rules), so joining names to it never leaves the prefix; the string form of an
//! object location (`Display`) is `scheme://authority/key` without a trailing `/`, and
//! parsing it again gives the same location.

use std::fmt;
use std::path::{Path as LocalPath, PathBuf};

use object_store::path::Path as ObjectPath;

use crate::error::FsError;

/// Which kind of object store a location is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// Amazon S3 or an S3-compatible service (`s3://`, `s3a://`).
    S3,
    /// Google Cloud Storage (`gs://`).
    Gcs,
    /// Azure Blob Storage / Data Lake Storage (`az://`, `abfs://`, `abfss://`).
    Azure,
}

impl StoreKind {
    fn of_scheme(scheme: &str) -> Option<StoreKind> {
        match scheme {
            "s3" | "s3a" => Some(StoreKind::S3),
            "gs" => Some(StoreKind::Gcs),
            "az" | "abfs" | "abfss" => Some(StoreKind::Azure),
            _ => None,
        }
    }
}

/// An object, or a prefix of objects, in one bucket of an object store.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectLocation {
    kind: StoreKind,
    store_url: String,
    key: ObjectPath,
}

impl ObjectLocation {
    /// The kind of store.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// `scheme://authority`: the bucket (container), which identifies the store.
    pub fn store_url(&self) -> &str {
        &self.store_url
    }

    /// The URL scheme as written (`s3`, `s3a`, `gs`, `az`, …).
    pub fn scheme(&self) -> &str {
        self.store_url.split_once("://").map_or("", |(s, _)| s)
    }

    /// The key (the path inside the bucket), without leading or trailing `/`.
    pub fn key(&self) -> &ObjectPath {
        &self.key
    }

    /// The object `name` below this prefix.
    pub fn child(&self, name: &str) -> ObjectLocation {
        let key = name
            .split('/')
            .filter(|p| !p.is_empty() && *p != "." && *p != "..")
            .fold(self.key.clone(), |key, part| key.join(part));
        ObjectLocation { key, ..self.clone() }
    }

    /// The prefix this object is in; `None` for the bucket itself.
    pub fn parent(&self) -> Option<ObjectLocation> {
        let key = self.key.parent()?;
        Some(ObjectLocation { key, ..self.clone() })
    }

    /// The last segment of the key; `None` for the bucket itself.
    pub fn file_name(&self) -> Option<String> {
        self.key.filename().map(str::to_string)
    }
}

impl fmt::Display for ObjectLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.as_ref().is_empty() {
            write!(f, "{}", self.store_url)
        } else {
            write!(f, "{}/{}", self.store_url, self.key)
        }
    }
}

/// A checkpoint location: a local path or an object store location.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Location {
    /// A path on the local file system.
    Local(PathBuf),
    /// An object, or a prefix of objects, in an object store.
    Object(ObjectLocation),
}

impl Location {
    /// Parses a location given as a string (see the module documentation). Pure.
    pub fn parse(location: &str) -> Result<Location, FsError> {
        if let Some(rest) = location.strip_prefix("file://") {
            // file:///tmp/x → /tmp/x; file://localhost/tmp/x → /tmp/x
            let rest = rest.strip_prefix("localhost").unwrap_or(rest);
            return Ok(Location::Local(PathBuf::from(rest)));
        }
        if let Some(rest) = location.strip_prefix("file:") {
            return Ok(Location::Local(PathBuf::from(rest)));
        }
        let Some(scheme) = url_scheme(location) else {
            return Ok(Location::Local(PathBuf::from(location)));
        };
        let scheme = scheme.to_ascii_lowercase();
        let Some(kind) = StoreKind::of_scheme(&scheme) else {
            return Err(FsError::unsupported(&scheme, location));
        };
        let invalid = |reason: String| FsError::InvalidLocation {
            location: location.to_string(),
            reason,
        };
        let url = url::Url::parse(location).map_err(|e| invalid(e.to_string()))?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid("no bucket (container) after the scheme".to_string()));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid("a storage location has no query or fragment".to_string()));
        }
        let authority = &url[url::Position::BeforeUsername..url::Position::AfterPort];
        let key = ObjectPath::from_url_path(url.path()).map_err(|e| invalid(e.to_string()))?;
        Ok(Location::Object(ObjectLocation {
            kind,
            store_url: format!("{scheme}://{authority}"),
            key,
        }))
    }

    /// `file` for a local path, else the URL scheme (`s3`, `gs`, …): the name of the
    /// file system in messages, as Flink names it.
    pub fn scheme(&self) -> &str {
        match self {
            Location::Local(_) => "file",
            Location::Object(o) => o.scheme(),
        }
    }

    /// The location `name` inside this one (`name` may hold several `/`-separated
    /// segments; on object stores `.` and `..` segments are dropped).
    pub fn child(&self, name: &str) -> Location {
        match self {
            Location::Local(path) => Location::Local(path.join(name)),
            Location::Object(o) => Location::Object(o.child(name)),
        }
    }

    /// The directory or prefix this location is in; `None` at a root.
    pub fn parent(&self) -> Option<Location> {
        match self {
            Location::Local(path) => path.parent().map(|p| Location::Local(p.to_path_buf())),
            Location::Object(o) => o.parent().map(Location::Object),
        }
    }

    /// The last segment of the path or key.
    pub fn file_name(&self) -> Option<String> {
        match self {
            Location::Local(path) => path.file_name().map(|n| n.to_string_lossy().into_owned()),
            Location::Object(o) => o.file_name(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Local(path) => write!(f, "{}", path.display()),
            Location::Object(o) => o.fmt(f),
        }
    }
}

/// The scheme of `location` when it is written `scheme://…` with a well-formed scheme.
fn url_scheme(location: &str) -> Option<&str> {
    let (scheme, _) = location.split_once("://")?;
    let well_formed = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    well_formed.then_some(scheme)
}

/// Whether a state file path stored in a savepoint's `_metadata` is relative to the
/// savepoint: neither a URL (`scheme://…`, `file:…`) nor an absolute local path.
pub fn is_relative(path: &str) -> bool {
    url_scheme(path).is_none() && !path.starts_with("file:") && LocalPath::new(path).is_relative()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(location: &str) -> ObjectLocation {
        match Location::parse(location) {
            Ok(Location::Object(o)) => o,
            other => panic!("{location}: {other:?}"),
        }
    }

    #[test]
    fn plain_paths_and_file_urls_are_local_paths() {
        for (given, path) in [
            ("/data/chk", "/data/chk"),
            ("relative/chk", "relative/chk"),
            ("file:///data/chk", "/data/chk"),
            ("file://localhost/data/chk", "/data/chk"),
            ("file:/data/chk", "/data/chk"),
        ] {
            assert_eq!(
                Location::parse(given),
                Ok(Location::Local(PathBuf::from(path))),
                "{given}"
            );
        }
        assert_eq!(Location::parse("/data").unwrap().scheme(), "file");
    }

    #[test]
    fn object_store_urls_split_into_bucket_and_key() {
        let o = object("s3://bucket/some/prefix/");
        assert_eq!(
            (o.kind(), o.store_url(), o.key().as_ref()),
            (StoreKind::S3, "s3://bucket", "some/prefix")
        );
        assert_eq!(o.to_string(), "s3://bucket/some/prefix");
        assert_eq!(object("s3a://b/k").kind(), StoreKind::S3);
        assert_eq!(object("gs://b/k").kind(), StoreKind::Gcs);
        assert_eq!(object("az://container/k").kind(), StoreKind::Azure);
        assert_eq!(object("abfs://container/k").kind(), StoreKind::Azure);
        let adls = object("abfss://fs@account.dfs.core.windows.net/chk");
        assert_eq!(adls.store_url(), "abfss://fs@account.dfs.core.windows.net");
        assert_eq!(adls.key().as_ref(), "chk");
        assert_eq!(object("s3://bucket").to_string(), "s3://bucket");
        assert_eq!(object("S3://bucket/k").scheme(), "s3");
    }

    #[test]
    fn the_string_form_of_an_object_location_parses_back_to_it() {
        for given in [
            "s3://b/a/b/c",
            "gs://b",
            "az://c/x/_metadata",
            "s3://b/k%20with%20space",
        ] {
            let o = object(given);
            assert_eq!(object(&o.to_string()), o, "{given}");
        }
    }

    #[test]
    fn children_parents_and_names_stay_inside_the_bucket() {
        let dir = Location::parse("s3://b/chk/job").unwrap();
        let file = dir.child("chk-1/_metadata");
        assert_eq!(file.to_string(), "s3://b/chk/job/chk-1/_metadata");
        assert_eq!(file.file_name().as_deref(), Some("_metadata"));
        assert_eq!(file.parent().unwrap().to_string(), "s3://b/chk/job/chk-1");
        assert_eq!(dir.child("../../etc").to_string(), "s3://b/chk/job/etc");
        assert_eq!(Location::parse("s3://b").unwrap().parent(), None);
        let local = Location::parse("/d/chk-1").unwrap();
        assert_eq!(local.child("x"), Location::Local(PathBuf::from("/d/chk-1/x")));
        assert_eq!(local.parent(), Some(Location::Local(PathBuf::from("/d"))));
    }

    #[test]
    fn unsupported_schemes_are_refused_naming_the_supported_ones() {
        let err = Location::parse("hdfs://namenode/chk").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unsupported file system scheme 'hdfs' in 'hdfs://namenode/chk': supported are local paths, \
             file://, s3:// (or s3a://), gs:// and az:// (or abfs://, abfss://)"
        );
        assert!(matches!(
            Location::parse("s3p://b/x"),
            Err(FsError::UnsupportedScheme { .. })
        ));
    }

    #[test]
    fn object_urls_without_a_bucket_or_with_empty_segments_are_invalid() {
        for bad in ["s3:///key", "s3://b/a//c", "gs://b/x?versionId=1"] {
            assert!(
                matches!(Location::parse(bad), Err(FsError::InvalidLocation { .. })),
                "{bad}: {:?}",
                Location::parse(bad)
            );
        }
    }

    #[test]
    fn only_bare_names_and_relative_paths_are_relative_handles() {
        assert!(is_relative("v-0-0"));
        assert!(is_relative("sub/v-0-0"));
        assert!(!is_relative("/abs/v-0-0"));
        assert!(!is_relative("s3://b/v-0-0"));
        assert!(!is_relative("file:/abs/v"));
    }
}
