//! The object store settings of a process, read from its configuration when it starts
//! (Flink reads its file system options the same way: per process, not per job).
//!
//! Only the S3 options have Flink keys (`s3.endpoint`, `s3.access-key`, `s3.secret-key`,
//! `s3.path.style.access`, `s3.region`); everything else, and everything for `gs://` and
//! `az://`, comes from the environment variables object_store reads (`AWS_*`, `GOOGLE_*`,
//! `AZURE_*`). A configured option wins over its environment variable.
//!
//! Invariant: the secret key never appears in `Debug` output.

use std::fmt;

use weir_config::options as o;
use weir_config::{ConfigError, Configuration, HIDDEN_CONTENT};

/// Flink's `s3.*` options of one process.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ObjectStoreOptions {
    /// `s3.endpoint`: the S3 service (an S3-compatible store); `None` is AWS.
    pub s3_endpoint: Option<String>,
    /// `s3.access-key`.
    pub s3_access_key: Option<String>,
    /// `s3.secret-key`.
    pub s3_secret_key: Option<String>,
    /// `s3.path.style.access`: bucket in the path (true) or in the host name (false);
    /// `None` leaves it to the environment (path-style by default).
    pub s3_path_style_access: Option<bool>,
    /// `s3.region`.
    pub s3_region: Option<String>,
}

impl ObjectStoreOptions {
    /// Reads the options from `config`; an access key without a secret key (or the
    /// other way round) is refused, as no request could be signed with it.
    pub fn from_config(config: &Configuration) -> Result<Self, ConfigError> {
        let non_empty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        let options = ObjectStoreOptions {
            s3_endpoint: non_empty(config.get(&o::S3_ENDPOINT)?),
            s3_access_key: non_empty(config.get(&o::S3_ACCESS_KEY)?),
            s3_secret_key: non_empty(config.get(&o::S3_SECRET_KEY)?),
            s3_path_style_access: config.get(&o::S3_PATH_STYLE_ACCESS)?,
            s3_region: non_empty(config.get(&o::S3_REGION)?),
        };
        if options.s3_access_key.is_some() != options.s3_secret_key.is_some() {
            return Err(ConfigError::IllegalConfiguration(format!(
                "{} and {} must be set together",
                o::S3_ACCESS_KEY.key(),
                o::S3_SECRET_KEY.key()
            )));
        }
        Ok(options)
    }
}

impl fmt::Debug for ObjectStoreOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStoreOptions")
            .field("s3_endpoint", &self.s3_endpoint)
            .field("s3_access_key", &self.s3_access_key)
            .field("s3_secret_key", &self.s3_secret_key.as_ref().map(|_| HIDDEN_CONTENT))
            .field("s3_path_style_access", &self.s3_path_style_access)
            .field("s3_region", &self.s3_region)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(entries: &[&str]) -> Result<ObjectStoreOptions, ConfigError> {
        let dynamic: Vec<String> = entries.iter().map(|s| s.to_string()).collect();
        ObjectStoreOptions::from_config(&Configuration::load(None, &dynamic)?)
    }

    #[test]
    fn flinks_s3_keys_are_read_and_the_secret_never_shows_in_debug_output() {
        let options = load(&[
            "s3.endpoint=http://127.0.0.1:9000",
            "s3.access-key=AKIA",
            "s3.secret-key=hush",
            "s3.path.style.access=true",
            "s3.region=eu-west-1",
        ])
        .unwrap();
        assert_eq!(
            options,
            ObjectStoreOptions {
                s3_endpoint: Some("http://127.0.0.1:9000".into()),
                s3_access_key: Some("AKIA".into()),
                s3_secret_key: Some("hush".into()),
                s3_path_style_access: Some(true),
                s3_region: Some("eu-west-1".into()),
            }
        );
        let debug = format!("{options:?}");
        assert!(!debug.contains("hush") && debug.contains("******"), "{debug}");
        assert_eq!(load(&[]).unwrap(), ObjectStoreOptions::default());
    }

    #[test]
    fn hadoop_style_key_names_are_read_too() {
        let options = load(&["s3.access.key=A", "s3.secret.key=S"]).unwrap();
        assert_eq!(
            (options.s3_access_key.as_deref(), options.s3_secret_key.as_deref()),
            (Some("A"), Some("S"))
        );
    }

    #[test]
    fn an_access_key_without_a_secret_key_is_refused() {
        let err = load(&["s3.access-key=A"]).unwrap_err().to_string();
        assert!(
            err.contains("s3.access-key and s3.secret-key must be set together"),
            "{err}"
        );
        assert!(load(&["s3.path.style.access=maybe"]).is_err());
    }
}
