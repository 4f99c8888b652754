#!/usr/bin/env bash
# Runs every test of the workspace. Needs only a Rust toolchain (cargo); builds into a
# persistent target directory outside the clone so repeated runs are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
export CARGO_TERM_COLOR=never
cargo build --release --workspace --all-targets
cargo test --release --workspace
