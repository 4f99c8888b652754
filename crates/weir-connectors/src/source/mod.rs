//! Sources: collections, seeded generators, text files (plain or with line numbers, or
//! by byte ranges of a file).

pub mod bounded_line;
pub mod collection;
pub mod generator;
pub mod line_errors;
pub mod line_range;
pub mod lines;
pub mod numbered_lines;
pub mod position;
pub mod text_file;

pub use bounded_line::DEFAULT_MAX_LINE_LENGTH;
pub use collection::CollectionSource;
pub use generator::GeneratorSource;
pub use line_errors::MalformedLines;
pub use line_range::{ByteRange, RangeLineReader};
pub use numbered_lines::NumberedLinesSource;
pub use position::{SplitPosition, SplitSet};
pub use text_file::TextFileSource;

/// Records one `poll_next` call emits at most.
pub const SOURCE_BATCH: usize = 1024;
