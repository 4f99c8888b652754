//! Which object store serves a bucket: built on first use from the process's
//! [`ObjectStoreOptions`] and its environment, then kept for the life of the process.
//!
//! A process calls [`initialize`] once at start-up with the options of its
//! configuration (the JobManager and every TaskManager do, so both sides build the same
//! stores); a process that never does uses the defaults, i.e. the environment alone.
//! [`initialize`] again replaces the options and forgets the stores built so far (a
//! MiniCluster started twice in one process). [`register_store`] puts a given store in
//! front of a bucket (`InMemory` in tests, or a store an embedding program built
//! itself); registered stores survive [`initialize`].
//!
//! Invariants: one store per `scheme://bucket`; a store is built outside the registry's
//! lock only in [`build_store`], which does no I/O (credentials are fetched lazily by
//! object_store on the first request).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::ObjectStore;

use crate::error::FsError;
use crate::location::{ObjectLocation, StoreKind};
use crate::options::ObjectStoreOptions;

#[derive(Default)]
struct Registry {
    options: ObjectStoreOptions,
    built: HashMap<String, Arc<dyn ObjectStore>>,
    registered: HashMap<String, Arc<dyn ObjectStore>>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

fn registry() -> MutexGuard<'static, Registry> {
    // The registry is two maps and the options: a panic while holding the lock cannot
    // leave it half-updated, so a poisoned lock is still good.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets the object store options of this process (from its configuration) and forgets
/// the stores built with the previous ones.
pub fn initialize(options: ObjectStoreOptions) {
    let mut registry = registry();
    if registry.options != options {
        tracing::debug!("object store options: {options:?}");
    }
    registry.options = options;
    registry.built.clear();
}

/// Serves every location of `store_url` (`scheme://bucket`, e.g. `s3://test-bucket`)
/// from `store` instead of a store built from the options.
pub fn register_store(store_url: &str, store: Arc<dyn ObjectStore>) {
    registry()
        .registered
        .insert(store_url.trim_end_matches('/').to_string(), store);
}

/// The store of `location`'s bucket: registered, built before, or built now.
pub(crate) fn store_for(location: &ObjectLocation) -> Result<Arc<dyn ObjectStore>, FsError> {
    let options = {
        let registry = registry();
        let key = location.store_url();
        if let Some(store) = registry.registered.get(key).or_else(|| registry.built.get(key)) {
            return Ok(Arc::clone(store));
        }
        registry.options.clone()
    };
    let store = build_store(location, &options, std::env::vars())?;
    let mut registry = registry();
    // Another thread may have built the same store meanwhile; keep the first.
    let store = registry.built.entry(location.store_url().to_string()).or_insert(store);
    Ok(Arc::clone(store))
}

/// Builds the store of `location`'s bucket from `options` and the environment `env`
/// (`AWS_*` for S3, `GOOGLE_*` and `SERVICE_ACCOUNT` for GCS, `AZURE_*` and
/// `IDENTITY_ENDPOINT` for Azure, as object_store's `from_env` builders read them).
/// Configured options win over the environment. No I/O.
pub fn build_store(
    location: &ObjectLocation,
    options: &ObjectStoreOptions,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Arc<dyn ObjectStore>, FsError> {
    let url = location.store_url();
    let fail = |e: object_store::Error| FsError::Store {
        store: url.to_string(),
        message: e.to_string(),
    };
    let env: Vec<(String, String)> = env.into_iter().collect();
    let with_prefix = |prefix: &'static str| {
        env.iter()
            .filter(move |(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
    };
    Ok(match location.kind() {
        StoreKind::S3 => {
            let builder = with_prefix("AWS_").fold(AmazonS3Builder::new(), |b, (k, v)| match k.parse() {
                Ok(key) => b.with_config(key, v),
                Err(_) => b,
            });
            let builder = configure_s3(builder.with_url(url), location, options)?;
            Arc::new(builder.build().map_err(fail)?)
        }
        StoreKind::Gcs => {
            let mut builder =
                with_prefix("GOOGLE_").fold(GoogleCloudStorageBuilder::new(), |b, (k, v)| match k.parse() {
                    Ok(key) => b.with_config(key, v),
                    Err(_) => b,
                });
            if let Some((_, path)) = env.iter().find(|(k, _)| k == "SERVICE_ACCOUNT") {
                builder = builder.with_service_account_path(path);
            }
            Arc::new(builder.with_url(url).build().map_err(fail)?)
        }
        StoreKind::Azure => {
            let mut builder = with_prefix("AZURE_").fold(MicrosoftAzureBuilder::new(), |b, (k, v)| match k.parse() {
                Ok(key) => b.with_config(key, v),
                Err(_) => b,
            });
            if let Some((_, endpoint)) = env.iter().find(|(k, _)| k == "IDENTITY_ENDPOINT") {
                builder = builder.with_msi_endpoint(endpoint);
            }
            Arc::new(builder.with_url(url).build().map_err(fail)?)
        }
    })
}

/// Applies Flink's `s3.*` options over what the environment set.
fn configure_s3(
    mut builder: AmazonS3Builder,
    location: &ObjectLocation,
    options: &ObjectStoreOptions,
) -> Result<AmazonS3Builder, FsError> {
    if let Some(region) = &options.s3_region {
        builder = builder.with_region(region);
    }
    if let (Some(access), Some(secret)) = (&options.s3_access_key, &options.s3_secret_key) {
        builder = builder.with_access_key_id(access).with_secret_access_key(secret);
    }
    let path_style = options.s3_path_style_access;
    if let Some(endpoint) = &options.s3_endpoint {
        let endpoint = endpoint.trim_end_matches('/');
        let endpoint = match path_style {
            // Flink (Hadoop's S3A) puts the bucket in front of the endpoint's host
            // name; object_store expects the endpoint to name the bucket already.
            Some(false) => bucket_host_endpoint(endpoint, location)?,
            _ => endpoint.to_string(),
        };
        builder = builder
            .with_allow_http(endpoint.to_ascii_lowercase().starts_with("http://"))
            .with_config(AmazonS3ConfigKey::S3Endpoint, &endpoint)
            .with_endpoint(endpoint);
    }
    if let Some(path_style) = path_style {
        builder = builder.with_virtual_hosted_style_request(!path_style);
    }
    Ok(builder)
}

/// `scheme://<bucket>.<host>[:port]` of `endpoint` for virtual-hosted-style requests.
fn bucket_host_endpoint(endpoint: &str, location: &ObjectLocation) -> Result<String, FsError> {
    let invalid = |reason: String| FsError::Store {
        store: location.store_url().to_string(),
        message: format!("s3.endpoint '{endpoint}': {reason}"),
    };
    let mut url = url::Url::parse(endpoint).map_err(|e| invalid(e.to_string()))?;
    let host = url
        .host_str()
        .ok_or_else(|| invalid("no host name".to_string()))?
        .to_string();
    let bucket = location.store_url().split_once("://").map_or("", |(_, bucket)| bucket);
    url.set_host(Some(&format!("{bucket}.{host}")))
        .map_err(|e| invalid(e.to_string()))?;
    Ok(url.as_str().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::location::Location;

    fn object(location: &str) -> ObjectLocation {
        match Location::parse(location) {
            Ok(Location::Object(o)) => o,
            other => panic!("{location}: {other:?}"),
        }
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn an_s3_bucket_builds_from_flinks_options_or_from_the_environment_alone() {
        let options = ObjectStoreOptions {
            s3_endpoint: Some("http://127.0.0.1:9000".into()),
            s3_access_key: Some("a".into()),
            s3_secret_key: Some("s".into()),
            s3_path_style_access: Some(true),
            s3_region: Some("eu-west-1".into()),
        };
        let store = build_store(&object("s3://bucket/chk"), &options, Vec::new()).unwrap();
        assert!(store.to_string().contains("bucket"), "{store}");
        let from_env = env(&[
            ("AWS_ACCESS_KEY_ID", "a"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("AWS_ENDPOINT", "http://127.0.0.1:9000"),
            ("AWS_ALLOW_HTTP", "true"),
        ]);
        build_store(&object("s3a://other/x"), &ObjectStoreOptions::default(), from_env).unwrap();
    }

    #[test]
    fn a_bad_value_in_the_aws_environment_is_a_store_error_naming_the_bucket() {
        let err = build_store(
            &object("s3://bucket/chk"),
            &ObjectStoreOptions::default(),
            env(&[("AWS_SKIP_SIGNATURE", "perhaps")]),
        )
        .expect_err("a bad boolean in the environment is refused");
        assert!(
            matches!(&err, FsError::Store { store, .. } if store == "s3://bucket"),
            "{err}"
        );
    }

    #[test]
    fn virtual_hosted_style_puts_the_bucket_in_front_of_the_endpoint_host() {
        let location = object("s3://my-bucket/chk");
        assert_eq!(
            bucket_host_endpoint("https://minio.example:9000", &location).unwrap(),
            "https://my-bucket.minio.example:9000"
        );
        let options = ObjectStoreOptions {
            s3_endpoint: Some("https://minio.example:9000/".into()),
            s3_path_style_access: Some(false),
            ..ObjectStoreOptions::default()
        };
        build_store(&location, &options, Vec::new()).unwrap();
    }

    #[test]
    fn a_gs_bucket_builds_without_network_and_reads_the_google_environment() {
        build_store(&object("gs://bucket/chk"), &ObjectStoreOptions::default(), Vec::new()).unwrap();
        let err = build_store(
            &object("gs://bucket/chk"),
            &ObjectStoreOptions::default(),
            env(&[("GOOGLE_SERVICE_ACCOUNT_KEY", "{ not a key")]),
        )
        .expect_err("a malformed service account key is refused");
        assert!(
            matches!(&err, FsError::Store { store, .. } if store == "gs://bucket"),
            "{err}"
        );
    }

    #[test]
    fn an_az_container_needs_an_account_from_the_environment_or_the_url() {
        let err = build_store(
            &object("az://container/chk"),
            &ObjectStoreOptions::default(),
            Vec::new(),
        )
        .expect_err("no account name");
        assert!(
            matches!(&err, FsError::Store { store, .. } if store == "az://container"),
            "{err}"
        );
        let account = env(&[
            ("AZURE_STORAGE_ACCOUNT_NAME", "devstoreaccount1"),
            ("AZURE_STORAGE_ACCOUNT_KEY", "c2VjcmV0"),
        ]);
        build_store(&object("az://container/chk"), &ObjectStoreOptions::default(), account).unwrap();
        build_store(
            &object("abfss://container@account.dfs.core.windows.net/chk"),
            &ObjectStoreOptions::default(),
            Vec::new(),
        )
        .unwrap();
    }

    #[test]
    fn a_registered_store_serves_its_bucket_and_survives_initialize() {
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        register_store("s3://registered-bucket/", Arc::clone(&store));
        initialize(ObjectStoreOptions::default());
        let served = store_for(&object("s3://registered-bucket/x")).unwrap();
        assert!(Arc::ptr_eq(&served, &store));
    }
}
