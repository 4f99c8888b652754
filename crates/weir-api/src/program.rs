//! Programs: named functions that build a pipeline from arguments.
//!
//! Rust cannot ship closures over the wire, so a job's code travels as a program name
//! plus arguments; every process that runs part of the job runs the same program with
//! the same arguments to rebuild its operators (DESIGN.md, "User code").

use crate::binary::{binary_identity, BinaryInfo};
use crate::env::StreamExecutionEnvironment;
use std::collections::BTreeMap;
use thiserror::Error;

/// Why a program could not be found or built.
#[derive(Debug, Error)]
pub enum ProgramError {
    /// No program of that name is registered.
    #[error("unknown program '{name}' (this is {binary}); available programs: {available}")]
    UnknownProgram {
        /// The requested name.
        name: String,
        /// The binary asked, e.g. `weir 0.1.0`.
        binary: BinaryInfo,
        /// Registered names, comma-separated.
        available: String,
    },
    /// An `--arg` is not of the form `key=value`.
    #[error("malformed --arg '{0}': expected key=value")]
    MalformedArg(String),
    /// An `--arg` key the program does not accept.
    #[error("unknown argument '{key}' for program '{program}'; accepted: {accepted}")]
    UnknownArg {
        /// The program.
        program: String,
        /// The unknown key.
        key: String,
        /// Accepted keys, comma-separated.
        accepted: String,
    },
    /// An argument value that does not parse.
    #[error("invalid value '{value}' for argument '{key}': {reason}")]
    InvalidValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// The program rejected its input (e.g. an unreadable file).
    #[error("{0}")]
    Invalid(String),
    /// The job's program was built by closures in another process (or its job has
    /// ended): only that process's MiniCluster can run it.
    #[error(
        "job {job}'s program was built in-process by closures and is not registered in this process (this is {binary})"
    )]
    NotInThisProcess {
        /// The job.
        job: weir_core::ids::JobId,
        /// The binary asked.
        binary: BinaryInfo,
    },
}

/// The arguments of one program invocation (`--arg key=value`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramArgs {
    values: BTreeMap<String, String>,
}

impl ProgramArgs {
    /// Parses `key=value` strings.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Self, ProgramError> {
        let mut values = BTreeMap::new();
        for a in args {
            let a = a.as_ref();
            match a.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    values.insert(k.trim().to_string(), v.to_string());
                }
                _ => return Err(ProgramError::MalformedArg(a.to_string())),
            }
        }
        Ok(Self { values })
    }

    /// Arguments from pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Self {
            values: pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
        }
    }

    /// All arguments, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|s| s.as_str())
    }

    /// `key` parsed as an unsigned integer, or `default`.
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, ProgramError> {
        self.parse_or(key, default, "expected a non-negative integer")
    }

    /// `key` parsed as a float, or `default`.
    pub fn get_f64(&self, key: &str, default: f64) -> Result<f64, ProgramError> {
        self.parse_or(key, default, "expected a number")
    }

    /// `key` parsed as a boolean (`true`/`false`), or `default`.
    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, ProgramError> {
        self.parse_or(key, default, "expected true or false")
    }

    fn parse_or<T: std::str::FromStr>(&self, key: &str, default: T, reason: &str) -> Result<T, ProgramError> {
        match self.values.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| ProgramError::InvalidValue {
                key: key.to_string(),
                value: v.clone(),
                reason: reason.to_string(),
            }),
        }
    }
}

/// One accepted argument of a program.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    /// The key.
    pub name: &'static str,
    /// What it does, with its default.
    pub help: &'static str,
}

/// Builds a pipeline on `env` from `args`.
pub type BuildFn = fn(&StreamExecutionEnvironment, &ProgramArgs) -> Result<(), ProgramError>;

/// A named program.
#[derive(Debug, Clone)]
pub struct Program {
    /// The name it is run by.
    pub name: &'static str,
    /// One line on what it does.
    pub description: &'static str,
    /// The arguments it accepts.
    pub args: &'static [ArgSpec],
    /// Builds the pipeline.
    pub build: BuildFn,
}

impl Program {
    /// Checks `args` against the accepted keys, then builds the pipeline on `env`.
    pub fn build_into(&self, env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
        for (k, _) in args.iter() {
            if !self.args.iter().any(|a| a.name == k) {
                return Err(ProgramError::UnknownArg {
                    program: self.name.to_string(),
                    key: k.to_string(),
                    accepted: self.args.iter().map(|a| a.name).collect::<Vec<_>>().join(", "),
                });
            }
        }
        (self.build)(env, args)
    }
}

/// A program with its arguments and the job settings: everything a process needs to
/// rebuild a job's StreamGraph and operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramInvocation {
    /// Registered program name.
    pub program: String,
    /// `--arg key=value` pairs.
    pub args: BTreeMap<String, String>,
    /// Default parallelism.
    pub parallelism: u32,
    /// Job-wide max parallelism, if set.
    pub max_parallelism: Option<u32>,
    /// Operator chaining on or off.
    pub chaining_enabled: bool,
    /// Buffer timeout in ms.
    pub buffer_timeout_ms: i64,
    /// `pipeline.auto-watermark-interval` in ms (0 disables periodic watermarks).
    pub auto_watermark_interval_ms: i64,
    /// `execution.runtime-mode` as asked for (the program's own setting wins).
    pub runtime_mode: weir_core::RuntimeExecutionMode,
    /// The job's name.
    pub job_name: String,
    /// The limits its plan is checked against (none unless the JobManager sets them).
    pub limits: crate::limits::PlanLimits,
    /// The job's own `state.backend.*` settings (a state backend per job), applied over
    /// the TaskManagers' configuration when they open its keyed state; empty: theirs.
    pub state_backend: BTreeMap<String, String>,
}

impl ProgramInvocation {
    /// An invocation of `program` with Flink's default settings.
    pub fn new(program: impl Into<String>) -> Self {
        let program = program.into();
        Self {
            job_name: program.clone(),
            program,
            args: BTreeMap::new(),
            parallelism: 1,
            max_parallelism: None,
            chaining_enabled: true,
            buffer_timeout_ms: 100,
            auto_watermark_interval_ms: 200,
            runtime_mode: weir_core::RuntimeExecutionMode::Streaming,
            limits: crate::limits::PlanLimits::default(),
            state_backend: BTreeMap::new(),
        }
    }

    /// An environment configured with these settings.
    pub fn environment(&self) -> StreamExecutionEnvironment {
        let mut env = StreamExecutionEnvironment::new();
        env.set_parallelism(self.parallelism)
            .set_buffer_timeout(self.buffer_timeout_ms);
        if let Some(m) = self.max_parallelism {
            env.set_max_parallelism(m);
        }
        if !self.chaining_enabled {
            env.disable_operator_chaining();
        }
        env.set_auto_watermark_interval(std::time::Duration::from_millis(
            self.auto_watermark_interval_ms.max(0) as u64
        ));
        env.set_runtime_mode(self.runtime_mode);
        env.set_plan_limits(self.limits);
        env
    }
}

/// Why an invocation could not be built into a job.
#[derive(Debug, Error)]
pub enum InvocationError {
    /// The program or its arguments were rejected.
    #[error(transparent)]
    Program(#[from] ProgramError),
    /// The pipeline is invalid.
    #[error(transparent)]
    Api(#[from] crate::error::ApiError),
}

/// The programs a binary can run, by name.
#[derive(Debug, Clone, Default)]
pub struct ProgramRegistry {
    programs: BTreeMap<&'static str, Program>,
    binary: BinaryInfo,
}

impl ProgramRegistry {
    /// An empty registry of the stock `weir` binary.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same programs, as the registry of `binary`.
    pub fn with_binary(mut self, binary: BinaryInfo) -> Self {
        self.binary = binary;
        self
    }

    /// The binary these programs are built into.
    pub fn binary(&self) -> &BinaryInfo {
        &self.binary
    }

    /// What processes compare to know they run the same binary
    /// ([`binary_identity`]).
    pub fn identity(&self) -> String {
        binary_identity(&self.binary, self.programs.keys().copied())
    }

    /// Adds (or replaces) a program.
    pub fn register(&mut self, program: Program) -> &mut Self {
        self.programs.insert(program.name, program);
        self
    }

    /// The program called `name`.
    pub fn get(&self, name: &str) -> Result<&Program, ProgramError> {
        self.programs.get(name).ok_or_else(|| ProgramError::UnknownProgram {
            name: name.to_string(),
            binary: self.binary.clone(),
            available: self.programs.keys().copied().collect::<Vec<_>>().join(", "),
        })
    }

    /// Runs the program of `invocation` and returns its checked graph with operator code.
    pub fn build(
        &self,
        invocation: &ProgramInvocation,
    ) -> Result<weir_runtime::executor::ExecutableGraph, InvocationError> {
        let program = self.get(&invocation.program)?;
        let env = invocation.environment();
        let args = ProgramArgs {
            values: invocation.args.clone(),
        };
        program.build_into(&env, &args)?;
        Ok(env.build_graph(&invocation.job_name)?)
    }

    /// The program of `job`: its in-process program when this process registered one
    /// ([`crate::in_process`]), else the program of `invocation` rebuilt by name.
    pub fn build_job(
        &self,
        job: weir_core::ids::JobId,
        invocation: &ProgramInvocation,
    ) -> Result<weir_runtime::executor::ExecutableGraph, InvocationError> {
        if let Some(graph) = crate::in_process::lookup(job) {
            return Ok(graph);
        }
        if invocation.program == crate::in_process::IN_PROCESS_PROGRAM {
            return Err(ProgramError::NotInThisProcess {
                job,
                binary: self.binary.clone(),
            }
            .into());
        }
        self.build(invocation)
    }

    /// Every registered program, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Program> {
        self.programs.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::WEIR_VERSION;

    #[test]
    fn args_parse_key_value_pairs_and_reject_malformed_ones() {
        let a = ProgramArgs::parse(&["keys=10", "name=x=y"]).unwrap();
        assert_eq!(a.get_u64("keys", 0).unwrap(), 10);
        assert_eq!(a.get("name"), Some("x=y"));
        assert!(matches!(
            ProgramArgs::parse(&["novalue"]),
            Err(ProgramError::MalformedArg(_))
        ));
        assert!(matches!(
            ProgramArgs::parse(&["=v"]),
            Err(ProgramError::MalformedArg(_))
        ));
        let err = ProgramArgs::parse(&["keys=ten"])
            .unwrap()
            .get_u64("keys", 0)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value 'ten' for argument 'keys': expected a non-negative integer"
        );
    }

    #[test]
    fn unknown_program_error_lists_the_available_ones() {
        let mut r = ProgramRegistry::new();
        r.register(Program {
            name: "a",
            description: "",
            args: &[],
            build: |_, _| Ok(()),
        });
        assert_eq!(
            r.get("b").unwrap_err().to_string(),
            format!("unknown program 'b' (this is weir {WEIR_VERSION}); available programs: a")
        );
    }

    #[test]
    fn unknown_argument_is_rejected_before_building() {
        let p = Program {
            name: "p",
            description: "",
            args: &[ArgSpec { name: "keys", help: "" }],
            build: |_, _| Ok(()),
        };
        let env = StreamExecutionEnvironment::new();
        let err = p
            .build_into(&env, &ProgramArgs::parse(&["kes=1"]).unwrap())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown argument 'kes' for program 'p'; accepted: keys"
        );
    }
}
