//! Flink's reporter options, read into the reporters a process starts.
//!
//! A reporter is named by its options: `metrics.reporter.<name>.factory.class` and
//! `metrics.reporter.<name>.port`. `metrics.reporters` (comma-separated names), when
//! set, selects which of the configured reporters start. Weir has Flink's Prometheus
//! reporter ([`PROMETHEUS_FACTORY`]); any other factory class is refused with the
//! reporter's name, as is a port option that is not a port list.
//!
//! Weir bounds a reporter's connections (Flink's reporter has no such keys):
//! `metrics.reporter.<name>.max-connections` ([`DEFAULT_MAX_CONNECTIONS`]) connections
//! that sent a request, as many more that have not yet, and
//! `metrics.reporter.<name>.max-connections-per-peer` ([`DEFAULT_MAX_CONNECTIONS_PER_PEER`])
//! from one address; either must be a whole number of at least 1.
//!
//! The port is Flink's port list: ports and ranges separated by commas
//! (`9249`, `9250-9260`, `9249,9251-9255`); a process binds the first free one. `0` asks
//! for any free port. Weir's default is `9249-9259` where Flink's is `9249`, so a
//! JobManager and TaskManagers started on one host each get a port (9249, 9250, …)
//! without per-process configuration.

use crate::error::MetricsError;
use std::collections::BTreeMap;
use weir_config::Configuration;

/// Flink's factory class of the Prometheus reporter.
pub const PROMETHEUS_FACTORY: &str = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory";

/// The port list a Prometheus reporter binds by default.
pub const DEFAULT_PORTS: &str = "9249-9259";

/// Connections a reporter serves at once by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 16;

/// Connections a reporter serves at once for one address by default.
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 8;

const PREFIX: &str = "metrics.reporter.";

/// The ports a reporter may bind, tried in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortRange {
    ranges: Vec<(u16, u16)>,
    text: String,
}

impl PortRange {
    /// Parses Flink's port list (`9249`, `9250-9260`, `9249,9251-9255`, `0`).
    pub fn parse(text: &str) -> Result<PortRange, String> {
        let mut ranges = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (low, high) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let port = |s: &str| {
                s.parse::<u16>()
                    .map_err(|_| format!("'{s}' is not a port number 0..65535"))
            };
            let (low, high) = (port(low)?, port(high)?);
            if low > high {
                return Err(format!("the range {low}-{high} is empty"));
            }
            ranges.push((low, high));
        }
        Ok(PortRange {
            ranges,
            text: text.trim().to_string(),
        })
    }

    /// Every port of the list, in order.
    pub fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.ranges.iter().flat_map(|&(low, high)| low..=high)
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// One Prometheus reporter a process starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrometheusReporterConfig {
    /// The reporter's name (`prom` in `metrics.reporter.prom.port`).
    pub name: String,
    /// The ports it may bind.
    pub ports: PortRange,
    /// Connections served at once (`metrics.reporter.<name>.max-connections`).
    pub max_connections: usize,
    /// Connections served at once for one address
    /// (`metrics.reporter.<name>.max-connections-per-peer`).
    pub max_connections_per_peer: usize,
}

/// The connection bound `option` of reporter `name`, or `default` when it is not set.
fn limit(name: &str, opts: &BTreeMap<&str, &str>, option: &'static str, default: usize) -> Result<usize, MetricsError> {
    let Some(value) = opts.get(option) else {
        return Ok(default);
    };
    match value.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(MetricsError::InvalidLimit {
            reporter: name.to_string(),
            option,
            value: weir_core::excerpt::excerpt(value),
        }),
    }
}

/// The Prometheus reporters `config` asks for, by name.
pub fn prometheus_reporters(config: &Configuration) -> Result<Vec<PrometheusReporterConfig>, MetricsError> {
    let mut options: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for (key, value) in config.iter() {
        let Some(rest) = key.strip_prefix(PREFIX) else {
            continue;
        };
        if let Some((name, option)) = rest.split_once('.') {
            options.entry(name).or_default().insert(option, value);
        }
    }
    let selected: Option<Vec<&str>> = config
        .get_string("metrics.reporters")
        .map(|list| list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect());
    if let Some(names) = &selected {
        if let Some(missing) = names.iter().find(|n| !options.contains_key(*n)) {
            return Err(MetricsError::UnconfiguredReporter {
                reporter: missing.to_string(),
            });
        }
    }
    let mut reporters = Vec::new();
    for (name, opts) in options {
        if selected.as_ref().is_some_and(|names| !names.contains(&name)) {
            continue;
        }
        let class = opts.get("factory.class").ok_or_else(|| MetricsError::MissingFactory {
            reporter: name.to_string(),
        })?;
        if class.trim() != PROMETHEUS_FACTORY {
            return Err(MetricsError::UnknownFactory {
                reporter: name.to_string(),
                class: class.to_string(),
                supported: PROMETHEUS_FACTORY,
            });
        }
        let port_text = opts.get("port").copied().unwrap_or(DEFAULT_PORTS);
        let ports = PortRange::parse(port_text).map_err(|reason| MetricsError::InvalidPort {
            reporter: name.to_string(),
            value: port_text.to_string(),
            reason,
        })?;
        reporters.push(PrometheusReporterConfig {
            name: name.to_string(),
            ports,
            max_connections: limit(name, &opts, "max-connections", DEFAULT_MAX_CONNECTIONS)?,
            max_connections_per_peer: limit(
                name,
                &opts,
                "max-connections-per-peer",
                DEFAULT_MAX_CONNECTIONS_PER_PEER,
            )?,
        });
    }
    Ok(reporters)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Configuration {
        let mut c = Configuration::new();
        for (k, v) in pairs {
            c.set_string(*k, *v);
        }
        c
    }

    #[test]
    fn no_reporter_options_start_no_reporter() {
        assert_eq!(prometheus_reporters(&config(&[("rest.port", "1")])), Ok(vec![]));
    }

    #[test]
    fn a_prometheus_reporter_defaults_to_the_port_range_from_9249() {
        let r = prometheus_reporters(&config(&[("metrics.reporter.prom.factory.class", PROMETHEUS_FACTORY)])).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].name, "prom");
        assert_eq!(
            r[0].ports.ports().collect::<Vec<_>>(),
            (9249..=9259).collect::<Vec<_>>()
        );
    }

    #[test]
    fn port_lists_are_ports_and_ranges_separated_by_commas() {
        let p = PortRange::parse("9249, 9251-9253").unwrap();
        assert_eq!(p.ports().collect::<Vec<_>>(), vec![9249, 9251, 9252, 9253]);
        assert_eq!(p.to_string(), "9249, 9251-9253");
        assert_eq!(PortRange::parse("0").unwrap().ports().collect::<Vec<_>>(), vec![0]);
        assert!(PortRange::parse("9260-9250").unwrap_err().contains("empty"));
        assert!(PortRange::parse("http").unwrap_err().contains("'http' is not a port"));
        assert!(PortRange::parse("70000").is_err());
    }

    #[test]
    fn a_bad_port_names_the_reporter_and_the_value() {
        let err = prometheus_reporters(&config(&[
            ("metrics.reporter.prom.factory.class", PROMETHEUS_FACTORY),
            ("metrics.reporter.prom.port", "92x9"),
        ]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "metrics.reporter.prom.port: '92x9' is not a port or a port range like 9249-9259 ('92x9' is not a port number 0..65535)"
        );
    }

    #[test]
    fn connection_bounds_default_to_16_and_8_per_peer_and_can_be_set() {
        let r = prometheus_reporters(&config(&[("metrics.reporter.prom.factory.class", PROMETHEUS_FACTORY)])).unwrap();
        assert_eq!((r[0].max_connections, r[0].max_connections_per_peer), (16, 8));
        let r = prometheus_reporters(&config(&[
            ("metrics.reporter.prom.factory.class", PROMETHEUS_FACTORY),
            ("metrics.reporter.prom.max-connections", "4"),
            ("metrics.reporter.prom.max-connections-per-peer", " 2 "),
        ]))
        .unwrap();
        assert_eq!((r[0].max_connections, r[0].max_connections_per_peer), (4, 2));
    }

    #[test]
    fn a_connection_bound_of_zero_a_negative_number_or_garbage_is_refused_naming_the_key() {
        for option in ["max-connections", "max-connections-per-peer"] {
            for value in ["0", "-3", "many", ""] {
                let key = format!("metrics.reporter.prom.{option}");
                let err = prometheus_reporters(&config(&[
                    ("metrics.reporter.prom.factory.class", PROMETHEUS_FACTORY),
                    (key.as_str(), value),
                ]))
                .unwrap_err();
                assert_eq!(
                    err.to_string(),
                    format!("{key}: '{value}' is not a number of connections of at least 1")
                );
            }
        }
    }

    #[test]
    fn an_unknown_factory_is_refused_with_the_supported_one() {
        let err = prometheus_reporters(&config(&[(
            "metrics.reporter.jmx.factory.class",
            "org.apache.flink.metrics.jmx.JMXReporterFactory",
        )]))
        .unwrap_err();
        assert!(matches!(err, MetricsError::UnknownFactory { ref reporter, .. } if reporter == "jmx"));
        assert!(err.to_string().contains(PROMETHEUS_FACTORY), "{err}");
    }

    #[test]
    fn options_without_a_factory_are_refused() {
        let err = prometheus_reporters(&config(&[("metrics.reporter.prom.port", "9249")])).unwrap_err();
        assert_eq!(
            err,
            MetricsError::MissingFactory {
                reporter: "prom".into()
            }
        );
    }

    #[test]
    fn metrics_reporters_selects_among_the_configured_reporters() {
        let both = [
            ("metrics.reporter.a.factory.class", PROMETHEUS_FACTORY),
            ("metrics.reporter.a.port", "9300"),
            ("metrics.reporter.b.factory.class", PROMETHEUS_FACTORY),
            ("metrics.reporter.b.port", "9301"),
        ];
        let all = prometheus_reporters(&config(&both)).unwrap();
        assert_eq!(all.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
        let mut only_b = config(&both);
        only_b.set_string("metrics.reporters", "b");
        let r = prometheus_reporters(&only_b).unwrap();
        assert_eq!(r.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), vec!["b"]);
        only_b.set_string("metrics.reporters", "b,c");
        assert_eq!(
            prometheus_reporters(&only_b),
            Err(MetricsError::UnconfiguredReporter { reporter: "c".into() })
        );
    }
}
