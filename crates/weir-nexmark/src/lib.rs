//! The Nexmark benchmark for Weir (`nexmark/nexmark`): a generator of Person, Auction
//! and Bid events faithful to the suite's, a checkpointable parallel source of them,
//! and the suite's queries as built-in programs `nexmark-q0` … `nexmark-q22`.
//!
//! - [`config`]: the generator's parameters and the id spaces of an event id.
//! - [`generator`], [`strings`]: event `n` of a seed's sequence.
//! - [`source`]: the events as a stream with 4 s bounded-out-of-orderness watermarks.
//! - [`queries`]: the queries and their programs.
//! - [`oracle`]: the queries' results computed directly over an event list, the
//!   reference the end-to-end tests compare runs with.
//! - [`side_input`]: q13's bounded side input table.
//! - [`format`](mod@format): the SQL functions the queries use on times and prices; [`rows`]: the
//!   queries' output rows, written with [`csv_line`].

#![warn(missing_docs)]

pub mod config;
pub mod csv_line;
pub mod format;
pub mod generator;
pub mod model;
pub mod oracle;
pub mod queries;
pub mod rows;
pub mod side_input;
pub mod source;
pub mod strings;

pub use config::NexmarkConfig;
pub use generator::generate_events;
pub use model::{Auction, Bid, Event, Person};
pub use queries::{register, QUERIES};
