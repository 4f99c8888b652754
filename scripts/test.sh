#!/usr/bin/env bash
# Runs every test of the workspace. Needs a Rust toolchain (cargo) and Debian's
# librocksdb-dev, libclang-dev and, for the web dashboard's browser test, chromium
# (scripts/deps.sh installs what is missing); builds into a persistent target directory
# outside the clone so repeated runs are incremental. The
# `ci` profile is release with overflow checks and debug assertions on. Ends with the
# short red team (scripts/red-team.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh --test
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
export CARGO_TERM_COLOR=never
cargo build --profile ci --workspace --all-targets
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test --profile ci --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?
passed=$(grep -E '^test result:' "$log" | sed -E 's/.* ([0-9]+) passed.*/\1/' | awk '{s+=$1} END {print s+0}')
failed=$(grep -E '^test result:' "$log" | sed -E 's/.* ([0-9]+) failed.*/\1/' | awk '{s+=$1} END {print s+0}')
echo
echo "weir: ${passed} passed, ${failed} failed"
# The red team (docs/hostile-input.md): hostile peers, submissions and floods against
# throwaway clusters of the binary just built.
WEIR_PROFILE=ci ./scripts/red-team.sh --short || status=$?
exit "$status"
