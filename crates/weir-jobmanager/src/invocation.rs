//! The wire form of a [`ProgramInvocation`]: how a job's code travels from the
//! JobManager to TaskManagers (which read it back in `weir-taskmanager`).

use weir_api::program::ProgramInvocation;

/// The wire form.
pub fn to_proto(inv: &ProgramInvocation) -> weir_rpc::ProgramInvocation {
    weir_rpc::ProgramInvocation {
        program: inv.program.clone(),
        args: inv.args.clone().into_iter().collect(),
        parallelism: inv.parallelism,
        max_parallelism: inv.max_parallelism.unwrap_or(0),
        chaining_enabled: inv.chaining_enabled,
        buffer_timeout_ms: inv.buffer_timeout_ms,
        auto_watermark_interval_ms: inv.auto_watermark_interval_ms,
        job_name: inv.job_name.clone(),
    }
}
