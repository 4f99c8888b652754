//! `wordcount`: Flink's streaming WordCount.
//!
//! Lines (a text file with `--arg input=path`, or a built-in text) → words (lower case,
//! split on non-alphanumerics) → key_by(word) → running count → one `word,count` line
//! per update.

use super::{sink_lines, OUTPUT_ARG};
use std::sync::Arc;
use weir_api::prelude::*;
use weir_api::program::ArgSpec;
use weir_connectors::source::CollectionSource;

/// The text counted when no input is given (from Hamlet, as in Flink's example).
pub const BUILTIN_TEXT: &[&str] = &[
    "To be, or not to be,--that is the question:--",
    "Whether 'tis nobler in the mind to suffer",
    "The slings and arrows of outrageous fortune",
    "Or to take arms against a sea of troubles,",
    "And by opposing end them?--To die,--to sleep,--",
    "No more; and by a sleep to say we end",
    "The heartache, and the thousand natural shocks",
    "That flesh is heir to,--'tis a consummation",
    "Devoutly to be wish'd. To die,--to sleep;--",
    "To sleep! perchance to dream:--ay, there's the rub;",
    "For in that sleep of death what dreams may come,",
    "When we have shuffled off this mortal coil,",
    "Must give us pause: there's the respect",
    "That makes calamity of so long life;",
];

/// The program.
pub fn program() -> Program {
    Program {
        name: "wordcount",
        description: "counts words of a text file (or a built-in text), printing word,count per update",
        args: &[
            ArgSpec {
                name: "input",
                help: "text file to read (default: built-in text)",
            },
            OUTPUT_ARG,
        ],
        build,
    }
}

/// Splits a line into lower-case words, as Flink's `Tokenizer` (`\W+`).
pub fn tokenize(line: String) -> Vec<String> {
    line.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let lines = match args.get("input") {
        Some(path) => {
            weir_connectors::file_policy::open(path)
                .map_err(|e| ProgramError::Invalid(format!("cannot read input file {path}: {e}")))?;
            env.read_text_file(path).set_parallelism(env.parallelism())
        }
        None => {
            let text: Arc<Vec<String>> = Arc::new(BUILTIN_TEXT.iter().map(|s| s.to_string()).collect());
            env.add_source("Built-in Text", None, move |ctx| {
                Ok(Box::new(CollectionSource::new(
                    &text,
                    ctx.subtask_index,
                    ctx.parallelism,
                )))
            })
            .set_boundedness(Boundedness::Bounded)
        }
    };
    let counts = lines
        .flat_map(tokenize)
        .name("Tokenizer")
        .key_by(|w: &String| w.clone())
        .process(RunningCount)
        .name("Count")
        .map(|(w, n): (String, u64)| format!("{w},{n}"));
    sink_lines(&counts, args);
    Ok(())
}

/// Counts records per key and emits `(key, count)` on every update.
#[derive(Clone)]
pub struct RunningCount;

impl KeyedProcessFunction<String, String, (String, u64)> for RunningCount {
    fn process_element(
        &mut self,
        word: String,
        ctx: &mut KeyedContext<'_, String>,
        out: &mut Collector<'_, (String, u64)>,
    ) -> Result<(), UserError> {
        let mut count = ctx.value_state(&ValueStateDescriptor::<u64>::new("count"))?;
        let n = count.value().unwrap_or(0) + 1;
        count.update(n);
        out.collect((word, n));
        Ok(())
    }
}
