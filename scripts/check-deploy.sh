#!/usr/bin/env bash
# Checks the deployment files: the Kubernetes manifests against Kubernetes' schemas
# (offline, with the `kubernetes-validate` package from PyPI, installed into a venv
# under $HOME/.cache), and the Dockerfile by running its steps without Docker
# (scripts/check-dockerfile.py). Run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
venv="$HOME/.cache/weir-venv"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  if ! python3 -c 'import ensurepip' 2>/dev/null; then
    apt-get update -qq && apt-get install -y -qq python3-venv
  fi
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet kubernetes-validate
fi
"$venv/bin/kubernetes-validate" --strict deploy/kubernetes/*/*.yaml
python3 scripts/check-dockerfile.py
echo "weir: deployment files checked"
