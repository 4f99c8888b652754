//! Hostile text files: arbitrary and mutated bytes read by the text-file sources give
//! their lines, or fail naming the line and file of the first line that is not valid
//! UTF-8; skipping invalid lines never fails and drops exactly those lines.

use proptest::prelude::*;
use std::io::Write;
use weir_connectors::sink::collect::{CollectHandle, CollectSink};
use weir_connectors::source::{NumberedLinesSource, TextFileSource};
use weir_core::fuzz::{cases, corpus, mutate, mutations};
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

fn drain<T: Clone>(source: &mut dyn SourceFunction<T>) -> Result<Vec<T>, TaskError> {
    let handle = CollectHandle::new();
    let mut out = CollectSink::new(handle.clone());
    while source.poll_next(&mut out)? == SourceStatus::More {}
    out.end_input()?;
    Ok(handle.take())
}

/// The lines of `bytes` as the sources split them (terminators stripped).
fn expected_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = bytes.split_inclusive(|b| *b == b'\n').collect();
    for l in &mut lines {
        while let [rest @ .., b'\n' | b'\r'] = l {
            *l = rest;
        }
    }
    lines
}

/// Reads `bytes` as a file with both sources, failing and skipping.
fn read_file(bytes: &[u8]) {
    let mut file = tempfile::NamedTempFile::new().expect("a temp file");
    file.write_all(bytes).expect("writes");
    let path = file.path();
    let lines = expected_lines(bytes);
    let first_invalid = lines.iter().position(|l| std::str::from_utf8(l).is_err());
    let valid: Vec<String> = lines
        .iter()
        .filter_map(|l| std::str::from_utf8(l).ok().map(str::to_string))
        .collect();

    let failing = drain(&mut TextFileSource::new(path, 0, 1));
    match (first_invalid, failing) {
        (None, Ok(got)) => assert_eq!(got, valid),
        (Some(i), Err(e)) => assert!(
            e.to_string()
                .contains(&format!("line {} of {}: not valid UTF-8", i + 1, path.display())),
            "{e}"
        ),
        (expected, got) => panic!("first invalid line {expected:?}, read {got:?}"),
    }
    let skipping = drain(&mut TextFileSource::new(path, 0, 1).skip_malformed_lines(true)).expect("skips");
    assert_eq!(skipping, valid);
    let numbered = drain(&mut NumberedLinesSource::new(path, 0, 1).skip_malformed_lines(true)).expect("skips");
    let expected_numbers: Vec<u64> = (1..=lines.len() as u64)
        .filter(|n| std::str::from_utf8(lines[*n as usize - 1]).is_ok())
        .collect();
    assert_eq!(numbered.iter().map(|(n, _)| *n).collect::<Vec<_>>(), expected_numbers);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]

    #[test]
    fn arbitrary_file_bytes_are_lines_or_an_error_naming_the_line(
        bytes in proptest::collection::vec(prop_oneof![any::<u8>(), Just(b'\n'), Just(b'a')], 0..300),
    ) {
        read_file(&bytes);
    }

    #[test]
    fn mutated_csv_files_are_lines_or_an_error_naming_the_line(
        mutations in mutations(1..8),
    ) {
        let valid = "order_id,user_id,amount,ts_millis\n1,1,2.50,1700000000000\r\n2,7,ü1.00,1700000001000\n3,1,1.25,1700000003000";
        read_file(&mutate(valid.as_bytes(), &mutations));
    }
}

#[test]
fn a_binary_line_fails_with_its_number_or_is_skipped() {
    let bytes = b"a\n\xff\xfe\x00garbage\nb\n";
    let mut file = tempfile::NamedTempFile::new().expect("a temp file");
    file.write_all(bytes).expect("writes");
    let err = drain(&mut TextFileSource::new(file.path(), 0, 1))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "text file source: line 2 of {}: not valid UTF-8 (first invalid byte at column 1)",
            file.path().display()
        )
    );
    let got = drain(&mut NumberedLinesSource::new(file.path(), 0, 1).skip_malformed_lines(true)).expect("skips");
    assert_eq!(got, vec![(1, "a".to_string()), (3, "b".to_string())]);
}

#[test]
fn the_lines_corpus_replays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/lines");
    for (_, bytes) in corpus(&dir).expect("corpus readable") {
        read_file(&bytes);
    }
}

#[test]
fn a_line_over_the_bound_fails_naming_file_line_and_length_or_is_skipped() {
    let mut file = tempfile::NamedTempFile::new().expect("a temp file");
    write!(file, "short\n{}\nafter\n", "y".repeat(5_000)).expect("writes");
    let err = drain(&mut TextFileSource::new(file.path(), 0, 1).max_line_length(64))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "text file source: line 2 of {} is longer than the limit of 64 bytes (65 bytes read so far); \
             raise the source's max line length or skip malformed lines",
            file.path().display()
        )
    );
    let skipping = NumberedLinesSource::new(file.path(), 0, 1)
        .max_line_length(64)
        .skip_malformed_lines(true);
    let got = drain(&mut { skipping }).expect("skips");
    assert_eq!(got, vec![(1, "short".to_string()), (3, "after".to_string())]);
}

#[test]
fn a_long_line_another_subtask_owns_is_passed_over_and_the_owner_fails_on_it() {
    let mut file = tempfile::NamedTempFile::new().expect("a temp file");
    write!(file, "a\n{}\nc\nd\n", "y".repeat(5_000)).expect("writes");
    let first =
        drain(&mut NumberedLinesSource::new(file.path(), 0, 2).max_line_length(64)).expect("line 2 is not its own");
    assert_eq!(first, vec![(1, "a".to_string()), (3, "c".to_string())]);
    let second = drain(&mut NumberedLinesSource::new(file.path(), 1, 2).max_line_length(64));
    let err = second.unwrap_err().to_string();
    assert!(err.contains("line 2 of"), "{err}");
}
