#!/usr/bin/env bash
# Chaos runs of the exactly-once file sink: `scripts/chaos.sh SEEDS KILLS` runs the
# EXACTLY_ONCE scenario of crates/weir/tests/exactly_once_sink.rs (orders-per-minute on
# a three-TaskManager cluster, checkpoints every 500 ms, KILLS TaskManagers SIGKILLed at
# moments picked by the seed) once per seed 1..SEEDS. Prints per seed the kills survived
# and the rows compared, then a summary; exits non-zero if any seed's committed output
# differed from the undisturbed result (or the run failed).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ] || ! [[ "$1" =~ ^[0-9]+$ && "$2" =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ]; then
    echo "usage: $0 SEEDS KILLS   (e.g. $0 20 3)" >&2
    exit 2
fi
seeds=$1
kills=$2
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
export CARGO_TERM_COLOR=never
test_name=taskmanager_kills_at_random_moments_leave_exactly_the_undisturbed_output_committed
cargo build --release -p weir --bin weir --test exactly_once_sink || exit 1
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
passed=0
failed=0
failed_seeds=""
for seed in $(seq 1 "$seeds"); do
    if WEIR_CHAOS_SEED="$seed" WEIR_CHAOS_KILLS="$kills" \
        cargo test --release -q -p weir --test exactly_once_sink -- --exact "$test_name" --nocapture \
        >"$log" 2>&1; then
        result=ok
        passed=$((passed + 1))
    else
        result=FAILED
        failed=$((failed + 1))
        failed_seeds="$failed_seeds $seed"
    fi
    line=$(grep -E '^chaos: ' "$log" | tail -n 1)
    survived=$(sed -nE 's/.* kills=([0-9]+).*/\1/p' <<<"$line")
    rows=$(sed -nE 's/.* rows=([0-9]+).*/\1/p' <<<"$line")
    expected=$(sed -nE 's/.* expected=([0-9]+).*/\1/p' <<<"$line")
    printf 'seed %3d: %-6s kills survived %s/%s, rows %s (expected %s)\n' \
        "$seed" "$result" "${survived:-?}" "$kills" "${rows:-?}" "${expected:-?}"
    if [ "$result" = FAILED ]; then
        grep -E "panicked|seed $seed:" "$log" | head -n 5 | sed 's/^/    /'
    fi
done
echo
echo "chaos: $seeds seeds, $kills kills each: $passed passed, $failed failed${failed_seeds:+ (seeds:$failed_seeds)}"
[ "$failed" -eq 0 ]
