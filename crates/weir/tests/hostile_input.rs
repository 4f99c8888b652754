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

/// `weir local orders-per-minute --arg <arg>...`: (exit code, stdout, stderr).
fn local_orders_per_minute(args: &[&str]) -> (i32, String, String) {
    let mut command = vec!["local", "orders-per-minute"];
    for arg in args {
        command.extend(["--arg", arg]);
    }
    weir_cli(&command)
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
    let (code, _out, err) = local_orders_per_minute(&[&input]);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("line 2 of {}: not valid UTF-8", csv.display())),
        "{err}"
    );
    assert!(!err.contains("stream did not contain valid UTF-8"), "{err}");

    let output = dir.path().join("out");
    let out_arg = format!("output={}", output.display());
    let (code, _out, err) = local_orders_per_minute(&[&input, "skip_malformed=true", &out_arg]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        read_parts(&output),
        vec!["1699999980000,1700000040000,1,2,3.50".to_string()]
    );
}

#[test]
fn an_orders_line_over_sixteen_mebibytes_fails_naming_its_line_or_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_with_a_huge_line(dir.path(), 20 * 1024 * 1024);
    let input = format!("input={}", csv.display());
    let (code, _out, err) = local_orders_per_minute(&[&input]);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!(
            "line 2 of {} is longer than the limit of 16777216 bytes (16777217 bytes read so far)",
            csv.display()
        )),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(err.len() < 16 * 1024, "the error is {} bytes", err.len());

    let output = dir.path().join("out");
    let out_arg = format!("output={}", output.display());
    let (code, _out, err) = local_orders_per_minute(&[&input, "skip_malformed=true", &out_arg]);
    assert_eq!(code, 0, "{}", &err[..err.len().min(2000)]);
    assert_eq!(
        read_parts(&output),
        vec!["1699999980000,1700000040000,1,2,3.75".to_string()]
    );
}

/// `weir sql -f` reading `csv` (columns `a BIGINT, b STRING`) with the table options
/// `extra` into a print sink; (exit code, stdout and stderr together).
fn sql_over(dir: &std::path::Path, csv: &std::path::Path, extra: &str) -> (i32, String) {
    let sql = format!(
        "CREATE TABLE t (a BIGINT, b STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv'{extra});\n\
         CREATE TABLE out (a BIGINT, b STRING) WITH ('connector' = 'print');\n\
         SET 'table.dml-sync' = 'true';\n\
         INSERT INTO out SELECT a, b FROM t;\n",
        csv.display()
    );
    let (code, out, err) = run_sql(dir, &sql, &[]);
    (code, format!("{out}\n{err}"))
}

#[test]
fn a_sql_csv_line_over_the_tables_max_line_length_fails_naming_it_or_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, format!("1,x\n2,{}\n3,z\n", "y".repeat(5_000))).unwrap();
    let (_, text) = sql_over(dir.path(), &csv, ", 'source.max-line-length' = '1kb'");
    assert!(
        text.contains(&format!(
            "line 2 of {} is longer than the limit of 1024 bytes (1025 bytes read so far)",
            csv.display()
        )),
        "{text}"
    );
    assert!(!text.contains("+I[3, z]"), "the job stopped at line 2: {text}");

    let skipping = ", 'source.max-line-length' = '1kb', 'csv.ignore-parse-errors' = 'true'";
    let (code, text) = sql_over(dir.path(), &csv, skipping);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("+I[1, x]") && text.contains("+I[3, z]"), "{text}");
    assert!(!text.contains("yyyy"), "{text}");
}
