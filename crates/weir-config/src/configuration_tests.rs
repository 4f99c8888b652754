//! Tests of [`Configuration`]: typed reads, YAML loading, `-D` overrides, validation.

use super::*;
use crate::options::*;
use crate::value::{MemorySize, RestartStrategyType};
use std::time::Duration;

fn yaml(text: &str) -> Result<Configuration, ConfigError> {
    let mut conf = Configuration::new();
    conf.merge_yaml_str(text, Path::new("/conf/config.yaml"))?;
    Ok(conf)
}

#[test]
fn unset_options_read_as_their_defaults() {
    let conf = Configuration::new();
    assert_eq!(conf.get(&NUM_TASK_SLOTS), Ok(1));
    assert_eq!(conf.get(&REST_ADDRESS), Ok("127.0.0.1".to_string()));
    assert_eq!(conf.get(&REST_PORT), Ok(8081));
    assert_eq!(conf.get(&HEARTBEAT_TIMEOUT), Ok(Duration::from_secs(50)));
    assert_eq!(conf.get(&SLOT_REQUEST_TIMEOUT), Ok(Duration::from_secs(300)));
    assert_eq!(conf.get(&BUFFER_TIMEOUT), Ok(Duration::from_millis(100)));
    assert_eq!(conf.get(&MAX_PARALLELISM), Ok(-1));
    assert_eq!(conf.get(&CHAINING_ENABLED), Ok(true));
    assert_eq!(conf.get(&MEMORY_SEGMENT_SIZE), Ok(MemorySize(32 * 1024)));
    assert_eq!(conf.get(&CHECKPOINTING_INTERVAL), Ok(None));
    assert_eq!(conf.get(&RESTART_STRATEGY_TYPE), Ok(None));
    assert_eq!(
        conf.get(&RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF),
        Ok(i32::MAX)
    );
    assert_eq!(conf.get(&TOTAL_PROCESS_MEMORY), Ok(MemorySize::from_mebibytes(1728)));
    assert_eq!(conf.get(&MANAGED_MEMORY_FRACTION), Ok(0.4f32));
    assert!(!conf.contains(&NUM_TASK_SLOTS));
}

#[test]
fn nested_and_flat_yaml_keys_are_flattened_alike() {
    let conf = yaml(
        "taskmanager:\n  numberOfTaskSlots: 4\n  memory:\n    process.size: 2g\n\
         rest.port: 9091\nexecution.checkpointing.interval: 10 s\n\
         pipeline:\n  operator-chaining:\n    enabled: false\n\
         taskmanager.memory.managed.fraction: 0.25\n",
    )
    .unwrap();
    assert_eq!(conf.get(&NUM_TASK_SLOTS), Ok(4));
    assert_eq!(conf.get(&TOTAL_PROCESS_MEMORY), Ok(MemorySize(2 << 30)));
    assert_eq!(conf.get(&REST_PORT), Ok(9091));
    assert_eq!(conf.get(&CHECKPOINTING_INTERVAL), Ok(Some(Duration::from_secs(10))));
    assert_eq!(conf.get(&CHAINING_ENABLED), Ok(false));
    assert_eq!(conf.get(&MANAGED_MEMORY_FRACTION), Ok(0.25f32));
    assert_eq!(conf.get_string("taskmanager.numberOfTaskSlots"), Some("4"));
    assert!(conf.contains(&NUM_TASK_SLOTS));
    assert_eq!(
        conf.origin("rest.port"),
        Some(&ValueOrigin::File(PathBuf::from("/conf/config.yaml")))
    );
}

#[test]
fn an_empty_or_comment_only_file_gives_an_empty_configuration() {
    assert!(yaml("").unwrap().is_empty());
    assert!(yaml("# nothing here\n").unwrap().is_empty());
}

#[test]
fn lists_nulls_duplicates_and_non_maps_are_rejected_with_path_and_key() {
    let err = yaml("a:\n  b: [1, 2]\n").unwrap_err();
    assert_eq!(
        err,
        ConfigError::InvalidEntry {
            path: PathBuf::from("/conf/config.yaml"),
            key: "a.b".to_string(),
            message: "list values are not supported; give a single value".to_string(),
        }
    );
    assert!(err.to_string().contains("/conf/config.yaml"), "{err}");
    let err = yaml("rest.port:\n").unwrap_err();
    assert!(
        matches!(&err, ConfigError::InvalidEntry { key, .. } if key == "rest.port"),
        "{err:?}"
    );
    let err = yaml("rest.port: 1\nrest:\n  port: 2\n").unwrap_err();
    assert!(err.to_string().contains("more than once"), "{err}");
    let err = yaml("- 1\n- 2\n").unwrap_err();
    assert!(matches!(err, ConfigError::Yaml { .. }), "{err:?}");
    let err = yaml("a: [unclosed\n").unwrap_err();
    assert!(matches!(err, ConfigError::Yaml { .. }), "{err:?}");
}

#[test]
fn a_bad_value_names_key_value_type_and_file() {
    let conf = yaml("heartbeat.timeout: soon\n").unwrap();
    let err = conf.get(&HEARTBEAT_TIMEOUT).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("Could not parse value 'soon' for key 'heartbeat.timeout' (from /conf/config.yaml) (expected Duration): text does not start with a number"), "{text}");
    assert_eq!(conf.validate(), Err(err));
}

#[test]
fn dynamic_properties_override_the_file_and_each_other() {
    let mut conf = yaml("rest.port: 9091\nparallelism.default: 3\n").unwrap();
    conf.apply_dynamic_properties(&[
        "rest.port=9092".to_string(),
        " parallelism.default = 5 ".to_string(),
        "parallelism.default=6".to_string(),
        "my.job.flag=a=b".to_string(),
    ])
    .unwrap();
    assert_eq!(conf.get(&REST_PORT), Ok(9092));
    assert_eq!(conf.get(&PARALLELISM_DEFAULT), Ok(6));
    assert_eq!(conf.get_string("my.job.flag"), Some("a=b"));
    assert_eq!(conf.origin("rest.port"), Some(&ValueOrigin::DynamicProperty));
}

#[test]
fn malformed_dynamic_properties_are_errors() {
    let mut conf = Configuration::new();
    for bad in ["rest.port", "=5", "  = 5"] {
        assert_eq!(
            conf.apply_dynamic_properties(&[bad.to_string()]),
            Err(ConfigError::MalformedDynamicProperty { entry: bad.to_string() })
        );
    }
}

#[test]
fn a_bad_dynamic_value_says_it_came_from_dash_d() {
    let err = Configuration::load(None, &["taskmanager.numberOfTaskSlots=two".to_string()]).unwrap_err();
    assert!(err.to_string().contains("(from -D) (expected Integer)"), "{err}");
}

#[test]
fn load_reads_config_yaml_then_applies_dynamic_properties() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        "taskmanager:\n  numberOfTaskSlots: 2\nrestart-strategy.type: fixed-delay\nmy.custom.key: x\n",
    )
    .unwrap();
    let conf = Configuration::load(Some(dir.path()), &["rest.port=18081".to_string()]).unwrap();
    assert_eq!(conf.get(&NUM_TASK_SLOTS), Ok(2));
    assert_eq!(conf.get(&REST_PORT), Ok(18081));
    assert_eq!(
        conf.get(&RESTART_STRATEGY_TYPE),
        Ok(Some(RestartStrategyType::FixedDelay))
    );
    assert_eq!(conf.unknown_keys(), vec!["my.custom.key"]);
}

#[test]
fn keys_of_a_named_metric_reporter_are_known() {
    let conf = Configuration::load(
        None,
        &[
            "metrics.reporter.prom.port=9250".to_string(),
            "metrics.reporter.prom.factory.class=org.apache.flink.metrics.prometheus.PrometheusReporterFactory"
                .to_string(),
            "metrics.reporters=prom".to_string(),
            "metrics.reporter-typo=1".to_string(),
        ],
    )
    .unwrap();
    assert_eq!(conf.unknown_keys(), vec!["metrics.reporter-typo"]);
    assert_eq!(conf.len(), 4);
}

#[test]
fn load_without_a_file_gives_defaults_but_a_missing_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let conf = Configuration::load(Some(dir.path()), &[]).unwrap();
    assert!(conf.is_empty());
    assert!(Configuration::load(None, &[]).unwrap().is_empty());
    let missing = dir.path().join("nope");
    assert_eq!(
        Configuration::load(Some(&missing), &[]),
        Err(ConfigError::NotADirectory { path: missing.clone() })
    );
}

#[test]
fn load_fails_on_a_bad_value_in_the_file_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.yaml");
    std::fs::write(&file, "taskmanager.memory.process.size: 1.5g\n").unwrap();
    let err = Configuration::load(Some(dir.path()), &[]).unwrap_err();
    match &err {
        ConfigError::InvalidValue {
            key,
            value,
            expected,
            origin,
            ..
        } => {
            assert_eq!(key, "taskmanager.memory.process.size");
            assert_eq!(value, "1.5g");
            assert_eq!(*expected, "MemorySize");
            assert_eq!(origin, &format!(" (from {})", file.display()));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn unknown_restart_strategy_lists_the_accepted_values() {
    let conf = yaml("restart-strategy.type: sometimes\n").unwrap();
    let err = conf.get(&RESTART_STRATEGY_TYPE).unwrap_err().to_string();
    assert!(
        err.contains("sometimes is an unknown value of RestartStrategyType"),
        "{err}"
    );
    assert!(err.contains("exponential-delay, exponentialdelay"), "{err}");
}

#[test]
fn set_stores_the_text_form_and_none_removes() {
    let mut conf = Configuration::new();
    conf.set(&HEARTBEAT_INTERVAL, Duration::from_secs(3))
        .set(&MEMORY_SEGMENT_SIZE, MemorySize(64 * 1024))
        .set(&CHECKPOINTING_INTERVAL, Some(Duration::from_millis(500)));
    assert_eq!(conf.get_string("heartbeat.interval"), Some("3 s"));
    assert_eq!(conf.get_string("taskmanager.memory.segment-size"), Some("64 kb"));
    assert_eq!(conf.get(&CHECKPOINTING_INTERVAL), Ok(Some(Duration::from_millis(500))));
    conf.set(&CHECKPOINTING_INTERVAL, None);
    assert!(!conf.contains(&CHECKPOINTING_INTERVAL));
    assert_eq!(conf.remove("heartbeat.interval"), Some("3 s".to_string()));
    assert_eq!(conf.get(&HEARTBEAT_INTERVAL), Ok(Duration::from_secs(10)));
}

#[test]
fn maps_iteration_and_merging() {
    let mut conf = Configuration::new();
    conf.set_string("b.key", "2").set_string("a.key", "1");
    assert_eq!(conf.iter().collect::<Vec<_>>(), vec![("a.key", "1"), ("b.key", "2")]);
    let map = conf.to_map();
    assert_eq!(map.len(), 2);
    let with_defaults = conf.to_map_with_defaults();
    assert_eq!(with_defaults.get("rest.port").map(String::as_str), Some("8081"));
    assert_eq!(with_defaults.get("a.key").map(String::as_str), Some("1"));
    assert!(!with_defaults.contains_key("execution.checkpointing.interval"));

    let mut job = Configuration::from_map(map);
    let mut cluster = Configuration::new();
    cluster.set_string("a.key", "0").set_string("c.key", "3");
    job.extend_from(&cluster);
    assert_eq!(job.get_string("a.key"), Some("0"));
    assert_eq!(job.get_string("c.key"), Some("3"));
    assert!(job.contains_key("b.key"));
}

#[test]
fn cluster_dir_defaults_under_home_unless_set() {
    let mut conf = Configuration::new();
    conf.set(&CLUSTER_DIR, Some("/var/weir".to_string()));
    assert_eq!(conf.cluster_dir(), Ok(PathBuf::from("/var/weir")));
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        assert_eq!(
            Configuration::new().cluster_dir(),
            Ok(PathBuf::from(home).join(".weir/cluster"))
        );
    }
}

#[test]
fn missing_value_is_reported_for_a_required_option_without_default() {
    const REQUIRED: ConfigOption<u32> = ConfigOption::new("weir.test.required", None, "test");
    assert_eq!(
        Configuration::new().get(&REQUIRED),
        Err(ConfigError::MissingValue {
            key: "weir.test.required".to_string()
        })
    );
}

#[test]
fn checkpoint_options_default_to_flinks_values() {
    use crate::value::ExternalizedCheckpointRetention;
    use weir_core::CheckpointingMode;
    let conf = Configuration::new();
    assert_eq!(conf.get(&CHECKPOINTING_MODE), Ok(CheckpointingMode::ExactlyOnce));
    assert_eq!(conf.get(&CHECKPOINTING_TIMEOUT), Ok(Duration::from_secs(600)));
    assert_eq!(conf.get(&CHECKPOINTING_MIN_PAUSE), Ok(Duration::ZERO));
    assert_eq!(conf.get(&CHECKPOINTING_MAX_CONCURRENT), Ok(1));
    assert_eq!(conf.get(&CHECKPOINTING_TOLERABLE_FAILURES), Ok(0));
    assert_eq!(conf.get(&CHECKPOINTING_NUM_RETAINED), Ok(1));
    assert_eq!(
        conf.get(&CHECKPOINTING_EXTERNALIZED_RETENTION),
        Ok(ExternalizedCheckpointRetention::NoExternalizedCheckpoints)
    );
    assert_eq!(conf.get(&CHECKPOINTS_DIRECTORY), Ok(None));
    assert_eq!(conf.get(&SAVEPOINT_DIRECTORY), Ok(None));
    assert_eq!(
        conf.get(&CHECKPOINTING_DATA_INLINE_THRESHOLD),
        Ok(MemorySize(20 * 1024))
    );
    assert_eq!(conf.get(&CHECKPOINTING_UNALIGNED_ENABLED), Ok(false));
    assert_eq!(conf.get(&CHECKPOINTING_ALIGNED_TIMEOUT), Ok(Duration::ZERO));
    assert_eq!(conf.get(&CHECKPOINTS_HISTORY_SIZE), Ok(10));
}

#[test]
fn secrets_are_hidden_in_the_shown_configuration_and_other_values_are_not() {
    let conf = Configuration::load(
        None,
        &[
            "s3.secret-key=very-secret".to_string(),
            "s3.access-key=AKIA".to_string(),
            "my.api-key=k".to_string(),
            "rest.port=1".to_string(),
        ],
    )
    .unwrap();
    let shown = conf.to_map_hiding_secrets();
    assert_eq!(shown["s3.secret-key"], HIDDEN_CONTENT);
    assert_eq!(shown["my.api-key"], HIDDEN_CONTENT);
    assert_eq!(shown["s3.access-key"], "AKIA");
    assert_eq!(shown["rest.port"], "1");
    assert_eq!(conf.to_map()["s3.secret-key"], "very-secret");
    assert!(is_sensitive_key("S3.SECRET.KEY") && !is_sensitive_key("s3.endpoint"));
}

#[test]
fn checkpoint_enums_parse_case_insensitively() {
    use crate::value::ExternalizedCheckpointRetention;
    use weir_core::CheckpointingMode;
    let conf = yaml(
        "execution.checkpointing.mode: at_least_once\n\
         execution.checkpointing.externalized-checkpoint-retention: retain_on_cancellation\n",
    )
    .unwrap();
    assert_eq!(conf.get(&CHECKPOINTING_MODE), Ok(CheckpointingMode::AtLeastOnce));
    assert_eq!(
        conf.get(&CHECKPOINTING_EXTERNALIZED_RETENTION),
        Ok(ExternalizedCheckpointRetention::RetainOnCancellation)
    );
    let mut conf = Configuration::new();
    conf.set(
        &CHECKPOINTING_EXTERNALIZED_RETENTION,
        ExternalizedCheckpointRetention::DeleteOnCancellation,
    )
    .set(&CHECKPOINTING_MODE, CheckpointingMode::AtLeastOnce);
    assert_eq!(
        conf.get_string("execution.checkpointing.externalized-checkpoint-retention"),
        Some("DELETE_ON_CANCELLATION")
    );
    assert_eq!(conf.get(&CHECKPOINTING_MODE), Ok(CheckpointingMode::AtLeastOnce));
}

#[test]
fn deprecated_checkpoint_keys_are_read_when_the_new_key_is_unset() {
    let conf = yaml(
        "state.checkpoints.num-retained: 3\nstate.checkpoints.dir: /old/chk\n\
         state.savepoints.dir: /old/sp\n",
    )
    .unwrap();
    assert_eq!(conf.get(&CHECKPOINTING_NUM_RETAINED), Ok(3));
    let effective = conf.to_map_with_defaults();
    assert!(!effective.contains_key("execution.checkpointing.num-retained"));
    assert_eq!(conf.get(&CHECKPOINTS_DIRECTORY), Ok(Some("/old/chk".to_string())));
    assert_eq!(conf.get(&SAVEPOINT_DIRECTORY), Ok(Some("/old/sp".to_string())));
    assert!(conf.contains(&CHECKPOINTING_NUM_RETAINED));
    assert!(conf.unknown_keys().is_empty(), "{:?}", conf.unknown_keys());
    assert_eq!(
        find_option("state.checkpoints.dir").map(|o| o.key),
        Some("execution.checkpointing.dir")
    );
}

#[test]
fn the_new_checkpoint_key_wins_over_its_deprecated_key() {
    let conf = yaml("state.checkpoints.num-retained: 3\nexecution.checkpointing.num-retained: 5\n").unwrap();
    assert_eq!(conf.get(&CHECKPOINTING_NUM_RETAINED), Ok(5));
}

#[test]
fn a_bad_checkpoint_value_names_the_key_it_was_configured_under() {
    let conf = yaml(
        "execution.checkpointing.mode: twice
",
    )
    .unwrap();
    let err = conf.get(&CHECKPOINTING_MODE).unwrap_err().to_string();
    assert!(err.contains("'twice' for key 'execution.checkpointing.mode'"), "{err}");
    assert!(err.contains("EXACTLY_ONCE, AT_LEAST_ONCE"), "{err}");
    let conf = yaml(
        "state.checkpoints.num-retained: -1
",
    )
    .unwrap();
    let err = conf.get(&CHECKPOINTING_NUM_RETAINED).unwrap_err();
    assert!(
        matches!(&err, ConfigError::InvalidValue { key, .. } if key == "state.checkpoints.num-retained"),
        "{err:?}"
    );
    assert_eq!(conf.validate(), Err(err));
    let conf = yaml(
        "execution.checkpointing.externalized-checkpoint-retention: KEEP
",
    )
    .unwrap();
    let err = conf.validate().unwrap_err().to_string();
    assert!(
        err.contains("KEEP is an unknown value of ExternalizedCheckpointRetention"),
        "{err}"
    );
}
