#!/usr/bin/env bash
# Checks formatting (cargo fmt), lints (cargo clippy, warnings as errors), the house rule
# that no two files import each other (scripts/file-cycles.py, after its self-test
# proves it catches planted circles) and the API docs (cargo doc, warnings as errors:
# broken or private links; every crate denies missing docs through clippy) of the whole
# workspace. Run by CI before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
export CARGO_TERM_COLOR=never
cargo fmt --all -- --check
python3 scripts/file-cycles.py --self-test
python3 scripts/file-cycles.py
cargo clippy --release --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --release --workspace --no-deps
echo "weir: fmt, file cycles, clippy and cargo doc clean"
