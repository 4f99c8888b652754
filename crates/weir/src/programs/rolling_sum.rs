//! `rolling-sum`: the DataStream API's rolling `KeyedStream::sum` over generated
//! (key, value) records, printed as `key,sum` lines.
//!
//! In STREAMING mode every record yields the key's running sum; in BATCH mode
//! (`-D execution.runtime-mode=BATCH`, or AUTOMATIC: the generator is bounded) only the
//! final sum of each key is printed, as Flink's batch execution of the same program.

use super::keyed_sum::{generate, keys_arg};
use super::{sink_lines, OUTPUT_ARG};
use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The program.
pub fn program() -> Program {
    Program {
        name: "rolling-sum",
        description: "rolling KeyedStream::sum of generated (key, value) records; key,sum per record (streaming) or per key (batch)",
        args: &[
            ArgSpec {
                name: "keys",
                help: "number of distinct keys (default 10)",
            },
            ArgSpec {
                name: "records",
                help: "number of records (default 1000)",
            },
            ArgSpec {
                name: "seed",
                help: "generator seed (default 42)",
            },
            ArgSpec {
                name: "rate_per_sec",
                help: "throttle the generator to this many records/s (default: unthrottled)",
            },
            OUTPUT_ARG,
        ],
        build,
    }
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let keys = keys_arg(args, 10)?;
    let records = args.get_u64("records", 1000)?;
    let seed = args.get_u64("seed", 42)?;
    let rate = args.get_f64("rate_per_sec", 0.0)?;
    let sums = env
        .from_generator_with_rate(records, seed, rate, generate(keys))
        .key_by(|r: &(u64, u64)| r.0)
        .sum(|r: &mut (u64, u64)| &mut r.1)
        .map(|(k, s): (u64, u64)| format!("{k},{s}"))
        .name("Format");
    sink_lines(&sums, args);
    Ok(())
}
