//! Sinks: print, collect (tests), exactly-once text part files on a generic
//! two-phase-commit operator, discard.

pub mod collect;
pub mod discard;
pub mod file;
pub mod print;
pub mod two_phase_commit;

pub use collect::{CollectHandle, CollectSink};
pub use discard::DiscardSink;
pub use file::{FileSink, FileSinkError};
pub use print::PrintSink;
pub use two_phase_commit::{TransactionCodec, TwoPhaseCommitOperator, TwoPhaseCommitSink};
