//! Reading this TaskManager's log files for the JobManager (`ReadLogFile`), in chunks
//! small enough for one gRPC message.
//!
//! Only the files the TaskManager logs to can be read, matched by file name, so a
//! request cannot reach any other path; an empty name means the main (first) log.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use weir_rpc::ReadLogFileResponse;

/// The most bytes one chunk carries (well under gRPC's 4 MiB message limit).
pub const MAX_CHUNK_BYTES: u32 = 1 << 20;

/// Reads up to `max_bytes` (at most [`MAX_CHUNK_BYTES`]) from `offset` of the log file
/// named `name` among `files`.
pub fn read_chunk(files: &[PathBuf], name: &str, offset: u64, max_bytes: u32) -> std::io::Result<ReadLogFileResponse> {
    let Some(path) = find(files, name) else {
        return Ok(ReadLogFileResponse {
            found: false,
            data: Vec::new(),
            file_size: 0,
        });
    };
    let mut file = std::fs::File::open(path)?;
    let file_size = file.metadata()?.len();
    let want = u64::from(max_bytes.min(MAX_CHUNK_BYTES)).min(file_size.saturating_sub(offset));
    let mut data = Vec::with_capacity(want as usize);
    if want > 0 {
        file.seek(SeekFrom::Start(offset))?;
        file.take(want).read_to_end(&mut data)?;
    }
    Ok(ReadLogFileResponse {
        found: true,
        data,
        file_size,
    })
}

fn find<'a>(files: &'a [PathBuf], name: &str) -> Option<&'a Path> {
    if name.is_empty() {
        return files.first().map(PathBuf::as_path);
    }
    files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n.to_string_lossy() == name))
        .map(PathBuf::as_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_a_listed_file_are_read_and_other_paths_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("taskmanager.log");
        std::fs::write(&log, b"line one\nline two\n").unwrap();
        std::fs::write(dir.path().join("secret"), b"x").unwrap();
        let files = vec![log];
        let r = read_chunk(&files, "taskmanager.log", 5, 3).unwrap();
        assert_eq!((r.found, r.data.as_slice(), r.file_size), (true, &b"one"[..], 18));
        let r = read_chunk(&files, "", 9, 100).unwrap();
        assert_eq!(r.data, b"line two\n");
        let r = read_chunk(&files, "taskmanager.log", 18, 100).unwrap();
        assert_eq!((r.found, r.data.len()), (true, 0));
        let r = read_chunk(&files, "taskmanager.log", 1_000, 100).unwrap();
        assert_eq!((r.found, r.data.len()), (true, 0), "past the end reads nothing");
        for name in ["secret", "../secret", "/etc/passwd"] {
            assert!(!read_chunk(&files, name, 0, 10).unwrap().found, "{name}");
        }
        assert!(!read_chunk(&[], "", 0, 10).unwrap().found, "no log file at all");
    }
}
