//! The `weir` binary.

use clap::Parser;
use weir::cli::{bench, bench_cluster, client, cluster, commands, Cli, Command};

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("WEIR_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
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
    };
    if let Err(e) = result {
        let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
        eprintln!("error: {}", chain.join(": "));
        std::process::exit(1);
    }
}
