//! The `weir` binary.

use clap::Parser;
use weir::cli::{bench, commands, Cli, Command};

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
    };
    if let Err(e) = result {
        let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
        eprintln!("error: {}", chain.join(": "));
        std::process::exit(1);
    }
}
