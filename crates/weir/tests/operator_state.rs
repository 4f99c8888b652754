//! Operator state and broadcast state: a non-keyed `ProcessFunction` and a
//! `BroadcastProcessFunction` in process (`collect()` and the `broadcast-rules`
//! program at several parallelisms), and across real processes with TaskManagers
//! killed by SIGKILL and the job restored from its checkpoints.

mod common;

use common::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;
use weir::cli::commands::build_job;
use weir::cli::JobArgs;
use weir::prelude::*;
use weir::programs::broadcast_rules::factor;
use weir::programs::keyed_sum::generate;

/// The sorted output of `broadcast-rules`, computed sequentially: per key the count,
/// sum and maximum of `value * factor(key % rules)`; per source subtask `s` (which
/// generates the records `i` with `i % parallelism == s`) `n,n(n+1)/2,n`.
fn expected(keys: u64, records: u64, rules: u64, seed: u64, parallelism: u64) -> Vec<String> {
    let gen = generate(keys);
    let mut per_key: BTreeMap<u64, (u64, u64, u64)> = BTreeMap::new();
    for i in 0..records {
        let (k, v) = gen(i, &mut Rng::for_index(seed, i));
        let scaled = v * factor(k % rules);
        let t = per_key.entry(k).or_default();
        *t = (t.0 + 1, t.1 + scaled, t.2.max(scaled));
    }
    let mut lines: Vec<String> = per_key
        .iter()
        .map(|(k, (n, s, m))| format!("key,{k},{n},{s},{m}"))
        .collect();
    for s in 0..parallelism {
        let n = (0..records).filter(|i| i % parallelism == s).count() as u64;
        if n > 0 {
            lines.push(format!("subtask,{s},{n},{},{n}", n * (n + 1) / 2));
        }
    }
    lines.sort();
    lines
}

fn run_in_process(p: u32, out: &std::path::Path) -> Vec<String> {
    let job = JobArgs {
        program: "broadcast-rules".into(),
        parallelism: Some(p),
        args: vec![
            "keys=20".into(),
            "records=5000".into(),
            "rules=5".into(),
            "seed=3".into(),
            format!("output={}", out.display()),
        ],
        max_parallelism: None,
        disable_chaining: false,
        buffer_timeout: None,
        auto_watermark_interval: None,
    };
    let (env, _) = build_job(&job).unwrap();
    weir::minicluster::install();
    env.execute("broadcast-rules").unwrap();
    read_parts(out)
}

#[test]
fn the_broadcast_rules_program_is_exact_at_every_parallelism() {
    let dir = tempfile::tempdir().unwrap();
    for p in [1u32, 2, 3] {
        assert_eq!(
            run_in_process(p, &dir.path().join(format!("p{p}"))),
            expected(20, 5000, 5, 3, u64::from(p)),
            "p={p}"
        );
    }
}

/// Labels each word with its subtask and its per-subtask position, kept in list state.
#[derive(Clone)]
struct Position;

impl ProcessFunction<String, (String, u32, u64)> for Position {
    fn process_element(
        &mut self,
        word: String,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, (String, u32, u64)>,
    ) -> Result<(), UserError> {
        let subtask = ctx.subtask_index();
        let mut seen = ctx.list_state(&ListStateDescriptor::<u64>::new("seen"))?;
        let n = seen.get().first().copied().unwrap_or(0) + 1;
        seen.update(vec![n]);
        out.collect((word, subtask, n));
        Ok(())
    }
}

/// Translates words with a dictionary broadcast to every subtask; words without an
/// entry yet wait in list state.
#[derive(Clone)]
struct Translate;

fn dictionary() -> MapStateDescriptor<String, String> {
    MapStateDescriptor::new("dictionary")
}

impl BroadcastProcessFunction<(String, u32, u64), (String, String), String> for Translate {
    fn process_element(
        &mut self,
        (word, _, _): (String, u32, u64),
        ctx: &mut ReadOnlyContext<'_, '_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        match ctx.broadcast_state(&dictionary())?.get(&word) {
            Some(t) => out.collect(t.clone()),
            None => ctx
                .list_state(&ListStateDescriptor::<String>::new("waiting"))?
                .add(word),
        }
        Ok(())
    }

    fn process_broadcast_element(
        &mut self,
        (word, translation): (String, String),
        ctx: &mut BroadcastContext<'_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        ctx.broadcast_state(&dictionary())?
            .put(word.clone(), translation.clone());
        let mut waiting = ctx.list_state(&ListStateDescriptor::<String>::new("waiting"))?;
        let before = waiting.len();
        let still: Vec<String> = waiting.take().into_iter().filter(|w| *w != word).collect();
        for _ in still.len()..before {
            out.collect(translation.clone());
        }
        waiting.update(still);
        Ok(())
    }
}

#[test]
fn collect_sees_every_word_numbered_per_subtask_and_translated_by_the_broadcast_dictionary() {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let words: Vec<String> = (0..40).map(|i| ["one", "two", "three"][i % 3].to_string()).collect();
    let dictionary_stream = env
        .from_collection(vec![
            ("one".to_string(), "eins".to_string()),
            ("two".to_string(), "zwei".to_string()),
            ("three".to_string(), "drei".to_string()),
        ])
        .broadcast_state(&dictionary());
    let numbered = env.from_collection(words).rebalance().process(Position);
    let positions = numbered.collect();
    let translated = numbered
        .connect_broadcast(&dictionary_stream)
        .process(Translate)
        .collect();
    env.execute("translate").unwrap();

    let mut per_subtask: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for (_, s, n) in positions.get() {
        per_subtask.entry(s).or_default().push(n);
    }
    assert_eq!(per_subtask.len(), 2, "both subtasks numbered words");
    for (s, mut ns) in per_subtask {
        ns.sort();
        assert_eq!(ns, (1..=ns.len() as u64).collect::<Vec<_>>(), "subtask {s}");
    }
    let mut got = translated.get();
    got.sort();
    let mut want: Vec<String> = (0..40).map(|i| ["eins", "zwei", "drei"][i % 3].to_string()).collect();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn list_and_broadcast_state_survive_two_taskmanager_kills_with_exact_totals() {
    let chk = tempfile::tempdir().unwrap();
    let mut cluster = Cluster::start_checkpointing(chk.path());
    let out = tempfile::tempdir().unwrap();
    let (keys, records, rules, seed) = (30u64, 120_000u64, 7u64, 11u64);
    let args = json!({
        "keys": keys.to_string(),
        "records": records.to_string(),
        "rules": rules.to_string(),
        "seed": seed.to_string(),
        "rate_per_sec": "15000",
        "output": out.path().display().to_string(),
    });
    let jid = cluster.submit(json!({ "program": "broadcast-rules", "parallelism": 2, "args": args }));

    for victim in [1, 0] {
        cluster.kill_after_checkpoints(&jid, victim);
    }

    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(90)), "FINISHED");
    assert_eq!(read_parts(out.path()), expected(keys, records, rules, seed, 2));
    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert!(stats["counts"]["restored"].as_u64().unwrap() >= 2, "{stats}");
    // The rules were restored from broadcast state, not replayed: the rules source
    // of the last attempt resumed from its checkpointed position.
    let (_, detail) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let vertices = detail["vertices"].as_array().unwrap();
    let rules_vertex = vertices
        .iter()
        .find(|v| v["name"].as_str().is_some_and(|n| n.contains("Rules")))
        .unwrap_or_else(|| panic!("no Rules vertex in {detail}"));
    let emitted = rules_vertex["metrics"]["write-records"].as_u64().unwrap();
    assert!(
        emitted < records / 50,
        "the restored rules source replayed everything: {emitted}"
    );
}
