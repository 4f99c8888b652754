//! Sinks: print, collect (tests), text part files, discard.

pub mod collect;
pub mod discard;
pub mod print;
pub mod text_file;

pub use collect::{CollectHandle, CollectSink};
pub use discard::DiscardSink;
pub use print::PrintSink;
pub use text_file::TextFileSink;
