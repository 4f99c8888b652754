//! An exactly-once text file sink on the two-phase-commit API (Flink's `FileSink`):
//! one line per record, in part files that go from in-progress to pending to committed.
//!
//! The sink owns the files of its **writer**: a writer id made fresh (random) for each
//! new writer, so restarts, rescaling and reruns into the same directory never collide;
//! a restored writer keeps its id. Transaction `seq` of writer `w` is the file
//!
//! * `.part-<w>-<seq>.inprogress` while records are written into it,
//! * `.part-<w>-<seq>.pending` once pre-committed (flushed and synced at a barrier),
//! * `part-<w>-<seq>` once committed (a rename after its checkpoint completed).
//!
//! Readers (anything listing the directory and ignoring names that start with `.`) see
//! committed files only. A transaction without records creates no file at all.
//! Commit is idempotent: a missing pending file whose committed file exists is already
//! committed; if both are missing the sink's state is lost and commit fails, naming the
//! file.
//!
//! **The restore rule.** Weir commits everything at the end of a bounded input, without
//! a final checkpoint. A subtask can therefore finish and commit, and the job still
//! fail over afterwards (another subtask fails) and replay from the latest completed
//! checkpoint, whose state holds this writer's open transaction `S`. Everything the
//! writer wrote from `S` on — in-progress, pending *and committed* — belongs to the
//! abandoned timeline after that checkpoint and will be written again by the replay.
//! So aborting a restored writer's open transaction `S` deletes every file of that
//! writer with `seq >= S`; the restored writer then continues at `S`. Files with
//! `seq < S` are the committed or restored-pending transactions, never touched.
//!
//! Rescaling deals whole writers to subtasks: a subtask restored with several writers
//! commits and aborts all of them and continues with the first (a subtask restored with
//! none starts a fresh writer). Without checkpointing there is no restored state: a
//! restart from scratch leaves an earlier attempt's committed files (only a finished
//! subtask commits) and hidden in-progress files behind, as Flink does.
//!
//! Invariant: only the writer that owns an id creates, renames or deletes its files.
//! Durability: a part file is synced before it becomes pending; renames are not followed
//! by a directory sync.

use super::two_phase_commit::{put_bytes, StateDecodeError, StateReader, TransactionCodec, TwoPhaseCommitSink};
use std::collections::hash_map::RandomState;
use std::fmt::Display;
use std::fs::{self, File};
use std::hash::{BuildHasher, Hash, Hasher};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;
use weir_runtime::TaskError;

/// The version byte of an encoded [`FilePart`].
const PART_VERSION: u8 = 1;
/// Longest accepted writer id in restored state.
const MAX_WRITER_LEN: usize = 64;

/// Why the file sink failed.
#[derive(Debug, Error)]
pub enum FileSinkError {
    /// A file operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `cannot create`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// Neither the pending nor the committed file of a transaction exists.
    #[error(
        "cannot commit part file {}: neither it nor its pending file {} exists (the sink's files were removed behind its back; its state is lost)",
        committed.display(), pending.display()
    )]
    StateLost {
        /// The pending file.
        pending: PathBuf,
        /// The committed file.
        committed: PathBuf,
    },
}

impl From<FileSinkError> for TaskError {
    fn from(e: FileSinkError) -> Self {
        match e {
            FileSinkError::Io { action, path, source } => {
                TaskError::io(format!("file sink: {action} {}", path.display()), source)
            }
            lost @ FileSinkError::StateLost { .. } => TaskError::user("file sink", lost),
        }
    }
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> FileSinkError {
    let path = path.to_path_buf();
    move |source| FileSinkError::Io { action, path, source }
}

/// One transaction: part file `seq` of writer `writer`.
#[derive(Debug)]
pub struct FilePart {
    writer: String,
    seq: u64,
    /// True once pre-committed with records (a pending file exists or was committed).
    committable: bool,
    out: Option<BufWriter<File>>,
}

impl FilePart {
    /// The writer id.
    pub fn writer(&self) -> &str {
        &self.writer
    }

    /// The sequence number within the writer.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

impl TransactionCodec for FilePart {
    /// Version byte, writer id (u32 length + UTF-8), u64 seq, committable flag byte.
    fn encode(&self) -> Vec<u8> {
        let mut out = vec![PART_VERSION];
        put_bytes(&mut out, self.writer.as_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.push(u8::from(self.committable));
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, StateDecodeError> {
        const WHAT: &str = "file sink transaction";
        let mut r = StateReader::new(WHAT, bytes, PART_VERSION)?;
        let writer = r.string()?;
        let seq = r.u64()?;
        let committable = match r.u8()? {
            0 => false,
            1 => true,
            flag => {
                return Err(StateDecodeError::Invalid {
                    what: WHAT,
                    reason: format!("committable flag {flag} is neither 0 nor 1"),
                })
            }
        };
        r.finish()?;
        if !valid_writer_id(&writer) {
            return Err(StateDecodeError::Invalid {
                what: WHAT,
                reason: format!("writer id {writer:?} is not 1 to {MAX_WRITER_LEN} ASCII letters or digits"),
            });
        }
        Ok(FilePart {
            writer,
            seq,
            committable,
            out: None,
        })
    }
}

fn valid_writer_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_WRITER_LEN && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A fresh writer id: 16 hex digits from the process's random hasher keys, the clock,
/// the process id and a counter.
fn fresh_writer_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        .hash(&mut h);
    std::process::id().hash(&mut h);
    COUNTER.fetch_add(1, Ordering::Relaxed).hash(&mut h);
    format!("{:016x}", h.finish())
}

/// The committed name of part `seq` of `writer`.
pub fn committed_name(writer: &str, seq: u64) -> String {
    format!("part-{writer}-{seq}")
}

fn in_progress_name(writer: &str, seq: u64) -> String {
    format!(".part-{writer}-{seq}.inprogress")
}

fn pending_name(writer: &str, seq: u64) -> String {
    format!(".part-{writer}-{seq}.pending")
}

/// The writer and seq of a part file name in any of its three forms.
fn parse_part_name(name: &str) -> Option<(&str, u64)> {
    let stem = match name.strip_prefix('.') {
        Some(hidden) => hidden
            .strip_suffix(".inprogress")
            .or_else(|| hidden.strip_suffix(".pending"))?,
        None => name,
    };
    let (writer, seq) = stem.strip_prefix("part-")?.rsplit_once('-')?;
    Some((writer, seq.parse().ok()?))
}

/// The exactly-once text file sink of one subtask; see the module doc.
pub struct FileSink {
    dir: PathBuf,
    writer: String,
    next_seq: u64,
}

impl FileSink {
    /// A sink with a fresh writer writing into `dir` (created if missing).
    pub fn create(dir: &Path) -> Result<Self, FileSinkError> {
        crate::file_policy::create_dir_all(dir).map_err(io_err("cannot create output directory", dir))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            writer: fresh_writer_id(),
            next_seq: 0,
        })
    }

    /// The writer id the sink writes as.
    pub fn writer_id(&self) -> &str {
        &self.writer
    }

    /// The output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, name: String) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `line` and a newline into `txn`, opening its in-progress file first.
    fn write_line(&mut self, txn: &mut FilePart, line: &dyn Display) -> Result<(), FileSinkError> {
        let path = self.path(in_progress_name(&txn.writer, txn.seq));
        if txn.out.is_none() {
            let f = crate::file_policy::create(&path).map_err(io_err("cannot create", &path))?;
            txn.out = Some(BufWriter::with_capacity(64 * 1024, f));
        }
        if let Some(out) = txn.out.as_mut() {
            writeln!(out, "{line}").map_err(io_err("cannot write", &path))?;
        }
        Ok(())
    }

    fn pre_commit_part(&mut self, txn: &mut FilePart) -> Result<(), FileSinkError> {
        let Some(mut out) = txn.out.take() else { return Ok(()) };
        let in_progress = self.path(in_progress_name(&txn.writer, txn.seq));
        out.flush().map_err(io_err("cannot write", &in_progress))?;
        out.get_ref().sync_all().map_err(io_err("cannot sync", &in_progress))?;
        drop(out);
        let pending = self.path(pending_name(&txn.writer, txn.seq));
        fs::rename(&in_progress, &pending).map_err(io_err("cannot move to pending", &in_progress))?;
        txn.committable = true;
        Ok(())
    }

    fn commit_part(&mut self, txn: &FilePart) -> Result<(), FileSinkError> {
        if !txn.committable {
            return Ok(());
        }
        let pending = self.path(pending_name(&txn.writer, txn.seq));
        let committed = self.path(committed_name(&txn.writer, txn.seq));
        match fs::rename(&pending, &committed) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if committed.exists() {
                    Ok(())
                } else {
                    Err(FileSinkError::StateLost { pending, committed })
                }
            }
            Err(e) => Err(FileSinkError::Io {
                action: "cannot commit",
                path: pending,
                source: e,
            }),
        }
    }

    /// Deletes every file of `txn`'s writer with a seq `>= txn.seq` (the restore rule).
    fn abort_part(&mut self, txn: FilePart) -> Result<(), FileSinkError> {
        drop(txn.out);
        let entries = fs::read_dir(&self.dir).map_err(io_err("cannot list", &self.dir))?;
        for entry in entries {
            let entry = entry.map_err(io_err("cannot list", &self.dir))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some((writer, seq)) = parse_part_name(name) {
                if writer == txn.writer && seq >= txn.seq {
                    let path = entry.path();
                    fs::remove_file(&path).map_err(io_err("cannot delete", &path))?;
                }
            }
        }
        Ok(())
    }
}

impl<T: Display> TwoPhaseCommitSink<T> for FileSink {
    type Transaction = FilePart;

    fn begin_transaction(&mut self) -> Result<FilePart, TaskError> {
        let seq = self.next_seq;
        self.next_seq += 1;
        Ok(FilePart {
            writer: self.writer.clone(),
            seq,
            committable: false,
            out: None,
        })
    }

    fn invoke(&mut self, txn: &mut FilePart, record: T) -> Result<(), TaskError> {
        Ok(self.write_line(txn, &record)?)
    }

    fn pre_commit(&mut self, txn: &mut FilePart) -> Result<(), TaskError> {
        Ok(self.pre_commit_part(txn)?)
    }

    fn commit(&mut self, txn: &FilePart) -> Result<(), TaskError> {
        Ok(self.commit_part(txn)?)
    }

    fn abort(&mut self, txn: FilePart) -> Result<(), TaskError> {
        Ok(self.abort_part(txn)?)
    }

    /// Continues the first restored writer at its open transaction's seq (whose files
    /// the abort that follows deletes).
    fn restore(&mut self, open: &[FilePart]) -> Result<(), TaskError> {
        if let Some(first) = open.first() {
            self.writer = first.writer.clone();
            self.next_seq = first.seq;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
