//! A 200 MB line in a text file is never held whole: with the default bound (16 MiB)
//! the source fails naming the line, and skipping it reads on; the process's peak
//! resident memory stays far below the line's size. Alone in its test binary, so the
//! peak is this test's.

use std::io::Write;
use weir_connectors::sink::collect::{CollectHandle, CollectSink};
use weir_connectors::source::{TextFileSource, DEFAULT_MAX_LINE_LENGTH};
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

const LINE: usize = 200 * 1024 * 1024;

fn drain(source: &mut dyn SourceFunction<String>) -> Result<Vec<String>, TaskError> {
    let handle = CollectHandle::new();
    let mut out = CollectSink::new(handle.clone());
    while source.poll_next(&mut out)? == SourceStatus::More {}
    out.end_input()?;
    Ok(handle.take())
}

/// The peak resident set of this process in bytes (`VmHWM`).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status");
    kb * 1024
}

#[test]
fn a_200_megabyte_line_fails_the_source_or_is_skipped_without_being_held_in_memory() {
    let mut file = tempfile::NamedTempFile::new().expect("a temp file");
    {
        let mut w = std::io::BufWriter::new(file.as_file_mut());
        w.write_all(b"first\n").unwrap();
        let chunk = vec![b'z'; 1024 * 1024];
        for _ in 0..LINE / chunk.len() {
            w.write_all(&chunk).unwrap();
        }
        w.write_all(b"\nlast\n").unwrap();
        w.flush().unwrap();
    }
    let err = drain(&mut TextFileSource::new(file.path(), 0, 1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "line 2 of {} is longer than the limit of {DEFAULT_MAX_LINE_LENGTH} bytes ({} bytes read so far)",
            file.path().display(),
            DEFAULT_MAX_LINE_LENGTH + 1
        )),
        "{err}"
    );
    let lines = drain(&mut TextFileSource::new(file.path(), 0, 1).skip_malformed_lines(true)).expect("skips");
    assert_eq!(lines, vec!["first".to_string(), "last".to_string()]);
    let peak = peak_rss();
    assert!(peak < (LINE / 2) as u64, "peak RSS {peak} bytes for a {LINE}-byte line");
}
