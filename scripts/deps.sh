#!/usr/bin/env bash
# Installs the Debian packages Weir's build links against, when missing: RocksDB
# (librocksdb-dev, linked statically through build/rocksdb/, see
# docs/decisions/0011-rocksdb-from-debian.md) and libclang (bindgen reads RocksDB's C
# header with it). `--test` adds chromium for the dashboard's browser test.
set -euo pipefail
packages=()
dpkg -s librocksdb-dev >/dev/null 2>&1 || packages+=(librocksdb-dev)
dpkg -s libclang-dev >/dev/null 2>&1 || packages+=(libclang-dev)
if [ "${1:-}" = "--test" ] && ! command -v chromium >/dev/null; then
  packages+=(chromium)
fi
if [ "${#packages[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
fi
