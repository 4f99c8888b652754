#!/usr/bin/env bash
# Checks formatting (cargo fmt) and lints (cargo clippy, warnings as errors) of the
# whole workspace, all targets. Run by CI before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
export CARGO_TERM_COLOR=never
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
echo "weir: fmt and clippy clean"
