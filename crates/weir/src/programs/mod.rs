//! The programs built into the stock `weir` binary.

pub mod bench;
pub mod broadcast_rules;
pub mod enrich;
pub mod forward_pipelines;
pub mod keyed_sum;
pub mod orders_per_minute;
pub mod sql;
pub mod wordcount;

use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The registry of built-in programs.
pub fn builtin_registry() -> ProgramRegistry {
    let mut r = ProgramRegistry::new();
    r.register(wordcount::program());
    r.register(keyed_sum::program());
    r.register(enrich::program());
    r.register(forward_pipelines::program());
    r.register(orders_per_minute::program());
    r.register(broadcast_rules::program());
    r.register(sql::program());
    r.register(bench::chain_program());
    r.register(bench::keyed_program());
    r
}

/// The `output` argument shared by the programs.
pub const OUTPUT_ARG: ArgSpec = ArgSpec {
    name: "output",
    help: "directory for part files, committed per checkpoint and at the end (default: print to stdout)",
};

/// Sends `stream` to stdout, or to part files under `--arg output=DIR`.
pub fn sink_lines(stream: &DataStream<String>, args: &ProgramArgs) {
    match args.get("output") {
        Some(dir) => {
            stream.write_as_text(dir);
        }
        None => {
            stream.print();
        }
    }
}
