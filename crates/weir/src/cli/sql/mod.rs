//! `weir sql`: Flink's SQL client. Statements end at `;`. With `-f file.sql` the
//! statements run in order and the first failure ends the run (exit 1, the error
//! printed); `-i init.sql` runs first; otherwise a REPL with line editing and history
//! reads statements until `QUIT;` or end of input, printing `[ERROR] ...` for a failing
//! statement and going on. Jobs go to `-m host:port` or to a MiniCluster in this
//! process (whose jobs are waited for before the client exits); a SELECT's rows come
//! from the JobMaster's collect coordinator over REST in both cases (`collect.rs`).

pub mod collect;
pub mod session;
pub mod streaming_result;
pub mod submit;
pub mod tableau;

use crate::cli::terminal::escape_lines;
use anyhow::{anyhow, Result};
use clap::Args;
use session::Session;
use submit::Executor;
use weir_sql::parser::split_statements;

/// Options of `weir sql`.
#[derive(Debug, Args, Clone)]
pub struct SqlArgs {
    /// A SQL file to run (statements end at `;`); exits non-zero at the first failure.
    #[arg(short = 'f', long = "file")]
    pub file: Option<String>,
    /// A SQL file run before the session (e.g. DDL).
    #[arg(short = 'i', long = "init")]
    pub init: Option<String>,
    /// host:port of a cluster's REST endpoint (default: a MiniCluster in this process).
    #[arg(short = 'm', long = "jobmanager")]
    pub jobmanager: Option<String>,
    /// A configuration option `key=value` (of the embedded MiniCluster and the jobs).
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    pub dynamic: Vec<String>,
}

fn run_script(session: &mut Session, script: &str) -> Result<()> {
    let (statements, rest) = split_statements(script);
    for s in statements
        .iter()
        .chain(std::iter::once(&rest).filter(|r| !r.is_empty()))
    {
        match session.execute(s) {
            Ok(out) => println!("{}\n", escape_lines(&out)),
            Err(e) => {
                println!("[ERROR] {}\n", escape_lines(&format!("{e:#}")));
                return Err(anyhow!("statement failed: {e:#}"));
            }
        }
    }
    Ok(())
}

/// `weir sql`.
pub fn run(args: &SqlArgs) -> Result<()> {
    let mut config = weir_config::Configuration::load(None, &args.dynamic)?;
    if args.jobmanager.is_none() && !config.contains(&weir_config::options::REST_PORT) {
        // A SELECT's results are read over REST from the embedded cluster too.
        config.set(&weir_config::options::REST_PORT, 0);
    }
    let executor = match &args.jobmanager {
        Some(m) => Executor::Remote(m.clone()),
        None => Executor::Embedded {
            config: Box::new(config),
            cluster: None,
            jobs: Vec::new(),
        },
    };
    let mut session = Session::new(executor);
    for (k, v) in args.dynamic.iter().filter_map(|d| d.split_once('=')) {
        session.execute(&format!("SET '{}' = '{}'", k.trim(), v.trim().replace('\'', "''")))?;
    }
    let read = |path: &str| std::fs::read_to_string(path).map_err(|e| anyhow!("cannot read {path}: {e}"));
    let outcome = (|| {
        if let Some(init) = &args.init {
            run_script(&mut session, &read(init)?)?;
        }
        match &args.file {
            Some(file) => run_script(&mut session, &read(file)?),
            None => repl(&mut session),
        }
    })();
    let closed = session.close();
    outcome.and(closed)
}

fn repl(session: &mut Session) -> Result<()> {
    let mut editor = rustyline::DefaultEditor::new()?;
    let history = std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".weir_sql_history"));
    if let Some(h) = &history {
        if h.exists() {
            if let Err(e) = editor.load_history(h) {
                eprintln!("[WARNING] cannot read the history {}: {e}", h.display());
            }
        }
    }
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() { "Weir SQL> " } else { "> " };
        let line = match editor.readline(prompt) {
            Ok(l) => l,
            Err(rustyline::error::ReadlineError::Interrupted) => {
                buffer.clear();
                continue;
            }
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        buffer.push_str(&line);
        buffer.push('\n');
        let (statements, rest) = split_statements(&buffer);
        for s in &statements {
            if let Err(e) = editor.add_history_entry(format!("{s};")) {
                eprintln!("[WARNING] history: {e}");
            }
            if s.eq_ignore_ascii_case("quit") || s.eq_ignore_ascii_case("exit") {
                return save(&mut editor, history.as_deref());
            }
            match session.execute(s) {
                Ok(out) => println!("{}\n", escape_lines(&out)),
                Err(e) => println!("[ERROR] {}\n", escape_lines(&format!("{e:#}"))),
            }
        }
        buffer = if rest.is_empty() {
            String::new()
        } else {
            format!("{rest}\n")
        };
    }
    save(&mut editor, history.as_deref())
}

fn save(editor: &mut rustyline::DefaultEditor, history: Option<&std::path::Path>) -> Result<()> {
    if let Some(h) = history {
        if let Err(e) = editor.save_history(h) {
            eprintln!("[WARNING] cannot write the history {}: {e}", h.display());
        }
    }
    println!("Shutting down the session...\ndone.");
    Ok(())
}
