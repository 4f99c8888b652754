//! The built-in programs give the same results at every parallelism, with chaining on
//! or off, and `keyed-sum` matches a sequential computation.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use weir::cli::commands::build_job;
use weir::cli::JobArgs;
use weir::programs::keyed_sum;
use weir_api::prelude::Rng;

fn run(program: &str, p: u32, chaining: bool, args: &[String], out: &Path) -> Vec<String> {
    let mut all_args = args.to_vec();
    all_args.push(format!("output={}", out.display()));
    let job = JobArgs {
        program: program.into(),
        parallelism: Some(p),
        args: all_args,
        max_parallelism: None,
        disable_chaining: !chaining,
        buffer_timeout: None,
        auto_watermark_interval: None,
    };
    let (env, _) = build_job(&job).unwrap();
    weir::minicluster::install();
    env.execute(program).unwrap();
    common::read_parts(out)
}

fn results_for_all_settings(program: &str, args: &[String]) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    for (i, (p, chaining)) in [(1, true), (2, true), (4, true), (1, false), (4, false)]
        .into_iter()
        .enumerate()
    {
        results.push(run(program, p, chaining, args, &dir.path().join(format!("run{i}"))));
    }
    results
}

#[test]
fn wordcount_gives_identical_updates_at_parallelism_1_2_4_and_without_chaining() {
    let results = results_for_all_settings("wordcount", &[]);
    assert!(results[0].contains(&"to,1".to_string()));
    assert!(results[0].contains(&"sleep,5".to_string()));
    assert!(results[0].contains(&"the,7".to_string()));
    for r in &results[1..] {
        assert_eq!(r, &results[0]);
    }
}

#[test]
fn wordcount_of_a_file_counts_every_word() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a b a\nB c\n\na\n").unwrap();
    let args = vec![format!("input={}", input.display())];
    for p in [1, 3] {
        let lines = run("wordcount", p, true, &args, &dir.path().join(format!("out{p}")));
        assert_eq!(lines, vec!["a,1", "a,2", "a,3", "b,1", "b,2", "c,1"]);
    }
}

#[test]
fn keyed_sum_gives_one_line_per_key_equal_to_a_sequential_sum() {
    let (keys, records, seed) = (50u64, 20_000u64, 42u64);
    let args = vec![
        format!("keys={keys}"),
        format!("records={records}"),
        format!("seed={seed}"),
    ];
    let results = results_for_all_settings("keyed-sum", &args);
    let gen = keyed_sum::generate(keys);
    let mut expected: BTreeMap<u64, u64> = BTreeMap::new();
    for i in 0..records {
        let (k, v) = gen(i, &mut Rng::for_index(seed, i));
        *expected.entry(k).or_default() += v;
    }
    let mut expected: Vec<String> = expected.iter().map(|(k, s)| format!("{k},{s}")).collect();
    expected.sort();
    for r in &results {
        assert_eq!(r, &expected);
    }
}
