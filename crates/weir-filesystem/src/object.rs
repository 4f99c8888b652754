//! The storage operations on object store locations (async; called through the
//! blocking facade of [`crate::operations`]).
//!
//! An object store has no directories: a "directory" is the prefix `key/` of the
//! objects below it, and exists while it has objects. A PUT is atomic (an object is
//! complete whenever it is visible), so there is no temporary object and no rename.
//! [`put_new`] asks the store for a conditional create (`PutMode::Create`: S3's
//! `If-None-Match: *`, GCS's generation precondition, Azure's `If-None-Match`) after a
//! HEAD found nothing; a store that cannot do conditional puts gets a plain PUT after
//! that HEAD, which leaves a window between check and write. For `_metadata` that
//! window is harmless: its only writer is the one JobMaster that owns the checkpoint
//! location, which is unique per job and checkpoint id.

use std::sync::Arc;

use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};

use crate::entry::Entry;
use crate::error::FsError;
use crate::location::ObjectLocation;

type Store = Arc<dyn ObjectStore>;

fn url_of(store: &ObjectLocation, path: &ObjectPath) -> String {
    format!("{}/{}", store.store_url(), path)
}

/// Writes the whole object, replacing an existing one.
pub(crate) async fn put(store: Store, location: ObjectLocation, bytes: Vec<u8>) -> Result<(), FsError> {
    store
        .put(location.key(), PutPayload::from(bytes))
        .await
        .map(|_| ())
        .map_err(|e| FsError::object(&location.to_string(), e))
}

/// Writes the whole object unless one exists ([`FsError::AlreadyExists`]).
pub(crate) async fn put_new(store: Store, location: ObjectLocation, bytes: Vec<u8>) -> Result<(), FsError> {
    let url = location.to_string();
    match store.head(location.key()).await {
        Ok(_) => return Err(FsError::AlreadyExists { location: url }),
        Err(object_store::Error::NotFound { .. }) => {}
        Err(e) => return Err(FsError::object(&url, e)),
    }
    let payload = PutPayload::from(bytes);
    match store
        .put_opts(location.key(), payload.clone(), PutMode::Create.into())
        .await
    {
        Ok(_) => Ok(()),
        Err(object_store::Error::NotImplemented { .. }) => {
            tracing::debug!("{url}: the store has no conditional put; written after a HEAD check");
            store
                .put(location.key(), payload)
                .await
                .map(|_| ())
                .map_err(|e| FsError::object(&url, e))
        }
        Err(e) => Err(FsError::object(&url, e)),
    }
}

/// The bytes of the object.
pub(crate) async fn get(store: Store, location: ObjectLocation) -> Result<Vec<u8>, FsError> {
    let url = location.to_string();
    let result = store.get(location.key()).await.map_err(|e| FsError::object(&url, e))?;
    let bytes = result.bytes().await.map_err(|e| FsError::object(&url, e))?;
    Ok(bytes.to_vec())
}

/// Whether the object `location` exists (HEAD).
async fn exists(store: &Store, location: &ObjectLocation) -> Result<bool, FsError> {
    if location.key().is_root() {
        return Ok(false);
    }
    match store.head(location.key()).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(FsError::object(&location.to_string(), e)),
    }
}

/// A prefix with objects below it, an object, or nothing. The prefix is looked at
/// first: a location is taken as either a prefix or an object, never both (Weir's
/// layout never puts an object where it puts a prefix), and some S3-compatible stores
/// that keep objects as files answer a HEAD of a "directory" with an error.
pub(crate) async fn stat(store: Store, location: ObjectLocation) -> Result<Entry, FsError> {
    match store.list(Some(location.key())).next().await {
        Some(Ok(_)) => return Ok(Entry::Directory),
        Some(Err(e)) => return Err(FsError::object(&location.to_string(), e)),
        None => {}
    }
    Ok(if exists(&store, &location).await? {
        Entry::File
    } else {
        Entry::Missing
    })
}

/// The keys of every object below the prefix, or of the object itself when nothing is
/// below it (see [`stat`]), sorted.
async fn keys(store: &Store, location: &ObjectLocation) -> Result<Vec<ObjectPath>, FsError> {
    let mut keys: Vec<ObjectPath> = store
        .list(Some(location.key()))
        .map_ok(|meta| meta.location)
        .try_collect()
        .await
        .map_err(|e| FsError::object(&location.to_string(), e))?;
    if keys.is_empty() && exists(store, location).await? {
        keys.push(location.key().clone());
    }
    keys.sort();
    Ok(keys)
}

/// The URLs of every object below the prefix (or of the object itself), sorted.
pub(crate) async fn list(store: Store, location: ObjectLocation) -> Result<Vec<String>, FsError> {
    Ok(keys(&store, &location)
        .await?
        .iter()
        .map(|key| url_of(&location, key))
        .collect())
}

/// Deletes every object below the prefix (or the object itself); nothing there is fine.
pub(crate) async fn delete_all(store: Store, location: ObjectLocation) -> Result<(), FsError> {
    let keys = keys(&store, &location).await?;
    let mut deleted = store.delete_stream(futures_util::stream::iter(keys.into_iter().map(Ok)).boxed());
    while let Some(result) = deleted.next().await {
        match result {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(FsError::object(&location.to_string(), e)),
        }
    }
    Ok(())
}

/// Moves an object inside one store: copy, then delete the source.
pub(crate) async fn move_within(store: Store, from: ObjectLocation, to: ObjectLocation) -> Result<(), FsError> {
    store
        .copy(from.key(), to.key())
        .await
        .map_err(|e| FsError::object(&from.to_string(), e))?;
    match store.delete(from.key()).await {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(FsError::object(&from.to_string(), e)),
    }
}
