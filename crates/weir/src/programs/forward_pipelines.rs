//! `forward-pipelines`: independent parallel pipelines with no data exchange — a
//! generator whose record `i` is the line `i`, written to the sink of the same subtask.
//! Every subtask is its own pipelined region, so under region failover a failure
//! restarts only the pipeline it hit.

use super::{sink_lines, OUTPUT_ARG};
use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The program.
pub fn program() -> Program {
    Program {
        name: "forward-pipelines",
        description: "one independent generator -> sink pipeline per subtask (a region each); line i per record i",
        args: &[
            ArgSpec {
                name: "records",
                help: "number of records over all pipelines (default 100000)",
            },
            ArgSpec {
                name: "rate_per_sec",
                help: "throttle the generators to this many records/s in total (default: unthrottled)",
            },
            OUTPUT_ARG,
        ],
        build,
    }
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let records = args.get_u64("records", 100_000)?;
    let rate = args.get_f64("rate_per_sec", 0.0)?;
    let lines = env
        .from_generator_with_rate(records, 0, rate, |i, _rng| i)
        .map(|i: u64| i.to_string())
        .name("Format");
    sink_lines(&lines, args);
    Ok(())
}
