//! `user-job`: a complete Weir binary — `jobmanager`, `taskmanager`, `start-cluster`,
//! `local`, `run`, … — that also knows this crate's `page-views` program.

weir::main!(user_job::page_views::program());
