//! Which configuration values and environment variables are secrets (Flink's
//! `GlobalConfiguration.isSensitive`), and how a hidden value is shown.

/// What a sensitive value is shown as (Flink's `GlobalConfiguration.HIDDEN_CONTENT`).
pub const HIDDEN_CONTENT: &str = "******";

/// Name parts that make a value sensitive, compared case-insensitively.
const SENSITIVE_WORDS: [&str; 11] = [
    "password",
    "secret",
    "fs.azure.account.key",
    "apikey",
    "api-key",
    "auth-params",
    "service-key",
    "token",
    "basic-auth",
    "jaas.config",
    "http-headers",
];

/// Whether the value of `key` (a configuration key or a variable name) is a secret
/// that is never shown: Flink's rule, a name containing one of `password`, `secret`,
/// `fs.azure.account.key`, `apikey`, `api-key`, `auth-params`, `service-key`, `token`,
/// `basic-auth`, `jaas.config` or `http-headers` (so `s3.secret-key` is hidden).
pub fn is_sensitive_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SENSITIVE_WORDS.iter().any(|s| key.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_with_a_secret_word_in_any_case_are_sensitive() {
        assert!(is_sensitive_key("s3.secret-key"));
        assert!(is_sensitive_key("AWS_SESSION_TOKEN"));
        assert!(!is_sensitive_key("s3.access-key"));
        assert!(!is_sensitive_key("rest.port"));
    }
}
