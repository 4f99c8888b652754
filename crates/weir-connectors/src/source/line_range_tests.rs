use super::*;
use proptest::prelude::*;
use std::io::Write;

/// Every line the reader emits until it finishes.
fn drain(reader: &mut RangeLineReader) -> Result<Vec<String>, TaskError> {
    let mut lines = Vec::new();
    while reader.read_batch(|l| {
        lines.push(l.to_string());
        Ok(())
    })? == SourceStatus::More
    {}
    Ok(lines)
}

fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    f.flush().unwrap();
    f
}

/// The lines of `text` as a line reader of the whole file emits them.
fn expected_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.split('\n').map(|l| l.trim_end_matches('\r').to_string()).collect();
    if text.is_empty() || text.ends_with('\n') {
        lines.pop();
    }
    lines
}

fn reader(path: &Path, subtask: u32, parallelism: u32) -> RangeLineReader {
    bounded(path, subtask, parallelism, MalformedLines::default())
}

fn bounded(path: &Path, subtask: u32, parallelism: u32, malformed: MalformedLines) -> RangeLineReader {
    RangeLineReader::new(path.to_path_buf(), "text file source", subtask, parallelism, malformed)
}

fn lines_of(max_line_length: usize, skip: bool) -> MalformedLines {
    MalformedLines { max_line_length, skip }
}

#[test]
fn byte_ranges_cover_the_file_once_in_order() {
    for len in [0u64, 1, 7, 100, u64::MAX] {
        for n in 1..=9u32 {
            let ranges: Vec<ByteRange> = (0..n).map(|s| ByteRange::of_split(len, s, n)).collect();
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges[n as usize - 1].end, len);
            for w in ranges.windows(2) {
                assert_eq!(w[0].end, w[1].start, "len {len}, {n} splits");
            }
        }
    }
}

fn line_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![Just(String::new()), "[a-z,0-9]{1,12}", "[a-z]{1,5}\r", "é[a-z]{0,3}",],
        0..40,
    )
    .prop_flat_map(|lines| {
        let joined = lines.join("\n");
        prop_oneof![Just(joined.clone()), Just(format!("{joined}\n"))]
    })
}

proptest! {
    #[test]
    fn the_splits_of_a_file_together_emit_every_line_once_in_file_order(
        text in line_strategy(), n in 1u32..7, chunk in prop_oneof![1usize..40, Just(CHUNK)],
    ) {
        let f = file_with(text.as_bytes());
        let mut all = Vec::new();
        for s in 0..n {
            let mut r = reader(f.path(), s, n);
            r.chunk = chunk;
            all.extend(drain(&mut r).unwrap());
        }
        prop_assert_eq!(all, expected_lines(&text));
    }

    #[test]
    fn a_restore_at_another_parallelism_emits_exactly_the_lines_not_yet_emitted(
        text in line_strategy(), n in 1u32..5, m in 1u32..5, batches in 0usize..4, chunk in 1usize..40,
    ) {
        let f = file_with(text.as_bytes());
        let mut emitted = vec![Vec::new(); n as usize];
        let mut state = Vec::new();
        for s in 0..n {
            let mut r = reader(f.path(), s, n);
            r.chunk = chunk;
            for _ in 0..batches {
                r.read_batch(|l| {
                    emitted[s as usize].push(l.to_string());
                    Ok(())
                }).unwrap();
            }
            state.extend(r.snapshot().unwrap());
        }
        // Deal the split positions round-robin to `m` subtasks, as list state is.
        let mut rest = vec![Vec::new(); n as usize];
        for t in 0..m {
            let mine: Vec<Vec<u8>> = state.iter().skip(t as usize).step_by(m as usize).cloned().collect();
            let mut r = reader(f.path(), t, m);
            r.restore(&mine).unwrap();
            let positions: Vec<SplitPosition> =
                mine.iter().map(|b| SplitPosition::decode(b, "t").unwrap()).collect();
            let lines = drain(&mut r).unwrap();
            // A subtask reads its splits in split order; attribute lines by count.
            let mut lines = lines.into_iter();
            let mut sorted = positions;
            sorted.sort_by_key(|p| p.split);
            for p in sorted {
                let whole = drain(&mut reader(f.path(), p.split, n)).unwrap();
                let left = whole.len() - emitted[p.split as usize].len();
                rest[p.split as usize] = lines.by_ref().take(left).collect();
            }
            prop_assert!(lines.next().is_none());
        }
        let mut all = Vec::new();
        for s in 0..n as usize {
            all.extend(emitted[s].iter().cloned());
            all.extend(rest[s].iter().cloned());
        }
        prop_assert_eq!(all, expected_lines(&text));
    }
}

#[test]
fn lines_longer_than_a_chunk_are_read_whole_below_the_bound() {
    let long = "x".repeat(CHUNK * 3 + 5);
    let text = format!("a\n{long}\nb\n{long}");
    let f = file_with(text.as_bytes());
    for n in 1..4 {
        let mut all = Vec::new();
        for s in 0..n {
            all.extend(drain(&mut reader(f.path(), s, n)).unwrap());
        }
        assert_eq!(all, expected_lines(&text), "{n} splits");
    }
}

#[test]
fn a_bad_line_in_a_later_split_is_named_by_its_line_number_in_the_file() {
    let mut bytes = Vec::new();
    for i in 0..1000 {
        bytes.extend_from_slice(format!("line {i}\n").as_bytes());
    }
    bytes.extend_from_slice(b"ok\xff\xfe\n");
    bytes.extend_from_slice(b"last\n");
    let f = file_with(&bytes);
    let err = drain(&mut reader(f.path(), 1, 2)).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "line 1001 of {}: not valid UTF-8 (first invalid byte at column 3)",
            f.path().display()
        )),
        "{err}"
    );
    let mut skipping = bounded(f.path(), 1, 2, lines_of(1024, true));
    let lines = drain(&mut skipping).unwrap();
    assert_eq!(lines.last().map(String::as_str), Some("last"));
    assert!(!lines.iter().any(|l| l.starts_with("ok")));
    assert_eq!(skipping.skipped_invalid_utf8(), 1);
}

#[test]
fn a_line_over_the_bound_fails_naming_it_or_is_skipped_without_growing_past_the_bound() {
    let text = format!("1,x\n2,{}\n3,z", "y".repeat(5_000));
    let f = file_with(text.as_bytes());
    let err = drain(&mut bounded(f.path(), 0, 1, lines_of(1024, false)))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "line 2 of {} is longer than the limit of 1024 bytes (1025 bytes read so far)",
            f.path().display()
        )),
        "{err}"
    );
    let lines = drain(&mut bounded(f.path(), 0, 1, lines_of(1024, true))).unwrap();
    assert_eq!(lines, vec!["1,x".to_string(), "3,z".to_string()]);
    // The same with the long line spanning reads of the buffer.
    let long = format!("1,x\n2,{}\n3,z\n", "y".repeat(CHUNK * 2));
    let f = file_with(long.as_bytes());
    let mut r = bounded(f.path(), 0, 1, lines_of(1000, true));
    assert_eq!(drain(&mut r).unwrap(), vec!["1,x".to_string(), "3,z".to_string()]);
    assert!(r.open.is_none());
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let err = drain(&mut reader(Path::new("/nonexistent/weir/input.csv"), 0, 1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot read input file /nonexistent/weir/input.csv"),
        "{err}"
    );
}
