# Sourced by the benchmark and compatibility scripts: builds the `weir` binary
# ($weir; `WEIR_BIN=<path>` uses that binary instead of building), makes a work directory ($work) and a list of background process ids
# ($pids), both cleaned up on exit, and picks loopback ports for a JobManager
# ($rest_port, $rpc_port). Runs from the repository root.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
if [ -n "${WEIR_BIN:-}" ]; then
  weir="$WEIR_BIN"
else
  cargo build --release -q -p weir
  weir="$CARGO_TARGET_DIR/release/weir"
fi
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
rest_port=$((40000 + RANDOM % 20000)); rpc_port=$((rest_port + 1))
