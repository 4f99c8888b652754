//! The blocking storage operations on a location given as a string: each parses the
//! location ([`Location::parse`]) and runs on the local file system or, through the
//! object store runtime (the private `bridge` module), on the bucket's object store.
//!
//! Every function may be called from any thread, including a tokio runtime worker
//! (it then blocks that thread like a `std::fs` call). Errors name the location.

use std::future::Future;
use std::sync::Arc;

use object_store::ObjectStore;

pub use crate::entry::Entry;
use crate::error::FsError;
use crate::location::{Location, ObjectLocation};
use crate::{bridge, local, object, stores};

fn on_store<T, F, Fut>(location: ObjectLocation, operation: F) -> Result<T, FsError>
where
    T: Send + 'static,
    F: FnOnce(Arc<dyn ObjectStore>, ObjectLocation) -> Fut,
    Fut: Future<Output = Result<T, FsError>> + Send + 'static,
{
    let store = stores::store_for(&location)?;
    bridge::run(operation(store, location))
}

/// Writes `bytes` as the whole file or object at `location`, replacing an existing one.
/// Local: into a temporary file renamed into place (creating the directory); object
/// store: one PUT. Either way the file is complete whenever it is visible.
pub fn put(location: &str, bytes: Vec<u8>) -> Result<(), FsError> {
    match Location::parse(location)? {
        Location::Local(path) => local::put(&path, &bytes),
        Location::Object(o) => on_store(o, |store, o| object::put(store, o, bytes)),
    }
}

/// Like [`put`], but never replaces anything: [`FsError::AlreadyExists`] when the file
/// or object exists. Local: hard link of a synced temporary file (atomic); object store:
/// conditional PUT after a HEAD (see the private `object` module for stores without conditional
/// puts).
pub fn put_new(location: &str, bytes: Vec<u8>) -> Result<(), FsError> {
    match Location::parse(location)? {
        Location::Local(path) => local::put_new(&path, &bytes),
        Location::Object(o) => on_store(o, |store, o| object::put_new(store, o, bytes)),
    }
}

/// The bytes of the file or object at `location`; [`FsError::NotFound`] names it when
/// there is none.
pub fn get(location: &str) -> Result<Vec<u8>, FsError> {
    match Location::parse(location)? {
        Location::Local(path) => local::get(&path).map_err(|e| match e {
            FsError::NotFound { .. } => FsError::NotFound {
                location: location.to_string(),
            },
            other => other,
        }),
        Location::Object(o) => on_store(o, object::get),
    }
}

/// What `location` holds.
pub fn stat(location: &str) -> Result<Entry, FsError> {
    match Location::parse(location)? {
        Location::Local(path) => Ok(local::stat(&path)),
        Location::Object(o) => on_store(o, object::stat),
    }
}

/// Every file (object) at or below `location`, recursively, as locations of the same
/// form (local paths or URLs); sorted. Nothing there is an empty list.
pub fn list(location: &str) -> Result<Vec<String>, FsError> {
    match Location::parse(location)? {
        Location::Local(path) => Ok(local::list(&path)?
            .into_iter()
            .map(|p| p.display().to_string())
            .collect()),
        Location::Object(o) => on_store(o, object::list),
    }
}

/// Deletes the file or directory tree (object and every object below the prefix) at
/// `location`. Idempotent: nothing there is fine.
pub fn delete_all(location: &str) -> Result<(), FsError> {
    match Location::parse(location)? {
        Location::Local(path) => local::delete_all(&path),
        Location::Object(o) => on_store(o, object::delete_all),
    }
}

/// Moves the file or object `from` to `to`. Local: a rename (a copy and a delete across
/// devices); the same object store: a server-side copy and a delete; between stores:
/// read, write, delete.
pub fn move_file(from: &str, to: &str) -> Result<(), FsError> {
    match (Location::parse(from)?, Location::parse(to)?) {
        (Location::Local(a), Location::Local(b)) => local::move_file(&a, &b),
        (Location::Object(a), Location::Object(b)) if a.store_url() == b.store_url() => {
            on_store(a, |store, a| object::move_within(store, a, b))
        }
        _ => {
            put(to, get(from)?)?;
            delete_all(from)
        }
    }
}

/// Creates the directory `location` and its parents; nothing to do on object stores,
/// which have no directories.
pub fn create_dir_all(location: &str) -> Result<(), FsError> {
    match Location::parse(location)? {
        Location::Local(path) => local::create_dir_all(&path),
        Location::Object(_) => Ok(()),
    }
}

/// Removes the directory `location` if it is empty (a directory holding files is left
/// alone); nothing to do on object stores, where an empty prefix does not exist.
pub fn remove_empty_dir(location: &str) -> Result<(), FsError> {
    if let Location::Local(path) = Location::parse(location)? {
        local::remove_empty_dir(&path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    /// A fresh in-memory bucket `s3://<name>`.
    fn memory_bucket(name: &str) -> String {
        let url = format!("s3://{name}");
        stores::register_store(&url, Arc::new(InMemory::new()));
        url
    }

    #[test]
    fn an_object_written_whole_reads_back_and_a_missing_one_is_named() {
        let bucket = memory_bucket("ops-put-get");
        put(&format!("{bucket}/chk/job/chk-1/v-0-0"), b"state".to_vec()).unwrap();
        assert_eq!(get(&format!("{bucket}/chk/job/chk-1/v-0-0")).unwrap(), b"state");
        put(&format!("{bucket}/chk/job/chk-1/v-0-0"), b"newer".to_vec()).unwrap();
        assert_eq!(get(&format!("{bucket}/chk/job/chk-1/v-0-0")).unwrap(), b"newer");
        assert_eq!(
            get(&format!("{bucket}/chk/nope")),
            Err(FsError::NotFound {
                location: format!("{bucket}/chk/nope")
            })
        );
    }

    #[test]
    fn put_new_never_replaces_an_existing_object_or_file() {
        let bucket = memory_bucket("ops-put-new");
        let metadata = format!("{bucket}/chk-7/_metadata");
        put_new(&metadata, b"first".to_vec()).unwrap();
        assert_eq!(
            put_new(&metadata, b"second".to_vec()),
            Err(FsError::AlreadyExists {
                location: metadata.clone()
            })
        );
        assert_eq!(get(&metadata).unwrap(), b"first");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("chk-7").join("_metadata").display().to_string();
        put_new(&file, b"first".to_vec()).unwrap();
        assert!(matches!(
            put_new(&file, b"second".to_vec()),
            Err(FsError::AlreadyExists { .. })
        ));
        assert_eq!(get(&file).unwrap(), b"first");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("chk-7"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("_metadata")],
            "no temporary file is left"
        );
    }

    #[test]
    fn a_local_put_replaces_through_a_rename_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = format!("file://{}/job/chk-1/v-0-0", dir.path().display());
        put(&file, b"one".to_vec()).unwrap();
        put(&file, b"two".to_vec()).unwrap();
        assert_eq!(get(&file).unwrap(), b"two");
        assert_eq!(
            list(&dir.path().display().to_string()).unwrap(),
            vec![dir.path().join("job/chk-1/v-0-0").display().to_string()]
        );
    }

    #[test]
    fn a_prefix_is_a_directory_while_it_holds_objects() {
        let bucket = memory_bucket("ops-stat");
        put(&format!("{bucket}/sp/savepoint-1/_metadata"), vec![1]).unwrap();
        assert_eq!(stat(&format!("{bucket}/sp/savepoint-1")), Ok(Entry::Directory));
        assert_eq!(stat(&format!("{bucket}/sp/savepoint-1/")), Ok(Entry::Directory));
        assert_eq!(stat(&format!("{bucket}/sp/savepoint-1/_metadata")), Ok(Entry::File));
        assert_eq!(stat(&format!("{bucket}/sp/savepoint-2")), Ok(Entry::Missing));
        assert_eq!(
            stat(&format!("{bucket}/sp/savepoint")),
            Ok(Entry::Missing),
            "segments, not string prefixes"
        );
        assert_eq!(stat(&bucket), Ok(Entry::Directory));
    }

    #[test]
    fn deleting_a_checkpoint_removes_its_objects_only_and_is_idempotent() {
        let bucket = memory_bucket("ops-delete");
        for key in [
            "job/chk-1/_metadata",
            "job/chk-1/v-0-0",
            "job/chk-10/_metadata",
            "job/chk-1x",
        ] {
            put(&format!("{bucket}/{key}"), vec![0]).unwrap();
        }
        assert_eq!(
            list(&format!("{bucket}/job/chk-1")).unwrap(),
            vec![
                format!("{bucket}/job/chk-1/_metadata"),
                format!("{bucket}/job/chk-1/v-0-0")
            ]
        );
        delete_all(&format!("{bucket}/job/chk-1")).unwrap();
        delete_all(&format!("{bucket}/job/chk-1")).unwrap();
        assert_eq!(
            list(&format!("{bucket}/job")).unwrap(),
            vec![format!("{bucket}/job/chk-10/_metadata"), format!("{bucket}/job/chk-1x")]
        );
        delete_all(&format!("{bucket}/job/chk-1x")).unwrap();
        assert_eq!(stat(&format!("{bucket}/job/chk-1x")), Ok(Entry::Missing));
    }

    #[test]
    fn moving_a_state_file_copies_within_a_store_and_between_stores() {
        let a = memory_bucket("ops-move-a");
        let b = memory_bucket("ops-move-b");
        put(&format!("{a}/chk-3/v-0-0"), b"state".to_vec()).unwrap();
        move_file(&format!("{a}/chk-3/v-0-0"), &format!("{a}/sp/v-0-0")).unwrap();
        assert_eq!(get(&format!("{a}/sp/v-0-0")).unwrap(), b"state");
        assert_eq!(stat(&format!("{a}/chk-3")), Ok(Entry::Missing));
        move_file(&format!("{a}/sp/v-0-0"), &format!("{b}/sp/v-0-0")).unwrap();
        assert_eq!(get(&format!("{b}/sp/v-0-0")).unwrap(), b"state");
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join("sp").join("v-0-0").display().to_string();
        move_file(&format!("{b}/sp/v-0-0"), &local).unwrap();
        assert_eq!(std::fs::read(&local).unwrap(), b"state");
        assert_eq!(stat(&format!("{b}/sp")), Ok(Entry::Missing));
    }

    #[test]
    fn an_unsupported_scheme_fails_every_operation_before_any_io() {
        for result in [
            put("hdfs://nn/x", vec![]),
            put_new("hdfs://nn/x", vec![]),
            delete_all("hdfs://nn/x"),
            create_dir_all("hdfs://nn/x"),
        ] {
            assert!(matches!(result, Err(FsError::UnsupportedScheme { .. })), "{result:?}");
        }
        assert!(matches!(get("hdfs://nn/x"), Err(FsError::UnsupportedScheme { .. })));
    }
}
