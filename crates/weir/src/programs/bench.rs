//! Benchmark programs (run by `weir bench`, or by `weir local` like any program).
//!
//! - `bench-chain`: generator → map → filter → discard, all chained.
//! - `bench-keyed`: generator → key_by → running sum → discard (one hash exchange).

use weir_api::prelude::*;
use weir_api::program::ArgSpec;

const ARGS: &[ArgSpec] = &[
    ArgSpec {
        name: "records",
        help: "number of records (default 10000000)",
    },
    ArgSpec {
        name: "keys",
        help: "distinct keys (bench-keyed, default 10000)",
    },
];

/// `bench-chain`.
pub fn chain_program() -> Program {
    Program {
        name: "bench-chain",
        description: "benchmark: generator -> map -> filter -> discard, chained",
        args: ARGS,
        build: build_chain,
    }
}

/// `bench-keyed`.
pub fn keyed_program() -> Program {
    Program {
        name: "bench-keyed",
        description: "benchmark: generator -> key_by -> running sum -> discard",
        args: ARGS,
        build: build_keyed,
    }
}

fn build_chain(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let records = args.get_u64("records", 10_000_000)?;
    env.from_generator(records, 7, |i, _rng| i)
        .map(|i: u64| i.wrapping_mul(31))
        .filter(|v: &u64| !v.is_multiple_of(3))
        .discard();
    Ok(())
}

fn build_keyed(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let records = args.get_u64("records", 10_000_000)?;
    let keys = args.get_u64("keys", 10_000)?.max(1);
    env.from_generator(records, 7, move |i, _rng| (i % keys, i))
        .key_by(|r: &(u64, u64)| r.0)
        .sum(|r: &mut (u64, u64)| &mut r.1)
        .discard();
    Ok(())
}
