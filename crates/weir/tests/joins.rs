//! `clicks-orders-join` through the real binary (`weir local`): the interval join and
//! the window join of generated clicks and orders emit exactly the pairs a brute-force
//! join of the same records finds, at parallelism 1 and 2, and after a failover that
//! restores both joins' state from a checkpoint (exactly-once part files).

mod common;

use common::{read_parts, weir_with_env, FIXED_DELAY};
use weir::programs::clicks_orders_join::{interval_line, window_line, Click, JoinInput, Order};

const CLICKS: u64 = 12_000;
const ORDERS: u64 = 3_000;
const LOOKBACK_MS: i64 = 2_000;
const WINDOW_MS: i64 = 5_000;
const INPUT: JoinInput = JoinInput {
    users: 50,
    bound_ms: 500,
    seed: 17,
};

/// Every output line, sorted: each order with each click of its user in the lookback
/// before it (inclusive), and with each click of its user in the same window.
fn brute_force() -> Vec<String> {
    let clicks: Vec<Click> = (0..CLICKS).map(|i| INPUT.click(i)).collect();
    let orders: Vec<Order> = (0..ORDERS).map(|i| INPUT.order(i)).collect();
    let mut lines = Vec::new();
    for o in &orders {
        for c in clicks.iter().filter(|c| c.user == o.user) {
            if c.ts >= o.ts - LOOKBACK_MS && c.ts <= o.ts {
                lines.push(interval_line(o, c));
            }
            let window = o.ts.div_euclid(WINDOW_MS);
            if c.ts.div_euclid(WINDOW_MS) == window {
                lines.push(window_line(window * WINDOW_MS, o, c));
            }
        }
    }
    lines.sort();
    lines
}

/// `weir local clicks-orders-join -p <p> <options>` writing to `out`, with `--arg` for
/// each of `args` besides the common ones; (exit code, stderr).
fn run(p: u32, out: &std::path::Path, args: &[&str], options: &[&str]) -> (i32, String) {
    let p = p.to_string();
    let mut settings = vec![
        format!("clicks={CLICKS}"),
        format!("orders={ORDERS}"),
        format!("users={}", INPUT.users),
        format!("bound_ms={}", INPUT.bound_ms),
        format!("seed={}", INPUT.seed),
        format!("lookback_ms={LOOKBACK_MS}"),
        format!("window_ms={WINDOW_MS}"),
        format!("output={}", out.display()),
    ];
    settings.extend(args.iter().map(|a| a.to_string()));
    let mut cmd = vec!["local", "clicks-orders-join", "-p", &p];
    cmd.extend_from_slice(options);
    for s in &settings {
        cmd.extend(["--arg", s.as_str()]);
    }
    let (code, _, err) = weir_with_env(&cmd, &[("WEIR_LOG", "weir_jobmanager=info")], None);
    (code, err)
}

#[test]
fn both_joins_emit_exactly_the_brute_force_pairs_at_parallelism_one_and_two() {
    let expected = brute_force();
    let kinds = |prefix: &str| expected.iter().filter(|l| l.starts_with(prefix)).count();
    assert!(
        kinds("interval,") > 5_000 && kinds("window,") > 5_000,
        "both joins find pairs"
    );
    for p in [1, 2] {
        let out = tempfile::tempdir().unwrap();
        let (code, err) = run(p, out.path(), &[], &[]);
        assert_eq!(code, 0, "p={p}: {err}");
        let got = read_parts(out.path());
        assert_eq!(got.len(), expected.len(), "p={p}");
        assert!(got == expected, "p={p}: the output differs from the brute-force join");
    }
}

#[test]
fn a_failover_restores_both_joins_from_a_checkpoint_and_the_committed_output_is_exact() {
    let out = tempfile::tempdir().unwrap();
    // About 1.5 s of input; each interval-join subtask of the first attempt fails after
    // 3,000 of its roughly 6,000 pairs, by when checkpoints (every 100 ms) completed.
    let (code, err) = run(
        2,
        out.path(),
        &["rate_per_sec=8000", "fail-once-after=3000"],
        &[
            FIXED_DELAY.as_slice(),
            &["-D", "execution.checkpointing.interval=100 ms"],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("Restoring job") && err.contains("from checkpoint"),
        "the restart did not restore a checkpoint: {err}"
    );
    let got = read_parts(out.path());
    let expected = brute_force();
    assert_eq!(got.len(), expected.len());
    assert!(
        got == expected,
        "the committed output differs from the brute-force join"
    );
}
