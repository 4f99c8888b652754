//! Hostile input end to end: huge and binary input lines fail a job with a bounded
//! cause that names the line (or are skipped when the job skips malformed lines), and
//! one job's failure report never holds up another job's reports.

mod common;

use common::*;
use serde_json::json;
use std::io::Write;
use std::time::Duration;

/// The first line is a valid order; line 2 is `1,1,1.00,<len bytes of 'x'>`.
fn orders_with_a_huge_line(dir: &std::path::Path, len: usize) -> std::path::PathBuf {
    let path = dir.join("orders.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    f.write_all(b"1,1,2.50,1700000000000\n2,1,1.00,").unwrap();
    f.write_all(&vec![b'x'; len]).unwrap();
    f.write_all(b"\n3,1,1.25,1700000003000\n").unwrap();
    f.flush().unwrap();
    path
}

#[test]
fn a_ten_megabyte_malformed_line_fails_its_job_with_a_bounded_cause_and_another_job_still_finishes() {
    let cluster = Cluster::start(1, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let len = 10 * 1024 * 1024;
    let csv = orders_with_a_huge_line(dir.path(), len);
    let failing = cluster.submit(json!({
        "program": "orders-per-minute",
        "parallelism": 1,
        "args": { "input": csv.display().to_string(), "output": dir.path().join("opm").display().to_string() },
    }));
    let out = dir.path().join("sums");
    let other = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 1,
        "args": { "keys": "10", "records": "20000", "seed": "3", "output": out.display().to_string() },
    }));
    assert_eq!(cluster.wait_terminal(&failing, Duration::from_secs(60)), "FAILED");
    assert_eq!(cluster.wait_terminal(&other, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(&out), keyed_sum_output(10, 3, 20000));

    let (code, exc) = get(&cluster.rest, &format!("/jobs/{failing}/exceptions"));
    assert_eq!(code, 200);
    let trace = exc["exceptionHistory"]["entries"][0]["stacktrace"]
        .as_str()
        .unwrap_or("");
    assert!(trace.contains("malformed order at line 2"), "{trace}");
    assert!(
        trace.contains(&format!("({} bytes; first 120 characters shown)", len + 9)),
        "{}",
        &trace[..trace.len().min(2000)]
    );
    assert!(trace.len() < 16 * 1024, "the cause is {} bytes", trace.len());
}

#[test]
fn binary_garbage_in_an_orders_csv_names_its_line_and_is_skipped_when_skipping_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("orders.csv");
    let mut bytes = b"1,1,2.50,1700000000000\n".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0x00, 0xc3, 0x28, b',', 0x80]);
    bytes.extend_from_slice(b"\n2,1,1.00,1700000001000\n");
    std::fs::write(&csv, bytes).unwrap();
    let input = format!("input={}", csv.display());
    let (code, _out, err) = weir_cli(&["local", "orders-per-minute", "--arg", &input]);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("line 2 of {}: not valid UTF-8", csv.display())),
        "{err}"
    );
    assert!(!err.contains("stream did not contain valid UTF-8"), "{err}");

    let output = dir.path().join("out");
    let out_arg = format!("output={}", output.display());
    let (code, _out, err) = weir_cli(&[
        "local",
        "orders-per-minute",
        "--arg",
        &input,
        "--arg",
        "skip_malformed=true",
        "--arg",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        read_parts(&output),
        vec!["1699999980000,1700000040000,1,2,3.50".to_string()]
    );
}
