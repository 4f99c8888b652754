//! The `weir` binary.

use clap::Parser;
use weir::cli::{bench, bench_cluster, client, cluster, commands, savepoint, sql, Cli, Command};

/// The log filter when `WEIR_LOG` is not set. In `weir local` the JobManager's and
/// TaskManagers' warnings (a task failed, a restart) are what the job's result reports
/// once at the end, so only their errors are logged.
fn default_log_filter(command: &Command) -> &'static str {
    match command {
        Command::Local(_) | Command::Sql(_) => "warn,weir_jobmanager=error,weir_taskmanager=error",
        _ => "warn",
    }
}

fn main() {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("WEIR_LOG")
                .unwrap_or_else(|_| default_log_filter(&cli.command).into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if matches!(
        cli.command,
        Command::Local(_) | Command::Plan { .. } | Command::Programs | Command::List(_)
    ) {
        restore_default_sigpipe();
    }
    let result = match &cli.command {
        Command::Local(job) => commands::local(job),
        Command::Plan { job, json } => commands::plan(job, *json),
        Command::Programs => {
            commands::programs();
            Ok(())
        }
        Command::Bench(args) => bench::run(args),
        Command::BenchCluster(args) => bench_cluster::run(args),
        Command::Jobmanager(args) => cluster::jobmanager(args),
        Command::Taskmanager(args) => cluster::taskmanager(args),
        Command::StartCluster(args) => cluster::start_cluster(args),
        Command::StopCluster(args) => cluster::stop_cluster(args),
        Command::Run(args) => client::run(args),
        Command::List(target) => client::list(target),
        Command::Cancel { target, jid } => client::cancel(target, jid),
        Command::Savepoint(args) => savepoint::savepoint(args),
        Command::Stop(args) => savepoint::stop(args),
        Command::Sql(args) => sql::run(args),
    };
    if let Err(e) = result {
        let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
        eprintln!("error: {}", chain.join(": "));
        std::process::exit(1);
    }
}

/// Output commands behave like other Unix tools when their reader goes away
/// (`weir local … | head`): they end quietly on SIGPIPE. Servers keep Rust's default
/// (SIGPIPE ignored, EPIPE reported) so a lost peer is an error, not a kill.
fn restore_default_sigpipe() {
    // SAFETY: called once at start-up, before any thread is spawned.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
