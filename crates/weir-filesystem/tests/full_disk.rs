//! A write that fails on a full disk leaves nothing behind: no temporary file and no
//! directory it created (a checkpoint's `chk-<id>`). Runs on a tiny tmpfs, which needs
//! root; elsewhere the test says it was skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A 64 KiB tmpfs mounted at a fresh directory, unmounted when dropped.
struct TinyTmpfs {
    dir: tempfile::TempDir,
}

impl TinyTmpfs {
    fn mount() -> Option<TinyTmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .output()
            .ok()?
            .status
            .success();
        mounted.then_some(TinyTmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TinyTmpfs {
    fn drop(&mut self) {
        match Command::new("umount").arg(self.dir.path()).status() {
            Ok(s) if s.success() => {}
            other => eprintln!("cannot unmount {}: {other:?}", self.dir.path().display()),
        }
    }
}

/// Every entry below `dir`, recursively.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            found.extend(entries(&p));
        }
        found.push(p);
    }
    found
}

#[test]
fn a_checkpoint_file_that_does_not_fit_on_the_disk_leaves_no_directory_or_temporary_file() {
    let Some(disk) = TinyTmpfs::mount() else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let job = disk.path().join("job");
    std::fs::create_dir(&job).unwrap();
    let too_big = vec![7u8; 1 << 20];
    for (i, new) in [(1, false), (2, true)] {
        let target = job.join(format!("chk-{i}")).join("state-0");
        let location = target.display().to_string();
        let result = if new {
            weir_filesystem::put_new(&location, too_big.clone())
        } else {
            weir_filesystem::put(&location, too_big.clone())
        };
        let err = result.expect_err("1 MiB does not fit on 64 KiB");
        assert!(
            err.to_string().contains("state-0") || err.to_string().contains("chk-"),
            "{err}"
        );
        assert_eq!(
            entries(&job),
            Vec::<PathBuf>::new(),
            "after the failed write of {location}"
        );
    }
    weir_filesystem::put(&job.join("chk-3").join("small").display().to_string(), vec![1; 10]).unwrap();
    assert!(job.join("chk-3").join("small").is_file());
}
