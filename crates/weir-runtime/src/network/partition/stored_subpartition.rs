//! What a blocking partition stores per subpartition ([`Entry`]) and how a finished
//! subpartition is read back: [`StoredSubpartitionReader`] (Flink's
//! `BoundedBlockingSubpartitionReader`).
//!
//! A reader walks the entries of one subpartition from the start, in the order they
//! were written: a memory entry is copied into a buffer, a spilled one read into it
//! with one positioned read of the spill file (no seek: readers of several
//! subpartitions share nothing but the file), an event comes out as it is. It reads a
//! shared, immutable snapshot of the entries taken once the partition finished, so
//! readers never take the partition's lock.
//!
//! Who drives a reader:
//! - a local consumer's input gate, in the consumer's own thread (a
//!   [`LocalSubpartition::Stored`] channel): no thread, no credit, no copy through a
//!   pipelined queue, the way Flink's `LocalInputChannel` polls a bounded blocking
//!   subpartition;
//! - the replay thread of a remote consumer (or of a local one that connected before
//!   the partition finished), which writes what it reads into a pipelined subpartition.
//!
//! Invariants: a reader hands out each entry exactly once, in order, and nothing
//! after the subpartition's EndOfPartition; once the partition is released
//! (`release` cancelled) it hands out nothing more and says so; a spill file that is
//! shorter than its entries say is an error naming the partition, the file and the
//! offset, never a short buffer.

use crate::network::buffer::Buffer;
use crate::network::cancel::CancelToken;
use crate::network::error::NetworkError;
use crate::network::partition::subpartition::Subpartition;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use weir_core::Event;

/// One stored element of a subpartition.
#[derive(Debug)]
pub(crate) enum Entry {
    /// A buffer's bytes kept in memory.
    Memory(Vec<u8>),
    /// A buffer's bytes in the partition's spill file.
    Spilled {
        /// Where they start in the file.
        offset: u64,
        /// How many.
        len: usize,
    },
    /// An in-band event.
    Event(Event),
}

/// The spill file a reader reads from, with its path for errors.
pub(crate) struct OpenSpill {
    /// The file, opened for reading.
    pub(crate) file: File,
    /// Its path.
    pub(crate) path: PathBuf,
}

/// One element read from a stored subpartition.
#[derive(Debug)]
pub(crate) enum StoredElement {
    /// A buffer holding a stored buffer's bytes.
    Buffer(Buffer),
    /// A stored event.
    Event(Event),
}

/// Reads one subpartition of a finished blocking partition from the start.
pub(crate) struct StoredSubpartitionReader {
    /// The partition's label, for errors.
    label: String,
    entries: Arc<Vec<Vec<Entry>>>,
    subpartition: usize,
    next: usize,
    spill: Option<OpenSpill>,
    release: CancelToken,
}

impl std::fmt::Debug for StoredSubpartitionReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredSubpartitionReader")
            .field("partition", &self.label)
            .field("subpartition", &self.subpartition)
            .field("next", &self.next)
            .finish()
    }
}

impl StoredSubpartitionReader {
    /// A reader of `entries[subpartition]` of the partition `label`; `spill` must be
    /// open when any of its entries is spilled. Stops once `release` is cancelled.
    pub(crate) fn new(
        label: String,
        entries: Arc<Vec<Vec<Entry>>>,
        subpartition: usize,
        spill: Option<OpenSpill>,
        release: CancelToken,
    ) -> Self {
        Self {
            label,
            entries,
            subpartition,
            next: 0,
            spill,
            release,
        }
    }

    /// True while entries are left.
    pub(crate) fn has_more(&self) -> bool {
        self.next < self.stored().len()
    }

    fn stored(&self) -> &[Entry] {
        self.entries.get(self.subpartition).map_or(&[], Vec::as_slice)
    }

    /// The next element, `Ok(None)` after the last. A data entry is put into the
    /// buffer `buffer` returns (empty, large enough for any stored buffer: one
    /// network segment). Fails with [`NetworkError::Cancelled`] once the partition
    /// is released, and with [`NetworkError::Spill`] when the spill file cannot be
    /// read.
    pub(crate) fn next_element(
        &mut self,
        buffer: impl FnOnce() -> Result<Buffer, NetworkError>,
    ) -> Result<Option<StoredElement>, NetworkError> {
        if self.release.is_cancelled() {
            return Err(NetworkError::Cancelled);
        }
        let Some(entry) = self.stored().get(self.next) else {
            return Ok(None);
        };
        let element = match entry {
            Entry::Memory(bytes) => {
                let mut b = buffer()?;
                if b.append(bytes) != bytes.len() {
                    return Err(self.spill_error(
                        None,
                        format!(
                            "a stored buffer of {} bytes does not fit a network buffer of {}",
                            bytes.len(),
                            b.capacity()
                        ),
                    ));
                }
                StoredElement::Buffer(b)
            }
            Entry::Spilled { offset, len } => {
                let (offset, len) = (*offset, *len);
                let Some(spill) = self.spill.as_ref() else {
                    return Err(self.spill_error(None, "the spill file is not open".into()));
                };
                let mut b = buffer()?;
                b.read_exact_from(
                    &mut SpillRead {
                        file: &spill.file,
                        offset,
                    },
                    len,
                )
                .map_err(|e| self.read_error(spill, offset, len, &e))?;
                StoredElement::Buffer(b)
            }
            Entry::Event(event) => StoredElement::Event(*event),
        };
        self.next += 1;
        Ok(Some(element))
    }

    fn spill_error(&self, path: Option<&std::path::Path>, reason: String) -> NetworkError {
        NetworkError::Spill {
            partition: self.label.clone(),
            path: path.map_or_else(String::new, |p| p.display().to_string()),
            reason,
        }
    }

    /// The error of a failed read of `len` bytes at `offset`: a truncated file says
    /// where it ends.
    fn read_error(&self, spill: &OpenSpill, offset: u64, len: usize, e: &std::io::Error) -> NetworkError {
        let reason = match (e.kind(), spill.file.metadata()) {
            (std::io::ErrorKind::UnexpectedEof, Ok(meta)) => format!(
                "unexpected end of file at offset {}: a buffer of {len} bytes is stored at offset {offset}",
                meta.len()
            ),
            _ => format!("cannot read {len} bytes at offset {offset}: {e}"),
        };
        self.spill_error(Some(&spill.path), reason)
    }
}

/// What a local consumer reads a subpartition through.
pub(crate) enum LocalSubpartition {
    /// A pipelined subpartition's queue (a blocking partition not finished yet is
    /// replayed into one).
    Queue(Arc<Subpartition>),
    /// A finished blocking subpartition, read in the consumer's thread.
    Stored(StoredSubpartitionReader),
}

/// Reads a spill file from `offset` on with positioned reads (the file's cursor is
/// never used).
struct SpillRead<'a> {
    file: &'a File,
    offset: u64,
}

impl std::io::Read for SpillRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn reader_of(entries: Vec<Entry>, spill: Option<OpenSpill>, release: &CancelToken) -> StoredSubpartitionReader {
        StoredSubpartitionReader::new(
            "p".into(),
            Arc::new(vec![Vec::new(), entries]),
            1,
            spill,
            release.clone(),
        )
    }

    /// Everything `reader` hands out: data as bytes, events as `Err(event)`.
    fn drain(reader: &mut StoredSubpartitionReader) -> Result<Vec<Result<Vec<u8>, Event>>, NetworkError> {
        let mut out = Vec::new();
        while let Some(element) = reader.next_element(|| Ok(Buffer::unpooled(8)))? {
            out.push(match element {
                StoredElement::Buffer(b) => Ok(b.to_vec()),
                StoredElement::Event(e) => Err(e),
            });
        }
        Ok(out)
    }

    #[test]
    fn memory_spilled_and_event_entries_come_out_once_each_in_the_order_they_were_stored() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"xxabcdefg").unwrap();
        let spill = OpenSpill {
            file: file.reopen().unwrap(),
            path: file.path().to_path_buf(),
        };
        let release = CancelToken::new();
        let mut reader = reader_of(
            vec![
                Entry::Memory(b"12".to_vec()),
                Entry::Event(Event::Watermark(weir_core::Watermark(5))),
                Entry::Spilled { offset: 2, len: 3 },
                Entry::Spilled { offset: 5, len: 4 },
                Entry::Event(Event::EndOfPartition),
            ],
            Some(spill),
            &release,
        );
        assert!(reader.has_more());
        assert_eq!(
            drain(&mut reader).unwrap(),
            vec![
                Ok(b"12".to_vec()),
                Err(Event::Watermark(weir_core::Watermark(5))),
                Ok(b"abc".to_vec()),
                Ok(b"defg".to_vec()),
                Err(Event::EndOfPartition),
            ]
        );
        assert!(!reader.has_more());
        assert!(reader.next_element(|| Ok(Buffer::unpooled(8))).unwrap().is_none());
    }

    #[test]
    fn a_released_partition_stops_its_reader_before_the_next_entry() {
        let release = CancelToken::new();
        let mut reader = reader_of(vec![Entry::Memory(vec![1]), Entry::Memory(vec![2])], None, &release);
        assert!(matches!(
            reader.next_element(|| Ok(Buffer::unpooled(8))),
            Ok(Some(StoredElement::Buffer(_)))
        ));
        release.cancel();
        assert_eq!(
            reader.next_element(|| Ok(Buffer::unpooled(8))).unwrap_err(),
            NetworkError::Cancelled
        );
    }

    #[test]
    fn a_stored_buffer_larger_than_the_network_buffer_is_an_error_not_a_short_buffer() {
        let release = CancelToken::new();
        let mut reader = reader_of(vec![Entry::Memory(vec![7; 9])], None, &release);
        let err = reader.next_element(|| Ok(Buffer::unpooled(8))).unwrap_err();
        assert_eq!(
            err.to_string(),
            NetworkError::Spill {
                partition: "p".into(),
                path: String::new(),
                reason: "a stored buffer of 9 bytes does not fit a network buffer of 8".into(),
            }
            .to_string()
        );
    }

    #[test]
    fn a_spilled_entry_without_an_open_spill_file_is_an_error() {
        let release = CancelToken::new();
        let mut reader = reader_of(vec![Entry::Spilled { offset: 0, len: 1 }], None, &release);
        let err = reader.next_element(|| Ok(Buffer::unpooled(8))).unwrap_err();
        assert!(err.to_string().contains("the spill file is not open"), "{err}");
    }
}
