//! Tests of [`super`]: state handle paths in and out of a checkpoint's locations.

use super::*;

fn roots() -> Vec<String> {
    let job = JobId(0xabc);
    state_roots(
        &CheckpointStorage::FileSystem {
            dir: "/data/chk".into(),
        },
        &job,
        5,
        Some("/data/sp/savepoint-000000-1"),
    )
}

#[test]
fn files_of_the_checkpoint_its_shared_and_taskowned_dirs_and_the_savepoint_target_pass() {
    let job = JobId(0xabc).to_string();
    for ok in [
        format!("/data/chk/{job}/chk-5/v-0-0"),
        format!("/data/chk/{job}/shared/sst-1"),
        format!("/data/chk/{job}/taskowned/x"),
        format!("file:///data/chk/{job}/./chk-5/v-0-0"),
        "/data/sp/savepoint-000000-1/v-1-0".to_string(),
    ] {
        assert_eq!(check_handle_path(&ok, &roots()), Ok(()), "{ok}");
    }
}

#[test]
fn a_handle_naming_a_file_elsewhere_or_climbing_out_with_dotdot_is_refused() {
    let job = JobId(0xabc).to_string();
    for bad in [
        "/some/dir/secret.conf".to_string(),
        format!("/data/chk/{job}/chk-5/../../../../etc/passwd"),
        format!("/data/chk/{job}/chk-4/v-0-0"),
        format!("/data/chk/{job}/chk-5"),
        format!("/data/chk/{job}/chk-50/v"),
        "/data/sp/savepoint-000000-1".to_string(),
        "relative/file".to_string(),
        "s3://bucket/data/chk/x".to_string(),
        "ftp://host/x".to_string(),
    ] {
        let err = check_handle_path(&bad, &roots()).unwrap_err();
        assert!(
            err.to_string().contains("outside the checkpoint's storage locations"),
            "{err}"
        );
    }
}

#[test]
fn without_a_checkpoint_directory_no_file_handle_is_accepted() {
    let roots = state_roots(&CheckpointStorage::JobManager, &JobId(1), 1, None);
    let err = check_handle_path("/tmp/x", &roots).unwrap_err();
    assert!(err.to_string().contains("JobManager's memory"), "{err}");
}

#[test]
fn object_store_handles_must_stay_in_the_bucket_under_the_roots_key() {
    let job = JobId(7);
    let roots = state_roots(
        &CheckpointStorage::FileSystem {
            dir: "s3://b/chk".into(),
        },
        &job,
        2,
        None,
    );
    let jid = job.to_string();
    assert_eq!(check_handle_path(&format!("s3://b/chk/{jid}/chk-2/f"), &roots), Ok(()));
    for bad in [
        format!("s3://other/chk/{jid}/chk-2/f"),
        format!("s3://b/chk/{jid}/chk-2/../../../secret"),
        format!("s3://b/chk/{jid}/chk-20/f"),
        "s3://b/secret".to_string(),
        format!("/chk/{jid}/chk-2/f"),
    ] {
        assert!(check_handle_path(&bad, &roots).is_err(), "{bad}");
    }
}

#[test]
fn a_symlinked_checkpoint_directory_leading_elsewhere_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, outside) = (tmp.path().join("chk"), tmp.path().join("outside"));
    let job = JobId(9);
    let job_dir = dir.join(job.to_string());
    std::fs::create_dir_all(&job_dir).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.conf"), b"x").unwrap();
    std::os::unix::fs::symlink(&outside, job_dir.join("chk-3")).unwrap();
    std::fs::create_dir_all(job_dir.join("shared")).unwrap();
    let storage = CheckpointStorage::FileSystem {
        dir: dir.display().to_string(),
    };
    let roots = state_roots(&storage, &job, 3, None);
    let escaping = job_dir.join("chk-3").join("secret.conf").display().to_string();
    assert_eq!(check_handle_path(&escaping, &roots), Ok(()));
    let err = check_resolved_path(&escaping, &roots).unwrap_err();
    assert!(matches!(err, HandlePathError::SymlinkEscape { .. }), "{err}");
    let fine = job_dir.join("shared").join("f").display().to_string();
    assert_eq!(check_resolved_path(&fine, &roots), Ok(()));
}
