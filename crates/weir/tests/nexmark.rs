//! The Nexmark queries end to end: each built-in `nexmark-qN` program runs through the
//! `weir` binary (`weir local`) at p=1, 2 and 3 over the same few thousand events, and
//! its output lines must equal the reference computed directly over the generator's
//! sequence (`weir_nexmark::oracle`).
//!
//! The events are spread over 30 s of event time (100 events per second) so that the
//! windows, sessions and auction lifetimes of the queries span several periods.

mod common;

use common::{read_parts, weir_cli};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use weir_nexmark::{generate_events, Bid, Event, NexmarkConfig};

const EVENTS: u64 = 3_000;
const RATE: u64 = 100;
const SEED: u64 = 11;

fn events() -> &'static [Event] {
    static EVENTS_LIST: OnceLock<Vec<Event>> = OnceLock::new();
    EVENTS_LIST.get_or_init(|| {
        let cfg = NexmarkConfig {
            first_event_rate: RATE,
            ..NexmarkConfig::default()
        };
        generate_events(&cfg, SEED, EVENTS)
    })
}

/// The sorted output lines of `weir local nexmark-<query> -p <p>`.
fn run(query: &str, p: u32) -> Vec<String> {
    run_with(query, p, &[])
}

/// [`run`] with more `--arg key=value` arguments.
fn run_with(query: &str, p: u32, more_args: &[String]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let program = format!("nexmark-{query}");
    let mut args: Vec<String> = vec!["local".into(), program.clone(), "-p".into(), p.to_string()];
    let common = [
        format!("events={EVENTS}"),
        format!("rate={RATE}"),
        format!("seed={SEED}"),
        format!("output={}", out.display()),
    ];
    for arg in common.iter().chain(more_args) {
        args.push("--arg".into());
        args.push(arg.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = weir_cli(&args);
    assert_eq!(code, 0, "{program} -p {p} failed: {stdout}\n{stderr}");
    read_parts(&out)
}

fn check(queries: &[&str]) {
    for query in queries {
        let expected = weir_nexmark::oracle::expected(query, events());
        assert!(!expected.is_empty(), "{query} has no result over the test events");
        for p in 1..=3 {
            let got = run(query, p);
            assert_eq!(
                got.len(),
                expected.len(),
                "{query} at p={p}: {} lines instead of {}",
                got.len(),
                expected.len()
            );
            assert!(got == expected, "{query} at p={p} differs from the reference");
        }
    }
}

#[test]
fn stateless_queries_match_the_reference_at_every_parallelism() {
    check(&["q0", "q1", "q2", "q10", "q13", "q14", "q21", "q22"]);
}

#[test]
fn q13_joins_each_bid_with_every_row_of_a_side_input_file_and_drops_bids_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("side.csv");
    let bids: Vec<&Bid> = events()
        .iter()
        .filter_map(|e| match e {
            Event::Bid(b) => Some(b),
            _ => None,
        })
        .collect();
    // Even keys only, and the first bid's even key twice: bids on odd auctions find no
    // row, bids on that auction find two.
    let twice = bids.iter().map(|b| b.auction % 10_000).find(|k| k % 2 == 0).unwrap();
    let mut text = format!("{twice},again\n");
    for key in (0..10_000).step_by(2) {
        text.push_str(&format!("{key},v{key}\n"));
    }
    std::fs::write(&file, text).unwrap();
    let mut expected: Vec<String> = Vec::new();
    for b in &bids {
        let key = b.auction % 10_000;
        if key == twice {
            expected.push(weir_nexmark::rows::enriched_bid(b, "again"));
        }
        if key % 2 == 0 {
            expected.push(weir_nexmark::rows::enriched_bid(b, &format!("v{key}")));
        }
    }
    expected.sort();
    let unmatched = bids.iter().filter(|b| b.auction % 2 == 1).count();
    assert!(unmatched > 0, "the file must leave bids unmatched");
    let side = [format!("side-input={}", file.display())];
    for p in [1, 2] {
        assert!(
            run_with("q13", p, &side) == expected,
            "q13 at p={p} differs from the join computed directly"
        );
    }
}

#[test]
fn q13_refuses_a_malformed_side_input_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("side.csv");
    std::fs::write(&file, "1,one\ntwo,2\n").unwrap();
    let (code, _, stderr) = weir_cli(&[
        "local",
        "nexmark-q13",
        "--arg",
        "events=10",
        "--arg",
        &format!("side-input={}", file.display()),
    ]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains(&format!(
            "side input {}, line 2: the key is not a BIGINT in 'two,2'",
            file.display()
        )),
        "{stderr}"
    );
}

#[test]
fn window_queries_match_the_reference_at_every_parallelism() {
    check(&["q5", "q7", "q8", "q11"]);
}

#[test]
fn join_queries_match_the_reference_at_every_parallelism() {
    check(&["q3", "q4", "q6", "q9", "q20"]);
}

#[test]
fn aggregation_and_ranking_queries_match_the_reference_at_every_parallelism() {
    check(&["q15", "q16", "q17", "q18", "q19"]);
}

#[test]
fn processing_time_windows_count_every_bid_of_every_bidder_once() {
    let expected = weir_nexmark::oracle::q12_totals(events());
    for p in 1..=3 {
        let mut totals: BTreeMap<i64, u64> = BTreeMap::new();
        for line in run("q12", p) {
            let f: Vec<i64> = line.split(',').map(|x| x.parse().unwrap()).collect();
            let [bidder, count, start, end] = f[..] else {
                panic!("q12 line {line} does not have 4 columns")
            };
            assert_eq!(end - start, 10_000, "{line}");
            assert_eq!(start % 10_000, 0, "{line}");
            *totals.entry(bidder).or_default() += count as u64;
        }
        assert_eq!(totals, expected, "q12 at p={p}");
    }
}

#[test]
fn the_nexmark_bench_reports_one_json_object_per_query() {
    let (code, stdout, stderr) = weir_cli(&[
        "bench", "nexmark", "--query", "q1", "--query", "5", "--events", "20000", "--json",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert_eq!(rows[0]["query"], "q1");
    assert_eq!(rows[1]["query"], "q5");
    for row in &rows {
        assert_eq!(row["events"], 20_000);
        for field in ["seconds", "events_per_sec", "events_per_sec_per_core", "cores_used"] {
            assert!(row[field].as_f64().is_some_and(|v| v > 0.0), "{field} in {row}");
        }
        assert!(row["peak_rss_bytes"].as_u64().is_some_and(|v| v > 0), "{row}");
    }
}

#[test]
fn the_nexmark_bench_refuses_an_unknown_query() {
    let (code, _, stderr) = weir_cli(&["bench", "nexmark", "--query", "q23", "--events", "10"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("unknown Nexmark query 'q23'"), "{stderr}");
}
