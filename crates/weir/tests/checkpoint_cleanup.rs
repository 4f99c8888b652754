//! A job's checkpoints are gone once it ended, unless retention keeps them: `weir local`
//! with checkpointing under Flink's default `NO_EXTERNALIZED_CHECKPOINTS` leaves no
//! `chk-<id>` behind when its job finished.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// Every `chk-*` directory below `dir`, with what is in it.
fn checkpoint_dirs(dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries {
        let path = e.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("chk-") {
            let inside = std::fs::read_dir(&path)
                .unwrap()
                .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            found.push((path, inside));
        } else {
            found.extend(checkpoint_dirs(&path));
        }
    }
    found
}

#[test]
fn a_finished_local_job_with_checkpoints_leaves_none_of_them_behind_by_default() {
    let chk = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let chk_dir = format!("execution.checkpointing.dir={}", chk.path().display());
    let output = format!("output={}", out.path().display());
    let (code, stdout, err) = weir_cli(&[
        "local",
        "-D",
        "execution.checkpointing.interval=50 ms",
        "-D",
        &chk_dir,
        "keyed-sum",
        "--arg",
        "keys=50",
        "--arg",
        "records=6000",
        "--arg",
        "seed=7",
        "--arg",
        "rate_per_sec=6000",
        "--arg",
        &output,
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert_eq!(read_parts(out.path()), keyed_sum_output(50, 7, 6000));
    let left = checkpoint_dirs(chk.path());
    assert!(left.is_empty(), "checkpoints left behind: {left:?}");
}
