//! Hostile configuration: arbitrary and mutated `config.yaml` texts and `-D` values
//! for every known option are either accepted or refused with a `ConfigError`;
//! loading, validating and deriving the TaskManager memory model never panic.

use proptest::prelude::*;
use std::path::Path;
use weir_config::{Configuration, TaskExecutorMemory, ALL_OPTIONS};
use weir_core::fuzz::{cases, corpus, mutate, mutations};

const VALID_YAML: &str = "jobmanager:\n  rpc:\n    address: localhost\n    port: 6123\n\
taskmanager:\n  numberOfTaskSlots: 2\n  memory:\n    process.size: 1728m\n    network.fraction: 0.1\n\
heartbeat.interval: 10 s\nrest.port: 8081\nparallelism.default: 1\n\
execution.checkpointing.interval: 1 min\nmetrics.reporter.prom.port: 9249\n";

/// Everything a process does with a configuration at start-up.
fn use_configuration(conf: &Configuration) {
    if conf.validate().is_ok() {
        match TaskExecutorMemory::from_config(conf) {
            Ok(memory) => {
                memory.network_buffers(32 * 1024);
                memory.memory_configuration();
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    conf.unknown_keys();
    conf.to_map_with_defaults();
}

fn load_yaml(text: &str) {
    let mut conf = Configuration::new();
    if conf.merge_yaml_str(text, Path::new("config.yaml")).is_ok() {
        use_configuration(&conf);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn arbitrary_yaml_is_loaded_or_refused(text in "(?s).{0,200}") {
        load_yaml(&text);
    }

    #[test]
    fn mutated_valid_yaml_is_loaded_or_refused(mutations in mutations(1..8)) {
        let bytes = mutate(VALID_YAML.as_bytes(), &mutations);
        load_yaml(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn any_dynamic_value_of_any_option_is_accepted_or_refused(
        option in proptest::sample::select(ALL_OPTIONS),
        value in prop_oneof!["(?s).{0,30}", "-?[0-9]{1,30}(\\.[0-9]{0,5})? ?(b|kb|mb|gb|tb|k|m|g|t|ms|s|min|h|d)?"],
        raw in "(?s).{0,40}",
    ) {
        let mut conf = Configuration::new();
        let dynamic = [format!("{}={value}", option.key), raw];
        if conf.apply_dynamic_properties(&dynamic).is_ok() {
            use_configuration(&conf);
        }
    }
}

#[test]
fn the_config_corpus_replays_without_panicking() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/config");
    for (_, bytes) in corpus(&dir).expect("corpus readable") {
        let text = String::from_utf8_lossy(&bytes);
        load_yaml(&text);
        let mut conf = Configuration::new();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        if conf.apply_dynamic_properties(&lines).is_ok() {
            use_configuration(&conf);
        }
    }
}

#[test]
fn a_megabyte_long_value_is_quoted_as_an_excerpt_naming_its_length() {
    let value = format!("1{}", "x".repeat(1 << 20));
    let mut conf = Configuration::new();
    conf.apply_dynamic_properties(&[format!("taskmanager.numberOfTaskSlots={value}")])
        .expect("-D entries are parsed when read");
    let err = conf.validate().expect_err("not an integer");
    let text = err.to_string();
    assert!(text.len() < 1024, "the error is {} bytes", text.len());
    assert!(text.contains("'taskmanager.numberOfTaskSlots'"), "{text}");
    assert!(
        text.contains(&format!("({} bytes; first 120 characters shown)", value.len())),
        "{text}"
    );
    assert!(text.contains("not an integer in the range"), "{text}");

    let mut short = Configuration::new();
    short.set_string("taskmanager.numberOfTaskSlots", "two");
    assert_eq!(
        short.validate().expect_err("not an integer").to_string(),
        "Could not parse value 'two' for key 'taskmanager.numberOfTaskSlots' (expected Integer): \
         not an integer in the range 0..=4294967295: 'two'"
    );
}
