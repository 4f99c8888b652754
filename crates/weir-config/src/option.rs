//! The option descriptor: key, type, default and description of one setting.
//!
//! A [`ConfigOption<T>`] is a `const` value; the default is written in the option's text
//! form (`"10 s"`, `"1728m"`) and parsed by the same code as a configured value, so a
//! default and a configured value can never be interpreted differently. A test parses
//! every registered default. Options without a default have an `Option<T>` type and
//! read as `None` when unset.
//!
//! An option may have *deprecated keys* (Flink's `withDeprecatedKeys`): older names
//! that are read when the main key is not set. The main key always wins.

use std::fmt;
use std::marker::PhantomData;

use crate::value::ConfigValue;

/// One typed configuration option: a Flink key (or a Weir key where Flink has none), a
/// default in text form, and a description.
pub struct ConfigOption<T> {
    key: &'static str,
    deprecated_keys: &'static [&'static str],
    default: Option<&'static str>,
    description: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> ConfigOption<T> {
    /// An option with `key`, a `default` in text form (`None`: no default; use an
    /// `Option<_>` type then) and a `description`.
    pub const fn new(key: &'static str, default: Option<&'static str>, description: &'static str) -> Self {
        ConfigOption {
            key,
            deprecated_keys: &[],
            default,
            description,
            _type: PhantomData,
        }
    }

    /// The same option, also read under the older `keys` (in order) when the main key
    /// is not set.
    pub const fn with_deprecated_keys(self, keys: &'static [&'static str]) -> Self {
        ConfigOption {
            deprecated_keys: keys,
            ..self
        }
    }

    /// The deprecated keys, read when the main key is not set.
    pub const fn deprecated_keys(&self) -> &'static [&'static str] {
        self.deprecated_keys
    }

    /// The key, e.g. `taskmanager.numberOfTaskSlots`.
    pub const fn key(&self) -> &'static str {
        self.key
    }

    /// The default in text form, if any.
    pub const fn default_text(&self) -> Option<&'static str> {
        self.default
    }

    /// The description.
    pub const fn description(&self) -> &'static str {
        self.description
    }
}

impl<T: ConfigValue> ConfigOption<T> {
    /// The untyped registry entry of this option.
    pub const fn info(&self) -> OptionInfo {
        OptionInfo {
            key: self.key,
            deprecated_keys: self.deprecated_keys,
            type_name: T::TYPE_NAME,
            default: self.default,
            description: self.description,
            check: check_value::<T>,
        }
    }
}

impl<T> Clone for ConfigOption<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ConfigOption<T> {}

impl<T> fmt::Debug for ConfigOption<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigOption")
            .field("key", &self.key)
            .field("default", &self.default)
            .finish()
    }
}

/// Parses `text` as `T`, discarding the value: the type-erased check behind
/// [`OptionInfo::check`].
fn check_value<T: ConfigValue>(text: &str) -> Result<(), String> {
    T::parse_config_value(text).map(|_| ())
}

/// The type-erased description of an option, as listed in
/// [`ALL_OPTIONS`](crate::options::ALL_OPTIONS): enough to print the registry, detect
/// unknown keys and validate a value without knowing its Rust type.
#[derive(Clone, Copy)]
pub struct OptionInfo {
    /// The key.
    pub key: &'static str,
    /// Older keys read when the main key is not set.
    pub deprecated_keys: &'static [&'static str],
    /// The type name (`Integer`, `Duration`, `MemorySize`, …).
    pub type_name: &'static str,
    /// The default in text form; `None` when the option has no default.
    pub default: Option<&'static str>,
    /// The description.
    pub description: &'static str,
    /// Checks that a text parses as the option's type; the error is the reason.
    pub check: fn(&str) -> Result<(), String>,
}

impl fmt::Debug for OptionInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OptionInfo")
            .field("key", &self.key)
            .field("deprecated_keys", &self.deprecated_keys)
            .field("type_name", &self.type_name)
            .field("default", &self.default)
            .finish()
    }
}
