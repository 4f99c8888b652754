#!/usr/bin/env bash
# The red team of issue 26 (docs/hostile-input.md): forged RPCs, hostile submissions,
# terminal escapes, connection floods and leftovers, each run against throwaway
# clusters of real `weir` processes on ephemeral loopback ports, one verdict line per
# probe. `scripts/red-team.sh [--short]`; --short (CI) floods lowered limits with fewer
# connections. WEIR_PROFILE picks the cargo profile (default release; CI uses ci, which
# its test build has already built). Exits non-zero if any probe fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 1 ] || { [ $# -eq 1 ] && [ "$1" != "--short" ]; }; then
    echo "usage: $0 [--short]" >&2
    exit 2
fi
profile="${WEIR_PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
export CARGO_TERM_COLOR=never
cargo build -q --profile "$profile" -p weir --bin weir --example red_team
dir="$CARGO_TARGET_DIR/$profile"
# The whole run is bounded: each probe bounds its own waits, and this bounds the sum.
exec timeout 900 "$dir/examples/red_team" --weir "$dir/weir" "$@"
