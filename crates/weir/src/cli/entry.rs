//! The command line's entry point, shared by the stock `weir` binary and a user's own
//! binary (`weir::main!`): logging, the program registry of the binary, dispatch of the
//! command, and the one-line `error: …` with exit code 1.

use super::{bench, bench_cluster, client, cluster, commands, savepoint, sql, top, Cli, Command};
use crate::programs::{builtin_registry, install_registry};
use clap::{CommandFactory, FromArgMatches};
use weir_api::binary::BinaryInfo;
use weir_api::program::Program;

/// The log filter when `WEIR_LOG` is not set. In `weir local` the JobManager's and
/// TaskManagers' warnings are what the job's result reports once at the end, so only
/// their errors are logged — and the one line per restart, so that a failover shows
/// while the job runs.
fn default_log_filter(command: &Command) -> &'static str {
    match command {
        Command::Local(_) | Command::Sql(_) => {
            "warn,weir_jobmanager=error,weir_taskmanager=error,weir_jobmanager::failover=warn"
        }
        _ => "warn",
    }
}

/// The stock `weir` binary.
pub fn main() {
    main_with("weir", env!("CARGO_PKG_VERSION"), Vec::new());
}

/// A complete Weir binary called `name` at `version` whose programs are the built-in
/// ones plus `programs`: every command (`jobmanager`, `taskmanager`, `start-cluster`
/// starting this binary, `local`, `run`, …) knows them. A program named like a built-in
/// one is refused at start.
pub fn main_with(name: &'static str, version: &'static str, programs: Vec<Program>) {
    let mut registry = builtin_registry();
    for program in programs {
        if registry.get(program.name).is_ok() {
            eprintln!(
                "error: {name} {version} registers a program '{}', but Weir has a built-in program of that name; rename it",
                program.name
            );
            std::process::exit(1);
        }
        registry.register(program);
    }
    if install_registry(registry.with_binary(BinaryInfo::new(name, version))).is_err() {
        eprintln!("error: the program registry was read before {name} installed its programs");
        std::process::exit(1);
    }
    // `StreamExecutionEnvironment::execute` runs on the MiniCluster (the one path).
    crate::minicluster::install();
    let matches = Cli::command().name(name).bin_name(name).version(version).get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    super::discovery::resolve_jobmanager(&mut cli.command, &matches);
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("WEIR_LOG")
                .unwrap_or_else(|_| default_log_filter(&cli.command).into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if matches!(
        cli.command,
        Command::Plan { .. } | Command::Programs | Command::List(_) | Command::Top(_)
    ) {
        restore_default_sigpipe();
    }
    let result = client_settings(&cli.command)
        .map_or(Ok(()), client::configure)
        .and_then(|()| run_command(&cli.command));
    if let Err(e) = result {
        let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
        let message = chain.join(": ");
        if message.contains(weir_connectors::sink::print::STDOUT_CLOSED) {
            std::process::exit(BROKEN_PIPE_EXIT);
        }
        eprintln!("error: {}", super::terminal::escape_lines(&message));
        std::process::exit(1);
    }
}

/// The `-D` entries a REST client command connects with (`security.ssl.rest.*`).
fn client_settings(command: &Command) -> Option<&[String]> {
    match command {
        Command::Run(args) => Some(&args.target.dynamic),
        Command::List(target) | Command::Cancel { target, .. } => Some(&target.dynamic),
        Command::Savepoint(args) => Some(&args.target.dynamic),
        Command::Stop(args) => Some(&args.target.dynamic),
        Command::Top(args) => Some(&args.target.dynamic),
        Command::Sql(args) => Some(&args.dynamic),
        _ => None,
    }
}

fn run_command(command: &Command) -> anyhow::Result<()> {
    match command {
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
        Command::Top(args) => top::run(args),
        Command::Sql(args) => sql::run(args),
    }
}

/// The exit status of a process whose standard output's reader left, as a shell reports
/// one killed by SIGPIPE (128 + 13): a job's print sink failed because of it.
const BROKEN_PIPE_EXIT: i32 = 141;

/// Output commands behave like other Unix tools when their reader goes away
/// (`weir plan … | head`): they end quietly on SIGPIPE. Servers keep Rust's default
/// (SIGPIPE ignored, EPIPE reported) so a lost peer is an error, not a kill; so does
/// `weir local`, whose in-process cluster talks over loopback sockets (a vectored write
/// to a connection closed at shutdown would otherwise kill it): its print sink fails the
/// job when standard output's reader has gone, and the command then ends quietly.
fn restore_default_sigpipe() {
    // SAFETY: called once at start-up, before any thread is spawned.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
