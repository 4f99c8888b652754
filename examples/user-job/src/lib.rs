//! The programs of the `user-job` binary.

pub mod page_views;
