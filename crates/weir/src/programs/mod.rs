//! The programs built into the stock `weir` binary.

pub mod bench;
pub mod broadcast_rules;
pub mod clicks_orders_join;
pub mod enrich;
pub mod forward_pipelines;
pub mod keyed_sum;
pub mod orders_per_minute;
pub mod rolling_sum;
pub mod sql;
pub mod wordcount;

use std::sync::OnceLock;
use weir_api::prelude::*;
use weir_api::program::ArgSpec;

static REGISTRY: OnceLock<ProgramRegistry> = OnceLock::new();

/// The programs of this binary: the built-in ones, plus a user binary's own once
/// [`install_registry`] installed them (`weir::main!`). Every command of the CLI —
/// the JobManager, TaskManagers, `local`, `plan`, `programs` — reads this one.
pub fn registry() -> &'static ProgramRegistry {
    REGISTRY.get_or_init(builtin_registry)
}

/// Makes `registry` this process's programs; refused (returning it) once [`registry`]
/// was read or another was installed.
pub fn install_registry(registry: ProgramRegistry) -> Result<(), ProgramRegistry> {
    REGISTRY.set(registry)
}

/// The registry of built-in programs.
pub fn builtin_registry() -> ProgramRegistry {
    let mut r = ProgramRegistry::new();
    r.register(wordcount::program());
    r.register(keyed_sum::program());
    r.register(rolling_sum::program());
    r.register(enrich::program());
    r.register(forward_pipelines::program());
    r.register(orders_per_minute::program());
    r.register(broadcast_rules::program());
    r.register(clicks_orders_join::program());
    r.register(sql::program());
    r.register(bench::chain_program());
    r.register(bench::keyed_program());
    weir_nexmark::register(&mut r);
    r
}

/// The `output` argument shared by the programs.
pub const OUTPUT_ARG: ArgSpec = ArgSpec {
    name: "output",
    help: "directory for part files, committed per checkpoint and at the end; `discard` drops the output (default: print to stdout)",
};

/// Sends `stream` to stdout, to part files under `--arg output=DIR`, or nowhere with
/// `--arg output=discard` (for measurements).
pub fn sink_lines(stream: &DataStream<String>, args: &ProgramArgs) {
    match args.get("output") {
        Some("discard") => {
            stream.discard();
        }
        Some(dir) => {
            stream.write_as_text(dir);
        }
        None => {
            stream.print();
        }
    }
}
